"""The rules of the simulated world, each in one public function.

The simulator core (:mod:`mara_env.sim.core`), the workload (:mod:`mara_env.sim.workload`), the
clairvoyant reference and the prediction code all call these, so that a rule is written once:

* :func:`loss_after` (one task) and :func:`loss_at` (arrays): the loss a curve reports after
  ``progress`` curve steps, ``curve[floor(progress)]``, the last point repeating past the end;
* :func:`progress_gain` (a ufunc; ``progress_gain_of_task`` for compiled code): the curve steps
  a task advances in one epoch, ``speed * share**alpha`` where ``share`` is the sum of its
  nodes' effective shares of the epoch (with ``speed = 1`` and whole nodes ``k``: the parallel
  speed-up ``k**alpha``, the node-epochs of one node's work that ``k`` nodes do per epoch);
* :func:`progress_after_epochs`: a task's progress epoch after epoch, the gains added one at a
  time as the simulator adds them;
* :func:`nodes_for_rate` and :func:`whole_nodes_needed`: the speed-up's inverse, the nodes a
  task needs to do some work in some time (real-valued average nodes, and whole nodes up to a
  limit);
* :func:`log_of_loss` (a ufunc; ``log_of_loss_of_task`` for compiled code): ``ln(loss)``, the
  one log every log-loss of the world is taken with;
* :func:`effective_share`: that sum when ``held`` of ``nodes`` nodes trained the task in the
  previous epoch and the others pay ``switch_cost``;
* :func:`first_step_at_or_below`: the first curve step >= 1 whose loss is at or below a target;
* :func:`lowest_recorded_loss`: a curve's minimum over its recorded points (hopeless targets
  are drawn below it);
* :func:`epochs_to_target`: the epochs a task needs with ``k`` nodes, from its curve (what the
  core's privileged view answers for the clairvoyant reference);
* :func:`draw_task_terms` and :func:`deadlines`: a task's speed, target and deadline, drawn for
  a chosen curve (the simulator's task drawing; the prediction cases draw with it too);
* :data:`HOPELESS_TARGET_RANGE`: a hopeless target is its curve's minimum times a uniform draw
  from this range, so it is never reached.

Example:
    >>> import numpy as np
    >>> curves = np.array([[1.0, 0.8, 0.6, 0.4]])
    >>> loss_at(curves, np.array([0]), np.array([2.7])).tolist()
    [0.6]
    >>> first_step_at_or_below(curves, np.array([4]), np.array([0.7])).tolist()
    [2.0]
    >>> float(progress_gain(2.0, effective_share(2, 1, 0.1), 1.0))
    3.8
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit, vectorize

from mara_env.curves.recorded_durations import unit_run_epochs

if TYPE_CHECKING:
    from mara_env.worlds.config import ClusterConfig

#: A hopeless target is its curve's minimum times ``U(HOPELESS_TARGET_RANGE)``: never reached.
HOPELESS_TARGET_RANGE = (0.5, 0.9)


@njit(cache=True)
def loss_after(curves: np.ndarray, curve_row: int, progress: float) -> float:
    """The rule for one task: the loss row ``curve_row`` of ``curves`` reports after
    ``progress`` curve steps, ``curves[curve_row, min(floor(progress), length - 1)]``
    (``progress >= 0``; compiled, so the simulator's compiled epoch calls it too)."""
    return curves[curve_row, min(int(progress), curves.shape[1] - 1)]


@njit(cache=True)
def _losses_after(curves: np.ndarray, curve_row: np.ndarray, progress: np.ndarray) -> np.ndarray:
    losses = np.empty(len(progress), dtype=curves.dtype)
    for index in range(len(progress)):
        losses[index] = loss_after(curves, curve_row[index], progress[index])
    return losses


def loss_at(curves: np.ndarray, curve_row: np.ndarray | int, progress: np.ndarray) -> np.ndarray:
    """Loss reported by rows ``curve_row`` of ``curves`` after ``progress`` curve steps
    (:func:`loss_after` of each element).

    Args:
        curves: ``(n_curves, length)`` losses, each row padded with its last value.
        curve_row: Row of each query (any shape broadcasting against ``progress``; one row for
            all as an int).
        progress: Curve steps done (same shape as ``curve_row``; >= 0).

    Returns:
        ``curves[curve_row, min(floor(progress), length - 1)]``.
    """
    rows, steps = np.broadcast_arrays(
        np.asarray(curve_row, dtype=np.intp), np.asarray(progress, dtype=np.float64)
    )
    losses = _losses_after(np.ascontiguousarray(curves), rows.ravel(), steps.ravel())
    return losses.reshape(steps.shape)


def effective_share(
    nodes: np.ndarray | int, held: np.ndarray | int, switch_cost: float
) -> np.ndarray:
    """Sum of the effective shares of ``nodes`` nodes of which ``held`` trained the task last
    epoch: ``held + (nodes - held) * (1 - switch_cost)`` (``held`` is capped at ``nodes``).

    The simulator adds the shares node by node; for whole numbers of nodes both give the same
    value up to rounding, and the simulator's own sum is the one that counts.
    """
    nodes_ = np.asarray(nodes, dtype=np.float64)
    staying = np.minimum(nodes_, held)
    return staying + (nodes_ - staying) * (1.0 - switch_cost)


def _progress_gain(speed: float, share: float, alpha: float) -> float:
    """Curve steps a task advances in one epoch: ``speed * share**alpha``."""
    return speed * share**alpha


#: The rule for one task, compiled (what the simulator's compiled epoch calls).
progress_gain_of_task = njit(cache=True)(_progress_gain)
#: The rule as a NumPy ufunc, for numbers and arrays: ``speed * share**alpha`` (the C library's
#: ``pow``, as in the compiled simulator, also where NumPy's own ``**`` would use SIMD kernels).
progress_gain = vectorize(["float64(float64, float64, float64)"], cache=True)(_progress_gain)


def progress_after_epochs(gains: np.ndarray | Sequence[float], start: float = 0.0) -> np.ndarray:
    """A task's progress at ``start`` and after each epoch, when epoch ``i`` adds ``gains[i]``
    curve steps (:func:`progress_gain`), summed one epoch at a time as the simulator adds them.

    Args:
        gains: ``(n,)`` curve steps gained in each epoch.
        start: Progress before the first of them.

    Returns:
        ``(n + 1,)`` float64: ``start``, ``start + gains[0]``, ``(start + gains[0]) + gains[1]``...

    Example:
        >>> progress_after_epochs(np.full(3, 0.1)).tolist()
        [0.0, 0.1, 0.2, 0.30000000000000004]
    """
    return np.cumsum(np.concatenate([[float(start)], np.asarray(gains, dtype=np.float64)]))


def nodes_for_rate(
    work: np.ndarray | float, time: np.ndarray | float, alpha: np.ndarray | float
) -> np.ndarray:
    """Nodes a task must hold on average to do ``work`` node-epochs of one node's work in
    ``time`` epochs: the inverse of the parallel speed-up, real-valued.

    With ``rate = work / time``: ``rate`` itself up to one node (time-sharing one node is
    linear), and ``rate ** (1 / alpha)`` above, since ``k`` nodes do ``k**alpha`` node-epochs
    of one node's work per epoch (:func:`progress_gain` with ``speed = 1``). The power is
    NumPy's, over arrays. :func:`whole_nodes_needed` is the whole-node count.

    Args:
        work: Node-epochs of one node's work (``inf``: never done).
        time: Epochs available (> 0).
        alpha: Parallel-scaling exponents, in (0, 1].

    Returns:
        float64 average nodes, broadcast over the arguments (``inf`` for infinite work).

    Example:
        >>> nodes_for_rate(np.array([2.0, 8.0]), np.array([4.0, 4.0]), np.array([0.5, 0.5])).round(12)
        array([0.5, 4. ])
    """
    rate = np.asarray(work, dtype=np.float64) / np.asarray(time, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        parallel = rate ** (1.0 / np.asarray(alpha, dtype=np.float64))
    return np.where(rate <= 1.0, rate, parallel)


def whole_nodes_needed(work: float, speed: float, time: float, alpha: float, limit: int) -> int:
    """Fewest whole nodes, from 1 to ``limit``, that advance a task ``work`` curve steps within
    ``time`` epochs: the inverse of the parallel speed-up in whole nodes.

    ``k`` nodes advance a task ``progress_gain(speed, k, alpha)`` curve steps per epoch, so with
    ``rate = work / (speed * time)`` it is ``ceil(rate ** (1 / alpha))`` (less a tolerance of
    ``1e-9`` against rounding), 1 for ``rate <= 1`` (one node suffices), and ``limit`` when even
    ``limit`` nodes do not suffice or ``rate`` is not finite. Python floats throughout.

    Args:
        work: Curve steps to do (``inf``: never done).
        speed: Curve steps one node does per epoch (> 0).
        time: Epochs available (> 0).
        alpha: Parallel-scaling exponent, in (0, 1].
        limit: Most nodes the task can get (e.g. ``ClusterConfig.task_node_limit``).

    Example:
        >>> whole_nodes_needed(40.0, speed=2.0, time=5.0, alpha=0.5, limit=8)  # 16, capped
        8
        >>> whole_nodes_needed(12.0, speed=2.0, time=5.0, alpha=0.5, limit=8)  # 1.2 ** 2 = 1.44
        2
        >>> whole_nodes_needed(3.0, speed=2.0, time=5.0, alpha=0.5, limit=8)
        1
    """
    rate = work / (speed * time)
    if rate <= 1.0:
        return 1
    if not math.isfinite(rate):
        return limit
    return min(math.ceil(rate ** (1.0 / alpha) - 1e-9), limit)


def _log_of_loss(loss: float) -> float:
    """``ln(loss)``."""
    return math.log(loss)


#: ln of a loss, compiled: every log-loss of the world (a task's loss at arrival and after each
#: epoch, its target) is taken by this one function, so that "no change since arrival" is
#: exactly 0 on every machine (NumPy's SIMD ``log`` and the C library's may round differently).
log_of_loss_of_task = njit(cache=True)(_log_of_loss)
#: The same as a NumPy ufunc, for arrays.
log_of_loss = vectorize(["float64(float64)"], cache=True)(_log_of_loss)


def first_step_at_or_below(
    curves: np.ndarray, lengths: np.ndarray, target: np.ndarray
) -> np.ndarray:
    """First recorded curve step >= 1 whose loss is <= ``target`` (``inf`` where none is).

    Args:
        curves: ``(n, length)`` losses of each task's curve.
        lengths: ``(n,)`` recorded points of each curve.
        target: ``(n,)`` target losses.

    Returns:
        ``(n,)`` float64 steps (``inf`` for a target the curve never reaches).
    """
    return first_steps_on_rows(curves, np.arange(len(curves)), lengths, target)


@njit(cache=True)
def first_steps_on_rows(
    curves: np.ndarray, curve_row: np.ndarray, lengths: np.ndarray, target: np.ndarray
) -> np.ndarray:
    """:func:`first_step_at_or_below` of task ``i`` on row ``curve_row[i]`` of ``curves``, with
    ``lengths[i]`` its curve's recorded points (compiled)."""
    first = np.full(len(curve_row), np.inf)
    for task in range(len(curve_row)):
        curve = curves[curve_row[task]]
        for step in range(1, min(lengths[task], len(curve))):
            if curve[step] <= target[task]:
                first[task] = step
                break
    return first


def lowest_recorded_loss(curves: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``(n,)`` the lowest of each curve's ``lengths[i]`` recorded losses (``inf`` for none)."""
    recorded = np.arange(curves.shape[1])[None, :] < lengths[:, None]
    return np.where(recorded, curves, np.inf).min(axis=1, initial=np.inf)


#: Epoch count of a task that cannot reach its target within the horizon (:func:`epochs_to_target`).
NEVER = np.iinfo(np.int64).max


def epochs_to_target(
    curve: np.ndarray,
    progress: float,
    target: float,
    speed: float,
    alpha: float,
    first_share: np.ndarray,
    nodes: np.ndarray,
    horizon: int,
) -> np.ndarray:
    """Epochs until ``curve`` reports a loss <= ``target``, per node count (:data:`NEVER`: not
    within ``horizon`` epochs).

    Node count ``k = nodes[j]`` has effective share ``first_share[j]`` in the first epoch (some
    nodes pay the switch cost, see :func:`effective_share`) and ``k`` afterwards; each epoch adds
    :func:`progress_gain` and reports :func:`loss_at` the new progress, as in the simulator.

    Example:
        >>> curve = np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5])
        >>> epochs_to_target(curve, 0.0, 0.55, 1.0, 1.0, np.array([1.0, 1.8]), np.array([1, 2]), 9)
        array([5, 3])
    """
    if horizon < 1:
        return np.full(len(nodes), NEVER, dtype=np.int64)
    epochs = np.arange(1, horizon + 1, dtype=np.float64)
    first = progress_gain(speed, np.asarray(first_share, dtype=np.float64), alpha)
    steady = progress_gain(speed, np.asarray(nodes, dtype=np.float64), alpha)
    position = progress + first[:, None] + (epochs[None, :] - 1.0) * steady[:, None]
    index = np.minimum(position.astype(np.int64), len(curve) - 1)
    reached = curve[index] <= target
    hit = reached.argmax(axis=1)
    return np.where(reached.any(axis=1), hit + 1, NEVER).astype(np.int64)


#: A feasible target is at most this share of the curve's initial loss.
MAX_TARGET_SHARE = 0.99


@dataclass(frozen=True)
class TaskTerms:
    """The drawn terms of tasks whose curves are chosen (see :func:`draw_task_terms`).

    Attributes:
        speed: Curve steps one node advances per epoch.
        target: Target loss (below the curve's minimum for a hopeless task).
        hopeless: Whether the target was moved below anything the curve reports.
        demand: Node-epochs one node needs to reach the target (``inf`` if it never does).
        offered: The demand the feasible target would have had (``inf`` if even that one is
            never reached): what deadlines and the arrival rate are set from.
        time_allowed: Epochs from arrival the deadline allows, before rounding
            (:func:`deadlines`).
    """

    speed: np.ndarray
    target: np.ndarray
    hopeless: np.ndarray
    demand: np.ndarray
    offered: np.ndarray
    time_allowed: np.ndarray


def draw_task_terms(
    curves: np.ndarray,
    lengths: np.ndarray,
    alpha: np.ndarray | float,
    config: ClusterConfig,
    rng: np.random.Generator,
    *,
    curve_min: np.ndarray | None = None,
    curve_row: np.ndarray | None = None,
    duration: np.ndarray | None = None,
) -> TaskTerms:
    """Draw the speed, target and deadline allowance of tasks on the given curves.

    The rule of :mod:`mara_env.sim.workload` (the simulator's task drawing), in this order of draws
    from ``rng``: speed = length / ``U(epochs_per_curve)`` (with recorded durations, length /
    (the range's mean times the curve's relative duration)); a target at ``U(target_fraction)``
    of the curve (at most :data:`MAX_TARGET_SHARE` of the initial loss); with probability
    ``infeasible_share`` the target moves to the curve's minimum times
    ``U(HOPELESS_TARGET_RANGE)``; slack ``U(slack_range)`` gives
    ``time_allowed = slack * offered / deadline_nodes**alpha``, where a never-reached feasible
    target counts ``epochs_per_curve[1]`` epochs.

    Args:
        curves: ``(n, length)`` losses of each task's curve (padded with last values), or a pool
            of curves that ``curve_row`` indexes.
        lengths: ``(n,)`` recorded points of each task's curve.
        alpha: Parallel-scaling exponent of each task (or one for all).
        config: The cluster configuration whose ranges are drawn from.
        rng: The generator.
        curve_min: ``(n,)`` :func:`lowest_recorded_loss` of the tasks' curves, if the caller has
            it (computed here otherwise).
        curve_row: ``(n,)`` row of each task's curve in ``curves`` (default: row ``i`` is task
            ``i``'s).
        duration: ``(n,)`` relative duration of each task's curve
            (:mod:`mara_env.curves.recorded_durations`; default: 1 each).

    Example:
        >>> import numpy as np
        >>> from mara_env import get_config
        >>> curves = np.array([[1.0, 0.8, 0.6, 0.4, 0.3]])
        >>> terms = draw_task_terms(curves, np.array([5]), 1.0, get_config("tiny"),
        ...                         np.random.default_rng(0))
        >>> bool(terms.target[0] < 1.0), terms.speed.shape
        (True, (1,))
    """
    n = len(lengths)
    if curve_row is None:
        curve_row = np.arange(n)
    if curve_min is None:
        curve_min = lowest_recorded_loss(curves[curve_row], lengths)
    terms = task_terms(
        np.ascontiguousarray(curves, dtype=np.float64),
        np.asarray(curve_row, dtype=np.int64),
        np.asarray(lengths, dtype=np.int64),
        np.full(n, alpha) if np.ndim(alpha) == 0 else np.asarray(alpha, dtype=np.float64),
        np.asarray(curve_min, dtype=np.float64),
        np.ones(n) if duration is None else np.asarray(duration, dtype=np.float64),
        draw_term_numbers(config, rng, n),
    )
    return TaskTerms(*terms)


class TermDraws(NamedTuple):
    """The random numbers of :func:`draw_task_terms` for ``n`` tasks, and the config's numbers
    that :func:`task_terms` reads with them (compiled code reads the fields by name)."""

    epochs: np.ndarray
    position: np.ndarray
    hopeless: np.ndarray
    hopeless_share: np.ndarray
    slack: np.ndarray
    longest_epochs: float
    deadline_nodes: float


def draw_term_numbers(config: ClusterConfig, rng: np.random.Generator, n: int) -> TermDraws:
    """The draws of :func:`draw_task_terms` for ``n`` tasks, in their order (the first five
    fields of :class:`TermDraws`), and the config's numbers :func:`task_terms` reads."""
    # One call for the five draws of n uniforms (the numbers of five successive calls, in that
    # order); ``low + (high - low) * u`` is how ``rng.uniform`` scales each, bit for bit.
    uniforms = rng.random((5, n))

    def between(row: int, bounds: tuple[float, float]) -> np.ndarray:
        low, high = float(bounds[0]), float(bounds[1])
        return low + (high - low) * uniforms[row]

    epochs = unit_run_epochs(config.epochs_per_curve, config.curve_durations, uniforms[0])
    position = between(1, config.target_fraction)
    hopeless = uniforms[2] < config.infeasible_share
    hopeless_share = between(3, HOPELESS_TARGET_RANGE)
    slack = between(4, config.slack_range)
    longest = float(config.epochs_per_curve[1])
    return TermDraws(
        epochs, position, hopeless, hopeless_share, slack, longest, float(config.deadline_nodes)
    )


@njit(cache=True)
def task_terms(
    curves: np.ndarray,
    curve_row: np.ndarray,
    lengths: np.ndarray,
    alpha: np.ndarray,
    curve_min: np.ndarray,
    duration: np.ndarray,
    draws: TermDraws,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fields of :class:`TaskTerms` from the draws of :func:`draw_term_numbers` (compiled;
    the task drawing of :mod:`mara_env.sim.workload` calls it too); ``duration`` is each task's
    curve's relative duration (1 unless durations are recorded)."""
    epochs, position, hopeless, hopeless_share, slack = (
        draws.epochs,
        draws.position,
        draws.hopeless,
        draws.hopeless_share,
        draws.slack,
    )
    n = len(lengths)
    speed = np.empty(n)
    feasible_target = np.empty(n)
    for task in range(n):
        curve = curves[curve_row[task]]
        speed[task] = lengths[task] / (epochs[task] * duration[task])
        step = min(max(int(position[task] * lengths[task]), 1), lengths[task] - 1)
        feasible_target[task] = min(curve[step], MAX_TARGET_SHARE * curve[0])
    offered = first_steps_on_rows(curves, curve_row, lengths, feasible_target) / speed
    target = np.empty(n)
    demand = np.empty(n)
    time_allowed = np.empty(n)
    for task in range(n):
        if hopeless[task]:
            target[task] = curve_min[task] * hopeless_share[task]
            demand[task] = np.inf
        else:
            target[task] = feasible_target[task]
            demand[task] = offered[task]
        allowed = offered[task] if np.isfinite(offered[task]) else draws.longest_epochs
        speedup = progress_gain_of_task(1.0, draws.deadline_nodes, alpha[task])
        time_allowed[task] = slack[task] * allowed / speedup
    return speed, target, hopeless, demand, offered, time_allowed


def deadlines(arrival: np.ndarray, time_allowed: np.ndarray, max_epochs: int) -> np.ndarray:
    """Deadline epochs: ``arrival + max(1, ceil(time_allowed))``, capped at ``max_epochs``
    (:func:`deadline_of` of each task)."""
    return _deadlines(np.asarray(arrival, dtype=np.int64), np.asarray(time_allowed), max_epochs)


@njit(cache=True)
def deadline_of(arrival: int, time_allowed: float, max_epochs: int) -> int:
    """The rule for one task: ``min(arrival + max(1, ceil(time_allowed)), max_epochs)``."""
    return min(arrival + int(max(1.0, math.ceil(time_allowed))), max_epochs)


@njit(cache=True)
def _deadlines(arrival: np.ndarray, time_allowed: np.ndarray, max_epochs: int) -> np.ndarray:
    deadline = np.empty(len(arrival), dtype=np.int64)
    for task in range(len(arrival)):
        deadline[task] = deadline_of(arrival[task], time_allowed[task], max_epochs)
    return deadline
