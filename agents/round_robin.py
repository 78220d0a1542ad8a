"""Round robin: time slicing over the visible tasks."""

from __future__ import annotations

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place, nodes_per_slot
from mara_env.agents.base import EpochScheduler
from mara_env.sim.observation import SlotView


class RoundRobin(EpochScheduler):
    """Round robin: each epoch the nodes take the next tasks in a fixed cyclic order.

    The visible tasks are kept in the order they were first seen. Each epoch, nodes are dealt out
    one per task starting just after the task that got the last node in the previous epoch, so
    with fewer nodes than tasks every task is trained in turn (one epoch per turn), and with
    more nodes than tasks the extra nodes rotate. Tasks change nodes often, so round robin pays
    many switch costs; :class:`mara_env.agents.uniform.UniformShare` is its switch-averse sibling.

    Example:
        >>> import mara_env
        >>> from mara_env.agents.evaluation import evaluate
        >>> evaluate(RoundRobin(), "tiny", seeds=[0])[0]["switches"] > 0
        True
    """

    name = "round_robin"

    def on_reset(self) -> None:
        """Start the cycle at the first task."""
        self._last_served = -1

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """The next slice of the cycle."""
        config = self.config
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        if len(slots) == 0:
            return np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        ids = self.tracker.task_ids[slots]
        by_id = np.argsort(ids, kind="stable")
        slots, ids = slots[by_id], ids[by_id]
        start = int(np.searchsorted(ids, self._last_served, side="right")) % len(slots)
        cycle = np.roll(slots, -start)
        counts = nodes_per_slot(cycle, config.n_nodes, config.n_slots, config.task_node_limit)
        dealt = int(counts.sum())
        self._last_served = int(np.roll(ids, -start)[(dealt - 1) % len(slots)])
        return keep_nodes_in_place(counts, self.previous_slots, cycle, config.idle_action)
