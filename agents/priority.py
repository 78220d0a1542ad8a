"""Priority schedulers: rank the visible tasks, then deal nodes out along the ranking.

A :class:`PriorityScheduler` ranks the tasks it is willing to serve, gives one node to each in
rank order and, when nodes remain, wraps around to give the top tasks extra nodes (see
:mod:`mara_env.agents.assignment`). Ties go to the task seen first. Nodes stay on the task they trained
last epoch whenever that task still gets nodes, since switching costs ``switch_cost`` of an epoch.

Example:
    >>> import mara_env
    >>> from mara_env.agents.evaluation import evaluate
    >>> metrics = evaluate(EarliestDeadlineFirst(), mara_env.get_config("tiny"), seeds=[0])
    >>> metrics[0]["agent"], metrics[0]["illegal_actions"]
    ('edf', 0.0)
"""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place, nodes_per_slot
from mara_env.agents.base import EpochScheduler
from mara_env.sim.observation import SlotView


class PriorityScheduler(EpochScheduler):
    """Base class: subclasses give each slot a priority key (lower is served first)."""

    name = "priority"

    @abstractmethod
    def priority(self, view: SlotView) -> np.ndarray:
        """Per-slot priority key; lower keys are served first (empty slots are ignored)."""

    def eligible(self, view: SlotView) -> np.ndarray:
        """Per-slot flag of the tasks this scheduler is willing to serve (default: all)."""
        return view.occupied

    def ranking(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """The slots to serve, highest priority first (ties: the task seen first)."""
        slots = np.flatnonzero(self.eligible(view) & (mask[:-1] > 0))
        keys = np.asarray(self.priority(view), dtype=np.float64)[slots]
        return slots[np.lexsort((self.tracker.task_ids[slots], keys))]

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Deal nodes out along :meth:`ranking`, keeping nodes on their previous task."""
        config = self.config
        order = self.ranking(view, mask)
        counts = nodes_per_slot(order, config.n_nodes, config.n_slots, config.task_node_limit)
        return keep_nodes_in_place(counts, self.previous_slots, order, config.idle_action)


class FirstComeFirstServed(PriorityScheduler):
    """First come, first served: the oldest task (longest since arrival) first."""

    name = "fcfs"

    def priority(self, view: SlotView) -> np.ndarray:
        """Minus the age, so the oldest task ranks first."""
        return -view.age


class EarliestDeadlineFirst(PriorityScheduler):
    """Earliest deadline first: the task with the fewest epochs left before its deadline first.

    It ignores how much work a task still needs, so it keeps serving tasks that can no longer
    make their deadline (or never could) until they expire.
    """

    name = "edf"

    def priority(self, view: SlotView) -> np.ndarray:
        """Epochs left before the deadline."""
        return view.time_left
