"""Playing the prediction benchmark's rows: their keys, the rows and pairs not yet in the files, and
the figures drawn from them.

:func:`make_keys` lists the rows of a run (predictor x cell, with the code and weights keys),
:func:`run_rows` scores those the results file lacks and :func:`run_pairs` the paired
comparisons, each appended the moment it is finished."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from mara_env.benchmarks.common.keys import Manifest, code_manifest
from mara_env.benchmarks.prediction.cells_figure import plot_cells, reported_cells
from mara_env.benchmarks.prediction.figure import figure_tasks, plot_figure
from mara_env.benchmarks.prediction.pairs import (
    PairsTable,
    evaluate_pair,
    row_errors,
)
from mara_env.benchmarks.prediction.protocols import (
    Cell,
    CellCases,
    PredictorBank,
)
from mara_env.benchmarks.prediction.reliability_figure import plot_reliability
from mara_env.benchmarks.prediction.report import (
    Pairs,
)
from mara_env.benchmarks.prediction.results import (
    ResultsTable,
    RowKey,
    evaluate_row,
    row_weights,
)
from mara_env.predictors.cases import PredictionTask
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES


def make_keys(
    bank: PredictorBank,
    cells: dict[Cell, CellCases],
    names: Sequence[str],
    held_out_names: Sequence[str],
    args: argparse.Namespace,
    draws: int,
) -> list[RowKey]:
    """The rows of this run, cell by cell (held-out checkpoints are loaded here)."""
    code = scored_manifest().digest
    keys = []
    for cell, cell_cases in cells.items():
        for name in names:
            if cell.protocol == "held_out" and name not in held_out_names:
                continue
            weights = row_weights(bank, name, cell_cases)
            keys.append(
                RowKey(
                    name,
                    cell.protocol,
                    cell.set,
                    cell.fraction,
                    args.seed,
                    args.samples,
                    draws,
                    code,
                    weights,
                )
            )
    return keys


def run_rows(
    table: ResultsTable,
    bank: PredictorBank,
    todo: Sequence[RowKey],
    cells: dict[Cell, CellCases],
    *,
    repeats: int,
    progress: bool,
) -> None:
    """Score the rows of ``todo``, adding each to ``table`` when it is done."""
    total = sum(len(cells[_cell(key)]) for key in todo)
    with tqdm(total=total, unit="case", disable=not progress) as bar:
        for key in todo:
            cell = _cell(key)
            bar.set_description(f"{key.predictor} {cell.label}")
            row = evaluate_row(bank, key, cells[cell], latency_repeats=repeats, on_chunk=bar.update)
            table.add(row)


def run_pairs(
    table: PairsTable,
    bank: PredictorBank,
    todo: Sequence[tuple[RowKey, RowKey]],
    cells: dict[Cell, CellCases],
    *,
    progress: bool,
) -> None:
    """Compare the pairs of rows of ``todo`` (:mod:`mara_env.benchmarks.prediction.pairs`), adding each
    to ``table`` when it is done; a row in several pairs is predicted once."""
    keys = list(dict.fromkeys(key for pair in todo for key in pair))
    errors: dict[RowKey, np.ndarray] = {}
    with tqdm(total=sum(len(cells[_cell(key)]) for key in keys), unit="case",
              disable=not progress) as bar:  # fmt: skip
        for first, second in todo:
            cell = _cell(first)
            bar.set_description(f"{first.predictor} - {second.predictor} {cell.label}")
            for key in (first, second):
                if key not in errors:
                    errors[key] = row_errors(bank, key, cells[cell], on_chunk=bar.update)
            table.add(evaluate_pair(first, second, errors[first], errors[second], cells[cell]))


def _cell(key: RowKey) -> Cell:
    return Cell(key.protocol, key.set, key.fraction)


def _write_figures(
    args: argparse.Namespace,
    bank: PredictorBank,
    tasks: dict[str, list[PredictionTask]],
    fractions: Sequence[float],
    rows: dict[tuple[str, Cell], dict[str, Any]],
    names: Sequence[str],
    cells: Sequence[Cell],
    pairs: Pairs,
) -> None:
    """``trajectories.png`` at the middle requested fraction, ``cells.png`` (with ``pairs``) and
    ``reliability.png`` (a note instead if matplotlib is missing, or if no cell has enough
    feasible cases for the last two)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("No figures: they need matplotlib (pip install 'mara-env[plot]').")
        return
    fraction = fractions[len(fractions) // 2]
    chosen = {
        family: figure_tasks(family_tasks, fraction, args.seed)
        for family, family_tasks in tasks.items()
    }
    shipped = {name: bank.version(name, None).predictor for name in bank.names}
    path = args.out / "trajectories.png"
    plot_figure(path, shipped, chosen, fraction, n_samples=args.samples, seed=args.seed)
    print(f"Wrote {path} ({fraction:.0%} observed).")
    if not reported_cells(rows, cells):
        print(f"No cells.png or reliability.png: no cell has {MIN_FEASIBLE_CASES} feasible cases.")
        return
    plot_cells(args.out / "cells.png", rows, names, cells, pairs)
    print(f"Wrote {args.out / 'cells.png'} (every cell's error and coverage).")
    plot_reliability(args.out / "reliability.png", rows, names, cells)
    print(f"Wrote {args.out / 'reliability.png'} (the deadline probabilities' reliability).")


#: The entry point of the scores: the rows' code and, through its imports, the predictors and
#: the simulator (the code a row's ``code`` key holds; its checkpoints are keyed by ``weights``).
SCORED_CODE = ("mara_env.benchmarks.prediction.results",)


def scored_manifest() -> Manifest:
    """What this run's rows depend on besides their weights: their ``code`` key is its digest
    (:func:`mara_env.benchmarks.common.keys.code_manifest` of :data:`SCORED_CODE`)."""
    return code_manifest(SCORED_CODE)
