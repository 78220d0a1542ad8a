"""Validation curves and calibration: where learned predictors are checked before they ship.

Learned predictors are trained on the **train split** only. :func:`split_train_curves` sets a
share of each family's train-split curves aside (by curve, seeded) as **validation curves**;
:class:`CurveSubset` serves them as a trace source, so prediction cases are drawn from them by
the very rule of the prediction benchmark (:func:`mara_env.predictors.cases.draw_tasks`), and
:func:`validation_cases` observes them at several fractions.

The validation cases come in :data:`VALIDATION_SETS`: the tasks as drawn, and the same tasks
under each length or resolution shift of the prediction benchmark
(:data:`mara_env.predictors.shifted_curves.SHIFTS`), so that a calibration is checked, and fitted, on
jobs longer or more finely sampled than the shipped curves too, without reading a test curve.

:func:`fit_spread` is a split-conformal recalibration of sampled remaining work: it picks the
factor by which each task's samples are spread around their median sample in log-work
(:func:`mara_env.predictors.window_predictor.spread_samples`) so that the 10-90% interval covers
:data:`TARGET_COVERAGE` of the validation outcomes. :func:`fit_spread_in_every_cell` asks it of
every cell of the validation cases (:func:`calibration_cells`: in each task set, each family at
each observed fraction, and all families pooled at each fraction, if the cell has
:data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases; the validation families include
``synthetic``, which the benchmark does not score): one factor for all, the largest of the
cells' own, so that no family, stage of training or shift is left under-covered by the others'
being easy.

Example:
    >>> samples = np.exp(np.random.default_rng(0).normal(size=(400, 64)))
    >>> truth = np.exp(2.0 * np.random.default_rng(1).normal(size=400))  # twice as wide
    >>> round(fit_spread(samples, truth), 1)
    1.9
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from mara_env import get_config
from mara_env.curves.traces import CurvePool, TraceSource
from mara_env.predictors.cases import PredictionCases, draw_tasks, make_cases
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES, interval_covered
from mara_env.predictors.shifted_curves import SHIFTS, shift_tasks
from mara_env.predictors.window_predictor import spread_samples

#: Share of each family's train-split curves kept for validation.
VALIDATION_SHARE = 0.1
#: Observed fractions of the validation cases.
CALIBRATION_FRACTIONS = (0.1, 0.2, 0.4, 0.8)
#: The world whose task draws the validation cases follow: the shipped predictors were trained
#: and calibrated on Cluster-v1's, and their training command reproduces them only on those.
#: (A calibration fits the spread of sampled remaining work, which no deadline enters.)
VALIDATION_WORLD_VERSION = 1
#: Coverage of the 10-90% interval the spread is fitted to.
TARGET_COVERAGE = 0.8
#: Spread factors tried by :func:`fit_spread`.
SPREAD_GRID = np.round(np.arange(0.5, 4.001, 0.02), 2)
#: Name of the validation tasks as drawn (their cells' names carry no prefix).
DRAWN = "drawn"
#: Task sets of the validation cases: the tasks as drawn, then each shift of them.
VALIDATION_SETS = (DRAWN, *SHIFTS)


class ValidationGroup(NamedTuple):
    """The validation cases of one task set, family and observed fraction."""

    task_set: str
    cases: PredictionCases


@dataclass(frozen=True)
class CurveSubset:
    """A trace source holding only some rows of another source's train split.

    Attributes:
        source: The full source.
        rows: Per family, the rows of its train-split pool that are kept.
    """

    source: TraceSource
    rows: Mapping[str, np.ndarray]

    @property
    def families(self) -> tuple[str, ...]:
        """Families with at least one kept curve."""
        return tuple(family for family, kept in self.rows.items() if len(kept) > 0)

    @property
    def fingerprint(self) -> str:
        """The full source's fingerprint (the subset is a function of it and the rows)."""
        return self.source.fingerprint

    def pool(self, family: str, split: str) -> CurvePool:
        """The kept train-split curves of ``family``.

        Raises:
            ValueError: For the test split or a family without kept curves.
        """
        if split != "train" or family not in self.families:
            raise ValueError(
                f"CurveSubset has only train-split curves of {list(self.families)}; asked for "
                f"{family!r} on {split!r}."
            )
        pool, kept = self.source.pool(family, "train"), self.rows[family]
        work = None if pool.work is None else pool.work[kept]
        return CurvePool(family, pool.losses[kept], pool.lengths[kept], pool.curve_ids[kept], work)


def split_train_curves(
    source: TraceSource, families: Sequence[str], seed: int
) -> tuple[CurveSubset, CurveSubset]:
    """(fitting curves, validation curves): :data:`VALIDATION_SHARE` of each family's
    train-split curves, at least one, are set aside for validation (a seeded draw)."""
    rng = np.random.default_rng([seed, 0xCA1])
    fitting: dict[str, np.ndarray] = {}
    validation: dict[str, np.ndarray] = {}
    for family in families:
        order = rng.permutation(source.pool(family, "train").n_curves)
        n_validation = max(1, int(VALIDATION_SHARE * len(order)))
        validation[family] = np.sort(order[:n_validation])
        fitting[family] = np.sort(order[n_validation:])
    return CurveSubset(source, fitting), CurveSubset(source, validation)


def validation_cases(
    curves: CurveSubset,
    seed: int,
    fractions: Sequence[float] = CALIBRATION_FRACTIONS,
    draws_per_curve: int = 4,
    task_sets: Sequence[str] = VALIDATION_SETS,
) -> list[ValidationGroup]:
    """Cases of every family of ``curves`` at every fraction, drawn by the benchmark's rule
    with the ``training`` preset's task settings in :data:`VALIDATION_WORLD_VERSION`, in each
    of ``task_sets`` (:data:`DRAWN`, or
    a shift's name: the same drawn tasks, shifted as in the benchmark's ``shift`` protocol).

    Raises:
        ValueError: For an unknown task set.
    """
    unknown = [name for name in task_sets if name not in VALIDATION_SETS]
    if unknown:
        raise ValueError(
            f"validation_cases: unknown task set(s) {unknown}; choose from {list(VALIDATION_SETS)}."
        )
    groups: list[ValidationGroup] = []
    for family in curves.families:
        config = get_config("training", workload=family, world_version=VALIDATION_WORLD_VERSION)
        drawn = draw_tasks(
            family, seed=seed, draws_per_curve=draws_per_curve, config=config, source=curves
        )
        for task_set in task_sets:
            tasks = drawn if task_set == DRAWN else shift_tasks(drawn, SHIFTS[task_set])
            groups.extend(
                ValidationGroup(task_set, make_cases(tasks, fraction)) for fraction in fractions
            )
    return groups


def fit_spread(
    samples: np.ndarray,
    truth: np.ndarray,
    target: float = TARGET_COVERAGE,
    centre: str = "median",
) -> float:
    """The factor of :data:`SPREAD_GRID` whose spread samples' 10-90% interval covers a share
    of ``truth`` closest to ``target`` (the smallest such factor on ties).

    Args:
        samples: ``(n_cases, n_samples)`` remaining work as sampled (spread 1).
        truth: ``(n_cases,)`` true remaining work (``inf``: never).
        target: The coverage wanted.
        centre: Around which median the samples are spread
            (:data:`mara_env.predictors.window_predictor.SPREAD_CENTRES`).
    """
    gaps = [
        abs(
            float(np.mean(interval_covered(spread_samples(samples, float(s), centre), truth)))
            - target
        )
        for s in SPREAD_GRID
    ]
    return float(SPREAD_GRID[int(np.argmin(gaps))])


def calibration_cells(
    families: np.ndarray,
    fractions: np.ndarray,
    truth: np.ndarray,
    task_sets: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Masks of the cells of a batch of cases, named and formed as the prediction benchmark's:
    ``"<family> <fraction>"`` for each family at each observed fraction and ``"pooled
    <fraction>"`` for all families at it, within each task set (``task_sets``, one name per
    case; default: all :data:`DRAWN`); the cells of a shifted set are named after it, e.g.
    ``"duration_x2 rl 40%"``. Only cells with at least
    :data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases (finite ``truth``) are kept
    (a small cell's cases still count in the pooled cell of their fraction).

    Example:
        >>> families = np.array(["rl"] * 40 + ["vision"] * 20)
        >>> fractions = np.full(60, 0.2)
        >>> sorted(calibration_cells(families, fractions, np.ones(60)))
        ['pooled 20%', 'rl 20%']
        >>> sets = np.repeat(["drawn", "duration_x2"], 30)
        >>> sorted(calibration_cells(families, fractions, np.ones(60), sets))
        ['duration_x2 pooled 20%', 'pooled 20%', 'rl 20%']
    """
    families, fractions = np.asarray(families), np.asarray(fractions, dtype=np.float64)
    task_sets = np.full(len(families), DRAWN) if task_sets is None else np.asarray(task_sets)
    feasible = np.isfinite(np.asarray(truth, dtype=np.float64))
    cells: dict[str, np.ndarray] = {}
    for task_set in np.unique(task_sets):
        prefix = "" if task_set == DRAWN else f"{task_set} "
        for fraction in np.unique(fractions):
            at_fraction = (fractions == fraction) & (task_sets == task_set)
            members = {
                str(family): at_fraction & (families == family) for family in np.unique(families)
            }
            members["pooled"] = at_fraction
            for name, mask in members.items():
                if np.count_nonzero(mask & feasible) >= MIN_FEASIBLE_CASES:
                    cells[f"{prefix}{name} {fraction:.0%}"] = mask
    return cells


def fit_spread_in_every_cell(
    samples: np.ndarray,
    truth: np.ndarray,
    cells: Mapping[str, np.ndarray],
    target: float = TARGET_COVERAGE,
    centre: str = "median",
) -> tuple[float, dict[str, float]]:
    """One factor for every case, at which each cell's 10-90% interval covers about ``target``
    or more: the largest of the cells' own factors (:func:`fit_spread` on each cell's cases).

    Args:
        samples: ``(n_cases, n_samples)`` remaining work as sampled (spread 1).
        truth: ``(n_cases,)`` true remaining work (``inf``: never).
        cells: Boolean masks of the cases of each cell (e.g. :func:`calibration_cells`); cells
            may overlap.
        target: The coverage wanted.
        centre: Around which median the samples are spread (as in :func:`fit_spread`).

    Returns:
        The factor, and each cell's own.

    Raises:
        ValueError: If there is no cell to fit.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> samples = np.exp(rng.normal(size=(800, 64)))
        >>> truth = np.exp(rng.normal(size=800) * np.repeat([1.0, 2.0], 400))  # "b" twice as wide
        >>> cells = {"a": np.arange(800) < 400, "b": np.arange(800) >= 400}
        >>> spread, by_cell = fit_spread_in_every_cell(samples, truth, cells)
        >>> round(fit_spread(samples, truth), 1), round(spread, 1), round(by_cell["a"], 1)
        (1.6, 2.1, 1.0)
    """
    if not cells:
        raise ValueError(
            "fit_spread_in_every_cell: no cell to fit the spread to; draw more validation cases "
            f"(a cell needs {MIN_FEASIBLE_CASES} feasible ones)."
        )
    by_cell = {
        name: fit_spread(samples[mask], truth[mask], target, centre) for name, mask in cells.items()
    }
    return max(by_cell.values()), by_cell
