"""What a scheduler knows about the tasks in a running simulation, as predictor inputs.

:func:`task_histories` turns the simulator's records of arrived tasks into
:class:`mara_env.predictors.base.TaskHistory` objects holding exactly what a scheduler can observe:

* ``work``: curve steps done when each loss was reported (``history_progress``; 0 at arrival);
* ``loss``: each reported loss **divided by the loss at arrival** (1 at arrival), and ``target``
  likewise, because schedulers see only loss ratios (``log_loss_ratio``, ``log_target_ratio``
  in :mod:`mara_env.sim.observation`); predictors are scale-invariant, so this changes nothing for
  them but keeps the absolute scale of the hidden curve out of their inputs;
* ``time_left``: ``deadline - epoch``; ``speed``: curve steps one node advances per epoch;
  ``family``: the family name; ``budget``: the task's step budget in curve steps, the points
  recorded in its curve (the workload knows each curve row's length; a real scheduler knows the
  job's configured steps); ``slot``: the visible slot the task is in (-1 while it queues).

:class:`HistoryBuffers` builds the same histories incrementally, for callers that ask every
epoch (the prediction wrappers): it copies only the points reported since its last call.

The simulator's records already satisfy every check of ``TaskHistory`` (losses come from validated
traces, so they are finite and > 0; progress strictly increases with each report, since
``switch_cost < 1``), so histories are assembled without re-running the checks, which would cost
more than the rest of a prediction step.

Example:
    >>> import mara_env
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=3)
    >>> simulator = env.unwrapped.simulator
    >>> tasks = slotted_tasks(simulator)
    >>> [float(h.loss[0]) for h in task_histories(simulator, tasks)] == [1.0] * len(tasks)
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mara_env.curves.families import observed_name
from mara_env.predictors.base import TaskHistory
from mara_env.sim.simulator import NO_TASK, ClusterSimulator, ClusterState


def slotted_tasks(simulator: ClusterSimulator) -> np.ndarray:
    """Ids of the tasks in the visible slots, in slot order."""
    slots = simulator.state.slots
    return slots[slots != NO_TASK]


def task_histories(
    simulator: ClusterSimulator, tasks: Sequence[int] | np.ndarray
) -> list[TaskHistory]:
    """The :class:`TaskHistory` of each of ``tasks`` (arrived task ids) at the current epoch.

    Raises:
        ValueError: If a task id has not arrived (it has no history yet).
    """
    state = simulator.state
    histories = []
    for task in _task_list(tasks):
        losses = _reported_losses(state, task)
        scale = 1.0 / losses[0]  # the loss reported at arrival
        histories.append(
            _assemble(
                state,
                task,
                np.array(state.history_progress[task]),
                np.multiply(losses, scale),
                scale,
            )
        )
    return histories


class HistoryBuffers:
    """Builds the histories of :func:`task_histories` incrementally, one episode at a time.

    Per task it keeps growing arrays of curve steps and relative losses and copies in only the
    points reported since the last call; each history gets views of the first ``n`` entries,
    which later points never overwrite (predictors must not write to their inputs).

    Args:
        simulator: The simulator whose tasks are read.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=3)
        >>> buffers = HistoryBuffers(env.unwrapped.simulator)
        >>> tasks = slotted_tasks(env.unwrapped.simulator)
        >>> [h.work.tolist() for h in buffers.histories(tasks)] == [[0.0]] * len(tasks)
        True
    """

    def __init__(self, simulator: ClusterSimulator) -> None:
        self.simulator = simulator
        self._state: ClusterState | None = None
        self._buffers: dict[int, _TaskBuffer] = {}

    def histories(self, tasks: Sequence[int] | np.ndarray) -> list[TaskHistory]:
        """The current history of each of ``tasks``; equal to :func:`task_histories`.

        Raises:
            ValueError: If a task id has not arrived (it has no history yet).
        """
        state = self.simulator.state
        if state is not self._state:
            self._state, self._buffers = state, {}
        histories, epoch, buffers = [], state.epoch, self._buffers
        progress_of, loss_of = state.history_progress, state.history_loss
        slot_of = _slots_of(state)
        for task in _task_list(tasks):
            buffer = buffers.get(task)
            if buffer is None:
                buffer = buffers[task] = _TaskBuffer(state, task)
            progress = progress_of[task]
            n_points, count = len(progress), buffer.count
            if n_points == count + 1 and count < buffer.work.size:  # the usual: one new point
                buffer.work[count] = progress[count]
                buffer.loss[count] = loss_of[task][count] * buffer.scale
                buffer.count = n_points
            elif n_points != count:
                buffer.extend(progress, loss_of[task])
            histories.append(
                TaskHistory.unchecked(
                    work=buffer.work[:n_points],
                    loss=buffer.loss[:n_points],
                    target=buffer.target,
                    time_left=buffer.deadline - epoch,
                    speed=buffer.speed,
                    family=buffer.family,
                    budget=buffer.budget,
                    slot=slot_of.get(task, -1),
                )
            )
        return histories


class _TaskBuffer:
    """Growing arrays of one task's curve steps and relative losses, and its constants."""

    __slots__ = (
        "budget",
        "count",
        "deadline",
        "family",
        "loss",
        "scale",
        "speed",
        "target",
        "work",
    )

    def __init__(self, state: ClusterState, task: int) -> None:
        table = state.tasks
        self.scale = 1.0 / _reported_losses(state, task)[0]
        self.target = table.target.item(task) * self.scale
        self.deadline = float(table.deadline.item(task))
        self.speed = table.speed.item(task)
        self.family = observed_name(table.family.item(task))
        self.budget = curve_budget(state, task)
        self.count = 0
        self.work = np.empty(16)
        self.loss = np.empty(16)

    def extend(self, progress: list[float], losses: list[float]) -> None:
        """Copy in the points not copied yet."""
        n_points, count = len(progress), self.count
        if n_points > self.work.size:
            size = max(2 * self.work.size, n_points)
            self.work = np.concatenate((self.work[:count], np.empty(size - count)))
            self.loss = np.concatenate((self.loss[:count], np.empty(size - count)))
        work, loss, scale = self.work, self.loss, self.scale
        for index in range(count, n_points):
            work[index] = progress[index]
            loss[index] = losses[index] * scale
        self.count = n_points


def curve_budget(state: ClusterState, task: int) -> float:
    """The step budget of ``task`` in curve steps: the points recorded in its curve (after them
    the simulator repeats the last loss)."""
    row = state.tasks.curve_row.item(task)
    return float(state.core.workload.lengths.item(row))


def _slots_of(state: ClusterState) -> dict[int, int]:
    """The visible slot of each slotted task, by task id."""
    return {task: slot for slot, task in enumerate(state.slots.tolist()) if task != NO_TASK}


def _task_list(tasks: Sequence[int] | np.ndarray) -> Sequence[int]:
    return tasks.tolist() if isinstance(tasks, np.ndarray) else tasks


def _reported_losses(state: ClusterState, task: int) -> list[float]:
    losses = state.history_loss.get(task)
    if losses is None:
        raise ValueError(
            f"task {task} has not arrived by epoch {state.epoch}; only arrived tasks (e.g. "
            "slotted_tasks(simulator)) have a history."
        )
    return losses


def _assemble(
    state: ClusterState, task: int, work: np.ndarray, loss: np.ndarray, scale: float
) -> TaskHistory:
    """The ``TaskHistory`` of ``task`` with the given arrays (its checks are skipped)."""
    table = state.tasks
    return TaskHistory.unchecked(
        work=work,
        loss=loss,
        target=table.target.item(task) * scale,
        time_left=float(table.deadline.item(task) - state.epoch),
        speed=table.speed.item(task),
        family=observed_name(table.family.item(task)),
        budget=curve_budget(state, task),
        slot=_slots_of(state).get(task, -1),
    )
