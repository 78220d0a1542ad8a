"""Cluster-v2's and -v3's task terms: a target and a deadline that do not give the effort away.

In Cluster-v1 (:func:`mara_env.sim.rules.task_terms`) a deadline is ``slack * true demand``, so
``time_left / time_left_fraction`` reads the hidden demand back, and a hopeless target lies
below its own curve's minimum, so a deep target marks it. Cluster-v2
(``ClusterConfig.world_version = 2``) draws every task the way a person submitting it would
set it up, from what that person can know:

* **the target**: a curve of the family is drawn (among the curves that improve on their first
  loss at all) and a point ``U(target_fraction)`` of its length; the target is the loss the run
  reported there (or, if it is not below the first loss, at the nearest later point that is, or
  failing that the nearest earlier one, which an improving curve has): Cluster-v1's rule without
  its cap at 0.99 of the initial loss. The ratio
  ``target / initial loss`` of a *hopeless* task (probability ``infeasible_share``) is drawn
  exactly so, and the task then runs a curve of the same family, drawn uniformly among those
  that never get that low (:class:`FamilyTables`), or, with ``hopeless_curve_share`` below 1,
  among that share of them whose lowest loss lies nearest above the target: curves that stall
  just short of it, where only the course of the losses can tell. Cluster-v3 is Cluster-v2
  with that share 0.1 (``ClusterConfig.effective_hopeless_curve_share``). So a hopeless task's target
  ratio follows the feasible ones' distribution, and its target lies below anything its curve
  ever reports.
  (Only when no curve of the family stays that high does the shallowest one take a target of
  its lowest loss times ``U(HOPELESS_TARGET_RANGE)``.)
* **the deadline**: the submitter's estimate of the demand is the family's *typical* demand
  for that target ratio: the median fraction of a run at which the family's curves first
  reach the ratio (:attr:`FamilyTables.typical_fraction`) times the mean of
  ``epochs_per_curve`` (the node-epochs of a whole run), times a log-normal error
  ``exp(estimate_spread * N(0, 1))``. The time allowed is ``slack * estimate /
  deadline_nodes**alpha`` with slack ``U(slack_range)``, rounded by
  :func:`mara_env.sim.rules.deadline_of`. The task's own curve enters neither.

Everything else (speed ``= length / U(epochs_per_curve)``, or with recorded durations length /
(the range's mean times the curve's relative duration), demand = node-epochs one node needs
to first report a loss at or below the target) is v1's rule. With recorded durations
(:mod:`mara_env.curves.recorded_durations`) the typical demand weighs each curve's fraction by its
relative duration.

Example:
    >>> import numpy as np
    >>> from mara_env import get_config
    >>> from mara_env.curves.synthetic import SyntheticTraceSource
    >>> from mara_env.sim.workload import build_workload, draw_tasks
    >>> config = get_config("tiny", workload="synthetic", world_version=2)
    >>> workload = build_workload(config, SyntheticTraceSource(n_curves=40))
    >>> tasks, _ = draw_tasks(workload, np.zeros(200, dtype=np.int64), np.random.default_rng(0))
    >>> hopeless = ~np.isfinite(tasks.demand)
    >>> bool(np.all(tasks.target[hopeless] < workload.curve_minimum[tasks.curve_row[hopeless]]))
    True
    >>> bool(np.all(tasks.target < tasks.initial_loss))
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit

from mara_env.curves.recorded_durations import unit_run_epochs
from mara_env.errors import TraceError
from mara_env.sim.rules import HOPELESS_TARGET_RANGE, first_steps_on_rows, progress_gain_of_task

if TYPE_CHECKING:
    from mara_env.worlds.config import ClusterConfig

#: Target ratios at which :attr:`FamilyTables.typical_fraction` is tabulated, per family.
TABLE_LEVELS = 65
#: The deepest tabulated ratio is never below this (a curve may report a loss of 0).
_DEEPEST_RATIO = 1e-9


@dataclass(frozen=True, eq=False)
class FamilyTables:
    """What the Cluster-v2 drawing needs of a workload's curves, per configured family.

    Family ``f``'s entries of a flat array are ``[start[f], start[f + 1])``.

    Attributes:
        improving_rows: Rows of the curves that report a loss below their first one at least
            once (the curves a target is drawn from), family after family.
        improving_start: ``(n_families + 1,)`` offsets into ``improving_rows``.
        depth_rows: Every curve's row, family after family, each family's sorted by
            ``depth_ratio``.
        depth_ratio: The lowest recorded loss of each ``depth_rows`` curve over its first.
        depth_start: ``(n_families + 1,)`` offsets into ``depth_rows`` and ``depth_ratio``.
        log_levels: ``(n_families, TABLE_LEVELS)`` log target ratios, from 0 down to the
            family's deepest.
        typical_fraction: ``(n_families, TABLE_LEVELS)`` the median, over the family's improving
            curves, of the fraction of its length at which a curve first reports a loss at or
            below each ratio of its first (1 when it never does), times the curve's relative
            duration (1 unless durations are recorded): a typical run's demand, in runs of
            ``mean(epochs_per_curve)`` node-epochs.
    """

    improving_rows: np.ndarray
    improving_start: np.ndarray
    depth_rows: np.ndarray
    depth_ratio: np.ndarray
    depth_start: np.ndarray
    log_levels: np.ndarray
    typical_fraction: np.ndarray


def family_tables(
    curves: np.ndarray,
    lengths: np.ndarray,
    rows_by_family: tuple[np.ndarray, ...],
    duration: np.ndarray | None = None,
) -> FamilyTables:
    """The :class:`FamilyTables` of a workload's curves (``(n, width)`` padded with last values,
    ``lengths`` recorded points each; ``rows_by_family`` the rows of each configured family;
    ``duration`` each curve's relative duration, default 1).

    Raises:
        TraceError: If a family has no curve that ever improves on its first loss (no target
            can be drawn from it).
    """
    improving, depth_rows, depth_ratio = [], [], []
    log_levels = np.empty((len(rows_by_family), TABLE_LEVELS))
    typical = np.empty((len(rows_by_family), TABLE_LEVELS))
    for family, rows in enumerate(rows_by_family):
        recorded = np.arange(curves.shape[1])[None, :] < lengths[rows, None]
        own = np.where(recorded, curves[rows], np.inf)
        best = np.minimum.accumulate(own, axis=1) / curves[rows, :1]
        lowest = best.min(axis=1)
        order = np.argsort(lowest, kind="stable")
        depth_rows.append(rows[order])
        depth_ratio.append(lowest[order])
        better = best[:, 1:].min(axis=1, initial=np.inf) < 1.0
        if not better.any():
            raise TraceError(
                f"Family {family} of the workload has no curve whose loss ever falls below its "
                "first: no Cluster-v2 target can be drawn from it."
            )
        improving.append(rows[better])
        deepest = max(float(lowest[better].min()), _DEEPEST_RATIO)
        log_levels[family] = np.linspace(0.0, math.log(deepest), TABLE_LEVELS)
        reached = best[better, None, 1:] <= np.exp(log_levels[family])[None, :, None]
        first = reached.argmax(axis=2) + 1.0
        fraction = np.where(reached.any(axis=2), first / lengths[rows[better], None], 1.0)
        if duration is not None:
            fraction = fraction * duration[rows[better], None]
        typical[family] = np.median(fraction, axis=0)
    return FamilyTables(
        np.concatenate(improving),
        _offsets(improving),
        np.concatenate(depth_rows),
        np.concatenate(depth_ratio),
        _offsets(depth_rows),
        log_levels,
        typical,
    )


def _offsets(parts: list[np.ndarray]) -> np.ndarray:
    return np.cumsum([0] + [len(part) for part in parts]).astype(np.int64)


class EffortDraws(NamedTuple):
    """The random numbers of the Cluster-v2 drawing for ``n`` tasks, and the config's numbers
    :func:`hidden_effort_terms` reads with them (compiled code reads the fields by name)."""

    epochs: np.ndarray
    position: np.ndarray
    hopeless: np.ndarray
    hopeless_share: np.ndarray
    slack: np.ndarray
    swap: np.ndarray
    log_error: np.ndarray
    mean_epochs: float
    deadline_nodes: float
    hopeless_curve_share: float


def draw_effort_numbers(config: ClusterConfig, rng: np.random.Generator, n: int) -> EffortDraws:
    """The draws of the Cluster-v2 terms for ``n`` tasks: six rows of uniforms (epochs per curve,
    target position, hopeless or not, the fallback's share, slack, the hopeless curve's pick),
    then ``n`` standard normals for the estimate's error."""
    uniforms = rng.random((6, n))

    def between(row: int, bounds: tuple[float, float]) -> np.ndarray:
        low, high = float(bounds[0]), float(bounds[1])
        return low + (high - low) * uniforms[row]

    return EffortDraws(
        epochs=unit_run_epochs(config.epochs_per_curve, config.curve_durations, uniforms[0]),
        position=between(1, config.target_fraction),
        hopeless=uniforms[2] < config.infeasible_share,
        hopeless_share=between(3, HOPELESS_TARGET_RANGE),
        slack=between(4, config.slack_range),
        swap=uniforms[5],
        log_error=float(config.estimate_spread) * rng.standard_normal(n),
        mean_epochs=float(np.mean(config.epochs_per_curve)),
        deadline_nodes=float(config.deadline_nodes),
        hopeless_curve_share=config.effective_hopeless_curve_share,
    )


def draw_target_curves(
    tables: FamilyTables, family_slot: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """The curve each task's target is drawn from: uniformly among its family's improving
    curves (``family_slot``: each task's configured family)."""
    start = tables.improving_start[family_slot]
    count = tables.improving_start[family_slot + 1] - start
    return tables.improving_rows[start + rng.integers(count)]


@njit(cache=True)
def typical_demand(
    tables_levels: np.ndarray,
    tables_fraction: np.ndarray,
    family: int,
    log_ratio: float,
    mean_epochs: float,
) -> float:
    """The submitter's estimate before its error: node-epochs of a typical run of the family
    to reach the target ratio ``exp(log_ratio)`` (the tabulated median fraction, interpolated,
    times ``mean_epochs``)."""
    levels = tables_levels[family]
    # np.interp needs ascending points: the levels run from 0 downwards
    fraction = np.interp(-log_ratio, -levels, tables_fraction[family])
    return fraction * mean_epochs


@njit(cache=True)
def hidden_effort_terms(
    curves: np.ndarray,
    lengths: np.ndarray,
    duration: np.ndarray,
    family_slot: np.ndarray,
    target_row: np.ndarray,
    alpha: np.ndarray,
    depth_rows: np.ndarray,
    depth_ratio: np.ndarray,
    depth_start: np.ndarray,
    log_levels: np.ndarray,
    typical_fraction: np.ndarray,
    draws: EffortDraws,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cluster-v2's ``(curve_row, speed, target, demand, offered, time_allowed)`` of each task
    (module docstring), from its family slot, the curve its target is drawn from
    (:func:`draw_target_curves`) and the draws of :func:`draw_effort_numbers`; ``duration`` is
    each curve's relative duration (1 unless durations are recorded). ``offered`` is the demand
    of the target on the curve it was drawn from (finite)."""
    n = len(family_slot)
    curve_row = target_row.copy()
    speed = np.empty(n)
    target = np.empty(n)
    time_allowed = np.empty(n)
    for task in range(n):
        curve = curves[target_row[task]]
        length = lengths[target_row[task]]
        step = min(max(int(draws.position[task] * length), 1), length - 1)
        start = step
        while curve[step] >= curve[0] and step < length - 1:  # not below the first loss yet
            step += 1
        if curve[step] >= curve[0]:  # none later: the nearest earlier point below it
            step = start
            while curve[step] >= curve[0] and step > 1:
                step -= 1
        target[task] = curve[step]
        speed[task] = length / (draws.epochs[task] * duration[target_row[task]])
        log_ratio = math.log(max(target[task] / curve[0], _DEEPEST_RATIO))
        estimate = typical_demand(
            log_levels, typical_fraction, family_slot[task], log_ratio, draws.mean_epochs
        ) * math.exp(draws.log_error[task])
        speedup = progress_gain_of_task(1.0, draws.deadline_nodes, alpha[task])
        time_allowed[task] = draws.slack[task] * estimate / speedup
    offered = first_steps_on_rows(curves, target_row, lengths[target_row], target) / speed
    demand = offered.copy()
    for task in range(n):
        if not draws.hopeless[task]:
            continue
        ratio = target[task] / curves[target_row[task], 0]
        low, high = depth_start[family_slot[task]], depth_start[family_slot[task] + 1]
        first_shallower = low + np.searchsorted(depth_ratio[low:high], ratio, side="right")
        if first_shallower < high:
            nearest = draws.hopeless_curve_share * (high - first_shallower)
            pick = first_shallower + int(draws.swap[task] * nearest)
            pick = min(pick, high - 1)
            row = depth_rows[pick]
            # below the curve's lowest loss even where the product rounds
            lowest = depth_ratio[pick] * curves[row, 0] * (1.0 - 1e-12)
            target[task] = min(ratio * curves[row, 0], lowest)
        else:  # no curve of the family stays that high: the shallowest, below its lowest loss
            row = depth_rows[high - 1]
            target[task] = depth_ratio[high - 1] * draws.hopeless_share[task] * curves[row, 0]
        curve_row[task] = row
        speed[task] = lengths[row] / (draws.epochs[task] * duration[row])
        demand[task] = np.inf
    return curve_row, speed, target, demand, offered, time_allowed
