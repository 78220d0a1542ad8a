"""Workloads: which curves an episode draws from, and how tasks are sampled from them.

A :class:`Workload` joins the curves of the configured families (one split) into one padded
matrix and derives the Poisson arrival rate from the load. :func:`sample_tasks` draws one
episode's tasks, all at reset, from the generator the environment owns:

* arrivals: ``Poisson(arrival_rate)`` tasks in each epoch of the arrival horizon, or another
  process with that mean (``ClusterConfig.arrivals``, :mod:`mara_env.curves.arrivals`);
* family by ``family_weights``; a curve uniformly from the family's pool;
* speed, target and deadline by :func:`mara_env.sim.rules.draw_task_terms` and
  :func:`mara_env.sim.rules.deadlines`: a target from the curve, moved below anything the curve
  reports with probability ``infeasible_share``; a deadline from the ``offered`` work of the
  *feasible* target (the one drawn before that move), so it does not reveal a hopeless task
  (the rule is in ``ClusterConfig.slack_range``);
* demand = node-epochs one node needs to first report a loss <= target (``inf`` for a hopeless
  task; hidden from schedulers).

The arrival rate is ``load * n_nodes / mean_demand``, where ``mean_demand`` is the mean
``offered`` work of 4096 tasks drawn with a fixed seed (``epochs_per_curve[1]`` for a task whose
feasible target is never reached either). It is a property of the workload, the same in every
episode.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from numba import njit

from mara_env.curves.arrivals import arrival_counts
from mara_env.curves.families import family_code
from mara_env.curves.recorded_durations import even_work_curves, relative_durations, run_work
from mara_env.curves.traces import TraceSource
from mara_env.errors import ConfigError, TraceError
from mara_env.sim.hidden_effort import (
    FamilyTables,
    draw_effort_numbers,
    draw_target_curves,
    family_tables,
    hidden_effort_terms,
)
from mara_env.sim.rules import (
    HOPELESS_TARGET_RANGE,
    TermDraws,
    deadline_of,
    deadlines,
    draw_term_numbers,
    first_step_at_or_below,
    log_of_loss,
    loss_at,
    lowest_recorded_loss,
    task_terms,
)
from mara_env.worlds.config import ClusterConfig

__all__ = [
    "HOPELESS_TARGET_RANGE",
    "TaskTable",
    "Workload",
    "build_workload",
    "draw_tasks",
    "sample_tasks",
    "validate_tasks",
]

_DEMAND_ESTIMATE_TASKS = 4096
_DEMAND_ESTIMATE_SEED = 20_240_901


@dataclass(frozen=True, eq=False)
class TaskTable:
    """All tasks of one episode, sorted by arrival epoch (structure of arrays).

    Attributes:
        family: Family code (:func:`mara_env.curves.families.family_code`: index into ``FAMILY_NAMES``, or ``OTHER_FAMILY`` for your own).
        curve_row: Row of the task's curve in ``Workload.curves`` (hidden from schedulers).
        arrival: Epoch at which the task arrives.
        deadline: The task must report a loss <= target by the end of epoch ``deadline - 1``.
        target: Target loss.
        speed: Curve steps one node advances the task per epoch.
        alpha: Parallel-scaling exponent of the task.
        initial_loss: Loss reported at arrival (the curve's first point).
        demand: Node-epochs one node needs to reach the target (``inf`` if it never does).
            Hidden: only the privileged API exposes it.
    """

    family: np.ndarray
    curve_row: np.ndarray
    arrival: np.ndarray
    deadline: np.ndarray
    target: np.ndarray
    speed: np.ndarray
    alpha: np.ndarray
    initial_loss: np.ndarray
    demand: np.ndarray

    def __len__(self) -> int:
        return len(self.arrival)

    @cached_property
    def log_initial_loss(self) -> np.ndarray:
        """ln(initial_loss) (:func:`mara_env.sim.rules.log_of_loss`)."""
        return np.asarray(log_of_loss(self.initial_loss))

    @cached_property
    def log_target(self) -> np.ndarray:
        """ln(target) (:func:`mara_env.sim.rules.log_of_loss`)."""
        return np.asarray(log_of_loss(self.target))

    @cached_property
    def log_gap(self) -> np.ndarray:
        """ln(initial_loss / target): the log-loss distance to cover (> 0)."""
        return self.log_initial_loss - self.log_target


@dataclass(frozen=True, eq=False)
class Workload:
    """The curves an episode draws from and the arrival rate derived from the config.

    Attributes:
        config: The configuration the workload was built for.
        curves: ``(n_curves, max_length)`` losses of every family, padded with last values.
        lengths: Points recorded per curve.
        curve_family: Family code (:func:`mara_env.curves.families.family_code`) of each curve.
        rows_by_family: Curve rows of each configured family, in ``config.families`` order.
        mean_demand: Mean node-epochs a task needs at one node (fixed-seed estimate).
        duration: Each curve's relative duration (:mod:`mara_env.curves.recorded_durations`; 1 each
            unless ``config.curve_durations`` is ``"recorded"``).
    """

    config: ClusterConfig
    curves: np.ndarray
    lengths: np.ndarray
    curve_family: np.ndarray
    rows_by_family: tuple[np.ndarray, ...]
    mean_demand: float
    duration: np.ndarray

    @property
    def arrival_rate(self) -> float:
        """Expected number of arriving tasks per epoch."""
        return self.config.load * self.config.n_nodes / self.mean_demand

    @cached_property
    def curve_minimum(self) -> np.ndarray:
        """The lowest recorded loss of each curve (:func:`mara_env.sim.rules.lowest_recorded_loss`)."""
        return lowest_recorded_loss(self.curves, self.lengths)

    @cached_property
    def family_tables(self) -> FamilyTables:
        """What Cluster-v2's task drawing needs of the curves, per configured family
        (:func:`mara_env.sim.hidden_effort.family_tables`)."""
        return family_tables(self.curves, self.lengths, self.rows_by_family, self.duration)

    @cached_property
    def family_alpha(self) -> np.ndarray:
        """The parallel-scaling exponent of each configured family, in ``config.families``
        order."""
        return np.array([self.config.alpha_for(family) for family in self.config.families])

    @cached_property
    def family_cdf(self) -> np.ndarray:
        """Cumulative family probabilities, in ``config.families`` order (the last is 1)."""
        cdf = np.cumsum(self.config.family_probabilities())
        cdf /= cdf[-1]
        return cdf

    def loss_at(self, curve_row: np.ndarray, progress: np.ndarray) -> np.ndarray:
        """Loss reported by curves ``curve_row`` after ``progress`` curve steps
        (:func:`mara_env.sim.rules.loss_at`)."""
        return loss_at(self.curves, curve_row, progress)


def build_workload(config: ClusterConfig, source: TraceSource) -> Workload:
    """Join ``source``'s curves for ``config``'s families and split; estimate the demand.

    Raises:
        TraceError: If the source lacks a configured family.
    """
    shared = _build_workload_cached(_WorkloadKey(config, source))
    # The cache shares curves and the demand estimate between configs that agree on them; the
    # load, cluster size and horizon are the caller's own.
    return dataclasses.replace(shared, config=config)


class _WorkloadKey:
    """Cache key: the config fields that shape curves and demand, and the source's identity.

    Fields that only scale arrivals (``load``, ``n_nodes``, ``arrival_horizon``) are not part of
    it: :func:`build_workload` puts the caller's config on the shared result.
    """

    def __init__(self, config: ClusterConfig, source: TraceSource) -> None:
        self.config, self.source = config, source
        self._key = (
            config.family_weights,
            config.split,
            config.alpha,
            config.epochs_per_curve,
            config.curve_durations,
            config.target_fraction,
            config.infeasible_share,
            config.slack_range,
            config.deadline_nodes,
            config.max_epochs,
            config.world_version,
            config.estimate_spread,
            config.effective_hopeless_curve_share,
            source.fingerprint,
        )

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _WorkloadKey) and self._key == other._key


@lru_cache(maxsize=64)
def _build_workload_cached(key: _WorkloadKey) -> Workload:
    config, source = key.config, key.source
    missing = [family for family in config.families if family not in source.families]
    if missing:
        raise TraceError(
            f"The trace source {source!r} has no curves for families {missing}; it provides "
            f"{list(source.families)}. Change ClusterConfig.family_weights or the source."
        )
    pools = [source.pool(family, config.split) for family in config.families]
    width = max(pool.losses.shape[1] for pool in pools)

    def padded(matrix: np.ndarray) -> np.ndarray:
        return np.pad(matrix, ((0, 0), (0, width - matrix.shape[1])), mode="edge")

    curves = np.concatenate([padded(pool.losses) for pool in pools])
    lengths = np.concatenate([pool.lengths for pool in pools])
    duration = np.ones(len(lengths))
    if config.curve_durations == "recorded":
        no_work = [pool.family for pool in pools if pool.work is None]
        if no_work:
            raise TraceError(
                f"ClusterConfig.curve_durations='recorded' needs each curve's recorded work, "
                f"but the {config.split} curves of {no_work} in {source!r} have no work axis. "
                "Give a work column in your curve table, or use curve_durations='stretched'."
            )
        works = [pool.work for pool in pools if pool.work is not None]
        curves = even_work_curves(curves, lengths, np.concatenate([padded(w) for w in works]))
        duration = np.concatenate(
            [
                relative_durations(run_work(pool.lengths, w))
                for pool, w in zip(pools, works, strict=True)
            ]
        )
    curves.setflags(write=False)
    duration.setflags(write=False)
    curve_family = np.concatenate(
        [np.full(pool.n_curves, family_code(pool.family), dtype=np.int64) for pool in pools]
    )
    offsets = np.cumsum([0] + [pool.n_curves for pool in pools])
    rows = tuple(np.arange(offsets[i], offsets[i + 1]) for i in range(len(pools)))
    partial = Workload(config, curves, lengths, curve_family, rows, 1.0, duration)
    estimate_rng = np.random.default_rng(_DEMAND_ESTIMATE_SEED)
    arrivals = np.zeros(_DEMAND_ESTIMATE_TASKS, dtype=np.int64)
    _, offered = draw_tasks(partial, arrivals, estimate_rng)
    return Workload(config, curves, lengths, curve_family, rows, float(offered.mean()), duration)


def sample_tasks(workload: Workload, rng: np.random.Generator) -> TaskTable:
    """Draw every task of one episode (sorted by arrival) from ``rng``."""
    config = workload.config
    counts = arrival_counts(config.arrivals, workload.arrival_rate, config.arrival_horizon, rng)
    arrivals = np.repeat(np.arange(config.arrival_horizon, dtype=np.int64), counts)
    tasks, _ = draw_tasks(workload, arrivals, rng)
    return tasks


def validate_tasks(tasks: TaskTable, workload: Workload) -> None:
    """Raise :class:`ConfigError` unless hand-made ``tasks`` can run on ``workload``.

    Checks: equal-length 1-d arrays; arrivals sorted and inside the arrival horizon; deadlines
    after arrivals and within ``max_epochs``; curve rows inside the workload; positive speeds;
    alpha in (0, 1]; targets below the initial losses.
    """
    config = workload.config
    n = len(tasks.arrival)
    for field_ in dataclasses.fields(tasks):
        values = getattr(tasks, field_.name)
        if not isinstance(values, np.ndarray) or values.shape != (n,):
            raise ConfigError(
                f"TaskTable.{field_.name} must be a 1-d array of length {n} (one per task)."
            )
    checks = (
        (np.all(np.diff(tasks.arrival) >= 0), "arrival must be sorted (non-decreasing)"),
        (
            np.all((tasks.arrival >= 0) & (tasks.arrival < config.arrival_horizon)),
            f"arrival must lie in [0, arrival_horizon={config.arrival_horizon})",
        ),
        (
            np.all((tasks.deadline > tasks.arrival) & (tasks.deadline <= config.max_epochs)),
            f"deadline must be after arrival and at most max_epochs={config.max_epochs}",
        ),
        (
            np.all((tasks.curve_row >= 0) & (tasks.curve_row < len(workload.curves))),
            f"curve_row must index the workload's {len(workload.curves)} curves",
        ),
        (np.all(tasks.speed > 0), "speed must be > 0"),
        (np.all((tasks.alpha > 0) & (tasks.alpha <= 1)), "alpha must be in (0, 1]"),
        (
            np.all((tasks.target > 0) & (tasks.target < tasks.initial_loss)),
            "target must be positive and below initial_loss",
        ),
    )
    for ok, rule in checks:
        if not ok:
            raise ConfigError(f"Invalid TaskTable: {rule}.")


def draw_tasks(
    workload: Workload, arrivals: np.ndarray, rng: np.random.Generator
) -> tuple[TaskTable, np.ndarray]:
    """Tasks arriving at ``arrivals``, and the demand each would have with a feasible target.

    A family by ``family_weights``, then by the config's ``world_version``: in Cluster-v1 a
    curve uniformly from its pool and the terms of :func:`mara_env.sim.rules.draw_task_terms` (its
    draws and :func:`mara_env.sim.rules.task_terms`); in Cluster-v2 the terms of
    :mod:`mara_env.sim.hidden_effort`. Deadlines by :func:`mara_env.sim.rules.deadline_of`.
    """
    n = len(arrivals)
    # the draws of ``rng.choice(len(config.families), size=n, p=config.family_probabilities())``
    # (a uniform per task, looked up in the cumulative probabilities), without its checks
    family_slot = workload.family_cdf.searchsorted(rng.random(n), side="right")
    if not workload.config.world.hides_effort:
        return _draw_v1_tasks(workload, family_slot, arrivals, rng)
    return _draw_hidden_effort_tasks(workload, family_slot, arrivals, rng)


def draw_hidden_effort_terms(
    workload: Workload, family_slot: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """Cluster-v2's ``(curve_row, speed, target, demand, offered, time_allowed)`` of tasks of
    the configured families ``family_slot`` (:func:`mara_env.sim.hidden_effort.hidden_effort_terms`
    on the curves :func:`~mara_env.sim.hidden_effort.draw_target_curves` picks), from ``rng``."""
    tables = workload.family_tables
    target_row = draw_target_curves(tables, family_slot, rng)
    return hidden_effort_terms(
        workload.curves,
        workload.lengths,
        workload.duration,
        family_slot,
        target_row,
        workload.family_alpha[family_slot],
        tables.depth_rows,
        tables.depth_ratio,
        tables.depth_start,
        tables.log_levels,
        tables.typical_fraction,
        draw_effort_numbers(workload.config, rng, len(family_slot)),
    )


def _draw_hidden_effort_tasks(
    workload: Workload, family_slot: np.ndarray, arrivals: np.ndarray, rng: np.random.Generator
) -> tuple[TaskTable, np.ndarray]:
    """Cluster-v2's tasks (:mod:`mara_env.sim.hidden_effort`)."""
    config = workload.config
    alpha = workload.family_alpha[family_slot]
    curve_row, speed, target, demand, offered, time_allowed = draw_hidden_effort_terms(
        workload, family_slot, rng
    )
    tasks = TaskTable(
        family=workload.curve_family[curve_row],
        curve_row=curve_row,
        arrival=arrivals,
        deadline=deadlines(arrivals, time_allowed, config.max_epochs),
        target=target,
        speed=speed,
        alpha=alpha,
        initial_loss=workload.curves[curve_row, 0],
        demand=demand,
    )
    return tasks, offered


def _draw_v1_tasks(
    workload: Workload, family_slot: np.ndarray, arrivals: np.ndarray, rng: np.random.Generator
) -> tuple[TaskTable, np.ndarray]:
    """Cluster-v1's tasks (:func:`mara_env.sim.rules.task_terms`)."""
    config = workload.config
    n = len(arrivals)
    counts = np.bincount(family_slot, minlength=len(workload.rows_by_family)).tolist()
    # then a curve of each family, uniformly, for its tasks in arrival order
    picks = np.concatenate(
        [
            rows[rng.integers(len(rows), size=count)]
            for rows, count in zip(workload.rows_by_family, counts, strict=True)
        ]
    )
    (
        curve_row,
        family,
        deadline,
        target,
        speed,
        alpha,
        initial_loss,
        demand,
        finite_offered,
    ) = _assemble_tasks(
        family_slot,
        picks,
        arrivals,
        workload.curves,
        workload.lengths,
        workload.curve_family,
        workload.curve_minimum,
        workload.duration,
        workload.family_alpha,
        config.max_epochs,
        draw_term_numbers(config, rng, n),
    )
    tasks = TaskTable(
        family=family,
        curve_row=curve_row,
        arrival=arrivals,
        deadline=deadline,
        target=target,
        speed=speed,
        alpha=alpha,
        initial_loss=initial_loss,
        demand=demand,
    )
    return tasks, finite_offered


@njit(cache=True)
def _assemble_tasks(
    family_slot: np.ndarray,
    picks: np.ndarray,
    arrivals: np.ndarray,
    curves: np.ndarray,
    lengths: np.ndarray,
    curve_family: np.ndarray,
    curve_minimum: np.ndarray,
    duration: np.ndarray,
    family_alpha: np.ndarray,
    max_epochs: int,
    draws: TermDraws,
) -> tuple[np.ndarray, ...]:
    """The fields of :func:`draw_tasks`' table (and the finite offered demand) from its draws:
    ``picks`` holds the curve rows drawn for each configured family in turn, for that family's
    tasks in arrival order."""
    n = len(family_slot)
    taken = np.zeros(len(family_alpha) + 1, dtype=np.int64)
    for task in range(n):
        taken[family_slot[task] + 1] += 1
    taken = np.cumsum(taken)  # where each family's picks start
    curve_row = np.empty(n, dtype=np.int64)
    for task in range(n):
        slot = family_slot[task]
        curve_row[task] = picks[taken[slot]]
        taken[slot] += 1
    alpha = family_alpha[family_slot]
    speed, target, _, demand, offered, time_allowed = task_terms(
        curves,
        curve_row,
        lengths[curve_row],
        alpha,
        curve_minimum[curve_row],
        duration[curve_row],
        draws,
    )
    deadline = np.empty(n, dtype=np.int64)
    finite_offered = np.empty(n)
    for task in range(n):
        deadline[task] = deadline_of(arrivals[task], time_allowed[task], max_epochs)
        finite = np.isfinite(offered[task])
        finite_offered[task] = offered[task] if finite else draws.longest_epochs
    initial_loss = curves[curve_row, 0]
    family = curve_family[curve_row]
    return curve_row, family, deadline, target, speed, alpha, initial_loss, demand, finite_offered


#: The rule's old private name (kept for existing imports): :func:`mara_env.sim.rules.first_step_at_or_below`.
_first_step_at_or_below = first_step_at_or_below


#: The old private name of :func:`draw_tasks` (kept for existing imports).
_draw_tasks = draw_tasks
