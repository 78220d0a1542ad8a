"""Following tasks across epochs from observations alone.

The observation describes slots, not tasks: when a task completes or expires, a queued task takes
its slot. Each slot shows its task's arrival serial (``SlotView.serial``, the task's index in the
episode's task table), which names the task for its whole episode; :class:`SlotTracker` maps
serials to persistent ids, so schedulers can keep nodes on the same task and remember per-task
facts.

Example:
    >>> import mara_env
    >>> from mara_env.agents.tracking import SlotTracker
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

from mara_env.sim.observation import SlotView

#: Task id of an empty slot.
NO_TASK = -1


class SlotTracker:
    """Assigns each observed task a persistent id (0, 1, ... in order of first appearance).

    A task is known by its arrival serial: it keeps its id while it stays visible, in whichever
    slot it is shown.

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
        self._serials = np.full(n_slots, NO_TASK, dtype=np.int64)
        self._id_of: dict[int, int] = {}

    def update(self, view: SlotView) -> np.ndarray:
        """Match ``view``'s slots to known tasks by serial; returns :attr:`continuing`.

        Raises:
            ValueError: If ``view`` has another number of slots than :meth:`reset` expected, or
                shows one serial in two slots.
        """
        serials = np.where(view.occupied, view.serial, NO_TASK).astype(np.int64)
        if serials.shape != self._serials.shape:
            raise ValueError(
                f"SlotTracker.update: expected {self._serials.size} slots (reset(n_slots)), got "
                f"{serials.size}."
            )
        serial_list = serials.tolist()
        visible = [serial for serial in serial_list if serial != NO_TASK]
        if len(set(visible)) != len(visible):
            raise ValueError(f"SlotTracker.update: a serial is shown in two slots: {visible}.")
        known = self._id_of
        id_of = {}
        new_ids = []
        ids = []
        for serial in serial_list:
            if serial == NO_TASK:
                ids.append(NO_TASK)
                continue
            task = known.get(serial)
            if task is None:
                task = self._next_id
                self._next_id += 1
                new_ids.append(task)
            id_of[serial] = task
            ids.append(task)
        self._id_of = id_of  # a task that left never returns
        same = (serials != NO_TASK) & (serials == self._serials)
        self.new_ids = new_ids
        self.task_ids = np.array(ids, dtype=np.int64)
        self.continuing = same
        self._serials = serials
        return same
