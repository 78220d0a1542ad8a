"""The command line of the static-bundle benchmark (``python -m mara_env.benchmarks.baselines.static_bundle``)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from mara_env import TraceSource, default_trace_source
from mara_env.agents import known_agents, make_agent
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.baselines.static_bundle.bundles import (
    BUNDLES,
    DEFAULT_BUNDLE,
    N_TASKS,
    BundleSpec,
    bundle_config,
    draw_bundle,
)
from mara_env.benchmarks.baselines.static_bundle.calibration import CALIBRATION_SEEDS, calibrate
from mara_env.benchmarks.baselines.static_bundle.log import (
    BundleLog,
    setup_fingerprint,
    setup_manifest,
)
from mara_env.benchmarks.baselines.static_bundle.play import play
from mara_env.benchmarks.baselines.static_bundle.report import (
    markdown_table,
    results_markdown,
    side_by_side,
)
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.sim.workload import build_workload

#: The schedulers LaiRA compares (and the reference), by their names in :data:`agents.AGENTS`;
#: names not registered when the script runs are skipped with a note.
BUNDLE_AGENTS = (
    "clairvoyant",
    "laira",
    "sta",
    "lara",
    "lara_proportional",
    "uniform",
    "round_robin",
    "edf",
    "successive_halving",
    "successive_halving_stream",
)
DEFAULT_SEEDS = 10
QUICK_SEEDS = 2
DEFAULT_OUTPUT = Path("benchmarks/results/static_bundle")
#: ``--calibrate --quick``: a smoke run of the calibration (3 scales, 3 seeds).
QUICK_CALIBRATION_SCALES = (1.0, 2.0, 3.0)
QUICK_CALIBRATION_SEEDS = range(CALIBRATION_SEEDS.start, CALIBRATION_SEEDS.start + 3)


def describe(spec: BundleSpec) -> str:
    """One line on how a bundle's deadlines and hopeless tasks are set."""
    low, high = bundle_config().slack_range
    text = (
        f"{N_TASKS} tasks at epoch 0 on 1 node, test-split curves; deadline = "
        f"ceil({spec.deadline_scale:g} * slack * demand), slack ~ U({low:g}, {high:g})"
    )
    if spec.unreachable:
        text += f"; {spec.unreachable} target(s) below anything the curve reaches"
    if spec.too_short:
        text += f"; {spec.too_short} deadline(s) shorter than the task needs alone"
    return text + "."


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.baselines.static_bundle",
        description="LaiRA-style static bundle: 10 mixed tasks at once on one node.",
    )
    parser.add_argument(
        "--bundle",
        choices=list(BUNDLES),
        default=DEFAULT_BUNDLE,
        help=f"Which bundle (default {DEFAULT_BUNDLE}; see mara_env.benchmarks.baselines.static_bundle.bundles).",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help=f"Bundles (seeds 0..N-1; default {DEFAULT_SEEDS}, {QUICK_SEEDS} with --quick).",
    )
    parser.add_argument("--quick", action="store_true", help=f"Only {QUICK_SEEDS} seeds.")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(BUNDLE_AGENTS),
        metavar="AGENT",
        help=f"Agents to run (default: {' '.join(BUNDLE_AGENTS)}; unregistered ones skipped).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"Where bundle.csv and results.md go (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument("--no-resume", action="store_true", help="Start DIR/bundle.csv afresh.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.add_argument(
        "--calibrate",
        action="store_true",
        help=(
            "Calibrate the paper bundle's deadline scale on seeds "
            f"{CALIBRATION_SEEDS.start}-{CALIBRATION_SEEDS.stop - 1} and write "
            "DIR/calibration.md (with --quick: 3 scales, 3 seeds)."
        ),
    )
    return parser


def run_calibration(args: argparse.Namespace) -> int:
    """``--calibrate``: print and write the calibration table and the chosen scale."""
    progress = not args.no_progress
    if args.quick:
        result = calibrate(QUICK_CALIBRATION_SCALES, QUICK_CALIBRATION_SEEDS, progress=progress)
    else:
        result = calibrate(progress=progress)
    command = "python -m mara_env.benchmarks.baselines.static_bundle --calibrate" + (
        " --quick" * args.quick
    )
    text = f"{result.markdown()}\n\nProduced by `{command}`.\n"
    print(text)
    print(f"Chosen deadline scale: {result.chosen:.2f} (PAPER_DEADLINE_SCALE in bundles.py).")
    args.output.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output / "calibration.md", f"# Paper bundle calibration\n\n{text}")
    return 0


def write_results(log: BundleLog, setups: dict[str, str], agents: Sequence[str]) -> None:
    """``results.md`` beside the CSV: every bundle that has rows of the current code."""
    sections, rows_by_bundle = {}, {}
    for name, setup in setups.items():
        rows = log.rows_of(setup)
        if rows:
            command = f"`python -m mara_env.benchmarks.baselines.static_bundle --bundle {name}`"
            text = f"{describe(BUNDLES[name])} Command: {command}."
            rows_by_bundle[name] = rows
            sections[name] = (text, markdown_table(rows, names_in(rows, agents)))
    names = names_in([row for rows in rows_by_bundle.values() for row in rows], agents)
    overview = side_by_side(rows_by_bundle, names) if rows_by_bundle else ""
    write_atomically(log.store.path.parent / "results.md", results_markdown(sections, overview))


def names_in(rows: Sequence[dict[str, Any]], agents: Sequence[str]) -> list[str]:
    """``agents``, then any other agent that has rows, in order of appearance."""
    return list(dict.fromkeys([*agents, *(row["agent"] for row in rows)]))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bundle benchmark; returns the process exit code."""
    args = build_parser().parse_args(argv)
    if args.calibrate:
        return run_calibration(args)
    registered = set(known_agents(variants=True))
    agents = [agent for agent in dict.fromkeys(args.agents) if agent in registered]
    for agent in dict.fromkeys(args.agents):
        if agent not in registered:
            print(f"note: agent {agent!r} is not registered; skipped.", file=sys.stderr)
    if not agents:
        print("No registered agent to run.", file=sys.stderr)
        return 2
    n_seeds = args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    if n_seeds > CALIBRATION_SEEDS.start:
        print(
            f"note: seeds {CALIBRATION_SEEDS.start} and up calibrated the paper bundle's "
            "deadlines; results on them are not independent of that choice.",
            file=sys.stderr,
        )
    config = bundle_config()
    source = default_trace_source()
    spec = BUNDLES[args.bundle]
    setups = {name: setup_fingerprint(other, config, source) for name, other in BUNDLES.items()}
    setup = setups[args.bundle]
    try:
        log = BundleLog(args.output / "bundle.csv", resume=not args.no_resume)
        log.store.record_manifest(setup_manifest(spec, config, source))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    ran = run_seeds(log, spec, setup, agents, n_seeds, source, progress=not args.no_progress)
    wanted = [row for row in log.rows_of(setup) if row["seed"] < n_seeds and row["agent"] in agents]
    write_results(log, setups, agents)
    print(markdown_table(wanted, agents))
    print(
        f"\nbundle {args.bundle!r}: {describe(spec)} Seeds 0..{n_seeds - 1}: {ran} episode(s) "
        f"run in {time.perf_counter() - start:.1f} s; rows in {log.store.path}."
    )
    return 0


def run_seeds(
    log: BundleLog,
    spec: BundleSpec,
    setup: str,
    agents: Sequence[str],
    n_seeds: int,
    source: TraceSource,
    *,
    progress: bool,
) -> int:
    """Play every (agent, seed) pair not yet in ``log``; returns the episodes played."""
    config = bundle_config()
    workload = build_workload(config, source)
    done = log.done(setup)
    ran = 0
    for seed in tqdm(range(n_seeds), desc=f"{spec.name} bundles", disable=not progress):
        todo = [agent for agent in agents if (agent, seed) not in done]
        if not todo:
            continue
        tasks = draw_bundle(workload, np.random.default_rng(seed), spec)
        rows = []
        for agent in todo:
            metrics = play(make_agent(agent), tasks, config, seed, trace_source=source)
            rows.append({"setup": setup, "bundle": spec.name, "agent": agent, "seed": seed})
            rows[-1].update(metrics)
            ran += 1
        log.append(rows)
    return ran
