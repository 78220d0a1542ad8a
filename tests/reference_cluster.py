"""The per-cluster simulator and observation builder as they were before the batched core: a
slow, obviously-sequential reference for the equivalence tests (not part of the package).

``ReferenceSimulator`` steps one cluster with Python dicts and lists; ``ReferenceObservationBuilder``
caches per-task feature rows and updates them incrementally. The batched core
(:mod:`mara_env.sim.core`) must reproduce both exactly, step for step.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mara_env.curves.traces import TraceSource
from mara_env.errors import EnvStateError
from mara_env.sim.observation import (
    FEATURE_BOUND,
    G_DECIDED,
    G_IDLE,
    G_NODE,
    GLOBAL_FEATURES,
    S_AGE,
    S_BUDGET,
    S_FAMILY,
    S_LOG_LOSS,
    S_LOG_TARGET,
    S_MINE,
    S_NODES_LAST,
    S_NODES_NOW,
    S_OCCUPIED,
    S_PROGRESS,
    S_SERIAL,
    S_SLOPE,
    S_SPEED,
    S_STEPS,
    S_TIME_FRACTION,
    S_TIME_LEFT,
    S_WORK,
    SERIAL_SCALE,
    SLOT_FEATURES,
    SPEED_SCALE,
    STEP_SCALE,
    TIME_SCALE,
    observation_size,
)
from mara_env.sim.workload import (
    TaskTable,
    Workload,
    build_workload,
    sample_tasks,
    validate_tasks,
)
from mara_env.worlds.config import ClusterConfig

_TRAINED_COLUMNS = np.array([S_LOG_LOSS, S_PROGRESS, S_WORK, S_STEPS, S_SLOPE])
_TIME_COLUMNS = np.array([S_TIME_LEFT, S_TIME_FRACTION, S_AGE])

FUTURE, ACTIVE, COMPLETED, EXPIRED = 0, 1, 2, 3
NO_TASK = -1
_NONE = np.zeros(0, dtype=np.int64)


@dataclass
class ClusterState:
    """Everything that changes during an episode.

    Per-task arrays are indexed by task id (the row in ``tasks``). Three arrays carry one extra
    last entry that ``NO_TASK`` (-1) reads, so lookups through an empty slot or an idle node need
    no branch: ``slot_table`` (the slots, then ``NO_TASK``), ``phi`` (0) and ``task_slot`` (-1).

    Attributes:
        epoch: Epochs elapsed.
        tasks: The episode's tasks (fixed at reset).
        status: ``FUTURE``, ``ACTIVE``, ``COMPLETED`` or ``EXPIRED`` per task.
        progress: Curve steps done; ``work``: node-epochs received; ``loss``: last reported loss.
        previous_loss, previous_work: Loss and work before the task's last training epoch.
        end_epoch: Epoch at which the task completed or expired (-1 before).
        slot_table: Task id in each visible slot, plus the ``NO_TASK`` sentinel.
        queue: Arrived tasks waiting for a slot, first come first.
        next_arrival: Id of the next task to arrive (= tasks arrived so far).
        node_task: Task each node trained in the last epoch (``NO_TASK``: idle).
        history_work, history_progress, history_loss: Every reported point of each arrived task:
            node-epochs received, curve steps done and the loss reported then.
        assignments: ``node_task`` of every epoch so far (for rendering).
        phi: Normalised log-loss progress of each task (0 once it has left).
        task_slot: Slot of each task (-1 if not slotted).
        last_trained: Tasks trained in the last epoch.
        potential: Phi(s), the sum of ``phi`` over slotted tasks.
        arrived_by: Tasks that have arrived by each epoch of the arrival horizon.
        due_at: Tasks whose deadline is each epoch.
        completed, expired, switches, busy_node_epochs, wasted_node_epochs,
            slack_at_completion, illegal_actions, conflicts: Episode counters.
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
    slot_table: np.ndarray
    queue: list[int]
    next_arrival: int
    node_task: np.ndarray
    phi: np.ndarray
    task_slot: np.ndarray
    arrived_by: list[int]
    due_at: dict[int, np.ndarray] = field(default_factory=dict)
    history_work: dict[int, list[float]] = field(default_factory=dict)
    history_progress: dict[int, list[float]] = field(default_factory=dict)
    history_loss: dict[int, list[float]] = field(default_factory=dict)
    assignments: list[np.ndarray] = field(default_factory=list)
    last_trained: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    potential: float = 0.0
    completed: int = 0
    expired: int = 0
    switches: int = 0
    busy_node_epochs: int = 0
    wasted_node_epochs: float = 0.0
    useful_node_epochs: float = 0.0
    idle_while_feasible: int = 0
    slack_at_completion: float = 0.0
    illegal_actions: int = 0
    conflicts: int = 0

    @property
    def slots(self) -> np.ndarray:
        """Task id in each visible slot (``NO_TASK`` if empty); a view of ``slot_table``."""
        return self.slot_table[:-1]

    @property
    def arrived(self) -> int:
        """Tasks that have arrived so far."""
        return self.next_arrival


@dataclass(frozen=True)
class EpochEvents:
    """What happened in one epoch.

    Attributes:
        epoch: The epoch that just ended (0-based).
        completed: Ids of tasks that completed.
        expired: Ids of tasks whose deadline passed.
        arrived: Ids of tasks that arrived for the next epoch.
        switches: Nodes that paid the switch cost.
        shaping: The shaping term, gamma * Phi(s') - Phi(s) (gamma: ``shaping_discount``).
    """

    epoch: int
    completed: tuple[int, ...]
    expired: tuple[int, ...]
    arrived: tuple[int, ...]
    switches: int
    shaping: float


class ReferenceSimulator:
    """Steps a cluster of ``config.n_nodes`` nodes through one episode at a time.

    Args:
        config: The cluster configuration.
        trace_source: Where curves come from (default: :func:`mara_env.default_trace_source`).
    """

    def __init__(self, config: ClusterConfig, trace_source: TraceSource | None = None) -> None:
        if trace_source is None:
            from mara_env.curves.sources import default_trace_source

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
        else:
            validate_tasks(tasks, self.workload)
        n, config = len(tasks), self.config
        initial = tasks.initial_loss.astype(np.float64)
        by_deadline = np.argsort(tasks.deadline, kind="stable")
        deadlines, starts = np.unique(tasks.deadline[by_deadline], return_index=True)
        groups = np.split(by_deadline, starts[1:]) if n else []
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
            slot_table=np.full(config.n_slots + 1, NO_TASK, dtype=np.int64),
            queue=[],
            next_arrival=0,
            node_task=np.full(config.n_nodes, NO_TASK, dtype=np.int64),
            phi=np.zeros(n + 1),
            task_slot=np.full(n + 1, -1, dtype=np.int64),
            arrived_by=np.searchsorted(
                tasks.arrival, np.arange(config.arrival_horizon + 1), side="right"
            ).tolist(),
            due_at=dict(zip(deadlines.tolist(), groups, strict=True)),
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
        tasks = state.tasks
        ended_epoch = state.epoch
        # Per node: which task it trains and whether it pays the switch cost. Plain Python is
        # faster than NumPy at these sizes.
        slot_task = state.slot_table.tolist()
        last_task = state.node_task.tolist()
        node_task = [slot_task[min(slot, config.n_slots)] for slot in slot_choice.tolist()]
        kept_share, switched_share = 1.0, 1.0 - config.switch_cost
        shares: dict[int, float] = {}
        nodes: dict[int, int] = {}
        n_switched = 0
        for task, previous in zip(node_task, last_task, strict=True):
            if task == NO_TASK:
                continue
            if task == previous:
                shares[task] = shares.get(task, 0.0) + kept_share
            else:
                shares[task] = shares.get(task, 0.0) + switched_share
                n_switched += 1
            nodes[task] = nodes.get(task, 0) + 1
        state.idle_while_feasible += self._idle_a_feasible_task_could_use(nodes)
        trained = np.fromiter(shares, dtype=np.int64, count=len(shares))
        effective = np.fromiter(shares.values(), dtype=np.float64, count=len(shares))
        state.last_trained = trained

        previous_work = state.work[trained]
        work = previous_work + np.fromiter(nodes.values(), dtype=np.float64, count=len(nodes))
        progress = (
            state.progress[trained] + tasks.speed[trained] * effective ** tasks.alpha[trained]
        )
        loss = self.workload.loss_at(tasks.curve_row[trained], progress)
        state.previous_loss[trained] = state.loss[trained]
        state.previous_work[trained] = previous_work
        state.work[trained] = work
        state.progress[trained] = progress
        state.loss[trained] = loss
        state.phi[trained] = self._progress_fraction(trained, loss)
        for task, task_work, task_progress, value in zip(
            trained.tolist(), work.tolist(), progress.tolist(), loss.tolist(), strict=True
        ):
            state.history_work[task].append(task_work)
            state.history_progress[task].append(task_progress)
            state.history_loss[task].append(value)

        state.epoch += 1
        state.switches += n_switched
        state.busy_node_epochs += sum(nodes.values())
        state.node_task = np.array(node_task, dtype=np.int64)
        state.assignments.append(state.node_task)

        completed = trained[loss <= tasks.target[trained]]
        if len(completed):
            self._resolve(completed, COMPLETED)
        due = state.due_at.get(state.epoch, _NONE)
        expired = due[state.status[due] == ACTIVE]
        if len(expired):
            self._resolve(expired, EXPIRED)
        if len(completed):
            state.completed += len(completed)
            state.slack_at_completion += float((tasks.deadline[completed] - state.epoch).sum())
            state.useful_node_epochs += float(state.work[completed].sum())
        if len(expired):
            state.expired += len(expired)
            state.wasted_node_epochs += float(state.work[expired].sum())

        arrived = self._admit_arrivals()
        potential = float(state.phi[state.slot_table].sum())
        shaping = self.config.shaping_discount * potential - state.potential
        state.potential = potential
        return EpochEvents(
            epoch=ended_epoch,
            completed=tuple(completed.tolist()),
            expired=tuple(expired.tolist()),
            arrived=tuple(arrived),
            switches=n_switched,
            shaping=shaping,
        )

    def _idle_a_feasible_task_could_use(self, nodes: dict[int, int]) -> int:
        """Idle nodes this epoch that slotted tasks able to finish with every node they may
        get could have used (their free room, at most the idle count)."""
        state, tasks = self.state, self.state.tasks
        limit = self.config.task_node_limit
        room = 0
        for task in state.slot_table.tolist():
            if task == NO_TASK or nodes.get(task, 0) >= limit:
                continue
            steps_left = tasks.demand[task] * tasks.speed[task] - state.progress[task]
            reach = (
                (tasks.deadline[task] - state.epoch)
                * tasks.speed[task]
                * limit ** tasks.alpha[task]
            )
            if steps_left <= reach:
                room += limit - nodes.get(task, 0)
        return min(self.config.n_nodes - sum(nodes.values()), room)

    def _resolve(self, task_ids: np.ndarray, status: int) -> None:
        state = self.state
        state.status[task_ids] = status
        state.end_epoch[task_ids] = state.epoch
        state.phi[task_ids] = 0.0
        slot = state.task_slot[task_ids]
        state.slots[slot[slot >= 0]] = NO_TASK
        state.task_slot[task_ids] = -1
        if (slot < 0).any():
            gone = set(task_ids.tolist())
            state.queue = [task for task in state.queue if task not in gone]

    def _admit_arrivals(self) -> list[int]:
        """Move tasks arriving by the current epoch into the queue, then fill free slots."""
        state = self.state
        first = state.next_arrival
        last = state.arrived_by[min(state.epoch, len(state.arrived_by) - 1)]
        arrived = list(range(first, last))
        if arrived:
            state.next_arrival = last
            state.status[first:last] = ACTIVE
            state.queue.extend(arrived)
            for task, loss in zip(arrived, state.loss[first:last].tolist(), strict=True):
                state.history_work[task] = [0.0]
                state.history_progress[task] = [0.0]
                state.history_loss[task] = [loss]
        if state.queue:
            free = (state.slots == NO_TASK).nonzero()[0]
            take = min(len(free), len(state.queue))
            if take:
                entering = state.queue[:take]
                state.slots[free[:take]] = entering
                state.task_slot[entering] = free[:take]
                del state.queue[:take]
        return arrived

    def _progress_fraction(self, task_ids: np.ndarray, loss: np.ndarray) -> np.ndarray:
        tasks = self.state.tasks
        start = tasks.log_initial_loss[task_ids]
        fraction = (start - np.log(loss)) / tasks.log_gap[task_ids]
        return np.minimum(np.maximum(fraction, 0.0), 1.0)

    def progress_fraction(self, task_ids: np.ndarray) -> np.ndarray:
        """Normalised log-loss progress toward the target: 0 at arrival, 1 at the target.

        ``ln(initial / loss) / ln(initial / target)`` of each task's last reported loss, clipped
        to [0, 1]; the potential Phi of the shaping reward is its sum over slotted tasks.
        """
        return self.state.phi[task_ids]

    # ------------------------------------------------------------------ episode end
    @property
    def terminated(self) -> bool:
        """Every task has arrived and been resolved."""
        state = self.state
        return (
            state.epoch >= self.config.arrival_horizon
            and state.next_arrival == len(state.tasks)
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
        reaches its target and ``nan`` for an empty slot. It counts curve steps to the first
        point at or below the target; a task that advances several steps per epoch reports only
        the point it lands on, so on a non-monotone curve it can skip that point and need more. Only clairvoyant references may call
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
            "useful_node_epochs": state.useful_node_epochs,
            "useful_utilisation": state.useful_node_epochs / node_epochs if node_epochs else 0.0,
            "idle_while_feasible": float(state.idle_while_feasible),
            "mean_slack_at_completion": (
                state.slack_at_completion / state.completed if state.completed else 0.0
            ),
            "epochs": float(state.epoch),
            "illegal_actions": float(state.illegal_actions),
            "conflicts": float(state.conflicts),
        }


class ReferenceObservationBuilder:
    """Builds observations, masks and states.

    The per-epoch part is computed once per epoch by :meth:`refresh`; within an epoch
    :meth:`record_choice` updates the "chosen this epoch" counts and the mask incrementally, so
    one node's observation costs a copy and a few writes.

    Args:
        simulator: The simulator whose state is observed.
    """

    def __init__(self, simulator: ReferenceSimulator) -> None:
        self.simulator = simulator
        config = simulator.config
        self.config = config
        self.size = observation_size(config)
        slot_offsets = GLOBAL_FEATURES + SLOT_FEATURES * np.arange(config.n_slots)
        self._now_index = slot_offsets + S_NODES_NOW
        self._mine_index = slot_offsets + S_MINE
        self._current = np.zeros(self.size, dtype=np.float32)
        self._mask = np.zeros(config.n_actions, dtype=np.int8)
        self._previous_slot = np.full(config.n_nodes, config.n_slots, dtype=np.int64)
        self.counts = [0] * config.n_actions
        self.legal: list[int] = [0] * config.n_actions
        self._episode_state: object = None
        self.decided = 0
        self._per_node = 1.0 / config.n_nodes

    def _start_episode(self) -> None:
        """Per-episode tables, one row per task plus an all-zero row that ``NO_TASK`` (-1) reads.

        ``_task_rows`` holds each task's slot features except the epoch-dependent ones: the
        static ones are written here, the ones that change when a task trains by
        :meth:`_update_trained`. Time features are ``intercept + epoch * slope``.
        """
        tasks = self.simulator.state.tasks
        self._tasks = tasks
        n = len(tasks)
        rows = np.zeros((n + 1, SLOT_FEATURES))
        rows[:n, S_OCCUPIED] = 1.0
        rows[:n, S_LOG_TARGET] = -tasks.log_gap
        rows[:n, S_SPEED] = tasks.speed / SPEED_SCALE
        rows[np.arange(n), S_FAMILY + tasks.family] = 1.0
        rows[:n, S_SERIAL] = (np.arange(n) + 1.0) / SERIAL_SCALE
        lengths = self.simulator.workload.lengths[tasks.curve_row]
        rows[:n, S_BUDGET] = lengths / tasks.speed / TIME_SCALE
        self._task_rows = rows
        deadline, arrival = tasks.deadline.astype(np.float64), tasks.arrival.astype(np.float64)
        window = np.maximum(deadline - arrival, 1.0)
        intercept = np.zeros((n + 1, len(_TIME_COLUMNS)))
        slope = np.zeros((n + 1, len(_TIME_COLUMNS)))
        intercept[:n] = np.column_stack(
            (deadline / TIME_SCALE, deadline / window, -arrival / TIME_SCALE)
        )
        slope[:n] = np.column_stack(
            (np.full(n, -1.0 / TIME_SCALE), -1.0 / window, np.full(n, 1.0 / TIME_SCALE))
        )
        self._time_intercept, self._time_slope = intercept, slope

    def _update_trained(self) -> None:
        """Features that change only when a task trains: computed for last epoch's tasks."""
        state, tasks = self.simulator.state, self._tasks
        trained = state.last_trained
        log_loss = np.log(state.loss[trained])
        worked = state.work[trained] - state.previous_work[trained]
        rows = self._task_rows
        rows[trained, S_LOG_LOSS] = log_loss - tasks.log_initial_loss[trained]
        rows[trained, S_PROGRESS] = state.phi[trained]
        rows[trained, S_WORK] = state.work[trained] * (1.0 / TIME_SCALE)
        rows[trained, S_STEPS] = state.progress[trained] * (1.0 / STEP_SCALE)
        rows[trained, S_SLOPE] = (np.log(state.previous_loss[trained]) - log_loss) / np.maximum(
            worked, 1.0
        )

    def refresh(self) -> None:
        """Recompute the per-epoch part after a reset or an epoch; clears this epoch's choices."""
        config, state = self.config, self.simulator.state
        if state is not self._episode_state:
            self._episode_state = state
            self._start_episode()
        elif len(state.last_trained):
            self._update_trained()
        n_slots = config.n_slots
        slots = state.slots
        matrix = self._task_rows[slots]
        matrix[:, _TIME_COLUMNS] = (
            self._time_intercept[slots] + state.epoch * self._time_slope[slots]
        )
        previous = state.task_slot[state.node_task]  # -1: idle, or the task has left
        previous[previous < 0] = n_slots
        self._previous_slot = previous
        matrix[:, S_NODES_LAST] = np.bincount(previous, minlength=n_slots + 1)[:n_slots]
        matrix[:, S_NODES_LAST] *= self._per_node
        base = np.empty(self.size)
        base[GLOBAL_FEATURES:] = matrix.ravel()
        queue = state.queue
        n_occupied = int(matrix[:, S_OCCUPIED].sum())
        base[:GLOBAL_FEATURES] = (
            state.epoch / config.arrival_horizon,
            float(state.epoch < config.arrival_horizon),
            len(queue) / n_slots,
            (self._tasks.deadline[queue].min() - state.epoch) / TIME_SCALE if queue else 0.0,
            n_occupied / n_slots,
            0.0,
            0.0,
            0.0,
        )
        np.maximum(base, -FEATURE_BOUND, out=base)
        np.minimum(base, FEATURE_BOUND, out=base)
        self._current = base.astype(np.float32)
        mask = np.ones(config.n_actions, dtype=np.int8)
        mask[:-1] = matrix[:, S_OCCUPIED]
        self._mask = mask
        self.legal = mask.tolist()
        self.counts = [0] * config.n_actions
        self.decided = 0

    def record_choice(self, action: int) -> None:
        """Count one node's legal choice this epoch (updates observations and the mask)."""
        self.counts[action] += 1
        self.decided += 1
        self._current[G_DECIDED] = self.decided * self._per_node
        if action < self.config.n_slots:
            self._current[self._now_index[action]] = self.counts[action] * self._per_node
            cap = self.config.max_nodes_per_task
            if cap is not None and self.counts[action] >= cap:
                self._mask[action] = 0
                self.legal[action] = False

    def observe(self, node: int) -> np.ndarray:
        """Node ``node``'s observation (a fresh array)."""
        obs = self._current.copy()
        obs[G_NODE] = node * self._per_node
        previous = self._previous_slot[node]
        if previous < self.config.n_slots:
            obs[self._mine_index[previous]] = 1.0
        else:
            obs[G_IDLE] = 1.0
        return obs

    def mask(self) -> np.ndarray:
        """The int8 action mask (a fresh array)."""
        return self._mask.copy()

    def state_vector(self, choices: np.ndarray) -> np.ndarray:
        """The centralised state: shared features, previous slots, this epoch's choices."""
        scale = 1.0 / self.config.n_slots
        return np.concatenate(
            (self._current, self._previous_slot * scale, choices * scale), dtype=np.float32
        )
