"""Prediction cases: held-out tasks drawn as the simulator draws them, observed up to a fraction.

The prediction benchmark (``python -m mara_env.benchmarks.prediction.benchmark``) scores predictors on these cases;
other code (training diagnostics, wrappers' tests) can reuse them.

**Tasks** (:func:`draw_tasks`). For a workload (``mara_env.curves.workloads.WORKLOADS``: its families
and weights) and a config (default: the ``evaluation`` preset, i.e. ``ClusterConfig`` defaults on
the **test split**), ``draws_per_curve * (test curves of the workload's families)`` tasks are
drawn, split across families by the workload's weights (rounded). Within a family the curves
are dealt in shuffled rounds, so every curve is used once before any is used again. Each task's
speed, target and deadline (epochs after arrival) are drawn by the simulator's rule of the
config's world: in Cluster-v1 on the dealt curve by :func:`mara_env.sim.rules.draw_task_terms`; in
Cluster-v2 the world picks the curves itself (:func:`mara_env.sim.workload.draw_hidden_effort_terms`:
a target drawn on one of the family's improving curves, a hopeless one moved to a curve that
never reaches it), so the family's count of tasks is drawn that way instead of dealt. Deadlines
by :func:`mara_env.sim.rules.deadlines`; steps to target ``T`` by
:func:`mara_env.sim.rules.first_step_at_or_below` (``inf``: infeasible).

A task with ``speed >= T`` is dropped (:func:`done_at_first_report`): it completes at its first
report, so there is nothing to predict. The generator is ``default_rng([seed, crc32(workload)])``: one seed gives the same
tasks on every machine, and workloads get independent draws.

**Cases** (:func:`make_cases`). At observed fraction ``f`` of its curve a task has had ``k``
epochs on one node: the largest ``k >= 1`` whose progress after ``k`` epochs of ``speed`` curve
steps (:func:`mara_env.sim.rules.progress_after_epochs`) is ``<= f * length``. Tasks that have reached their
target by then (progress ``>= T``) are left out: there is nothing left to predict. Cutting at a
fraction of the curve, not of ``T``, keeps the cut independent of the hidden future, so a
calibrated predictor is calibrated on these cases. Its history is
what a single node reports: the arrival point ``(0, curve[0])`` and, after each epoch, the
progress and the loss there (:func:`mara_env.sim.rules.loss_at`). Losses and the target are divided by
``curve[0]``: schedulers only observe ratios to the loss at arrival. The true remaining work is
``T - progress`` curve steps (``inf`` when infeasible), as
``ClusterSimulator.privileged_remaining_work`` counts it. Time left is ``max(deadline - k, 0)``
epochs: infeasible tasks observed long enough can be past their deadline. Scores treat work
beyond :data:`CAP_CURVE_LENGTHS` curve lengths (the case's ``cap``) as "never".

**Hiding the family** (:meth:`PredictionCases.relabelled`). Cases whose histories carry
:data:`mara_env.predictors.base.UNKNOWN_FAMILY` instead of their family score a predictor on a family
it is not told (the prediction benchmark's leave-one-family-out protocol);
:func:`concatenate_cases` pools cases of one fraction. Curves of another length or resolution made from these tasks are in
:mod:`mara_env.predictors.shifted_curves`.

Trajectories. A predictor that can also sample future loss curves implements the optional
:class:`TrajectoryPredictor` protocol; :func:`sample_trajectories` calls it with checks.

Example:
    >>> tasks = draw_tasks("rl", seed=0, draws_per_curve=1)
    >>> cases = make_cases(tasks, 0.2)
    >>> len(cases) <= len(tasks), bool((cases.truth > 0).all())
    (True, True)
    >>> history = cases.histories[0]
    >>> float(history.loss[0]), bool(history.work[-1] <= max(0.2 * tasks[0].horizon, tasks[0].speed))
    (1.0, True)
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from mara_env import ClusterConfig, ConfigError, get_config
from mara_env.curves.sources import default_trace_source
from mara_env.curves.traces import CurvePool, TraceSource
from mara_env.predictors.base import TaskHistory
from mara_env.sim import rules
from mara_env.sim.workload import build_workload, draw_hidden_effort_terms

#: Work beyond this many curve lengths is scored as "never" (the metrics' ``cap``).
CAP_CURVE_LENGTHS = 4.0
#: Target draws per test curve of the workload.
DEFAULT_DRAWS_PER_CURVE = 4


class CaseError(ValueError):
    """A request for prediction cases that cannot be met (bad fraction, seed, workload...)."""


@dataclass(frozen=True, eq=False)
class PredictionTask:
    """One drawn task, with everything hidden from mara_env.predictors.

    Attributes:
        workload: The workload it was drawn for.
        family: Its family.
        curve_id: Row of its curve in the family's pool of the config's split.
        curve: The curve's recorded losses (``length`` points, unnormalised, read-only).
        speed: Curve steps one node advances it per epoch.
        target: Target loss (same units as ``curve``).
        steps_to_target: First curve step ``>= 1`` at or below the target (``inf``: never).
        deadline: Epochs from arrival to its deadline.
        source_length: Points of the recorded curve that ``curve`` was resampled from
            (:mod:`mara_env.predictors.shifted_curves`); ``None`` when ``curve`` is the recorded curve.
    """

    workload: str
    family: str
    curve_id: int
    curve: np.ndarray
    speed: float
    target: float
    steps_to_target: float
    deadline: int
    source_length: int | None = None

    @property
    def length(self) -> int:
        """Points on the curve."""
        return len(self.curve)

    @property
    def infeasible(self) -> bool:
        """Whether the target is never reached."""
        return not math.isfinite(self.steps_to_target)

    @property
    def horizon(self) -> float:
        """What observed fractions are fractions of: the curve length."""
        return float(self.length)

    @property
    def cap(self) -> float:
        """Work scored as finite at most: :data:`CAP_CURVE_LENGTHS` curve lengths."""
        return CAP_CURVE_LENGTHS * self.length

    @property
    def crossed_late(self) -> bool:
        """Whether the target is first reached in the second half of the job: past the
        recorded curve's last point (step ``source_length - 1``) for a task on a curve resampled
        to twice its points, past its middle (step ``(length - 1) / 2``) for a task on a
        recorded curve. The first is past every shipped curve of the family; the second is the
        same point of the job on the curves the predictors were trained on, a control for it.
        ``False`` for a hopeless target."""
        split = (self.length - 1) / 2 if self.source_length is None else self.source_length - 1
        return math.isfinite(self.steps_to_target) and self.steps_to_target > split

    def loss_at(self, progress: np.ndarray) -> np.ndarray:
        """The loss reported after ``progress`` curve steps (:func:`mara_env.sim.rules.loss_at`)."""
        return rules.loss_at(self.curve[None, :], 0, progress)

    def report_progress(self, fraction: float) -> np.ndarray:
        """Progress at arrival (0) and after each of the ``k`` epochs observed at ``fraction``."""
        _check_fraction(fraction)
        budget = fraction * self.horizon
        epochs = max(1, math.ceil(budget / self.speed) + 1)
        # One node held throughout: ``speed`` curve steps every epoch.
        progress = rules.progress_after_epochs(np.full(epochs, self.speed))
        reports = max(1, int(np.count_nonzero(progress[1:] <= budget)))
        return progress[: reports + 1]

    def history(self, fraction: float) -> TaskHistory:
        """What a scheduler has seen at ``fraction``, losses and target divided by ``curve[0]``."""
        progress = self.report_progress(fraction)
        scale = self.curve[0]
        return TaskHistory(
            work=progress,
            loss=self.loss_at(progress) / scale,
            target=self.target / scale,
            time_left=float(max(self.deadline - (len(progress) - 1), 0)),
            speed=self.speed,
            family=self.family,
            budget=float(self.length),
        )

    def true_remaining(self, fraction: float) -> float:
        """Curve steps from the last report to the first step at or below the target."""
        return self.steps_to_target - float(self.report_progress(fraction)[-1])

    def time_left(self, fraction: float) -> float:
        """Epochs until the deadline after the reports at ``fraction`` (at least 0)."""
        return float(max(self.deadline - (len(self.report_progress(fraction)) - 1), 0))


@dataclass(frozen=True, eq=False)
class PredictionCases:
    """Tasks observed at one fraction, with the arrays the metrics need.

    Attributes:
        tasks: The tasks.
        fraction: The observed fraction.
        histories: What predictors see of each task.
        truth: True remaining work in curve steps (``inf``: infeasible).
        cap: Work scored as "never" beyond this (:attr:`PredictionTask.cap`).
        budget: Work one node does before the deadline: ``time_left * speed``.
    """

    tasks: tuple[PredictionTask, ...]
    fraction: float
    histories: tuple[TaskHistory, ...]
    truth: np.ndarray
    cap: np.ndarray
    budget: np.ndarray

    def __len__(self) -> int:
        return len(self.tasks)

    @property
    def infeasible(self) -> np.ndarray:
        """Whether each case's target is never reached."""
        return np.isinf(self.truth)

    @property
    def feasible_count(self) -> int:
        """How many cases have a target that is reached."""
        return int(np.count_nonzero(np.isfinite(self.truth)))

    def relabelled(self, family: str) -> PredictionCases:
        """The same cases with every history saying ``family`` (e.g. ``"unknown"``).

        Example:
            >>> cases = make_cases(draw_tasks("rl", draws_per_curve=1), 0.2)
            >>> {h.family for h in cases.relabelled("unknown").histories}
            {'unknown'}
        """
        histories = tuple(replace(history, family=family) for history in self.histories)
        return replace(self, histories=histories)

    def subset(self, indices: Sequence[int] | np.ndarray) -> PredictionCases:
        """The cases at ``indices``, in that order."""
        chosen = [int(i) for i in np.asarray(indices, dtype=np.int64).ravel()]
        return PredictionCases(
            tasks=tuple(self.tasks[i] for i in chosen),
            fraction=self.fraction,
            histories=tuple(self.histories[i] for i in chosen),
            truth=self.truth[chosen],
            cap=self.cap[chosen],
            budget=self.budget[chosen],
        )


def concatenate_cases(parts: Sequence[PredictionCases]) -> PredictionCases:
    """The cases of ``parts`` (all at one fraction) one after another.

    Raises:
        CaseError: If ``parts`` is empty or its fractions differ.

    Example:
        >>> tasks = draw_tasks("rl", draws_per_curve=1)
        >>> half = len(tasks) // 2
        >>> parts = [make_cases(tasks[:half], 0.4), make_cases(tasks[half:], 0.4)]
        >>> len(concatenate_cases(parts)) == len(make_cases(tasks, 0.4))
        True
    """
    if not parts:
        raise CaseError("concatenate_cases: there are no cases to concatenate.")
    fractions = {part.fraction for part in parts}
    if len(fractions) != 1:
        raise CaseError(
            f"concatenate_cases: the parts have different fractions {sorted(fractions)}."
        )
    return PredictionCases(
        tasks=tuple(task for part in parts for task in part.tasks),
        fraction=parts[0].fraction,
        histories=tuple(history for part in parts for history in part.histories),
        truth=np.concatenate([part.truth for part in parts]),
        cap=np.concatenate([part.cap for part in parts]),
        budget=np.concatenate([part.budget for part in parts]),
    )


def first_step_at_or_below(curve: np.ndarray, target: float) -> float:
    """The first step ``>= 1`` of ``curve`` whose loss is ``<= target`` (``inf``: never), by the
    simulator's rule.

    Example:
        >>> first_step_at_or_below(np.array([1.0, 0.8, 0.5, 0.4]), 0.5)
        2.0
    """
    curve = np.asarray(curve, dtype=np.float64)
    steps = rules.first_step_at_or_below(curve[None, :], np.array([len(curve)]), np.array([target]))
    return float(steps[0])


def done_at_first_report(speed: float, steps_to_target: float) -> bool:
    """Whether a task of this speed reaches its target at its first report (nothing to predict:
    such tasks are not drawn).

    Example:
        >>> done_at_first_report(2.5, 2.0), done_at_first_report(2.5, math.inf)
        (True, False)
    """
    return math.isfinite(steps_to_target) and speed >= steps_to_target


def make_cases(tasks: Sequence[PredictionTask], fraction: float) -> PredictionCases:
    """Observe each task at ``fraction``; tasks already at their target are left out (see the
    module docstring).

    Raises:
        CaseError: If ``fraction`` is not in (0, 1) or no task is left to predict.
    """
    _check_fraction(fraction)
    tasks = [t for t in tasks if t.report_progress(fraction)[-1] < t.steps_to_target]
    if len(tasks) == 0:
        raise CaseError(
            f"make_cases: no task is left to predict at fraction {fraction}; draw more with "
            "draw_tasks() or observe a smaller fraction."
        )
    histories = tuple(task.history(fraction) for task in tasks)
    truth = np.array(
        [task.steps_to_target - h.work[-1] for task, h in zip(tasks, histories, strict=True)]
    )
    budget = np.array([h.time_left * h.speed for h in histories])
    return PredictionCases(
        tasks=tuple(tasks),
        fraction=float(fraction),
        histories=histories,
        truth=truth,
        cap=np.array([task.cap for task in tasks]),
        budget=budget,
    )


def draw_tasks(
    workload: str,
    *,
    seed: int = 0,
    draws_per_curve: int = DEFAULT_DRAWS_PER_CURVE,
    config: ClusterConfig | None = None,
    source: TraceSource | None = None,
) -> tuple[PredictionTask, ...]:
    """Draw the tasks of ``workload`` (see the module docstring), families in config order.

    Args:
        workload: A name from ``mara_env.curves.workloads.WORKLOADS``; it sets the families unless
            ``config`` is given, in which case it is only a label and the seed's salt.
        seed: Seed of the draws (an int >= 0).
        draws_per_curve: Tasks per test curve of the workload, on average (an int >= 1).
        config: The config whose task rules apply (default: the ``evaluation`` preset on
            ``workload``).
        source: Where curves come from (default: the shipped traces).

    Raises:
        CaseError: For an unknown workload, a bad seed or draws, or a source lacking a family.
    """
    if not (isinstance(seed, int) and seed >= 0):
        raise CaseError(f"draw_tasks: seed must be an int >= 0, got {seed!r}.")
    if not (isinstance(draws_per_curve, int) and draws_per_curve >= 1):
        raise CaseError(
            f"draw_tasks: draws_per_curve must be an int >= 1, got {draws_per_curve!r}."
        )
    if config is None:
        try:
            config = get_config("evaluation", workload=workload)
        except ConfigError as error:
            raise CaseError(f"draw_tasks: {error}") from None
    source = default_trace_source() if source is None else source
    missing = [family for family in config.families if family not in source.families]
    if missing:
        raise CaseError(
            f"draw_tasks: the trace source has no curves for {missing}; it has "
            f"{list(source.families)}."
        )
    rng = np.random.default_rng([seed, zlib.crc32(workload.encode())])
    pools = [source.pool(family, config.split) for family in config.families]
    total = draws_per_curve * sum(pool.n_curves for pool in pools)
    tasks: list[PredictionTask] = []
    for pool, share in zip(pools, config.family_probabilities(), strict=True):
        count = round(total * share)
        if count == 0:
            continue
        rounds = -(-count // pool.n_curves)
        rows = np.concatenate([rng.permutation(pool.n_curves) for _ in range(rounds)])[:count]
        tasks.extend(_draw_family_tasks(workload, pool.family, pool, rows, config, source, rng))
    return tuple(tasks)


def _draw_family_tasks(
    workload: str,
    family: str,
    pool: CurvePool,
    rows: np.ndarray,
    config: ClusterConfig,
    source: TraceSource,
    rng: np.random.Generator,
) -> list[PredictionTask]:
    """Tasks on ``rows`` of ``pool`` (Cluster-v1), or as many of the family drawn by
    Cluster-v2's rule (module docstring)."""
    n = len(rows)
    if not config.world.hides_effort:
        terms = rules.draw_task_terms(
            pool.losses[rows], pool.lengths[rows], config.alpha_for(family), config, rng
        )
        speed, target, time_allowed = terms.speed, terms.target, terms.time_allowed
    else:
        curves_of = build_workload(config, source)
        slot = config.families.index(family)
        family_slot = np.full(n, slot, dtype=np.int64)
        curve_row, speed, target, _, _, time_allowed = draw_hidden_effort_terms(
            curves_of, family_slot, rng
        )
        rows = curve_row - curves_of.rows_by_family[slot][0]
    lengths = pool.lengths[rows]
    curves = pool.losses[rows]
    deadline = rules.deadlines(np.zeros(n, dtype=np.int64), time_allowed, config.max_epochs)
    steps_to_target = rules.first_step_at_or_below(curves, lengths, target)
    tasks = []
    for i in range(n):
        if done_at_first_report(float(speed[i]), float(steps_to_target[i])):
            continue
        curve = curves[i, : lengths[i]].copy()
        curve.setflags(write=False)
        tasks.append(
            PredictionTask(
                workload=workload,
                family=family,
                curve_id=int(rows[i]),
                curve=curve,
                speed=float(speed[i]),
                target=float(target[i]),
                steps_to_target=float(steps_to_target[i]),
                deadline=int(deadline[i]),
            )
        )
    return tasks


def _check_fraction(fraction: float) -> None:
    if not (isinstance(fraction, (int, float)) and 0.0 < fraction < 1.0):
        raise CaseError(
            f"Observed fraction must be a number in (0, 1), got {fraction!r}; e.g. 0.2 observes "
            "a fifth of the curve steps to the target."
        )


@runtime_checkable
class TrajectoryPredictor(Protocol):
    """Optional: a predictor that samples whole future loss trajectories.

    ``sample_trajectories(histories, steps, n_samples, rng)`` returns an array of shape
    ``(len(histories), n_samples, len(steps))``: sampled **natural-log losses** (in the units
    of the histories' losses) after ``history.work[-1] + steps[j]`` curve steps, with ``steps`` a
    1-d increasing array of positive offsets shared by all tasks.
    """

    def sample_trajectories(
        self,
        histories: Sequence[TaskHistory],
        steps: np.ndarray,
        n_samples: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Sampled future log-losses, ``(n_tasks, n_samples, len(steps))``."""
        ...


def sample_trajectories(
    predictor: object,
    histories: Sequence[TaskHistory],
    steps: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
) -> np.ndarray | None:
    """``predictor``'s sampled future log-losses, or ``None`` if it samples no trajectories.

    Raises:
        CaseError: If ``steps`` is not a positive increasing 1-d array, or the predictor
            returns the wrong shape or NaN.

    Example:
        >>> sample_trajectories(object(), [], np.array([1.0]), 4, np.random.default_rng(0)) is None
        True
    """
    if not isinstance(predictor, TrajectoryPredictor):
        return None
    steps = np.asarray(steps, dtype=np.float64)
    if steps.ndim != 1 or steps.size == 0 or steps[0] <= 0 or np.any(np.diff(steps) <= 0):
        raise CaseError("sample_trajectories: steps must be a 1-d increasing array of offsets > 0.")
    result = np.asarray(predictor.sample_trajectories(histories, steps, n_samples, rng))
    expected = (len(histories), n_samples, len(steps))
    name = getattr(predictor, "name", type(predictor).__name__)
    if result.shape != expected:
        raise CaseError(
            f"{name}.sample_trajectories returned shape {result.shape}, expected {expected} "
            "(tasks, samples, steps)."
        )
    if np.isnan(result).any():
        raise CaseError(f"{name}.sample_trajectories returned NaN log-losses.")
    return result
