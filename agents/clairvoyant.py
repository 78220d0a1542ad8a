"""A clairvoyant reference: schedules with the true remaining work of the tasks present.

**It breaks the information boundary on purpose.** Every other scheduler sees only observations;
this one is handed the environment (:class:`mara_env.agents.base.PrivilegedScheduler`, ``bind(env)``,
which :func:`mara_env.agents.evaluation.evaluate` calls) and reads the hidden rest of each visible task's
loss curve. It does not know the future: tasks that have not arrived, or wait in the queue, are
invisible to it as to everyone. It is a strong reference that bounds what schedulers without
that knowledge reach in practice, **not a proven optimum**: scheduling on discrete nodes with
parallel scaling, switch costs and arrivals is a hard combinatorial problem, and this is a
heuristic for it.

Each epoch:

1. **Exact need.** For every visible task and every node count ``k``, the epochs it needs to
   report a loss at or below its target when ``k`` nodes train it from now on, found by
   stepping its true curve exactly as the simulator will
   (:func:`mara_env.sim.rules.epochs_to_target`): :func:`mara_env.sim.rules.progress_gain` per epoch,
   the switch cost on the first epoch for nodes that did not train it last epoch, and the loss
   read at the point each epoch lands on (so a target skipped between two landing points is not
   counted as reached). Its **cost** is the node-epochs of the cheapest ``k`` (up to the
   config's ``task_node_limit``) that meets the deadline; a task that no ``k`` gets there in
   time is hopeless and gets nothing.
2. **Largest feasible set.** Moore–Hodgson (:func:`mara_env.agents.lara.moore_hodgson`) on
   earliest-deadline order over those costs, with the cluster's ``n_nodes`` node-epochs per
   epoch as capacity.
3. **Placement.** The chosen tasks get their ``k`` nodes in order of least laxity (deadline
   minus epochs needed; ties by earliest deadline); a task that holds nodes keeps its place
   while its laxity is within ``hold`` epochs of the most urgent waiting one, so nodes are not
   moved back and forth between tasks of equal urgency (each move costs ``switch_cost``).
   Nodes left over go to the hopeful tasks outside the set, cheapest first, then as extra
   nodes to the chosen ones, so no node idles while a task could use it. Nodes stay on the
   task they trained whenever the counts allow (:func:`mara_env.agents.assignment.keep_nodes_in_place`).

Example:
    >>> from mara_env.agents import evaluate
    >>> from mara_env.agents.clairvoyant import Clairvoyant
    >>> rows = evaluate(Clairvoyant(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('clairvoyant', 0.0)
"""

from __future__ import annotations

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place
from mara_env.agents.base import EpochScheduler
from mara_env.agents.lara import moore_hodgson
from mara_env.envs.env_base import ClusterEnvBase
from mara_env.sim.observation import SlotView
from mara_env.sim.rules import NEVER, epochs_to_target
from mara_env.sim.simulator import ClusterSimulator

__all__ = ["NEVER", "Clairvoyant", "UnboundError", "epochs_to_target", "task_epochs_to_target"]


class UnboundError(RuntimeError):
    """The clairvoyant reference was asked to act without an environment to read."""


def task_epochs_to_target(
    simulator: ClusterSimulator, task: int, nodes: np.ndarray, held: int, horizon: int
) -> np.ndarray:
    """**Privileged**: the exact epochs slotted task ``task`` of ``simulator`` needs to report a
    loss at or below its target with ``nodes[j]`` nodes from now on (``NEVER``: not within
    ``horizon`` epochs), asked of the simulator's privileged view
    (:meth:`mara_env.sim.simulator.ClusterSimulator.privileged_epochs_to_target`).

    ``held`` nodes trained the task last epoch and keep their whole share in the first epoch;
    the other nodes pay the switch cost. Only clairvoyant references and diagnostics that
    compare schedulers with the truth may call this.

    Raises:
        ValueError: If the task is not in a visible slot.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=4)
        >>> task = int(env.simulator.state.slots[0])
        >>> task_epochs_to_target(env.simulator, task, np.array([1, 2]), 0, 1000).shape
        (2,)
    """
    slots = simulator.state.slots
    where = np.flatnonzero(slots == task)
    if not len(where):
        raise ValueError(f"task_epochs_to_target: task {task} is not in a visible slot.")
    return simulator.privileged_epochs_to_target(int(where[0]), nodes, held, horizon)


class Clairvoyant(EpochScheduler):
    """The clairvoyant reference (privileged: reads the true curves of the visible tasks).

    See the module docstring for the algorithm; it is not a proven optimum.

    Args:
        hold: Laxity (epochs) a task that holds nodes may lag behind a waiting task before
            it yields its place (>= 0).

    Example:
        >>> Clairvoyant(hold=2.0).hold
        2.0
    """

    name = "clairvoyant"
    privileged = True

    def __init__(self, hold: float = 1.0) -> None:
        super().__init__()
        if not 0.0 <= hold < np.inf:
            raise ValueError(f"Clairvoyant: hold must be a finite number >= 0, got {hold!r}.")
        self.hold = float(hold)
        self._env: ClusterEnvBase | None = None

    def bind(self, env: ClusterEnvBase) -> None:
        """Read the hidden state of ``env`` (call after ``env.reset`` and :meth:`reset`)."""
        if env.config != self.config:
            raise ValueError(
                "Clairvoyant.bind: the environment's config differs from the one the scheduler "
                "was reset with; reset the scheduler with env.config first."
            )
        self._env = env

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Exact needs, the largest feasible set, least-laxity placement."""
        config = self.config
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        if len(slots) == 0:
            return np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        time_left = view.time_left[slots].astype(np.int64)
        epochs = self._epochs_needed(slots, time_left)
        width = epochs.shape[1]
        nodes = np.arange(1, width + 1)
        in_time = epochs <= time_left[:, None]
        cost = np.where(in_time, np.where(in_time, epochs, 0) * nodes[None, :], np.inf)
        best = cost.argmin(axis=1)
        hopeful = np.isfinite(cost[np.arange(len(slots)), best])
        need_nodes = best + 1
        need_epochs = epochs[np.arange(len(slots)), best]
        ids = self.tracker.task_ids[slots]
        chosen = np.zeros(len(slots), dtype=bool)
        if hopeful.any():
            chosen[hopeful] = moore_hodgson(
                time_left[hopeful].astype(np.float64),
                cost[hopeful, best[hopeful]],
                float(config.n_nodes),
                tiebreak=ids[hopeful],
            )
        held = np.bincount(self.previous_slots, minlength=config.n_actions)[slots]
        laxity = np.where(chosen, time_left - np.minimum(need_epochs, time_left), np.inf)
        urgent_first = np.lexsort((ids, time_left, laxity - self.hold * (held > 0)))
        cheap_first = np.lexsort((ids, np.where(hopeful, cost[np.arange(len(slots)), best], 0)))
        members = urgent_first[chosen[urgent_first]]
        others = cheap_first[(hopeful & ~chosen)[cheap_first]]
        counts = np.zeros(len(slots), dtype=np.int64)
        free = config.n_nodes
        for index in np.concatenate((members, others)).tolist():
            give = min(int(need_nodes[index]), free)
            counts[index] = give
            free -= give
        cap = config.task_node_limit
        growing = members.tolist()
        while free > 0 and growing:
            growing = [index for index in growing if counts[index] < cap][:free]
            counts[growing] += 1
            free -= len(growing)
        per_slot = np.zeros(config.n_slots, dtype=np.int64)
        per_slot[slots] = counts
        placement = slots[np.concatenate((members, others))]
        return keep_nodes_in_place(per_slot, self.previous_slots, placement, config.idle_action)

    def _epochs_needed(self, slots: np.ndarray, time_left: np.ndarray) -> np.ndarray:
        """``(len(slots), max_nodes)`` exact epochs to target per node count (``NEVER``)."""
        if self._env is None:
            raise UnboundError(
                "Clairvoyant needs the environment: it reads hidden curves. Call "
                "bind(env) after env.reset() and reset(); mara_env.agents.evaluate does this for you."
            )
        config = self.config
        simulator = self._env.simulator
        width = config.task_node_limit
        nodes = np.arange(1, width + 1)
        held = np.bincount(self.previous_slots, minlength=config.n_actions)
        result = np.full((len(slots), width), NEVER, dtype=np.int64)
        for row, slot in enumerate(slots.tolist()):
            result[row] = simulator.privileged_epochs_to_target(
                slot, nodes, int(held[slot]), int(time_left[row])
            )
        return result
