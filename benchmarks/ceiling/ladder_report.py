"""The ladder's page and plot, from its store's rows (:mod:`mara_env.benchmarks.ceiling.ladder_episodes`).

Every statistic is over the episodes (a load and a seed) that every rung played, with 95%
percentile intervals over resamples of whole episodes, paired: the same resampled episodes for
every rung. A rung's **share of the optimum** is its completions over the optimum's, summed over
episodes.

Example:
    >>> rows = [
    ...     {"rung": rung, "load": 1.4, "seed": seed, "completed": done, "arrived": 10,
    ...      "status": "optimal" if rung == "optimum" else "", "solver_bound": done, "seconds": 1.0}
    ...     for seed in (1000, 1001)
    ...     for rung, done in (("random", 3), ("edf", 5), ("reach_planner", 5), ("mara", 6),
    ...                        ("lara_oracle", 6), ("clairvoyant", 7), ("optimum", 8), ("bound", 9))
    ... ]
    >>> summary = summarise(rows, resamples=50)
    >>> summary["share"]["clairvoyant"][0], summary["never_below"]
    (0.875, (2, 2))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.ceiling.ladder_episodes import BOUND, OPTIMUM, RUNGS, small_config
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision

Interval = tuple[float, float, float]
RESAMPLES = 2000


def _episodes(
    rows: Sequence[Mapping[str, Any]],
) -> tuple[list[tuple[float, int]], dict[str, np.ndarray], np.ndarray, list[Mapping[str, Any]]]:
    """The episodes every rung played, each rung's completions on them, the arrivals and the
    optimum's rows."""
    rungs = (*RUNGS, OPTIMUM, BOUND)
    found: dict[tuple[str, float, int], Mapping[str, Any]] = {
        (row["rung"], float(row["load"]), int(row["seed"])): row for row in rows
    }
    episodes = sorted(
        {(load, seed) for _, load, seed in found if all((r, load, seed) in found for r in rungs)}
    )
    completed = {
        rung: np.array(
            [found[rung, *episode]["completed"] for episode in episodes], dtype=np.float64
        )
        for rung in rungs
    }
    arrived = np.array(
        [found[OPTIMUM, *episode]["arrived"] for episode in episodes], dtype=np.float64
    )
    solved = [found[OPTIMUM, *episode] for episode in episodes]
    return episodes, completed, arrived, solved


def _interval(values: np.ndarray) -> Interval:
    low, high = np.quantile(values[1:], [0.025, 0.975])
    return float(values[0]), float(low), float(high)


def summarise(rows: Sequence[Mapping[str, Any]], resamples: int = RESAMPLES) -> dict[str, Any]:
    """The page's statistics (see the module docstring); ``never_below`` is (episodes where the
    optimum completes at least as many as the clairvoyant, episodes)."""
    episodes, completed, arrived, solved = _episodes(rows)
    if not episodes:
        raise ValueError(
            "the ladder's store holds no episode that every rung played; run the ladder first."
        )
    rng = np.random.default_rng(0)
    picks = np.concatenate(
        (
            np.arange(len(episodes))[None, :],
            rng.integers(len(episodes), size=(resamples, len(episodes))),
        )
    )  # row 0: the episodes themselves
    optimum = completed[OPTIMUM][picks].sum(axis=1)
    rate = {
        rung: _interval((done[picks] / arrived[picks]).mean(axis=1))
        for rung, done in completed.items()
    }
    loads = np.array([load for load, _ in episodes])
    by_load = {
        float(load): {
            rung: float((done / arrived)[loads == load].mean()) for rung, done in completed.items()
        }
        for load in np.unique(loads)
    }
    share = {rung: _interval(done[picks].sum(axis=1) / optimum) for rung, done in completed.items()}
    gap = (completed[OPTIMUM] - completed["clairvoyant"]) / arrived
    proven = np.array([row["status"] == "optimal" for row in solved])
    seconds = np.array([row["seconds"] for row in solved])
    bound_gap = (completed[BOUND] - completed[OPTIMUM])[proven]
    open_gap = (np.array([row["solver_bound"] for row in solved]) - completed[OPTIMUM])[~proven]
    return {
        "episodes": episodes,
        "rate": rate,
        "by_load": by_load,
        "share": share,
        "optimum_minus_clairvoyant": _interval(gap[picks].mean(axis=1)),
        "never_below": (int((completed[OPTIMUM] >= completed["clairvoyant"]).sum()), len(episodes)),
        "proven": (int(proven.sum()), len(episodes)),
        "open_gap": (
            float(open_gap.mean()) if len(open_gap) else 0.0,
            int(open_gap.max(initial=0)),
        ),
        "solve_seconds": (float(np.median(seconds)), float(seconds.max())),
        "bound_gap": (
            float(bound_gap.mean()) if len(bound_gap) else float("nan"),
            int(bound_gap.max(initial=0)),
            int((bound_gap == 0).sum()),
        ),
        "hopeless_share": float(1.0 - completed[BOUND].sum() / arrived.sum()),
    }


def markdown(summary: Mapping[str, Any], header: str) -> str:
    """The page."""
    loads = sorted({load for load, _ in summary["episodes"]})
    config = small_config(loads[0])
    lines = [
        "# The ceiling: each scheduler against the offline optimum",
        "",
        header,
        "",
        f"Small Cluster-v3 episodes: {config.n_nodes} nodes, {config.n_slots} slots, "
        f"{config.arrival_horizon} epochs of arrivals, loads {', '.join(f'{x:g}' for x in loads)}; "
        f"{len(summary['episodes'])} episodes (evaluation seeds), each played by every rung. The optimum "
        "knows every task and curve, present and future, and is solved exactly where the solver "
        "proves it within its time limit (`mara_env.agents.optimum`; see below); the bound is the node-epoch bound computed without solving.",
        "",
        "| rung | completion rate [95% CI] | share of the optimum's completions [95% CI] |",
        "| --- | ---: | ---: |",
    ]
    for rung in (*RUNGS, OPTIMUM, BOUND):
        value, low, high = summary["rate"][rung]
        s_value, s_low, s_high = summary["share"][rung]
        lines.append(
            f"| {rung} | {value:.3f} [{low:.3f}, {high:.3f}] | {s_value:.3f} [{s_low:.3f}, {s_high:.3f}] |"
        )
    by_load = summary["by_load"]
    counts = ", ".join(
        f"{sum(1 for x, _ in summary['episodes'] if x == load)} at {load:g}" for load in by_load
    )
    lines += [
        "",
        f"Per load (mean completion rate; episodes: {counts}):",
        "",
        "| rung | " + " | ".join(f"load {load:g}" for load in by_load) + " |",
        "| --- |" + " ---: |" * len(by_load),
    ]
    for rung in (*RUNGS, OPTIMUM, BOUND):
        lines.append(
            f"| {rung} | " + " | ".join(f"{by_load[load][rung]:.3f}" for load in by_load) + " |"
        )
    value, low, high = summary["optimum_minus_clairvoyant"]
    at_least, total = summary["never_below"]
    proven, solved = summary["proven"]
    median, longest = summary["solve_seconds"]
    mean_gap, worst_gap, tight = summary["bound_gap"]
    open_mean, open_worst = summary["open_gap"]
    lines += [
        "",
        f"- **Optimum minus clairvoyant:** {value:+.3f} [{low:+.3f}, {high:+.3f}] in completion rate; "
        f"the optimum completes at least as many tasks as the clairvoyant on {at_least} of {total} episodes.",
        f"- **Solved:** {proven} of {solved} episodes proven optimal. On the other {solved - proven} "
        "the time limit came first: the `optimum` row counts the best schedule known there (a lower "
        "bound on the optimum, so the other rows' shares are upper estimates on those episodes), "
        f"which the solver's own bound exceeds by {open_mean:.1f} tasks on average (at most "
        f"{open_worst}). Time per episode (the clairvoyant's copy, the solve, the play) median "
        f"{median:.1f} s, longest {longest:.1f} s. Every schedule was played in the environment, "
        "which counted the completions the program did.",
        f"- **The certified bound**, on the {proven} episodes proven optimal, exceeds the optimum by "
        f"{mean_gap:.2f} tasks on average (at most {worst_gap}), and equals it on {tight}. "
        f"{summary['hopeless_share']:.1%} of the arrived tasks are beyond any schedule's reach.",
        "",
        "![each rung's completions as a share of the optimum's](ladder.png)",
        "",
    ]
    return "\n".join(lines)


def plot(summary: Mapping[str, Any], path: Path) -> None:
    """Each rung's share of the optimum's completions with its (paired) interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rungs = (*RUNGS, OPTIMUM, BOUND)
    values = np.array([summary["share"][rung] for rung in rungs])
    figure, axes = plt.subplots(figsize=(6.5, 3.6))
    positions = np.arange(len(rungs))
    axes.barh(positions, values[:, 0], color=["#888"] * len(RUNGS) + ["#2a7", "#ccc"])
    axes.errorbar(values[:, 0], positions, xerr=[values[:, 0] - values[:, 1], values[:, 2] - values[:, 0]],
                  fmt="none", color="black", capsize=3)  # fmt: skip
    axes.axvline(1.0, color="#2a7", linestyle="--", linewidth=1)
    axes.set_yticks(positions, rungs)
    axes.invert_yaxis()
    axes.set_xlabel("completions, as a share of the offline optimum's (small Cluster-v3 episodes)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def write_report(rows: Sequence[Mapping[str, Any]], output: Path, *, seconds: float) -> Path:
    """Write ``ladder.md`` and ``ladder.png`` in ``output``; the page's path."""
    summary = summarise(rows)
    header = (
        f"Written by `python -m mara_env.benchmarks.ceiling.ladder` at revision {git_revision()}, "
        f"in {seconds:.0f} s (episodes already in the store reused) on {platform_line()}."
    )
    page = output / "ladder.md"
    write_atomically(page, markdown(summary, header))
    plot(summary, output / "ladder.png")
    return page
