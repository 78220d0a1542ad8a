"""Compare two flow-matching checkpoints on the validation cases of the train split, paired.

How the shipped student was chosen, and how to choose between models of your own without
touching the test split: both checkpoints predict the same cases
(:func:`mara_env.predictors.calibration.validation_cases`: the validation curves their cards' seed sets
aside, the tasks as drawn and under each length or resolution shift) from the same noise, and
each cell reports both median errors and the paired difference, first minus second, with a 95%
interval that resamples whole curves for both (a curve appears in every task set, so the pooled
rows resample it once). Cells with fewer than 30 feasible cases read ``too small``. Run::

    python -m mara_env.benchmarks.prediction.validation_comparison mine/flow_matching.pt \\
        predictors/checkpoints/flow_matching.pt
    python -m mara_env.benchmarks.prediction.validation_comparison A.pt B.pt --pooled-only

Both checkpoints must have been trained on the same split (the same seed and families, from
their cards); otherwise one model's validation curves are the other's training curves.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.prediction.results import case_curves
from mara_env.curves.sources import default_trace_source
from mara_env.predictors.bootstrap import bootstrap_median_difference_interval
from mara_env.predictors.calibration import split_train_curves, validation_cases
from mara_env.predictors.checkpoint import card_path
from mara_env.predictors.flow_matching import FlowMatching
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES, log_ratio_errors


@dataclass(frozen=True)
class CellErrors:
    """Both checkpoints' errors on one cell's feasible cases, and each case's curve."""

    name: str
    first: np.ndarray
    second: np.ndarray
    curves: np.ndarray


def training_split(path: Path) -> tuple[int, tuple[str, ...]]:
    """(seed, families) of the split a checkpoint was trained on, from its card."""
    card = json.loads(card_path(path).read_text())
    return int(card["facts"]["seed"]), tuple(card["config"]["known_families"])


def cell_errors(
    first: FlowMatching, second: FlowMatching, seed: int, samples: int
) -> list[CellErrors]:
    """Per validation cell (task set x family x fraction), both models' errors."""
    _, curves = split_train_curves(default_trace_source(), first.config.known_families, seed)
    cells = []
    for group in validation_cases(curves, seed):
        cases = group.cases
        if len(cases) == 0:
            continue
        feasible = np.isfinite(cases.truth)
        errors = [
            log_ratio_errors(
                model.predict(list(cases.histories), samples, np.random.default_rng(seed)).samples,
                cases.truth,
                cases.cap,
            )[feasible]
            for model in (first, second)
        ]
        name = f"{group.task_set} {cases.histories[0].family} {cases.fraction:.0%}"
        # a curve keeps its name in every task set, so pooled rows resample it once
        cells.append(CellErrors(name, errors[0], errors[1], case_curves(cases)[feasible]))
    return cells


def pooled(cells: Sequence[CellErrors]) -> list[CellErrors]:
    """Every task set and family together, per observed fraction."""
    fractions = dict.fromkeys(cell.name.rsplit(" ", 1)[1] for cell in cells)
    rows = []
    for fraction in fractions:
        chosen = [cell for cell in cells if cell.name.endswith(f" {fraction}")]
        rows.append(
            CellErrors(
                f"pooled {fraction}",
                np.concatenate([cell.first for cell in chosen]),
                np.concatenate([cell.second for cell in chosen]),
                np.concatenate([cell.curves for cell in chosen]),
            )
        )
    return rows


def table_row(cell: CellErrors) -> str:
    """A markdown row: cell, feasible cases, both medians, the paired difference."""
    n = cell.first.size
    if n < MIN_FEASIBLE_CASES:
        return f"| {cell.name} | {n} | too small | too small | too small |"
    low, high = bootstrap_median_difference_interval(
        cell.first, cell.second, np.random.default_rng(0), groups=cell.curves
    )
    first, second = float(np.median(cell.first)), float(np.median(cell.second))
    return (
        f"| {cell.name} | {n} | {first:.3f} | {second:.3f} | "
        f"{first - second:+.3f} [{low:+.3f}, {high:+.3f}] |"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.validation_comparison",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("first", type=Path, help="a flow-matching checkpoint (.pt)")
    parser.add_argument("second", type=Path, help="the checkpoint to compare it with (.pt)")
    parser.add_argument(
        "--samples", type=positive_int, default=64, help="samples per case (default 64)"
    )
    parser.add_argument("--pooled-only", action="store_true", help="print the pooled rows only")
    args = parser.parse_args(argv)
    splits = []
    for path in (args.first, args.second):
        if not path.is_file() or not card_path(path).is_file():
            parser.error(f"{path}: no checkpoint with its JSON card beside it")
        try:
            splits.append(training_split(path))
        except (KeyError, TypeError, ValueError):
            parser.error(
                f"{card_path(path)}: the card names no training split (facts.seed and "
                "config.known_families); train the checkpoint with "
                "python -m mara_env.benchmarks.prediction.train"
            )
    if splits[0] != splits[1]:
        parser.error(
            f"{args.first} and {args.second} were trained on different splits (seed, families "
            f"{splits[0]} against {splits[1]}): one model's validation curves would be the "
            "other's training curves."
        )
    args.seed = splits[0][0]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison table; returns the exit status."""
    args = parse_args(argv)
    seed = args.seed
    first, second = FlowMatching.load(args.first), FlowMatching.load(args.second)
    cells = cell_errors(first, second, seed, args.samples)
    print(f"Validation cases of the train split (seed {seed}), {args.samples} samples per case.")
    print(f"first: {args.first}; second: {args.second}. Median |ln(predicted / true)|.\n")
    print("| cell | feasible | first | second | first - second [95% CI] |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for cell in ([] if args.pooled_only else cells) + pooled(cells):
        print(table_row(cell))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
