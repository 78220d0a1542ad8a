"""Rows of the prediction benchmark: how one predictor x cell is scored, and ``results.csv``.

A row is keyed by :data:`KEY_COLUMNS`: the predictor, the cell (protocol, set, fraction), the
seed, samples per case, target draws per curve, the fingerprint of the code the scores depend on
(this module's import closure and the trace data:
:func:`mara_env.benchmarks.prediction.runs.scored_manifest`) and the SHA-256 prefixes of the
checkpoints its predictor versions were loaded from (``none`` for untrained predictors). A row
whose key is already in the file is not run again; a row that other code or weights produced is
never reused.

Every row samples from its own generator, seeded by the seed, predictor and cell
(:meth:`RowKey.rng`), so its figures do not depend on which other rows run. The bootstraps of
its median error and coverage resample whole curves (a curve's cases are not independent) and
draw from a generator seeded by the cell alone (:meth:`RowKey.bootstrap_rng`): every
predictor's scores on a cell are resampled alike.

Example:
    >>> key = RowKey("wls", "test", "rl", 0.2, 0, 64, 4, "abc", "none")
    >>> RowKey.of(dict(zip(KEY_COLUMNS, ["wls", "test", "rl", 0.2, 0, 64, 4, "abc", "none"]))) == key
    True
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env.benchmarks.common.threads import one_torch_thread_if_loaded
from mara_env.benchmarks.prediction.protocols import CellCases, PredictorBank
from mara_env.predictors.base import Predictor, TaskHistory
from mara_env.predictors.cases import PredictionCases
from mara_env.predictors.metrics import score_cell
from mara_env.predictors.success_scores import RELIABILITY_COLUMNS

#: Cases per ``predict`` call (bounds memory; learned predictors batch within a call).
PREDICT_CHUNK = 256
#: One epoch's worth of tasks for the latency figure, and the samples each.
LATENCY_TASKS = 16
LATENCY_SAMPLES = 32
#: Untimed ``predict`` calls before the timed ones.
LATENCY_WARMUP = 3

KEY_COLUMNS = (
    "predictor",
    "protocol",
    "set",
    "fraction",
    "seed",
    "samples",
    "draws_per_curve",
    "code",
    "weights",
)
METRIC_COLUMNS = (
    "cases",
    "feasible_cases",
    "infeasible_cases",
    "median_log_error",
    "median_log_error_low",
    "median_log_error_high",
    "median_log_ratio",
    "coverage_80",
    "coverage_80_low",
    "coverage_80_high",
    "below_80",
    "above_80",
    "crps_log",
    "infeasibility_auc",
    "brier",
    "success_calibration_error",
    "success_calibration_error_low",
    "success_calibration_error_high",
    "never_before",
    "never_before_cases",
    "never_after",
    "never_after_cases",
    "latency_ms",
    *RELIABILITY_COLUMNS,
)
COLUMNS = (*KEY_COLUMNS, *METRIC_COLUMNS)
_TEXT_COLUMNS = frozenset({"predictor", "baseline", "protocol", "set", "code", "weights"})
_INT_COLUMNS = frozenset({"seed", "samples", "draws_per_curve"})


def schema_of(columns: Sequence[str]) -> dict[str, type]:
    """Each column's type: text (names, fingerprints), whole numbers (seed and counts of the
    run's settings), and floats for the rest."""
    return {
        column: str if column in _TEXT_COLUMNS else int if column in _INT_COLUMNS else float
        for column in columns
    }


SCHEMA = schema_of(COLUMNS)


class PredictionOutputError(ValueError):
    """A predictor returned samples of the wrong shape or with NaN / negative work."""


@dataclass(frozen=True)
class RowKey:
    """What identifies one row of ``results.csv`` (:data:`KEY_COLUMNS`)."""

    predictor: str
    protocol: str
    set: str
    fraction: float
    seed: int
    samples: int
    draws_per_curve: int
    code: str
    weights: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> RowKey:
        """The key of a parsed row."""
        return cls(*(row[column] for column in KEY_COLUMNS))

    def _cell_seed(self) -> list[int]:
        salt = [zlib.crc32(self.protocol.encode()), zlib.crc32(self.set.encode())]
        return [self.seed, *salt, round(self.fraction * 1_000_000)]

    def rng(self) -> np.random.Generator:
        """The row's own generator of samples (independent of other rows)."""
        return np.random.default_rng([*self._cell_seed(), zlib.crc32(self.predictor.encode())])

    def bootstrap_rng(self) -> np.random.Generator:
        """The generator of the row's bootstrap: the same for every predictor of a cell."""
        return np.random.default_rng([*self._cell_seed(), 0xB007])


# --------------------------------------------------------------------------------- results file
class BenchmarkTable:
    """A CSV file of finished rows of the prediction benchmark, each appended and ``fsync``-ed
    as it ends: a thin use of :class:`mara_env.benchmarks.common.store.ResultsStore`, keyed by columns
    that include the code and weights fingerprints.

    Args:
        path: The CSV file.
        schema: Each column's type (:func:`schema_of`).
        key: The key columns.
        resume: Keep the rows already in the file; otherwise start afresh (the first row
            added replaces the file).

    Raises:
        ResultsFileError: If the existing file has other columns or a row that cannot be
            parsed.
    """

    def __init__(
        self, path: Path, schema: dict[str, type], key: Sequence[str], *, resume: bool
    ) -> None:
        try:
            self.store = ResultsStore(path, schema, key=key, fresh=not resume, advice=_ADVICE)
        except ResultsFileError as error:
            raise self._refusal(path, error) from None

    def _refusal(self, path: Path, error: ResultsFileError) -> ResultsFileError:
        """The error that refuses a file this table cannot resume from."""
        return ResultsFileError(str(error))

    @property
    def path(self) -> Path:
        """The CSV file."""
        return self.store.path

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every parsed row, in file order."""
        return self.store.rows

    def add(self, row: dict[str, Any]) -> None:
        """Append ``row`` to the file (flushed and ``fsync``-ed)."""
        self.store.append(row)


class ResultsTable(BenchmarkTable):
    """``results.csv``: one row per predictor x cell, keyed by :data:`KEY_COLUMNS`.

    Args:
        path: The CSV file.
        resume: As :class:`BenchmarkTable`.

    Raises:
        ResultsFileError: If the existing file has other columns (e.g. an earlier version's,
            keyed by workload) or a row that cannot be parsed.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        super().__init__(path, SCHEMA, KEY_COLUMNS, resume=resume)

    def _refusal(self, path: Path, error: ResultsFileError) -> ResultsFileError:
        if error.found is not None and "workload" in error.found:
            return ResultsFileError(
                f"{path} was written by an earlier version of this benchmark: its rows are "
                "keyed by workload, and rows are now keyed by protocol and set (and code and "
                f"weights), so none can be reused. {_ADVICE}"
            )
        return super()._refusal(path, error)

    def done(self) -> set[RowKey]:
        """Keys of the rows already in the file."""
        return {RowKey.of(row) for row in self.rows}


_ADVICE = "Use another --output directory, or --no-resume to replace it."


# --------------------------------------------------------------------------------- evaluation
def predict_samples(
    predictor: Predictor,
    histories: Sequence[TaskHistory],
    n_samples: int,
    rng: np.random.Generator,
    *,
    on_chunk: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``(len(histories), n_samples)`` remaining-work samples, predicted in chunks of
    :data:`PREDICT_CHUNK` cases.

    Raises:
        PredictionOutputError: If the predictor returns a wrong shape, NaN or negative work.
    """
    parts = []
    for start in range(0, len(histories), PREDICT_CHUNK):
        chunk = histories[start : start + PREDICT_CHUNK]
        samples = np.asarray(predictor.predict(chunk, n_samples, rng).samples, dtype=np.float64)
        if samples.shape != (len(chunk), n_samples):
            raise PredictionOutputError(
                f"{predictor.name}.predict returned samples of shape {samples.shape} for "
                f"{len(chunk)} tasks x {n_samples} samples."
            )
        if np.isnan(samples).any() or (samples < 0).any():
            raise PredictionOutputError(
                f"{predictor.name}.predict returned NaN or negative remaining work; use inf for "
                "never and 0 for a reached target."
            )
        parts.append(samples)
        if on_chunk is not None:
            on_chunk(len(chunk))
    return np.concatenate(parts)


def latency_cases(cases: PredictionCases) -> PredictionCases:
    """:data:`LATENCY_TASKS` cases evenly spaced through ``cases`` (all families)."""
    count = min(LATENCY_TASKS, len(cases))
    return cases.subset(np.linspace(0, len(cases) - 1, count).round().astype(np.int64))


def measure_latency_ms(predictor: Predictor, cases: PredictionCases, repeats: int) -> float:
    """Median milliseconds of ``predict`` on ``cases`` with :data:`LATENCY_SAMPLES` samples,
    after :data:`LATENCY_WARMUP` untimed calls; torch (if used) on one thread."""
    histories = cases.histories
    for _ in range(LATENCY_WARMUP):
        predictor.predict(histories, LATENCY_SAMPLES, np.random.default_rng(0))
    timings = []
    with one_torch_thread_if_loaded():
        predictor.predict(histories, LATENCY_SAMPLES, np.random.default_rng(0))
        for repeat in range(repeats):
            rng = np.random.default_rng(repeat)
            start = time.perf_counter()
            predictor.predict(histories, LATENCY_SAMPLES, rng)
            timings.append(time.perf_counter() - start)
    return 1000.0 * float(np.median(timings))


def row_weights(bank: PredictorBank, name: str, cell_cases: CellCases) -> str:
    """The ``weights`` column of ``name``'s row on ``cell_cases`` (``none``: no checkpoint).

    Raises:
        mara_env.predictors.cases.CaseError, MissingHeldOutError: As :meth:`PredictorBank.version`.
    """
    versions = [bank.version(name, group.held_out) for group in cell_cases.groups]
    weights = list(dict.fromkeys(digest for version in versions for digest in version.weights))
    return "+".join(weights) or "none"


def row_samples(
    bank: PredictorBank,
    key: RowKey,
    cell_cases: CellCases,
    *,
    on_chunk: Callable[[int], None] | None = None,
) -> np.ndarray:
    """The remaining-work samples of row ``key``: every case of ``cell_cases``, each group
    predicted by its version of ``key.predictor`` (see :mod:`mara_env.benchmarks.prediction.protocols`),
    drawn from the row's own generator (the same samples every time)."""
    rng = key.rng()
    parts = [
        predict_samples(
            bank.version(key.predictor, group.held_out).predictor,
            group.cases.histories,
            key.samples,
            rng,
            on_chunk=on_chunk,
        )
        for group in cell_cases.groups
    ]
    return np.concatenate(parts)


def case_curves(cases: PredictionCases) -> np.ndarray:
    """Each case's curve (``family/curve id``): the groups the bootstraps resample whole."""
    return np.array([f"{task.family}/{task.curve_id}" for task in cases.tasks])


def evaluate_row(
    bank: PredictorBank,
    key: RowKey,
    cell_cases: CellCases,
    *,
    latency_repeats: int,
    on_chunk: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Score predictor ``key.predictor`` on ``cell_cases`` (:func:`row_samples`); the finished
    ``results.csv`` row. Its latency is the first group's version on :func:`latency_cases` of
    the whole cell."""
    samples = row_samples(bank, key, cell_cases, on_chunk=on_chunk)
    cases = cell_cases.cases
    beyond = np.array([task.crossed_late for task in cases.tasks], dtype=bool)
    scores = score_cell(
        samples,
        cases.truth,
        cases.cap,
        cases.budget,
        beyond,
        key.bootstrap_rng(),
        groups=case_curves(cases),
    )
    first = bank.version(key.predictor, cell_cases.groups[0].held_out).predictor
    scores["latency_ms"] = measure_latency_ms(first, latency_cases(cases), latency_repeats)
    return {**dict(zip(KEY_COLUMNS, astuple(key), strict=True)), **scores}
