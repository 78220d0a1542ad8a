"""The cluster simulation core: plain NumPy, explicit state, no hidden randomness.

All randomness of an episode is drawn at :meth:`ClusterSimulator.reset` from the generator the
caller passes (the environment's, owned by ``reset(seed=...)``); :meth:`ClusterSimulator.advance`
is deterministic. The environments in this package are thin adapters over this class.

One epoch, given each node's choice of visible slot (or idle):

1. A node that trains a task it did not train in the previous epoch (or idled then) loses
   ``switch_cost`` of the epoch. A task served by nodes with effective shares ``e_1..e_k``
   advances ``speed * (e_1 + ... + e_k) ** alpha`` curve steps (``speed * k**alpha`` when
   nobody switched).
2. Each trained task reports the loss at its new progress: ``curve[floor(progress)]``.
3. A task whose reported loss is <= its target completes (the epoch ends at or before its
   deadline, since tasks past their deadline have already left). A task whose deadline has come
   without completing expires. Both leave and free their slot.
4. Tasks arriving in the new epoch join the first-come queue; free slots take tasks from it.

Example:
    >>> import numpy as np
    >>> from mara_env import get_config
    >>> from mara_env.simulator import ClusterSimulator
    >>> sim = ClusterSimulator(get_config("tiny"))
    >>> sim.reset(np.random.default_rng(0))
    >>> events = sim.advance(np.zeros(2, dtype=np.int64))  # both nodes on slot 0
    >>> sim.state.epoch
    1
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mara_env.config import ClusterConfig
from mara_env.errors import EnvStateError
from mara_env.traces import TraceSource
from mara_env.workload import TaskTable, Workload, build_workload, sample_tasks

FUTURE, ACTIVE, COMPLETED, EXPIRED = 0, 1, 2, 3
NO_TASK = -1


@dataclass
class ClusterState:
    """Everything that changes during an episode.

    Task arrays are indexed by task id (the row in ``tasks``); ``slots`` and ``node_task`` hold
    task ids or ``NO_TASK``.
    """

    epoch: int
    tasks: TaskTable
    status: np.ndarray
    progress: np.ndarray
    work: np.ndarray
    loss: np.ndarray
    previous_loss: np.ndarray
    previous_work: np.ndarray
    end_epoch: np.ndarray
    slots: np.ndarray
    queue: list[int]
    next_arrival: int
    node_task: np.ndarray
    history_work: dict[int, list[float]] = field(default_factory=dict)
    history_loss: dict[int, list[float]] = field(default_factory=dict)
    assignments: list[np.ndarray] = field(default_factory=list)
    completed: int = 0
    expired: int = 0
    switches: int = 0
    busy_node_epochs: float = 0.0
    wasted_node_epochs: float = 0.0
    slack_at_completion: float = 0.0
    potential: float = 0.0
    illegal_actions: int = 0
    conflicts: int = 0

    @property
    def arrived(self) -> int:
        """Tasks that have arrived so far."""
        return self.next_arrival

    @property
    def active_ids(self) -> np.ndarray:
        """Ids of arrived, unresolved tasks: the slotted ones, then the queue."""
        slotted = self.slots[self.slots != NO_TASK]
        return np.concatenate([slotted, np.asarray(self.queue, dtype=np.int64)])


@dataclass(frozen=True)
class EpochEvents:
    """What happened in one epoch.

    Attributes:
        epoch: The epoch that just ended (0-based).
        completed: Ids of tasks that completed.
        expired: Ids of tasks whose deadline passed.
        arrived: Ids of tasks that arrived for the next epoch.
        switches: Nodes that paid the switch cost.
        shaping: Change of the progress potential, Phi(s') - Phi(s).
    """

    epoch: int
    completed: tuple[int, ...]
    expired: tuple[int, ...]
    arrived: tuple[int, ...]
    switches: int
    shaping: float


class ClusterSimulator:
    """Steps a cluster of ``config.n_nodes`` nodes through one episode at a time.

    Args:
        config: The cluster configuration.
        trace_source: Where curves come from (default: :func:`mara_env.default_trace_source`).
    """

    def __init__(self, config: ClusterConfig, trace_source: TraceSource | None = None) -> None:
        if trace_source is None:
            from mara_env.sources import default_trace_source

            trace_source = default_trace_source()
        self.config = config
        self.trace_source = trace_source
        self.workload: Workload = build_workload(config, trace_source)
        self._state: ClusterState | None = None

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
        if tasks is None:
            tasks = sample_tasks(self.workload, rng)
        n, config = len(tasks), self.config
        initial = tasks.initial_loss.astype(np.float64)
        self._state = ClusterState(
            epoch=0,
            tasks=tasks,
            status=np.full(n, FUTURE, dtype=np.int8),
            progress=np.zeros(n),
            work=np.zeros(n),
            loss=initial.copy(),
            previous_loss=initial.copy(),
            previous_work=np.zeros(n),
            end_epoch=np.full(n, -1, dtype=np.int64),
            slots=np.full(config.n_slots, NO_TASK, dtype=np.int64),
            queue=[],
            next_arrival=0,
            node_task=np.full(config.n_nodes, NO_TASK, dtype=np.int64),
        )
        self._admit_arrivals()

    # ------------------------------------------------------------------ dynamics
    def advance(self, slot_choice: np.ndarray) -> EpochEvents:
        """Run one epoch in which node ``i`` trains the task in slot ``slot_choice[i]``.

        ``slot_choice[i] == config.n_slots`` (or an empty slot) means idle. Choices must already
        be legal (the environments turn illegal ones into idle and apply
        ``max_nodes_per_task``).
        """
        state, config = self.state, self.config
        n_slots = config.n_slots
        ended_epoch = state.epoch
        slot_choice = np.where(slot_choice < n_slots, slot_choice, n_slots)
        slot_task = np.append(state.slots, NO_TASK)
        node_task = slot_task[slot_choice]
        busy = node_task != NO_TASK
        switched = busy & (node_task != state.node_task)
        share = np.where(switched, 1.0 - config.switch_cost, 1.0) * busy
        effective = np.bincount(slot_choice, weights=share, minlength=n_slots + 1)[:n_slots]
        nodes = np.bincount(slot_choice, minlength=n_slots + 1)[:n_slots]
        trained_slots = np.flatnonzero(nodes)
        trained = state.slots[trained_slots]
        tasks = state.tasks

        state.previous_loss[trained] = state.loss[trained]
        state.previous_work[trained] = state.work[trained]
        state.progress[trained] += tasks.speed[trained] * effective[trained_slots] ** tasks.alpha[
            trained
        ]
        state.work[trained] += nodes[trained_slots]
        state.loss[trained] = self.workload.loss_at(tasks.curve_row[trained], state.progress[trained])
        for task in trained.tolist():
            state.history_work[task].append(float(state.work[task]))
            state.history_loss[task].append(float(state.loss[task]))

        state.epoch += 1
        state.switches += int(switched.sum())
        state.busy_node_epochs += float(busy.sum())
        state.node_task = node_task
        state.assignments.append(node_task)

        completed = trained[state.loss[trained] <= tasks.target[trained]]
        self._resolve(completed, COMPLETED)
        active = state.active_ids
        expired = active[tasks.deadline[active] <= state.epoch]
        self._resolve(expired, EXPIRED)
        state.completed += len(completed)
        state.expired += len(expired)
        state.slack_at_completion += float((tasks.deadline[completed] - state.epoch).sum())
        state.wasted_node_epochs += float(state.work[expired].sum())

        arrived = self._admit_arrivals()
        potential = self._potential()
        shaping = potential - state.potential
        state.potential = potential
        return EpochEvents(
            epoch=ended_epoch,
            completed=tuple(completed.tolist()),
            expired=tuple(expired.tolist()),
            arrived=tuple(arrived),
            switches=int(switched.sum()),
            shaping=shaping,
        )

    def _resolve(self, task_ids: np.ndarray, status: int) -> None:
        if len(task_ids) == 0:
            return
        state = self.state
        state.status[task_ids] = status
        state.end_epoch[task_ids] = state.epoch
        state.slots[np.isin(state.slots, task_ids)] = NO_TASK
        gone = set(task_ids.tolist())
        state.queue = [task for task in state.queue if task not in gone]

    def _admit_arrivals(self) -> list[int]:
        """Move tasks arriving by the current epoch into the queue, then fill free slots."""
        state = self.state
        arrival = state.tasks.arrival
        first = state.next_arrival
        last = first
        while last < len(arrival) and arrival[last] <= state.epoch:
            last += 1
        arrived = list(range(first, last))
        state.next_arrival = last
        if arrived:
            state.status[first:last] = ACTIVE
            state.queue.extend(arrived)
            for task in arrived:
                state.history_work[task] = [0.0]
                state.history_loss[task] = [float(state.loss[task])]
        free = np.flatnonzero(state.slots == NO_TASK)
        take = min(len(free), len(state.queue))
        if take:
            state.slots[free[:take]] = state.queue[:take]
            del state.queue[:take]
        return arrived

    def _potential(self) -> float:
        """Phi: summed normalised log-loss progress of the slotted tasks (queued ones are at 0)."""
        return float(self.progress_fraction(self.state.slots[self.state.slots != NO_TASK]).sum())

    def progress_fraction(self, task_ids: np.ndarray) -> np.ndarray:
        """Normalised log-loss progress toward the target: 0 at arrival, 1 at the target."""
        tasks, state = self.state.tasks, self.state
        start = np.log(tasks.initial_loss[task_ids])
        gap = start - np.log(tasks.target[task_ids])
        return np.clip((start - np.log(state.loss[task_ids])) / gap, 0.0, 1.0)

    # ------------------------------------------------------------------ episode end
    @property
    def terminated(self) -> bool:
        """Every task has arrived and been resolved."""
        state = self.state
        return (
            state.next_arrival == len(state.tasks)
            and state.epoch >= self.config.arrival_horizon
            and not state.queue
            and bool((state.slots == NO_TASK).all())
        )

    @property
    def truncated(self) -> bool:
        """The safety limit ``max_epochs`` was reached first."""
        return not self.terminated and self.state.epoch >= self.config.max_epochs

    # ------------------------------------------------------------------ privileged API
    def privileged_remaining_work(self) -> np.ndarray:
        """PRIVILEGED: true node-epochs one node still needs for each slot's task.

        Reads the hidden remainder of each visible task's curve; ``inf`` for a task that never
        reaches its target and ``nan`` for an empty slot. Only clairvoyant references may call
        this; schedulers that claim to be non-clairvoyant must not.
        """
        state, tasks = self.state, self.state.tasks
        remaining = np.full(self.config.n_slots, np.nan)
        occupied = np.flatnonzero(state.slots != NO_TASK)
        curves = self.workload.curves
        for slot in occupied.tolist():
            task = int(state.slots[slot])
            row = int(tasks.curve_row[task])
            start = int(state.progress[task]) + 1
            hits = np.flatnonzero(curves[row, start:] <= tasks.target[task])
            steps = np.inf if len(hits) == 0 else start + hits[0] - state.progress[task]
            remaining[slot] = steps / tasks.speed[task]
        return remaining

    # ------------------------------------------------------------------ metrics
    def episode_metrics(self) -> dict[str, float]:
        """Metrics of the episode so far (final once it has ended).

        Keys: ``completion_rate`` (completed / arrived), ``completed``, ``arrived``,
        ``expired``, ``utilisation`` (busy node-epochs / node-epochs elapsed), ``switches``,
        ``wasted_node_epochs`` (spent on tasks that expired), ``mean_slack_at_completion``
        (epochs left before the deadline), ``epochs``, ``illegal_actions`` (masked actions
        turned into idle), ``conflicts`` (choices over ``max_nodes_per_task`` turned into idle).
        """
        state = self.state
        node_epochs = state.epoch * self.config.n_nodes
        return {
            "completion_rate": state.completed / state.arrived if state.arrived else 0.0,
            "completed": float(state.completed),
            "arrived": float(state.arrived),
            "expired": float(state.expired),
            "utilisation": state.busy_node_epochs / node_epochs if node_epochs else 0.0,
            "switches": float(state.switches),
            "wasted_node_epochs": state.wasted_node_epochs,
            "mean_slack_at_completion": (
                state.slack_at_completion / state.completed if state.completed else 0.0
            ),
            "epochs": float(state.epoch),
            "illegal_actions": float(state.illegal_actions),
            "conflicts": float(state.conflicts),
        }
