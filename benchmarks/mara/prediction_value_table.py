"""The value-of-prediction tables: what each predictor's features are worth to MARA.

Each function reads ``{agent: {(workload, load, seed): completion rate}}``
(:data:`mara_env.benchmarks.mara.evaluation_tables.Rates`, from the plan's evaluation CSV) and returns a
Markdown table. A **row** is a list of labels, one per training seed (a baseline without
training seeds is one label). Every interval is a percentile interval of
:func:`mara_env.benchmarks.common.seed_intervals.resampled_means`: each row's training seeds resampled
independently, the episodes resampled once for all rows (every row played the same episodes),
so intervals include training-seed variation. Only episodes every label played count.

Example:
    >>> scores = {
    ...     name: {("rl", 1.4, seed): value + 0.01 * seed for seed in range(4)}
    ...     for name, value in [("o0", 0.7), ("o1", 0.68), ("n0", 0.5), ("n1", 0.52),
    ...                         ("f0", 0.6), ("f1", 0.61)]
    ... }
    >>> rows = {"oracle": ["o0", "o1"], "no_predictions": ["n0", "n1"], "fm": ["f0", "f1"]}
    >>> print(value_table(scores, rows, n_resamples=200).splitlines()[4])
    | fm | 2 | 0.620 [0.610, 0.633] | +0.095 [+0.080, +0.110] | 0.53 [0.47, 0.59] |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mara_env.agents.statistics import Summary
from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.benchmarks.common.seed_intervals import percentile_summary, resampled_means
from mara_env.benchmarks.mara.evaluation_tables import Rates

#: One row's predictor error, as ``python -m mara_env.benchmarks.prediction.value_errors`` writes it:
#: ``brier``, ``brier_low``, ``brier_high``, ``median_log_error``, ``judgements``.
PredictionError = Mapping[str, float]

#: The row whose features carry nothing, and the row whose features are the truth.
NONE, ORACLE = "no_predictions", "oracle"


def _matrices(scores: Rates, rows: Mapping[str, Sequence[str]]) -> dict[str, np.ndarray]:
    """Each row's ``(training seeds, shared episodes)`` completion rates.

    Raises:
        ValueError: If a label has no rows, or the rows share no episode.
    """
    labels = [label for row in rows.values() for label in row]
    missing = sorted(label for label in labels if label not in scores)
    if missing:
        raise ValueError(f"No evaluation rows of {missing}; evaluated: {sorted(scores)}.")
    shared = sorted(set.intersection(*(set(scores[label]) for label in labels)))
    if not shared:
        raise ValueError(f"The labels {labels} share no evaluation episode.")
    return {
        name: np.array([[scores[label][key] for key in shared] for label in row])
        for name, row in rows.items()
    }


def _interval(estimate: float, resamples: np.ndarray, sign: str = "") -> str:
    summary = percentile_summary(estimate, resamples)
    if sign:
        return f"{summary.mean:+.3f} [{summary.low:+.3f}, {summary.high:+.3f}]"
    return f"{summary.mean:.3f} [{summary.low:.3f}, {summary.high:.3f}]"


def value_table(
    scores: Rates, rows: Mapping[str, Sequence[str]], *, n_resamples: int = 10_000
) -> str:
    """Each row's completion rate, its difference from :data:`NONE` and the share of the
    :data:`ORACLE` minus :data:`NONE` gap it captures, ``(row - none) / (oracle - none)``.

    Raises:
        ValueError: Without the :data:`NONE` and :data:`ORACLE` rows, or as :func:`_matrices`.
    """
    if NONE not in rows or ORACLE not in rows:
        raise ValueError(f"value_table needs the rows {NONE!r} and {ORACLE!r}, got {list(rows)}.")
    matrices = _matrices(scores, rows)
    names = list(matrices)
    means = resampled_means([matrices[name] for name in names], n_resamples=n_resamples)
    estimate = {name: float(matrices[name].mean()) for name in names}
    drawn = dict(zip(names, means, strict=True))
    gap = estimate[ORACLE] - estimate[NONE]
    episodes = next(iter(matrices.values())).shape[1]
    lines = [
        f"| features from | training seeds | completion rate [95% CI] | minus {NONE} [95% CI] | "
        f"share of the {ORACLE} - {NONE} gap [95% CI] |",
        "|---|---|---|---|---|",
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in names:
            gained = drawn[name] - drawn[NONE]
            share = gained / (drawn[ORACLE] - drawn[NONE])
            estimate_share = (estimate[name] - estimate[NONE]) / gap if gap else float("nan")
            share_text = percentile_summary(estimate_share, share)
            lines.append(
                f"| {name} | {len(matrices[name])} | {_interval(estimate[name], drawn[name])} | "
                f"{_interval(estimate[name] - estimate[NONE], gained, sign='+')} | "
                f"{share_text.mean:.2f} [{share_text.low:.2f}, {share_text.high:.2f}] |"
            )
    lines += ["", f"{episodes} evaluation episodes, the same for every row."]
    return "\n".join(lines) + "\n"


def gains_over_none(
    scores: Rates, rows: Mapping[str, Sequence[str]], *, n_resamples: int = 10_000
) -> dict[str, Summary]:
    """Each row's mean minus :data:`NONE`'s on their shared episodes, with its 95% interval
    over both rows' training seeds and the episodes (``n``: the row's training seeds).

    Raises:
        ValueError: Without the :data:`NONE` row, or as :func:`_matrices`.
    """
    if NONE not in rows:
        raise ValueError(f"gains_over_none needs the row {NONE!r}, got {list(rows)}.")
    matrices = _matrices(scores, rows)
    drawn = dict(
        zip(
            matrices, resampled_means(list(matrices.values()), n_resamples=n_resamples), strict=True
        )
    )
    none = float(matrices[NONE].mean())
    return {
        name: percentile_summary(
            float(matrix.mean()) - none, drawn[name] - drawn[NONE], n=len(matrix)
        )
        for name, matrix in matrices.items()
    }


def differences_table(
    scores: Rates,
    reference: tuple[str, Sequence[str]],
    others: Mapping[str, Sequence[str]],
    *,
    n_resamples: int = 10_000,
) -> str:
    """``reference`` (a name and its labels) minus each of ``others``, with 95% intervals over
    both rows' training seeds and the shared episodes.

    Raises:
        ValueError: As :func:`_matrices`.
    """
    name, labels = reference
    lines = [
        f"| {name} minus | training seeds | difference [95% CI] |",
        "|---|---|---|",
    ]
    for other, other_labels in others.items():
        interval, seeds = difference(scores, labels, other_labels, n_resamples)
        lines.append(f"| {other} | {seeds[0]} and {seeds[1]} | {interval} |")
    return "\n".join(lines) + "\n"


def difference(
    scores: Rates, labels: Sequence[str], other_labels: Sequence[str], n_resamples: int = 10_000
) -> tuple[str, tuple[int, int]]:
    """The mean of ``labels`` minus that of ``other_labels`` on their shared episodes, as
    ``+d [low, high]`` with a 95% interval over both sides' training seeds and the episodes,
    and each side's count of training seeds."""
    matrices = _matrices(scores, {"first": labels, "second": other_labels})
    a, b = matrices["first"], matrices["second"]
    means = resampled_means([a, b], n_resamples=n_resamples)
    difference = float(a.mean() - b.mean())
    return _interval(difference, means[0] - means[1], sign="+"), (len(a), len(b))


def gap_by_budget(
    scores: Rates,
    pairs: Mapping[str, tuple[str, str]],
    *,
    n_resamples: int = 10_000,
) -> str:
    """One row per budget (``{budget: (label, baseline label)}``): the label minus its
    baseline on the shared episodes, with a 95% interval over the episodes (one training seed
    each).

    Raises:
        ValueError: As :func:`_matrices`.
    """
    lines = ["| budget | difference [95% CI] |", "|---|---|"]
    for budget, (label, baseline) in pairs.items():
        interval, _ = difference(scores, [label], [baseline], n_resamples)
        lines.append(f"| {budget} | {interval} |")
    return "\n".join(lines) + "\n"


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-a of two orderings of the same items: (concordant - discordant pairs) /
    all pairs; 1 for the same order, -1 for the reverse.

    Example:
        >>> kendall_tau([1, 2, 3], [10, 20, 30]), kendall_tau([1, 2, 3], [3, 2, 1])
        (1.0, -1.0)
    """
    n = len(a)
    if n != len(b) or n < 2:
        raise ValueError(f"kendall_tau needs two sequences of one length >= 2, got {n}, {len(b)}.")
    signs = [np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) for i in range(n) for j in range(i + 1, n)]
    return float(np.sum(signs) / len(signs))


def row_summaries(
    scores: Rates, rows: Mapping[str, Sequence[str]], *, n_resamples: int = 10_000
) -> dict[str, Summary]:
    """Each row's mean completion rate with its 95% interval over training seeds and episodes
    (``n``: its training seeds)."""
    matrices = _matrices(scores, rows)
    means = resampled_means(list(matrices.values()), n_resamples=n_resamples)
    return {
        name: percentile_summary(float(matrix.mean()), drawn, n=len(matrix))
        for (name, matrix), drawn in zip(matrices.items(), means, strict=True)
    }


def error_table(errors: Mapping[str, PredictionError]) -> str:
    """Each row's predictor error (``python -m mara_env.benchmarks.prediction.value_errors``)."""
    lines = [
        "| features from | Brier score of success on all nodes [95% CI] | median log error of "
        "the need | judgements |",
        "|---|---|---|---|",
    ]
    for name, error in errors.items():
        lines.append(
            f"| {name} | {error['brier']:.3f} [{error['brier_low']:.3f}, {error['brier_high']:.3f}] | "
            f"{error['median_log_error']:.2f} | {error['judgements']} |"
        )
    return "\n".join(lines) + "\n"


def plot_value_against_error(
    completion: Mapping[str, Summary], errors: Mapping[str, PredictionError], path: Path
) -> None:
    """Completion rate (95% interval over training seeds and episodes) against the predictor's
    Brier score (95% interval over episodes), one labelled point per row.

    Raises:
        mara_env.benchmarks.common.figures.PlotsUnavailable: Without matplotlib.
    """
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    for name, summary in completion.items():
        error = errors[name]
        axis.errorbar(
            error["brier"],
            summary.mean,
            xerr=[[error["brier"] - error["brier_low"]], [error["brier_high"] - error["brier"]]],
            yerr=[[summary.mean - summary.low], [summary.high - summary.mean]],
            fmt="o",
            capsize=3,
        )
        axis.annotate(
            name, (error["brier"], summary.mean), textcoords="offset points", xytext=(5, 4)
        )
    axis.set_xlabel("Brier score of the predicted success on all nodes (lower is better)")
    axis.set_ylabel("MARA's completion rate (evaluation)")
    axis.set_title("What a predictor's error costs MARA (Cluster-v2)")
    axis.grid(alpha=0.3)
    save_png(figure, path, dpi=110)


def budget_ranking(scores: Rates, budgets: Mapping[str, Mapping[str, Sequence[str]]]) -> str:
    """The rows' mean completion rates at each budget (``{budget: {row: labels}}``), their
    ranks, and Kendall's tau between the first budget's ranking and each other's: whether a
    shorter budget orders the rows as a longer one does.

    Raises:
        ValueError: If the budgets do not hold the same rows, or as :func:`_matrices`.
    """
    names = [list(rows) for rows in budgets.values()]
    if any(set(row_names) != set(names[0]) for row_names in names):
        raise ValueError(f"budget_ranking: every budget must hold the same rows, got {names}.")
    rows = names[0]
    means = {
        budget: {name: float(matrix.mean()) for name, matrix in _matrices(scores, table).items()}
        for budget, table in budgets.items()
    }
    first = next(iter(budgets))
    headings = " | ".join(f"{budget} (rank)" for budget in budgets)
    lines = [f"| row | {headings} |", "|---|" + "---|" * len(budgets)]
    ranks = {
        budget: {name: 1 + sorted(values, key=lambda n: -values[n]).index(name) for name in rows}
        for budget, values in means.items()
    }
    for name in rows:
        cells = " | ".join(f"{means[b][name]:.3f} ({ranks[b][name]})" for b in budgets)
        lines.append(f"| {name} | {cells} |")
    lines.append("")
    for budget in list(budgets)[1:]:
        tau = kendall_tau([means[first][n] for n in rows], [means[budget][n] for n in rows])
        lines.append(
            f"Kendall's tau between the rankings at {first} and at {budget}: "
            f"{tau:+.2f} ({len(rows)} rows)."
        )
    return "\n".join(lines) + "\n"
