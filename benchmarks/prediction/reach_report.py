"""The reach model's scores and its results page (:mod:`~mara_env.benchmarks.prediction.reach_model`).

Scores, on the scoring rows (evaluation seeds), for "reaches its target by its deadline with
every node it may get", in each band of the deadline window elapsed of the information ladder
(:data:`mara_env.benchmarks.prediction.ladder_episodes.BANDS`) and over every row:

- ``reach model``: the shipped model's probability with every node;
- ``observation probe``: the information ladder's observation rung (a logistic probe on the
  observation's slot columns and the family, fitted per band on the same training rows).

Each with its AUC and Brier score and a 95% interval over resampled evaluation episodes, and the
model's paired AUC gain over the probe. The reliability table bins every ``(task, k)`` row by
its predicted probability.

Example:
    >>> import numpy as np
    >>> reliability_bins(np.array([0.05, 0.15, 0.95]), np.array([False, True, True]))[0]
    {'bin': '0.0-0.1', 'rows': 1, 'predicted': 0.05, 'observed': 0.0}
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.agents.reach import ReachModel
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.benchmarks.common.probes import logistic_probe, probe_scores
from mara_env.benchmarks.common.statistics import auc, episode_bootstrap
from mara_env.benchmarks.prediction.ladder_episodes import BANDS, band_name
from mara_env.benchmarks.prediction.reach_episodes import OBSERVED_COLUMNS, ReachRows
from mara_env.curves.families import FAMILY_NAMES

#: The predictors scored, in the page's order.
MODEL, PROBE = "reach model", "observation probe"
#: The rows of every band together.
ALL = "all"
#: Resamples of evaluation episodes for the intervals.
RESAMPLES = 500
#: Width of a reliability bin.
BIN = 0.1


def _observed_inputs(rows: ReachRows) -> np.ndarray:
    """The observation probe's inputs: the slot columns and a one-hot family."""
    family = rows.observed[:, OBSERVED_COLUMNS.index("family")].astype(np.int64)
    one_hot = np.eye(len(FAMILY_NAMES) + 1)[np.clip(family, 0, len(FAMILY_NAMES))]
    columns = [i for i, name in enumerate(OBSERVED_COLUMNS) if name != "family"]
    return np.column_stack([rows.observed[:, columns], one_hot])


def _in_band(rows: ReachRows, band: str) -> np.ndarray:
    if band == ALL:
        return np.ones(len(rows), dtype=bool)
    low, high = next(edges for edges in BANDS if band_name(edges) == band)
    return (rows.elapsed >= low) & (rows.elapsed < high)


def _band_statistics(
    probability: Mapping[str, np.ndarray], label: np.ndarray, picked: np.ndarray
) -> dict[tuple[str, str], float]:
    """Each predictor's AUC and Brier score over the rows ``picked``, and the model's AUC gain."""
    values = {}
    for name, p in probability.items():
        values[(name, "AUC")] = auc(p[picked], label[picked])
        values[(name, "Brier")] = float(np.mean((p[picked] - label[picked]) ** 2))
    values[(MODEL, "AUC gain over the probe")] = values[(MODEL, "AUC")] - values[(PROBE, "AUC")]
    return values


def score_rows(model: ReachModel, fit: ReachRows, scored: ReachRows) -> list[dict[str, Any]]:
    """AUC and Brier score (with intervals) of the model and the observation probe, and the
    model's paired AUC gain, per band (module docstring)."""
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    for band in [*(band_name(edges) for edges in BANDS), ALL]:
        train, test = fit.subset(_in_band(fit, band)), scored.subset(_in_band(scored, band))
        label = test.reached[:, -1]
        probe = logistic_probe(_observed_inputs(train), train.reached[:, -1])
        probability = {
            MODEL: model.probabilities_of(test.features)[:, -1],
            PROBE: 1.0
            / (1.0 + np.exp(-np.clip(probe_scores(probe, _observed_inputs(test)), -30, 30))),
        }

        records = [{"seed": episode} for episode in test.episode]
        for (name, measure), (value, low, high) in episode_bootstrap(
            records, functools.partial(_band_statistics, probability, label), RESAMPLES, rng
        ).items():
            rows.append(
                {
                    "band": band,
                    "predictor": name,
                    "statistic": measure,
                    "value": value,
                    "low": low,
                    "high": high,
                    "rows": len(test),
                    "reach_share": float(label.mean()),
                }
            )
    return rows


def reliability_bins(probability: np.ndarray, reached: np.ndarray) -> list[dict[str, Any]]:
    """Rows binned by predicted probability (bins of :data:`BIN`): count, mean predicted and
    observed frequency of reaching."""
    edges = np.arange(0.0, 1.0 + BIN / 2, BIN)
    which = np.clip(np.digitize(probability, edges) - 1, 0, len(edges) - 2)
    bins = []
    for index in range(len(edges) - 1):
        members = which == index
        if members.any():
            bins.append(
                {
                    "bin": f"{edges[index]:.1f}-{edges[index + 1]:.1f}",
                    "rows": int(members.sum()),
                    "predicted": round(float(probability[members].mean()), 4),
                    "observed": round(float(reached[members].mean()), 4),
                }
            )
    return bins


def _csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _interval(row: Mapping[str, Any], signed: bool = False) -> str:
    form = "{:+.3f}" if signed else "{:.3f}"
    return f"{form.format(row['value'])} [{form.format(row['low'])}, {form.format(row['high'])}]"


def markdown(
    model: ReachModel,
    scores: Sequence[Mapping[str, Any]],
    searched: Sequence[Mapping[str, Any]],
    bins: Sequence[Mapping[str, Any]],
    *,
    seconds: float,
    model_path: Path,
    scored_episodes: int,
) -> str:
    """The results page."""
    facts = model.facts
    bands = list(dict.fromkeys(row["band"] for row in scores))

    def cell(predictor: str, measure: str, band: str) -> str:
        row = next(
            r
            for r in scores
            if (r["predictor"], r["statistic"], r["band"]) == (predictor, measure, band)
        )
        return _interval(row, signed="gain" in measure)

    lines = [
        f"# The reach model and planner, Cluster-v{facts.get('world_version')}",
        "",
        f"Written by `{' '.join(facts.get('command', []))}` in {seconds / 60:.1f} minutes at commit "
        f"{facts.get('commit')} on {facts.get('platform')}.",
        "",
        f"The model (`{model_path.as_posix()}`) estimates, from the observation alone, P(a task reports "
        "its target by its deadline | k nodes train it from now on) for k = 1..K. Fitted on "
        f"{facts.get('fit')} ({facts.get('fit_rows'):,} (task, k) rows); labels by the clairvoyant "
        "reference's exact stepping. The planner's settings were chosen on "
        f"{facts.get('planner_search')}.",
        "",
        "## Which tasks can still finish",
        "",
        f"Scored on evaluation seeds ({scored_episodes} episodes of the `evaluation` preset at the "
        "training load, test split, played by EDF; reporting only): the probability of reaching the "
        "target with every node the task may get. Brackets: 95% intervals over resampled episodes; "
        "the gain is paired on them. The observation probe is the information ladder's observation "
        "rung, fitted per band on the same training rows.",
        "",
        "| | " + " | ".join(bands) + " |",
        "|---|" + "---|" * len(bands),
    ]
    for predictor, measure in (
        (PROBE, "AUC"),
        (MODEL, "AUC"),
        (MODEL, "AUC gain over the probe"),
        (PROBE, "Brier"),
        (MODEL, "Brier"),
    ):
        lines.append(
            f"| {predictor}: {measure} | "
            + " | ".join(cell(predictor, measure, b) for b in bands)
            + " |"
        )
    share = {
        row["band"]: row
        for row in scores
        if row["predictor"] == MODEL and row["statistic"] == "AUC"
    }
    lines.append(
        "| judgements (share that can reach) | "
        + " | ".join(f"{share[b]['rows']:,} ({share[b]['reach_share']:.2f})" for b in bands)
        + " |"
    )
    lines += [
        "",
        "## Reliability",
        "",
        "Every (task, k) row of the scoring episodes, binned by the model's probability.",
        "",
        "![Reliability of the reach model](reliability.png)",
        "",
        "| predicted | rows | mean predicted | observed |",
        "|---|---|---|---|",
        *(
            f"| {b['bin']} | {b['rows']:,} | {b['predicted']:.3f} | {b['observed']:.3f} |"
            for b in bins
        ),
        "",
        "## The planner's settings",
        "",
        "Mean completion of each candidate on the training episodes; the chosen one in bold. "
        "`drop` 0 with no `ask` is earliest deadline first itself.",
        "",
        "| drop | ask | completion |",
        "|---|---|---|",
    ]
    for row in searched:
        cells = [str(row["drop"]), str(row["ask"] or "none"), f"{row['completion']:.4f}"]
        if row["chosen"]:
            cells = [f"**{cell}**" for cell in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(
    output: Path,
    model: ReachModel,
    scores: Sequence[Mapping[str, Any]],
    searched: Sequence[Mapping[str, Any]],
    fit_log: Sequence[Mapping[str, Any]],
    scored: ReachRows,
    *,
    seconds: float,
    model_path: Path,
) -> None:
    """``scores.csv``, ``search.csv``, ``reliability.csv``, ``fit_log.csv``, ``reliability.png``
    and ``README.md`` in ``output``, each written whole or not at all."""
    output.mkdir(parents=True, exist_ok=True)
    probability = model.probabilities_of(scored.features).reshape(-1)
    bins = reliability_bins(probability, scored.reached.reshape(-1))
    write_atomically(output / "scores.csv", _csv(scores))
    write_atomically(
        output / "search.csv",
        _csv([{**row, "ask": "" if row["ask"] is None else row["ask"]} for row in searched]),
    )
    write_atomically(output / "reliability.csv", _csv(bins))
    write_atomically(output / "fit_log.csv", _csv(fit_log))
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(4.5, 4.5))
    axis.plot(
        [0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfectly calibrated"
    )
    axis.plot(
        [b["predicted"] for b in bins], [b["observed"] for b in bins], marker="o", label=MODEL
    )
    axis.set_xlabel("predicted P(reach | k nodes)")
    axis.set_ylabel("observed share that reached")
    axis.set_title("Reach model on evaluation seeds")
    axis.legend(loc="upper left")
    figure.tight_layout()
    save_png(figure, output / "reliability.png", dpi=110)
    episodes = len(np.unique(scored.episode))
    write_atomically(
        output / "README.md",
        markdown(
            model,
            scores,
            searched,
            bins,
            seconds=seconds,
            model_path=model_path,
            scored_episodes=episodes,
        ),
    )
