"""Calibrate the training load: EDF's completion rate as the offered load grows.

The "training" preset should be hard but not hopeless: earliest deadline first (EDF) should
complete about 55% (50-60%) of the tasks that arrive. This script sweeps the ``load`` field of a
preset (everything else unchanged), runs EDF and random on the same seeds at each load, prints
mean completion rates with 95% bootstrap confidence intervals, and interpolates the load at
which EDF's mean crosses the target. Set ``mara_env.worlds.presets.TRAINING_LOAD`` to that value.

``load`` is relative to the workload: the arrival rate is ``load * n_nodes / mean_demand``.

Seeds are ``0 .. seeds - 1``: calibration tunes the training regime, so it plays training seeds
only, never the leaderboard's evaluation seeds (1000 and up; :mod:`mara_env.benchmarks.common.seeds`
refuses more than 1000 seeds).

Usage::

    python -m mara_env.benchmarks.leaderboard.load_calibration                      # training preset, 20 seeds
    python -m mara_env.benchmarks.leaderboard.load_calibration --loads 1.0 1.2 1.4 --seeds 30
    python -m mara_env.benchmarks.leaderboard.load_calibration --world-version 1      # Cluster-v1's rules

Example:
    >>> from mara_env.benchmarks.leaderboard.load_calibration import main
    >>> main(["--config", "tiny", "--loads", "0.5", "2.0", "--seeds", "2", "--workers", "1",
    ...       "--no-progress"])  # doctest: +ELLIPSIS
    load ...
    0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env import ConfigError, get_config
from mara_env.agents.statistics import Summary, mean_ci
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import add_world_version
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.seeds import require_training_seeds
from mara_env.benchmarks.leaderboard import Cell, available_cores, check_agents, run_cells

#: The loads swept by default.
DEFAULT_LOADS = (0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
#: EDF's target completion rate at the training load.
TARGET_RATE = 0.55


def interpolate_load(loads: Sequence[float], rates: Sequence[float], target: float) -> float | None:
    """The load at which ``rates`` (one per increasing load) first falls to ``target``.

    Linear interpolation between the two loads around the first crossing; ``None`` if the rates
    never cross the target.

    Example:
        >>> interpolate_load([1.0, 2.0], [0.75, 0.5], 0.6)
        1.6
        >>> interpolate_load([1.0, 2.0], [0.7, 0.6], 0.55) is None
        True
    """
    if len(loads) != len(rates):
        raise ValueError(f"interpolate_load: {len(loads)} loads but {len(rates)} rates.")
    for i, (load, rate) in enumerate(zip(loads, rates, strict=True)):
        if rate == target:
            return float(load)
        if i + 1 < len(loads) and (rate - target) * (rates[i + 1] - target) < 0:
            fraction = (rate - target) / (rate - rates[i + 1])
            return float(load + fraction * (loads[i + 1] - load))
    return None


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.leaderboard.load_calibration",
        description="Sweep the load and find where EDF completes the target share of tasks.",
    )
    parser.add_argument("--config", default="training", help="Preset to sweep (default training).")
    add_world_version(parser, default=None)
    parser.add_argument(
        "--loads",
        nargs="+",
        type=float,
        default=list(DEFAULT_LOADS),
        help=f"Loads to run, increasing (default {' '.join(map(str, DEFAULT_LOADS))}).",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=20,
        help="Episodes per load and agent, seeds 0..N-1 (default 20).",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["edf", "random"],
        help="Agents to run (default edf random); the first is calibrated.",
    )
    parser.add_argument(
        "--target",
        type=float,
        default=TARGET_RATE,
        help=f"Completion rate the first agent should reach (default {TARGET_RATE}).",
    )
    parser.add_argument(
        "--workers", type=int, default=available_cores(), help="Worker processes (default: cores)."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="Also write the table and the recommendation to this Markdown file.",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sweep and print the table and the recommended load; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    loads = list(args.loads)
    if any(load <= 0 for load in loads) or loads != sorted(set(loads)):
        parser.error(f"--loads must be distinct positive numbers in increasing order: {loads}")
    if args.seeds < 2:
        parser.error("--seeds must be >= 2 for a confidence interval.")
    try:
        seeds = require_training_seeds(range(args.seeds), where="--seeds")
    except ValueError as error:
        parser.error(str(error))
    if not 0.0 < args.target < 1.0:
        parser.error(f"--target must be a completion rate in (0, 1), got {args.target}.")
    try:
        rules = {} if args.world_version is None else {"world_version": args.world_version}
        configs = {load: get_config(args.config, load=load, **rules) for load in loads}
    except ConfigError as error:
        parser.error(str(error))
    check_agents(parser, args.agents, configs[loads[0]].world_version)
    cells = [
        Cell(agent, seed, configs[load], f"{args.config}@{load:g}")
        for load in loads
        for agent in args.agents
        for seed in seeds
    ]
    rows: list[dict[str, Any]] = []
    run_cells(
        cells,
        workers=args.workers,
        on_rows=rows.extend,
        progress=not args.no_progress,
        description="calibration",
    )
    rows.sort(key=lambda row: (row["agent"], row["config"], row["seed"]))  # not finishing order
    table = _summarise(rows, loads, args.agents, args.config)
    calibrated = args.agents[0]
    means = [table[load][calibrated].mean for load in loads]
    load = interpolate_load(loads, means, args.target)
    if load is None:
        verdict = (
            f"{calibrated}'s mean completion rate never crosses {args.target:.0%} over loads "
            f"{loads[0]:g}..{loads[-1]:g}; widen --loads."
        )
    else:
        verdict = (
            f"{calibrated} completes {args.target:.0%} of arrived tasks at load ~{load:.2f} "
            f"(linear interpolation over {args.seeds} seeds per load): recommended "
            f"TRAINING_LOAD = {load:.2f}."
        )
    print(_format(table, args.agents) + "\n\n" + verdict)
    if args.output is not None:
        _write_page(args.output, _format(table, args.agents), verdict, argv)
    return 0


def _write_page(path: Path, table: str, verdict: str, argv: Sequence[str] | None) -> None:
    """The sweep as a Markdown page: its command, machine, table and recommendation."""
    given = sys.argv[1:] if argv is None else argv
    command = " ".join(["python -m mara_env.benchmarks.leaderboard.load_calibration", *given])
    page = (
        f"# Load calibration\n\nWritten by `{command}` at commit {git_revision()} on "
        f"{platform_line()}.\n\n```\n{table}\n```\n\n{verdict}\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, page)


def _summarise(
    rows: list[dict[str, Any]], loads: Sequence[float], agents: Sequence[str], config: str
) -> dict[float, dict[str, Summary]]:
    table: dict[float, dict[str, Summary]] = {}
    for load in loads:
        label = f"{config}@{load:g}"
        table[load] = {
            agent: mean_ci(
                row["completion_rate"]
                for row in rows
                if row["config"] == label and row["agent"] == agent
            )
            for agent in agents
        }
        arrived = [row["arrived"] for row in rows if row["config"] == label]
        table[load]["arrived"] = mean_ci(arrived)
    return table


def _format(table: dict[float, dict[str, Summary]], agents: Sequence[str]) -> str:
    headings = ["load", *(f"{agent} (95% CI)" for agent in agents), "arrived"]
    lines = [headings]
    for load, summaries in table.items():
        lines.append(
            [
                f"{load:g}",
                *(f"{summaries[agent]:.3f}" for agent in agents),
                f"{summaries['arrived'].mean:.1f}",
            ]
        )
    widths = [max(len(row[i]) for row in lines) for i in range(len(headings))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in lines
    )


if __name__ == "__main__":
    raise SystemExit(main())
