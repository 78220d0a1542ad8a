"""Uniform share: every visible task gets an equal share of the nodes, over time."""

from __future__ import annotations

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place, nodes_per_slot
from mara_env.agents.base import EpochScheduler
from mara_env.sim.observation import SlotView


class UniformShare(EpochScheduler):
    """Split the nodes as evenly as possible over the visible tasks, moving nodes rarely.

    With at least as many nodes as tasks, every task gets ``n_nodes // n_tasks`` nodes and the
    remainder goes one each to the tasks that received the least work. With more tasks than
    nodes, the nodes go to the tasks that received the least work so far, counted in quanta of
    ``quantum`` node-epochs (least attained service): a node stays on its task until the task
    has had a quantum more than a waiting one, so switches, which cost ``switch_cost`` of an
    epoch, happen at most about once per quantum. Ties keep the current assignment, then favour
    the task seen first.

    Args:
        quantum: Node-epochs of work a task may get ahead of others before it yields its node.

    Example:
        >>> import mara_env
        >>> from mara_env.agents.evaluation import evaluate
        >>> evaluate(UniformShare(quantum=5.0), "tiny", seeds=[0])[0]["illegal_actions"]
        0.0
    """

    name = "uniform"

    def __init__(self, quantum: float = 5.0) -> None:
        super().__init__()
        if not quantum > 0:
            raise ValueError(f"UniformShare: quantum must be > 0 node-epochs, got {quantum!r}.")
        self.quantum = float(quantum)

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Even shares, least-served tasks first."""
        config = self.config
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        held = np.bincount(self.previous_slots, minlength=config.n_actions)[slots]
        served_quanta = np.floor(view.work[slots] / self.quantum)
        order = slots[np.lexsort((self.tracker.task_ids[slots], -held, served_quanta))]
        counts = nodes_per_slot(order, config.n_nodes, config.n_slots, config.task_node_limit)
        return keep_nodes_in_place(counts, self.previous_slots, order, config.idle_action)
