"""Per-task loss histories built from observations alone.

The observation shows each slotted task's current state, not its past. :class:`ObservedHistories`
remembers the past: at every update it follows tasks across slots with a
:class:`mara_env.agents.tracking.SlotTracker` (by arrival serial) and, whenever a task's curve steps grew since the previous
update, appends the point ``(curve steps, loss)`` to that task's history. Everything is in the
units a scheduler can observe:

* loss: ``exp(log_loss_ratio)``, the loss relative to the task's loss at arrival (so the first
  point, added when the task is first seen, is ``(0, 1.0)``); predictors must not depend on the
  absolute loss scale, which no scheduler knows;
* target: ``exp(log_target_ratio)`` on the same scale;
* work: curve steps done (``curve_steps * STEP_SCALE``), the trace's x axis;
* time left in epochs, speed in curve steps per node-epoch (``speed * SPEED_SCALE``), family;
* budget: the step budget in curve steps (``SlotView.budget`` in node-epochs, times the speed).

So :meth:`ObservedHistories.history` gives a :class:`mara_env.predictors.base.TaskHistory` any predictor
accepts. For schedulers that keep per-task recursive fits, :meth:`ObservedHistories.new_points`
returns just the points added at the latest update, and :attr:`ObservedHistories.departed_ids`
the tasks that left, so a fit costs constant time per new point.

Values come from a float32 observation, so they match the simulator's records to float32
precision. Curve steps saturate where the observation is clipped (``FEATURE_BOUND *
STEP_SCALE`` = 10,000 steps); a task past that adds no more points.

:class:`HistoryScheduler` is an :class:`mara_env.agents.base.EpochScheduler` whose histories are brought
up to date before each :meth:`HistoryScheduler.plan_epoch`; it may hold a
:class:`mara_env.predictors.base.Predictor` that replaces a scheduler's own estimates (LARA's and LaiRA's
``predictor`` argument), and is privileged exactly when that predictor is (the oracle).

Example:
    >>> import numpy as np
    >>> import mara_env
    >>> from mara_env.agents.observed_history import ObservedHistories
    >>> env = mara_env.raw_env(config="tiny", load=4.0)
    >>> env.reset(seed=0)
    >>> histories = ObservedHistories()
    >>> histories.reset(env.config)
    >>> histories.update(env.observe("node_0")["observation"])
    >>> first = histories.history(0)
    >>> first.work.tolist(), first.loss.tolist()
    ([0.0], [1.0])
    >>> env.step(0); env.step(0)  # both nodes train slot 0 for one epoch
    >>> histories.update(env.observe("node_0")["observation"])
    >>> work, loss = histories.new_points(0)
    >>> len(histories.history(0).work), bool(work[0] > 0), bool(loss[0] <= 1.0)
    (2, True, True)
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, cast

import numpy as np

from mara_env import ClusterConfig, decode_observation
from mara_env.agents.base import EpochScheduler, NotResetError
from mara_env.agents.tracking import NO_TASK, SlotTracker
from mara_env.curves.families import observed_name
from mara_env.predictors.base import Predictor, RemainingWork, TaskHistory, is_privileged
from mara_env.sim.observation import (
    SlotView,
)

_NO_POINTS = np.zeros(0)


class _TaskRecord:
    """The observed points of one task and its constants."""

    __slots__ = ("budget", "family", "loss", "new_from", "seen", "work")

    def __init__(self, family: int, budget: float) -> None:
        self.family = family
        self.budget = budget
        self.seen = False
        self.work: list[float] = [0.0]
        self.loss: list[float] = [1.0]
        self.new_from = 0


class ObservedHistories:
    """Loss histories of the visible tasks, from observations only.

    Call :meth:`reset` at the start of an episode and :meth:`update` once per epoch (with any
    node's observation vector: the slot features are the same for every node), before reading.

    A task is known by its arrival serial (through :attr:`tracker`), so it keeps its history in
    whichever slot it is shown.

    Attributes:
        tracker: Maps the tasks' serials to persistent ids.
        view: The latest decoded observation (``None`` before the first update).
        curve_steps: Per slot, curve steps done by its task (0 for an empty slot).
        speed: Per slot, curve steps one node advances its task per epoch (0 if empty).
        departed_ids: Ids of tasks that were visible at the previous update and are gone now
            (completed or expired): their records have been dropped.
        reported_slots: Per slot, whether the latest update added points to its task (see
            :meth:`reported`; a read-only array).
    """

    def __init__(self) -> None:
        self._config: ClusterConfig | None = None
        self.tracker = SlotTracker()
        self.view: SlotView | None = None
        self.curve_steps = np.zeros(0)
        self.speed = np.zeros(0)
        self.departed_ids: list[int] = []
        self.reported_slots = np.zeros(0, dtype=bool)
        self._records: dict[int, _TaskRecord] = {}

    def reset(self, config: ClusterConfig) -> None:
        """Forget every task; expect observations of ``config``."""
        self._config = config
        self.tracker.reset(config.n_slots)
        self.view = None
        self.curve_steps = np.zeros(config.n_slots)
        self.speed = np.zeros(config.n_slots)
        self.departed_ids = []
        self.reported_slots = np.zeros(config.n_slots, dtype=bool)
        self._records = {}

    @property
    def task_ids(self) -> np.ndarray:
        """Per slot, the id of the task it holds (``NO_TASK`` = -1 if empty): :attr:`tracker`'s."""
        return self.tracker.task_ids

    def update(self, observation: np.ndarray | SlotView) -> None:
        """Take in one epoch's observation: follow tasks, append new points.

        Args:
            observation: A node's float32 observation vector (``obs["observation"]``), or its
                :class:`~mara_env.sim.observation.SlotView` if the caller decoded it already.

        Raises:
            mara_env.agents.base.NotResetError: Before :meth:`reset`.
            ValueError: If the observation does not fit the config given to :meth:`reset`.
        """
        config = self._require_config()
        view = (
            observation
            if isinstance(observation, SlotView)
            else decode_observation(observation, config)
        )
        _check_values(view)
        steps = np.where(view.occupied, view.curve_steps, 0.0)
        speed = np.where(view.occupied, view.speed, 0.0)
        self.tracker.update(view)
        ids = self.tracker.task_ids
        records = self._records
        visible = set(ids[view.occupied].tolist())
        vanished = sorted(task for task in records if task not in visible)
        for task in vanished:
            del records[task]
        loss = np.exp(view.log_loss_ratio).tolist()
        budget = view.budget * speed
        step_list, id_list = steps.tolist(), ids.tolist()
        reported = [False] * len(step_list)
        for slot in np.flatnonzero(view.occupied).tolist():
            task = id_list[slot]
            record = records.get(task)
            if record is None:
                record = records[task] = _TaskRecord(int(view.family[slot]), float(budget[slot]))
            record.new_from = len(record.work) if record.seen else 0
            record.seen = True
            if step_list[slot] > record.work[-1]:
                record.work.append(step_list[slot])
                record.loss.append(loss[slot])
            reported[slot] = record.new_from < len(record.work)
        self.departed_ids = vanished
        self.reported_slots = np.array(reported)
        self.reported_slots.setflags(write=False)
        self.view = view
        self.curve_steps = steps
        self.speed = speed

    def history(self, slot: int) -> TaskHistory | None:
        """The :class:`TaskHistory` of the task in ``slot`` (``None`` for an empty slot).

        Raises:
            IndexError: If ``slot`` is not a slot index of the config.
        """
        record = self._record(slot)
        if record is None or self.view is None:
            return None
        # update() checked the values, and work only grows: the history's checks hold
        return TaskHistory.unchecked(
            work=np.array(record.work),
            loss=np.array(record.loss),
            target=float(np.exp(self.view.log_target_ratio[slot])),
            time_left=float(self.view.time_left[slot]),
            speed=float(self.speed[slot]),
            family=observed_name(record.family),
            budget=record.budget,
            slot=slot,
        )

    def reported(self, slot: int) -> bool:
        """Whether the latest update added points to ``slot``'s task (the cheap form of
        ``len(new_points(slot)[0]) > 0``).

        Raises:
            IndexError: If ``slot`` is not a slot index of the config.
        """
        self._record(slot)  # checks the slot
        return bool(self.reported_slots[slot])

    def new_points(self, slot: int) -> tuple[np.ndarray, np.ndarray]:
        """``(work, loss)`` of the points the latest update added to ``slot``'s task.

        A task first seen at the latest update returns all its points (its arrival point
        included); a task that did not train returns two empty arrays, as does an empty slot.

        Raises:
            IndexError: If ``slot`` is not a slot index of the config.
        """
        record = self._record(slot)
        if record is None:
            return _NO_POINTS, _NO_POINTS
        start = record.new_from
        return np.array(record.work[start:]), np.array(record.loss[start:])

    def _record(self, slot: int) -> _TaskRecord | None:
        config = self._require_config()
        if not 0 <= slot < config.n_slots:
            raise IndexError(
                f"ObservedHistories: slot {slot} is outside 0..{config.n_slots - 1} for this "
                "config."
            )
        task = int(self.tracker.task_ids[slot])
        return None if task == NO_TASK else self._records.get(task)

    def _require_config(self) -> ClusterConfig:
        if self._config is None:
            raise NotResetError(
                "ObservedHistories has no configuration yet: call reset(config) before update()."
            )
        return self._config


def _check_values(view: SlotView) -> None:
    """A ValueError unless every occupied slot holds values a :class:`TaskHistory` accepts:
    finite losses, target and curve steps, a positive speed and a positive step budget."""
    occupied = view.occupied
    valid = (
        np.isfinite(view.log_loss_ratio)
        & np.isfinite(view.log_target_ratio)
        & np.isfinite(view.curve_steps)
        & (view.curve_steps >= 0)
        & (view.speed > 0)
        & (view.budget > 0)
    )
    invalid = occupied & ~valid
    if np.count_nonzero(invalid):
        raise ValueError(
            f"ObservedHistories.update: slot {int(np.argmax(invalid))} of the observation holds a "
            "non-finite loss, target or step count, or a speed or step budget <= 0; pass the "
            "observation vector of a mara_env environment of the config given to reset()."
        )


class HistoryScheduler(EpochScheduler):
    """An :class:`EpochScheduler` that keeps :attr:`histories` up to date for its subclasses.

    Subclasses implement :meth:`plan_epoch` instead of :meth:`plan`; when it runs,
    :attr:`histories` already holds this epoch's observation.

    Args:
        predictor: A predictor that replaces the scheduler's own estimates where the subclass
            says so (``None``: its own). A privileged one (the oracle) makes the scheduler
            privileged: :meth:`bind` hands it the environment every episode.
        n_samples: Samples drawn per prediction of ``predictor``.

    Attributes:
        histories: The observed histories of the visible tasks.
        predictor: The predictor given, or ``None``.
    """

    name = "history_scheduler"

    def __init__(self, predictor: Predictor | None = None, n_samples: int = 16) -> None:
        super().__init__()
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 1:
            raise ValueError(
                f"{type(self).__name__}: n_samples must be an int >= 1, got {n_samples!r}."
            )
        self.histories = ObservedHistories()
        self.predictor = predictor
        self.n_samples = n_samples
        if predictor is not None:
            self.name = f"{self.name}_{predictor.name}"

    @property
    def privileged(self) -> bool:
        """Whether the scheduler reads hidden state: exactly when its predictor does."""
        return self.predictor is not None and is_privileged(self.predictor)

    def bind(self, env: Any) -> None:
        """Hand a privileged predictor the environment's simulator for the episode ahead (the
        harnesses call this every episode; nothing to do without one)."""
        if self.privileged:
            cast(Any, self.predictor).bind(env)

    def predict_remaining(self, slots: np.ndarray) -> RemainingWork:
        """:attr:`predictor`'s samples of the remaining curve steps of each task in ``slots``
        (occupied slots, histories up to date), drawn with the scheduler's generator.

        Raises:
            ValueError: Without a predictor.
        """
        if self.predictor is None:
            raise ValueError(f"{type(self).__name__} has no predictor to predict with.")
        histories = []
        for slot in slots.tolist():
            history = self.histories.history(slot)
            if history is None:
                raise ValueError(f"{type(self).__name__}: slot {slot} holds no task to predict.")
            histories.append(history)
        return self.predictor.predict(histories, self.n_samples, self.rng)

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Start a new episode of ``config`` (histories are forgotten)."""
        self.histories.reset(config)
        super().reset(config, seed)

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Update :attr:`histories` with this epoch's observation, then :meth:`plan_epoch`."""
        self.histories.update(view)
        return self.plan_epoch(view, mask)

    @abstractmethod
    def plan_epoch(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """One action per node for this epoch (see :meth:`EpochScheduler.plan`)."""
