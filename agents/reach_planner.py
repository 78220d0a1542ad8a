"""The reach planner: earliest deadline first over the tasks that can still finish, as the
observation tells.

Earliest deadline first spends a large share of its node-epochs on tasks that cannot finish in
time: it cannot tell them apart. This planner reads, each epoch, a calibrated estimate of
P(reach the target by the deadline | k nodes from now on) for every visible task
(:class:`mara_env.agents.reach.ReachModel`, fitted on training seeds from observations only) and:

1. **drops** the tasks whose probability with every node they may get is below ``drop``: they
   get only nodes no hopeful task can use;
2. serves the hopeful tasks in **deadline order** (ties: the task seen first). With ``ask`` set,
   each gets just enough nodes: the fewest ``k`` whose probability is at least ``ask`` times its
   probability with every node, so that a task that would finish on two nodes does not hold
   eight; nodes left over go round the hopeful tasks again as extras (up to the per-task cap).
   Without ``ask``, nodes are dealt one per task along the order and wrap around, as EDF deals
   them (:func:`mara_env.agents.assignment.nodes_per_slot`);
3. gives the nodes still free to the dropped tasks, the most likely first;
4. keeps nodes on the task they trained last epoch whenever the counts allow.

It is observation-only: the model reads the decoded observation and the cluster's public
settings, never the simulator. The registry builds it (``make_agent("reach_planner")``) with the
model and settings shipped for the world, chosen on training seeds by
``python -m mara_env.benchmarks.prediction.reach_model``.

Example:
    >>> import numpy as np
    >>> from mara_env.agents import evaluate
    >>> from mara_env.agents.reach import FEATURES, ReachModel
    >>> flat = ReachModel.logistic(np.zeros(len(FEATURES)), 0.0)
    >>> rows = evaluate(ReachPlanner(flat, drop=0.2), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('reach_planner', 0.0)
"""

from __future__ import annotations

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place, nodes_per_slot
from mara_env.agents.base import EpochScheduler
from mara_env.agents.reach import ReachModel
from mara_env.sim.observation import SlotView


class ReachPlanner(EpochScheduler):
    """Earliest deadline first over the tasks a reach model gives a chance (module docstring).

    Args:
        model: P(reach | k nodes) from the observation.
        drop: Tasks whose probability with every node is below this get only spare nodes
            (in [0, 1); 0 drops none).
        ask: Size each hopeful task's share to the fewest nodes that keep this share of its
            probability with every node (in (0, 1]); ``None``: deal nodes out as EDF does.

    Raises:
        ValueError: For ``drop`` or ``ask`` outside their ranges.

    Example:
        >>> import numpy as np
        >>> from mara_env.agents.reach import FEATURES, ReachModel
        >>> flat = ReachModel.logistic(np.zeros(len(FEATURES)), 0.0)
        >>> ReachPlanner(flat, drop=1.5)
        Traceback (most recent call last):
        ...
        ValueError: ReachPlanner: drop must be a number in [0, 1), got 1.5.
    """

    name = "reach_planner"

    def __init__(self, model: ReachModel, drop: float = 0.2, ask: float | None = None) -> None:
        super().__init__()
        if not isinstance(model, ReachModel):
            raise TypeError(
                f"ReachPlanner: model must be a mara_env.agents.reach.ReachModel, got "
                f"{type(model).__name__}; load one with load_reach_model()."
            )
        if isinstance(drop, bool) or not isinstance(drop, (int, float)) or not 0 <= drop < 1:
            raise ValueError(f"ReachPlanner: drop must be a number in [0, 1), got {drop!r}.")
        if ask is not None and (
            isinstance(ask, bool) or not isinstance(ask, (int, float)) or not 0 < ask <= 1
        ):
            raise ValueError(f"ReachPlanner: ask must be None or a number in (0, 1], got {ask!r}.")
        self.model = model
        self.drop = float(drop)
        self.ask = None if ask is None else float(ask)

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Drop the unlikely, size and serve the rest by deadline, then spare nodes."""
        config = self.config
        probability = self.model.probabilities(view, config)
        with_all = probability[:, -1]
        visible = view.occupied & (mask[:-1] > 0)
        hopeful = visible & (with_all >= self.drop)
        ids = self.tracker.task_ids
        by_deadline = np.flatnonzero(hopeful)
        by_deadline = by_deadline[np.lexsort((ids[by_deadline], view.time_left[by_deadline]))]
        dropped = np.flatnonzero(visible & ~hopeful)
        dropped = dropped[np.lexsort((ids[dropped], -with_all[dropped]))]
        cap = config.task_node_limit
        if self.ask is None:
            counts = nodes_per_slot(by_deadline, config.n_nodes, config.n_slots, cap)
        else:
            counts = self._sized(probability, by_deadline, self.ask)
        spare = config.n_nodes - int(counts.sum())
        counts += nodes_per_slot(dropped, spare, config.n_slots, cap)
        order = np.concatenate((by_deadline, dropped))
        return keep_nodes_in_place(counts, self.previous_slots, order, config.idle_action)

    def _sized(self, probability: np.ndarray, order: np.ndarray, ask: float) -> np.ndarray:
        """Nodes per slot when each task of ``order`` gets its just-enough share (``ask``) in
        turn, then the nodes left go round ``order`` as extras."""
        config = self.config
        enough = probability >= ask * probability[:, -1:]
        fewest = enough.argmax(axis=1) + 1
        counts = np.zeros(config.n_slots, dtype=np.int64)
        free = config.n_nodes
        for slot in order.tolist():
            give = min(int(fewest[slot]), free)
            counts[slot] = give
            free -= give
        cap = config.task_node_limit
        growing = [slot for slot in order.tolist() if counts[slot] > 0]
        while free > 0 and growing:
            growing = [slot for slot in growing if counts[slot] < cap][:free]
            counts[growing] += 1
            free -= len(growing)
        return counts
