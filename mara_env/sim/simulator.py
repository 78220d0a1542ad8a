"""One cluster: a view of a batch of one of the simulation core (:mod:`mara_env.sim.core`).

The AEC, Parallel and Gymnasium environments step one cluster through
:class:`ClusterSimulator`; its :attr:`~ClusterSimulator.state` is a :class:`ClusterState` that
reads the core's arrays, with each task's records indexed by task id (the row in ``tasks``). The
dynamics are documented in :mod:`mara_env.sim.core`.

All randomness of an episode is drawn at :meth:`ClusterSimulator.reset` from the generator the
caller passes (the environment's, owned by ``reset(seed=...)``); :meth:`ClusterSimulator.advance`
is deterministic.

Example:
    >>> import numpy as np
    >>> from mara_env import get_config
    >>> from mara_env.sim.simulator import ClusterSimulator
    >>> sim = ClusterSimulator(get_config("tiny"))
    >>> sim.reset(np.random.default_rng(0))
    >>> events = sim.advance(np.zeros(2, dtype=np.int64))  # both nodes on slot 0
    >>> sim.state.epoch
    1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mara_env.curves.traces import TraceSourceLike
from mara_env.errors import EnvStateError
from mara_env.sim.core import ACTIVE, COMPLETED, EXPIRED, FUTURE, NO_TASK, ClusterBatch
from mara_env.sim.epoch_report import BatchEpoch
from mara_env.sim.workload import TaskTable, Workload
from mara_env.worlds.config import ClusterConfig

__all__ = [
    "ACTIVE",
    "COMPLETED",
    "EXPIRED",
    "FUTURE",
    "NO_TASK",
    "ClusterSimulator",
    "ClusterState",
    "EpochEvents",
]


class ClusterState:
    """The state of one cluster of a :class:`~mara_env.sim.core.ClusterBatch`, by task id.

    A new object is made at every reset, so ``state is not previous_state`` tells a new episode.
    Per-task arrays are fresh copies (writing to them changes nothing).

    Attributes:
        core: The batch the state reads; ``cluster``: its index there.
    """

    def __init__(self, core: ClusterBatch, cluster: int) -> None:
        self.core, self.cluster = core, cluster

    @property
    def epoch(self) -> int:
        """Epochs elapsed."""
        return int(self.core.epoch[self.cluster])

    @property
    def tasks(self) -> TaskTable:
        """The episode's tasks (fixed at reset)."""
        table = self.core.tasks[self.cluster]
        if table is None:
            raise EnvStateError("The cluster has no episode yet: call reset() first.")
        return table

    @property
    def slots(self) -> np.ndarray:
        """Task id in each visible slot (``NO_TASK`` if empty); a view of the core's array."""
        return self.core.slot_task[self.cluster, :-1]

    @property
    def slot_table(self) -> np.ndarray:
        """The slots, then a ``NO_TASK`` sentinel."""
        return self.core.slot_task[self.cluster]

    @property
    def queue(self) -> list[int]:
        """Arrived tasks waiting for a slot, first come first."""
        return self.core.queue(self.cluster)

    @property
    def next_arrival(self) -> int:
        """Id of the next task to arrive (= tasks arrived so far)."""
        return int(self.core.next_arrival[self.cluster])

    arrived = next_arrival

    @property
    def status(self) -> np.ndarray:
        """``FUTURE``, ``ACTIVE``, ``COMPLETED`` or ``EXPIRED`` per task."""
        return self.core.status(self.cluster)

    @property
    def progress(self) -> np.ndarray:
        """Curve steps done per task."""
        return self.core.task_values(self.cluster, "progress")

    @property
    def work(self) -> np.ndarray:
        """Node-epochs received per task."""
        return self.core.task_values(self.cluster, "work")

    @property
    def loss(self) -> np.ndarray:
        """Last reported loss per task."""
        return self.core.task_values(self.cluster, "loss")

    @property
    def previous_loss(self) -> np.ndarray:
        """Loss before each task's last training epoch."""
        return self.core.task_values(self.cluster, "previous_loss")

    @property
    def previous_work(self) -> np.ndarray:
        """Work before each task's last training epoch."""
        return self.core.task_values(self.cluster, "previous_work")

    @property
    def phi(self) -> np.ndarray:
        """Normalised log-loss progress of each task (0 once it has left)."""
        return self.core.task_values(self.cluster, "phi")

    @property
    def end_epoch(self) -> np.ndarray:
        """Epoch at which each task completed or expired (-1 before)."""
        return self.core.task_values(self.cluster, "end_epoch").astype(np.int64)

    @property
    def task_slot(self) -> np.ndarray:
        """Slot of each task (-1 if not slotted)."""
        where = np.full(int(self.core.n_tasks[self.cluster]), -1, dtype=np.int64)
        slots = self.slots
        occupied = np.flatnonzero(slots != NO_TASK)
        where[slots[occupied]] = occupied
        return where

    @property
    def node_task(self) -> np.ndarray:
        """Task each node trained in the last epoch (``NO_TASK``: idle)."""
        return self.core.node_task[self.cluster]

    @property
    def last_trained(self) -> np.ndarray:
        """Ids of the tasks trained in the last epoch that are still slotted."""
        return self.slots[self.core.last_trained[self.cluster]]

    @property
    def history_work(self) -> dict[int, list[float]]:
        """Node-epochs received at every reported point of each arrived task."""
        self.core.flush_history()
        return self.core.history_work[self.cluster]

    @property
    def history_progress(self) -> dict[int, list[float]]:
        """Curve steps done at every reported point of each arrived task."""
        self.core.flush_history()
        return self.core.history_progress[self.cluster]

    @property
    def history_loss(self) -> dict[int, list[float]]:
        """Every loss each arrived task reported (the first one at arrival)."""
        self.core.flush_history()
        return self.core.history_loss[self.cluster]

    @property
    def assignments(self) -> list[np.ndarray]:
        """``node_task`` of every epoch so far (for rendering)."""
        return self.core.assignments[self.cluster]

    @property
    def potential(self) -> float:
        """Phi(s), the sum of the slotted tasks' normalised progress."""
        return float(self.core.potential[self.cluster])

    def _count(self, name: str) -> int:
        return int(getattr(self.core, name)[self.cluster])

    @property
    def completed(self) -> int:
        """Tasks completed so far."""
        return self._count("completed")

    @property
    def expired(self) -> int:
        """Tasks expired so far."""
        return self._count("expired")

    @property
    def switches(self) -> int:
        """Node-epochs that paid the switch cost."""
        return self._count("switches")

    @property
    def busy_node_epochs(self) -> int:
        """Node-epochs spent training."""
        return self._count("busy_node_epochs")

    @property
    def wasted_node_epochs(self) -> float:
        """Node-epochs spent on tasks that expired."""
        return float(self.core.wasted_node_epochs[self.cluster])

    @property
    def slack_at_completion(self) -> float:
        """Sum over completed tasks of the epochs left before their deadline."""
        return float(self.core.slack_at_completion[self.cluster])

    @property
    def illegal_actions(self) -> int:
        """Masked actions turned into idle."""
        return self._count("illegal_actions")

    @property
    def conflicts(self) -> int:
        """Choices over ``max_nodes_per_task`` turned into idle."""
        return self._count("conflicts")


@dataclass(frozen=True)
class EpochEvents:
    """What happened in one epoch.

    Attributes:
        epoch: The epoch that just ended (0-based).
        completed: Ids of tasks that completed (in the order of the first node that chose them).
        expired: Ids of tasks whose deadline passed (ascending).
        arrived: Ids of tasks that arrived for the next epoch.
        switches: Nodes that paid the switch cost.
        shaping: The shaping term ``gamma * Phi(s') - Phi(s)`` (see
            :class:`mara_env.sim.epoch_report.BatchEpoch`).
    """

    epoch: int
    completed: tuple[int, ...]
    expired: tuple[int, ...]
    arrived: tuple[int, ...]
    switches: int
    shaping: float


def cluster_events(
    epoch: BatchEpoch, cluster: int, slot_choice: np.ndarray, next_arrival: int
) -> EpochEvents:
    """The :class:`EpochEvents` of ``cluster`` in a batch epoch (``slot_choice``: its nodes'
    choices; ``next_arrival``: its arrival count after the epoch)."""
    arrived = int(epoch.arrived[cluster])
    arrivals = tuple(range(next_arrival - arrived, next_arrival))
    if not (epoch.completed[cluster] or epoch.expired[cluster]):
        return EpochEvents(
            int(epoch.epoch[cluster]),
            (),
            (),
            arrivals,
            int(epoch.switches[cluster]),
            float(epoch.shaping[cluster]),
        )
    departed = epoch.departed_tasks[cluster]
    completed_slots = np.flatnonzero(epoch.completed_slots[cluster]).tolist()
    if len(completed_slots) > 1:
        first_node: dict[int, int] = {}
        for node, slot in enumerate(slot_choice.tolist()):
            first_node.setdefault(slot, node)
        completed_slots.sort(key=first_node.__getitem__)
    expired = departed[epoch.expired_slots[cluster]].tolist()
    expired += epoch.queue_expired[1][epoch.queue_expired[0] == cluster].tolist()
    return EpochEvents(
        epoch=int(epoch.epoch[cluster]),
        completed=tuple(departed[completed_slots].tolist()),
        expired=tuple(sorted(expired)),
        arrived=arrivals,
        switches=int(epoch.switches[cluster]),
        shaping=float(epoch.shaping[cluster]),
    )


class ClusterSimulator:
    """Steps a cluster of ``config.n_nodes`` nodes through one episode at a time.

    A view of a :class:`~mara_env.sim.core.ClusterBatch` of one cluster that records every task's
    reported points (for the observation wrappers and rendering).

    Args:
        config: The cluster configuration.
        trace_source: Where curves come from (default: :func:`mara_env.default_trace_source`).

    Attributes:
        core: The batch of one cluster it steps.
    """

    def __init__(self, config: ClusterConfig, trace_source: TraceSourceLike | None = None) -> None:
        self.core = ClusterBatch(config, 1, trace_source, record_history=True)
        self.config = config
        self.trace_source = self.core.trace_source
        self._state: ClusterState | None = None
        self._index = 0
        self._owns_core = True

    @classmethod
    def view_of(cls, core: ClusterBatch, cluster: int) -> ClusterSimulator:
        """A read-only view of cluster ``cluster`` of a batch (its state, privileged view and
        metrics; ``reset`` and ``advance`` raise: step the batch instead).

        Example:
            >>> import numpy as np
            >>> from mara_env import get_config
            >>> from mara_env.sim.core import ClusterBatch
            >>> core = ClusterBatch(get_config("tiny"), 2)
            >>> core.reset([0, 1], [np.random.default_rng(0), np.random.default_rng(1)])
            >>> ClusterSimulator.view_of(core, 1).state.epoch
            0
        """
        view = cls.__new__(cls)
        view.core, view.config, view.trace_source = core, core.config, core.trace_source
        view._index, view._owns_core = int(cluster), False
        view._state = ClusterState(core, int(cluster))
        return view

    def _require_own_core(self, what: str) -> None:
        if not self._owns_core:
            raise EnvStateError(
                f"ClusterSimulator.{what}: this is a view of one cluster of a batch; "
                "reset or advance the batch (ClusterBatch) instead."
            )

    @property
    def workload(self) -> Workload:
        """The curves and arrival rate the core draws from and steps on."""
        return self.core.workload

    @workload.setter
    def workload(self, workload: Workload) -> None:
        self.core.workload = workload

    @property
    def state(self) -> ClusterState:
        """The current state; raises :class:`EnvStateError` before the first reset."""
        if self._state is None:
            raise EnvStateError("The simulator has no episode yet: call reset() first.")
        return self._state

    @property
    def has_episode(self) -> bool:
        """Whether reset() has been called."""
        return self._state is not None

    def reset(self, rng: np.random.Generator, tasks: TaskTable | None = None) -> None:
        """Start an episode with tasks drawn from ``rng`` (or the given ``tasks``)."""
        self._require_own_core("reset")
        self.core.reset([0], [rng], [tasks])
        self._state = ClusterState(self.core, 0)

    def advance(self, slot_choice: np.ndarray) -> EpochEvents:
        """Run one epoch in which node ``i`` trains the task in slot ``slot_choice[i]``.

        ``slot_choice[i] == config.n_slots`` (or an empty slot) means idle. Choices must already
        be legal (the environments turn illegal ones into idle and apply
        ``max_nodes_per_task``).
        """
        self.state  # noqa: B018 - raises before the first reset
        self._require_own_core("advance")
        choice = np.asarray(slot_choice, dtype=np.int64).reshape(1, -1)
        epoch = self.core.advance(choice)
        return cluster_events(epoch, 0, choice[0], int(self.core.next_arrival[0]))

    def progress_fraction(self, task_ids: np.ndarray) -> np.ndarray:
        """Normalised log-loss progress toward the target: 0 at arrival, 1 at the target.

        ``ln(initial / loss) / ln(initial / target)`` of each task's last reported loss, clipped
        to [0, 1]; the potential Phi of the shaping reward is its sum over slotted tasks.
        """
        return self.state.phi[np.asarray(task_ids, dtype=np.int64)]

    @property
    def terminated(self) -> bool:
        """Every task has arrived and been resolved."""
        self.state  # noqa: B018 - raises before the first reset
        return bool(self.core.terminated[self._index])

    @property
    def truncated(self) -> bool:
        """The safety limit ``max_epochs`` was reached first."""
        self.state  # noqa: B018 - raises before the first reset
        return bool(self.core.truncated[self._index])

    def privileged_remaining_work(self) -> np.ndarray:
        """PRIVILEGED: true node-epochs one node still needs for each slot's task.

        See :meth:`mara_env.sim.core.ClusterBatch.privileged_remaining_work`. Only clairvoyant
        references may call this; schedulers that claim to be non-clairvoyant must not.
        """
        self.state  # noqa: B018 - raises before the first reset
        return self.core.privileged_remaining_work(self._index)

    def privileged_epochs_to_target(
        self, slot: int, nodes: np.ndarray, held: int, horizon: int
    ) -> np.ndarray:
        """PRIVILEGED: epochs the task in ``slot`` needs with ``nodes[j]`` nodes from now on.

        See :meth:`mara_env.sim.core.ClusterBatch.privileged_epochs_to_target`.
        """
        self.state  # noqa: B018 - raises before the first reset
        return self.core.privileged_epochs_to_target(self._index, slot, nodes, held, horizon)

    def episode_metrics(self) -> dict[str, float]:
        """Metrics of the episode so far (see :meth:`mara_env.sim.core.ClusterBatch.episode_metrics`)."""
        self.state  # noqa: B018 - raises before the first reset
        return self.core.episode_metrics(self._index)
