"""The tables of an evaluation: means, paired differences, gaps closed, training seeds.

Each function reads ``{agent: {(workload, load, seed): completion rate}}``
(:data:`Rates`, as :func:`mara_env.benchmarks.mara.evaluate.completion_rates` gives it) and returns a
Markdown table; ``python -m mara_env.benchmarks.mara.evaluate`` writes them beside its CSV.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mara_env.agents import mean_ci
from mara_env.benchmarks.common.seed_intervals import two_level_bootstrap

#: ``{agent: {(workload, load, seed): completion rate}}``.
Rates = dict[str, dict[tuple[str, float, int], float]]


def summarise(scores: Rates) -> str:
    """Markdown table: mean completion rate and 95% CI per agent, workload and load
    (``scores``: :func:`completion_rates` of an evaluation CSV)."""
    cells: dict[tuple[str, str, float], list[float]] = {}
    for agent, rates in scores.items():
        for (workload, load, _), rate in rates.items():
            cells.setdefault((agent, workload, load), []).append(rate)
    lines = [
        "| agent | workload | load | seeds | completion rate | 95% CI |",
        "|---|---|---|---|---|---|",
    ]
    averages: dict[tuple[str, float], list[float]] = {}
    for (agent, workload, load), values in sorted(cells.items()):
        summary = mean_ci(values)
        lines.append(
            f"| {agent} | {workload} | {load} | {len(values)} | {summary.mean:.3f} | "
            f"[{summary.low:.3f}, {summary.high:.3f}] |"
        )
        averages.setdefault((agent, load), []).append(summary.mean)
    lines += ["", "| agent | load | mean over workloads |", "|---|---|---|"]
    for (agent, load), means in sorted(averages.items()):
        lines.append(
            f"| {agent} | {load} | {sum(means) / len(means):.3f} ({len(means)} workloads) |"
        )
    return "\n".join(lines) + "\n"


def _require(scores: Rates, names: Sequence[str]) -> None:
    missing = [name for name in names if name not in scores]
    if missing:
        raise ValueError(f"No rows of {missing}; agents with rows: {sorted(scores)}.")


def paired_differences(scores: Rates, reference: str) -> str:
    """Markdown table: each agent's mean paired difference from ``reference`` with a 95% CI, at
    each load and, when there are several, over all of them.

    Episodes pair up by workload, load and seed; only pairs where both agents have a row count.

    Args:
        scores: :func:`completion_rates` of an evaluation CSV.
        reference: The agent every other one is compared with.

    Raises:
        ValueError: If ``reference`` has no rows.

    Example:
        >>> scores = {
        ...     "a": {("rl", 1.4, 1000): 0.5, ("rl", 1.4, 1001): 0.7, ("rl", 2.1, 1000): 0.2},
        ...     "b": {("rl", 1.4, 1000): 0.4, ("rl", 1.4, 1001): 0.5, ("rl", 2.1, 1000): 0.3},
        ... }
        >>> print(paired_differences(scores, "b").splitlines()[2])
        | a | 1.4 | 2 | +0.150 | [+0.100, +0.200] |
    """
    _require(scores, [reference])
    base = scores[reference]
    lines = [
        f"| agent | load | paired episodes | difference from {reference} | 95% CI |",
        "|---|---|---|---|---|",
    ]
    for agent, values in sorted(scores.items()):
        if agent == reference:
            continue
        shared = sorted(set(values) & set(base))
        loads = sorted({load for _, load, _ in shared})
        groups = [(f"{load:g}", [key for key in shared if key[1] == load]) for load in loads]
        if len(loads) > 1:
            groups.append(("all", shared))
        for label, keys in groups:
            summary = mean_ci([values[key] - base[key] for key in keys])
            lines.append(
                f"| {agent} | {label} | {len(keys)} | {summary.mean:+.3f} | "
                f"[{summary.low:+.3f}, {summary.high:+.3f}] |"
            )
    return "\n".join(lines) + "\n"


def training_seed_differences(scores: Rates, runs: Sequence[str], name: str) -> str:
    """Markdown table: a learned recipe, trained from several seeds (``runs``: the labels of
    its training runs), minus each other agent, with a 95% interval over training seeds and
    episodes (:func:`mara_env.benchmarks.common.seed_intervals.two_level_bootstrap`), at each load and
    over all of them. Only episodes every run and the other agent played count.

    Raises:
        ValueError: If a run has no rows.

    Example:
        >>> scores = {
        ...     "a0": {("rl", 1.4, 1000): 0.5, ("rl", 1.4, 1001): 0.7},
        ...     "a1": {("rl", 1.4, 1000): 0.6, ("rl", 1.4, 1001): 0.6},
        ...     "b": {("rl", 1.4, 1000): 0.4, ("rl", 1.4, 1001): 0.5},
        ... }
        >>> print(training_seed_differences(scores, ["a0", "a1"], "a").splitlines()[2])
        | a (2 training seeds) - b | 1.4 | 2 | +0.150 | [+0.100, +0.200] |
    """
    _require(scores, list(runs))
    lines = [
        f"| {name} minus | load | paired episodes | difference | 95% CI (training seeds and "
        "episodes) |",
        "|---|---|---|---|---|",
    ]
    shared_by_runs = set.intersection(*(set(scores[run]) for run in runs))
    for agent, values in sorted(scores.items()):
        if agent in runs:
            continue
        shared = sorted(shared_by_runs & set(values))
        loads = sorted({load for _, load, _ in shared})
        groups = [(f"{load:g}", [key for key in shared if key[1] == load]) for load in loads]
        if len(loads) > 1:
            groups.append(("all", shared))
        for label, keys in groups:
            differences = np.array(
                [[scores[run][key] - values[key] for key in keys] for run in runs]
            )
            summary = two_level_bootstrap(differences)
            lines.append(
                f"| {name} ({len(runs)} training seeds) - {agent} | {label} | {len(keys)} | "
                f"{summary.mean:+.3f} | [{summary.low:+.3f}, {summary.high:+.3f}] |"
            )
    return "\n".join(lines) + "\n"


def gap_closed(scores: Rates, low: str, high: str, n_resamples: int = 10_000, seed: int = 0) -> str:
    """Markdown table: the share of the ``low`` -> ``high`` gap each agent closes, per load.

    At each load, each agent's completion rate is the mean over workloads of its mean over
    seeds; the share is ``(agent - low) / (high - low)``. Its 95% interval resamples the seeds
    within each workload (the same resample for all three agents, since they played the same
    episodes). Only seeds that all three agents played count.

    Args:
        scores: :func:`completion_rates` of an evaluation CSV.
        low: The agent at 0 (e.g. ``"lara"``).
        high: The agent at 1 (e.g. ``"clairvoyant"``).
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator.

    Raises:
        ValueError: If ``low`` or ``high`` has no rows.
    """
    _require(scores, [low, high])
    rng = np.random.default_rng(seed)
    lines = [
        f"| agent | load | share of the {low} -> {high} gap closed | 95% CI |",
        "|---|---|---|---|",
    ]
    for agent in sorted(set(scores) - {low, high}):
        keys = set(scores[agent]) & set(scores[low]) & set(scores[high])
        for load in sorted({key[1] for key in keys}):
            cells = [
                sorted(key for key in keys if key[0] == workload and key[1] == load)
                for workload in sorted({key[0] for key in keys if key[1] == load})
            ]
            # Per row (the estimate, then each resample): the agent's, low's and high's sums
            # over workloads of their mean over seeds; sums give the same share as means.
            totals = np.zeros((n_resamples + 1, 3))
            for cell in cells:
                table = np.array(
                    [[scores[name][key] for key in cell] for name in (agent, low, high)]
                )
                picks = rng.integers(len(cell), size=(n_resamples, len(cell)))
                totals[0] += table.mean(axis=1)
                totals[1:] += table[:, picks].mean(axis=2).T
            share = (totals[:, 0] - totals[:, 1]) / (totals[:, 2] - totals[:, 1])
            interval = np.percentile(share[1:], [2.5, 97.5])
            lines.append(
                f"| {agent} | {load} | {share[0]:.3f} | [{interval[0]:.3f}, {interval[1]:.3f}] |"
            )
    return "\n".join(lines) + "\n"
