"""Following tasks across epochs from observations alone.

The observation describes slots, not tasks: when a task completes or expires, a queued task takes
its slot. :class:`SlotTracker` tells the two apart from observable task constants, so schedulers
can keep nodes on the same task and remember per-task facts.

A slot is taken to hold the same task as at the previous update when it was occupied both times
and the task's constants agree: its deadline window ``age + time_left`` (epochs from arrival to
deadline) and its ``log_target_ratio`` (ln(target / loss at arrival)), and its age and work did
not decrease. Two tasks identical in all of these and in their state would be indistinguishable
to any scheduler anyway.

Example:
    >>> import mara_env
    >>> from agents.tracking import SlotTracker
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=0)
    >>> tracker = SlotTracker()
    >>> tracker.reset(env.config.n_slots)
    >>> view = mara_env.decode_observation(env.observe("node_0")["observation"], env.config)
    >>> continuing = tracker.update(view)
    >>> bool(continuing.any())  # nothing continues at the first update
    False
"""

from __future__ import annotations

import numpy as np

from mara_env.observation import SlotView

#: Task id of an empty slot.
NO_TASK = -1


class SlotTracker:
    """Assigns each observed task a persistent id (0, 1, ... in order of first appearance).

    Attributes:
        task_ids: Per slot, the id of the task it holds (``NO_TASK`` if empty).
        continuing: Per slot, whether it holds the same task as at the previous update.
        new_ids: Ids first seen at the latest update.
    """

    def __init__(self) -> None:
        self.reset(0)

    def reset(self, n_slots: int) -> None:
        """Forget everything; expect ``n_slots`` slots."""
        self.task_ids = np.full(n_slots, NO_TASK, dtype=np.int64)
        self.continuing = np.zeros(n_slots, dtype=bool)
        self.new_ids: list[int] = []
        self._next_id = 0
        self._window = np.zeros(n_slots)
        self._target = np.zeros(n_slots)
        self._age = np.zeros(n_slots)
        self._work = np.zeros(n_slots)

    def update(self, view: SlotView) -> np.ndarray:
        """Match ``view``'s slots to known tasks; returns :attr:`continuing`."""
        window = view.age + view.time_left
        same = (
            view.occupied
            & (self.task_ids != NO_TASK)
            & (window == self._window)
            & np.isclose(view.log_target_ratio, self._target, rtol=1e-6, atol=1e-9)
            & (view.age >= self._age)
            & (view.work >= self._work)
        )
        fresh = np.flatnonzero(view.occupied & ~same)
        ids = np.where(same, self.task_ids, NO_TASK)
        ids[fresh] = self._next_id + np.arange(len(fresh))
        self._next_id += len(fresh)
        self.new_ids = ids[fresh].tolist()
        self.task_ids = ids
        self.continuing = same
        self._window = window.copy()
        self._target = np.asarray(view.log_target_ratio, dtype=np.float64).copy()
        self._age = np.asarray(view.age, dtype=np.float64).copy()
        self._work = np.asarray(view.work, dtype=np.float64).copy()
        return same
