"""Paired comparisons of the prediction benchmark: one predictor's median error minus another's.

Two predictors' rows on a cell score the same cases, so their difference is best judged on
those cases together: the bootstrap resamples whole curves, the same ones for both predictors
(:func:`mara_env.predictors.bootstrap.bootstrap_median_difference_interval`), and what makes a curve hard
for both cancels out. An interval that excludes 0 says which predictor errs less there; one
that holds 0 says the cell does not tell them apart. This is sharper than asking whether the two
rows' own intervals overlap.

``pairs.csv`` holds one row per (predictor, baseline, cell), keyed like ``results.csv`` (both
predictors' weights in ``weights``), appended as each is done, so a re-run reuses them. The
samples are each row's own (:func:`mara_env.benchmarks.prediction.results.row_samples`), so a pair's
medians are its two rows' ``median_log_error``.

Example:
    >>> first = RowKey("flow_matching", "test", "rl", 0.2, 0, 64, 4, "abc", "w")
    >>> second = RowKey("dkf", "test", "rl", 0.2, 0, 64, 4, "abc", "none")
    >>> PairKey.between(first, second).weights
    'w/none'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.benchmarks.prediction.protocols import CellCases, PredictorBank
from mara_env.benchmarks.prediction.results import (
    BenchmarkTable,
    RowKey,
    case_curves,
    row_samples,
    schema_of,
)
from mara_env.predictors.bootstrap import bootstrap_median_difference_interval
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES, beyond_cap_as_never, log_ratio_errors

PAIR_KEY_COLUMNS = (
    "predictor",
    "baseline",
    "protocol",
    "set",
    "fraction",
    "seed",
    "samples",
    "draws_per_curve",
    "code",
    "weights",
)
PAIR_METRIC_COLUMNS = ("feasible_cases", "difference", "difference_low", "difference_high")
PAIR_SCHEMA = schema_of((*PAIR_KEY_COLUMNS, *PAIR_METRIC_COLUMNS))


@dataclass(frozen=True)
class PairKey:
    """What identifies one row of ``pairs.csv`` (:data:`PAIR_KEY_COLUMNS`); ``weights`` is the
    two rows' ``weights`` joined by ``/``."""

    predictor: str
    baseline: str
    protocol: str
    set: str
    fraction: float
    seed: int
    samples: int
    draws_per_curve: int
    code: str
    weights: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> PairKey:
        """The key of a parsed row."""
        return cls(*(row[column] for column in PAIR_KEY_COLUMNS))

    @classmethod
    def between(cls, first: RowKey, second: RowKey) -> PairKey:
        """The pair of two rows of the same cell."""
        return cls(
            first.predictor,
            second.predictor,
            first.protocol,
            first.set,
            first.fraction,
            first.seed,
            first.samples,
            first.draws_per_curve,
            first.code,
            f"{first.weights}/{second.weights}",
        )


class PairsTable(BenchmarkTable):
    """``pairs.csv``: one row per (predictor, baseline, cell), keyed by :data:`PAIR_KEY_COLUMNS`.

    Args:
        path: The CSV file.
        resume: Keep the pairs already in the file; otherwise start afresh.

    Raises:
        ResultsFileError: If the existing file has other columns or cannot be parsed.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        super().__init__(path, PAIR_SCHEMA, PAIR_KEY_COLUMNS, resume=resume)

    def done(self) -> set[PairKey]:
        """Keys of the pairs already in the file."""
        return {PairKey.of(row) for row in self.rows}


def row_errors(
    bank: PredictorBank,
    key: RowKey,
    cell_cases: CellCases,
    *,
    on_chunk: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Each feasible case's ``|ln(c(median) / c(truth))|`` of row ``key`` (its own samples,
    :func:`mara_env.benchmarks.prediction.results.row_samples`; beyond the cap read as "never", as the
    row scores them)."""
    samples = row_samples(bank, key, cell_cases, on_chunk=on_chunk)
    cases = cell_cases.cases
    errors = log_ratio_errors(beyond_cap_as_never(samples, cases.cap), cases.truth, cases.cap)
    return errors[np.isfinite(cases.truth)]


def evaluate_pair(
    first: RowKey,
    second: RowKey,
    first_errors: np.ndarray,
    second_errors: np.ndarray,
    cell_cases: CellCases,
) -> dict[str, Any]:
    """The finished ``pairs.csv`` row of ``first.predictor`` against ``second.predictor`` on
    ``cell_cases``, given their :func:`row_errors`: the difference of their median errors on
    the feasible cases, with its paired 95% interval (curves resampled, by the cell's bootstrap
    generator)."""
    curves = case_curves(cell_cases.cases)[np.isfinite(cell_cases.cases.truth)]
    low, high = bootstrap_median_difference_interval(
        first_errors, second_errors, first.bootstrap_rng(), groups=curves
    )
    scores = {
        "feasible_cases": float(len(curves)),
        "difference": float(np.median(first_errors) - np.median(second_errors)),
        "difference_low": low,
        "difference_high": high,
    }
    return {
        **dict(zip(PAIR_KEY_COLUMNS, astuple(PairKey.between(first, second)), strict=True)),
        **scores,
    }


def pair_keys(
    keys: Sequence[RowKey],
    rows: Mapping[RowKey, Mapping[str, Any]],
    predictor: str,
    baselines: Sequence[str],
    fractions: Sequence[float],
) -> list[tuple[RowKey, RowKey]]:
    """The (``predictor``'s row, a baseline's row) pairs of ``keys`` to compare: on every cell
    at ``fractions`` where both were scored and ``predictor``'s row has at least
    :data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases."""
    by_cell: dict[tuple[str, str, float], dict[str, RowKey]] = {}
    for key in keys:
        by_cell.setdefault((key.protocol, key.set, key.fraction), {})[key.predictor] = key
    pairs = []
    for (_, _, fraction), named in by_cell.items():
        first = named.get(predictor)
        if fraction not in fractions or first is None:
            continue
        if rows[first]["feasible_cases"] < MIN_FEASIBLE_CASES:
            continue
        pairs += [(first, named[name]) for name in baselines if name in named]
    return pairs
