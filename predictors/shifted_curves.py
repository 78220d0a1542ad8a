"""Length and resolution shifts: prediction tasks on the shipped curves, resampled.

A user's own training jobs report at another rate, or run longer, than the shipped curves (100 or
120 points). These shifts make such tasks from the tasks of :func:`mara_env.predictors.cases.draw_tasks`
(the simulator's drawing rule is applied to the recorded curve first; a shift then changes the
curve and, as stated below, the speed or the deadline; the target loss stays the same):

* :func:`resample_curve` turns a curve of ``L`` points into one of ``factor * L`` points: point
  ``j`` is the loss at original step ``j / factor``, interpolated linearly in log-loss between
  the two recorded points around it, so every ``factor``-th point is a recorded value; past the
  last recorded point the loss holds (as the simulator repeats the last loss after a curve ends).
* :data:`SHIFTS` names the shifted task sets:

  ===================  ============  ==============  ==============================================
  name                 speed         deadline        what an ideal predictor does
  ===================  ============  ==============  ==============================================
  ``resolution_x2``    doubled       unchanged       the same job sampled twice as finely: the
                                                     remaining work in curve steps doubles
  ``duration_x2``      unchanged     doubled         a job twice as long as any shipped one: twice
                                                     the node-epochs, twice the curve steps
  ===================  ============  ==============  ==============================================

The steps to the target are found again on the resampled curve by the simulator's rule
(:func:`mara_env.predictors.cases.first_step_at_or_below`): ``2 T`` or ``2 T - 1`` for a target first
reached at recorded step ``T``. Each shifted task remembers its ``source_length`` (``L``), so
scores can be split by whether the target is crossed before or after the recorded curve's last
point (:attr:`mara_env.predictors.cases.PredictionTask.crossed_late`). A shifted task that would
be done at its first report is dropped, as drawn tasks are.

Example:
    >>> from mara_env.predictors.cases import draw_tasks, make_cases
    >>> tasks = draw_tasks("rl", seed=0, draws_per_curve=1)
    >>> shifted = shift_tasks(tasks, SHIFTS["resolution_x2"])
    >>> shifted[0].length == 2 * tasks[0].length, shifted[0].speed == 2 * tasks[0].speed
    (True, True)
    >>> bool(np.array_equal(shifted[0].curve[::2], tasks[0].curve))
    True
    >>> len(make_cases(shifted, 0.4)) > 0
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np

from mara_env.predictors.cases import PredictionTask, done_at_first_report, first_step_at_or_below


class ShiftError(ValueError):
    """A curve or a resampling factor that cannot be shifted."""


def resample_curve(curve: np.ndarray, factor: int = 2) -> np.ndarray:
    """``curve`` (``L`` losses at steps ``0 .. L - 1``) at ``factor`` times the resolution.

    Point ``j`` of the result (``factor * L`` points) is ``exp`` of the linear interpolation of
    ``ln(curve)`` at step ``j / factor``; points past step ``L - 1`` hold ``curve[-1]``. Points
    ``0, factor, 2 factor, ...`` are exactly the recorded losses.

    Args:
        curve: Positive finite losses, at least two.
        factor: Points per recorded step (an int >= 1).

    Raises:
        ShiftError: For a bad curve or factor.

    Example:
        >>> resample_curve(np.array([1.0, 0.25, 0.25])).round(12).tolist()
        [1.0, 0.5, 0.25, 0.25, 0.25, 0.25]
    """
    if not isinstance(factor, int) or isinstance(factor, bool) or factor < 1:
        raise ShiftError(f"resample_curve: factor must be an int >= 1, got {factor!r}.")
    curve = np.asarray(curve, dtype=np.float64)
    if curve.ndim != 1 or len(curve) < 2 or not np.all(np.isfinite(curve) & (curve > 0)):
        raise ShiftError(
            "resample_curve: the curve must be a 1-d array of at least two finite losses > 0."
        )
    length = len(curve)
    position = np.arange(factor * length) / factor
    resampled = np.exp(np.interp(position, np.arange(length), np.log(curve)))
    resampled[::factor] = curve  # exactly the recorded values, not exp(log(value))
    resampled[position > length - 1] = curve[-1]  # the loss holds after the last point
    return resampled


@dataclass(frozen=True)
class Shift:
    """A way of stretching drawn tasks (see the module docstring).

    Attributes:
        name: The task set's name in results.
        factor: Points of the resampled curve per recorded point.
        scale_speed: ``True``: speed times ``factor``, deadline kept (a finer sampling of the
            same job); ``False``: speed kept, deadline in epochs times ``factor`` (a longer job).
        description: One line for reports.
    """

    name: str
    factor: int
    scale_speed: bool
    description: str

    def __post_init__(self) -> None:
        if not isinstance(self.factor, int) or self.factor < 2:
            raise ShiftError(f"Shift {self.name!r}: factor must be an int >= 2, got {self.factor}.")


#: The shifted task sets by name.
SHIFTS: Mapping[str, Shift] = MappingProxyType(
    {
        shift.name: shift
        for shift in (
            Shift(
                "resolution_x2",
                2,
                scale_speed=True,
                description="every curve at twice the points, speed doubled, deadline kept",
            ),
            Shift(
                "duration_x2",
                2,
                scale_speed=False,
                description="every curve at twice the points, speed kept, deadline doubled",
            ),
        )
    }
)


def shift_task(task: PredictionTask, shift: Shift) -> PredictionTask:
    """``task`` on its resampled curve, with the speed or the deadline scaled by ``shift``.

    Raises:
        ShiftError: If ``task`` was already resampled.

    Example:
        >>> from mara_env.predictors.cases import draw_tasks
        >>> task = draw_tasks("vision", seed=0, draws_per_curve=1)[0]
        >>> longer = shift_task(task, SHIFTS["duration_x2"])
        >>> longer.speed == task.speed, longer.deadline == 2 * task.deadline, longer.target == task.target
        (True, True, True)
    """
    if task.source_length is not None:
        raise ShiftError(f"shift_task: task on curve {task.curve_id} is already resampled.")
    curve = resample_curve(task.curve, shift.factor)
    curve.setflags(write=False)
    return replace(
        task,
        curve=curve,
        speed=task.speed * shift.factor if shift.scale_speed else task.speed,
        deadline=task.deadline if shift.scale_speed else task.deadline * shift.factor,
        steps_to_target=first_step_at_or_below(curve, task.target),
        source_length=task.length,
    )


def shift_tasks(tasks: Sequence[PredictionTask], shift: Shift) -> tuple[PredictionTask, ...]:
    """Every task of ``tasks`` shifted, in order, less those then done at their first report."""
    shifted = (shift_task(task, shift) for task in tasks)
    return tuple(
        task for task in shifted if not done_at_first_report(task.speed, task.steps_to_target)
    )
