"""The command line of the verdict diagnostics (``python -m mara_env.benchmarks.prediction.verdicts``)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tqdm.auto import tqdm

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import positive_float, positive_int
from mara_env.benchmarks.common.figures import PlotsUnavailable
from mara_env.benchmarks.common.threads import one_torch_thread_if_loaded
from mara_env.benchmarks.prediction.verdicts.figure import plot_rates
from mara_env.benchmarks.prediction.verdicts.record import (
    DEFAULT_PREDICTORS,
    DEFAULT_SEEDS,
    DRIVER,
    VerdictRecord,
    VerdictSettings,
    build_predictors,
    record_episode,
)
from mara_env.benchmarks.prediction.verdicts.summary import (
    compact_table,
    csv_text,
    markdown_table,
    summarise,
)

DEFAULT_OUTPUT = Path("benchmarks/results/verdicts")
#: ``--quick``: one seed, arrivals during 30 epochs.
QUICK_SEEDS = 1
QUICK_ARRIVAL_HORIZON = 30


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.verdicts",
        description=(
            "False-negative and false-positive rates of predictors' 'infeasible' verdicts "
            "against the privileged truth, by number of reports (training preset and seeds)."
        ),
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help=(
            f"Episodes: seeds {DEFAULT_SEEDS[0]}.. (default {len(DEFAULT_SEEDS)}; "
            f"{QUICK_SEEDS} with --quick)."
        ),
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_SEEDS} seed, arrivals during {QUICK_ARRIVAL_HORIZON} epochs.",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=list(DEFAULT_PREDICTORS),
        metavar="NAME",
        help=f"Registered predictors (default: {' '.join(DEFAULT_PREDICTORS)}).",
    )
    parser.add_argument(
        "--threshold",
        type=positive_float,
        default=0.5,
        help="Infeasible when the predicted success probability is below this (default 0.5).",
    )
    parser.add_argument(
        "--samples", type=positive_int, default=32, help="Samples per prediction (default 32)."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"Where verdicts.md, verdicts.csv and verdicts.png go (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument(
        "--no-laira", action="store_true", help="Do not judge with LaiRA's own look-ahead."
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def settings_from(args: argparse.Namespace) -> VerdictSettings:
    """The settings the arguments ask for (``ValueError`` for bad ones)."""
    count = args.seeds or (QUICK_SEEDS if args.quick else len(DEFAULT_SEEDS))
    first = DEFAULT_SEEDS[0]
    return VerdictSettings(
        seeds=tuple(range(first, first + count)),
        predictors=tuple(dict.fromkeys(args.predictors)),
        threshold=args.threshold,
        n_samples=args.samples,
        arrival_horizon=QUICK_ARRIVAL_HORIZON if args.quick else None,
        laira=not args.no_laira,
    )


def seed_range(seeds: Sequence[int]) -> str:
    """``"seed 100"`` or ``"seeds 100-109"``.

    Example:
        >>> seed_range([100]), seed_range(range(100, 110))
        ('seed 100', 'seeds 100-109')
    """
    return f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}-{seeds[-1]}"


def describe(settings: VerdictSettings, records: Sequence[VerdictRecord]) -> str:
    """What was judged, in one paragraph."""
    horizon = settings.config.arrival_horizon
    tasks = len({(record.seed, record.task) for record in records})
    return (
        f"Preset `{settings.preset}` (load {settings.config.load:g}, train split, arrivals "
        f"during {horizon} epochs), {seed_range(settings.seeds)}, episodes played by "
        f"`{DRIVER}`; {len(records)} judgements of {tasks} tasks. Infeasible = predicted "
        f"probability of success by the deadline with all {settings.config.n_nodes} nodes below "
        f"{settings.threshold:g} ({settings.n_samples} samples); `laira` is the shipped LaiRA's "
        "own look-ahead (DKF in node-epochs, calibrated probability) at its own threshold "
        f"({settings.thresholds().get('laira', float('nan')):g}); truth from the clairvoyant "
        "reference's exact epochs to target. Counts are judgements (tasks); intervals are 95% "
        "bootstrap intervals over tasks."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the diagnostics; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        predictors = build_predictors(settings)
    except ImportError as error:
        print(f"error: a predictor needs an optional dependency: {error}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    records: list[VerdictRecord] = []
    with one_torch_thread_if_loaded():
        for seed in tqdm(settings.seeds, desc="episodes", disable=args.no_progress):
            records += record_episode(settings, seed, predictors)
    rows = summarise(records, settings.thresholds())
    table = markdown_table(rows)
    shown = [arg for arg in (sys.argv[1:] if argv is None else argv) if arg != "--no-progress"]
    command = " ".join(["python -m mara_env.benchmarks.prediction.verdicts", *shown])
    text = (
        f"{describe(settings, records)}\n\n{table}\n\nIn short (the README's table):\n\n"
        f"{compact_table(rows)}\n\nProduced by `{command}`.\n"
    )
    args.output.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output / "verdicts.md", f"# Verdict diagnostics\n\n{text}")
    write_atomically(args.output / "verdicts.csv", csv_text(rows))
    print(text)
    try:
        plot_rates(rows, args.output / "verdicts.png", title=describe_short(settings))
    except PlotsUnavailable as error:
        print(f"note: {error}", file=sys.stderr)
    print(f"{len(records)} judgements in {time.perf_counter() - start:.1f} s; in {args.output}.")
    return 0


def describe_short(settings: VerdictSettings) -> str:
    """The figure's title."""
    return (
        f"'infeasible' verdicts (success probability < {settings.threshold:g} with all nodes) "
        f"vs the truth; {settings.preset} preset, {seed_range(settings.seeds)}, driver {DRIVER}"
    )
