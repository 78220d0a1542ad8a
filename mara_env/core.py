"""The simulation core: a batch of clusters stepped together as NumPy arrays.

Every environment form runs on :class:`ClusterBatch`: the AEC, Parallel and Gymnasium envs over a
batch of one cluster (through :class:`mara_env.simulator.ClusterSimulator`), the vector env and
the batched multi-agent entry over many. State is explicit (arrays with a leading batch axis);
all randomness of an episode is drawn when a cluster is reset, from the generator the caller
passes for that cluster; :meth:`ClusterBatch.advance` is deterministic.

One epoch, given each node's choice of visible slot (or idle), in every cluster at once:

1. A node that trains a task it did not train in the previous epoch (or idled then) loses
   ``switch_cost`` of the epoch. A task served by nodes with effective shares ``e_1..e_k``
   advances ``speed * (e_1 + ... + e_k) ** alpha`` curve steps (:func:`mara_env.rules.progress_gain`).
2. Each trained task reports the loss at its new progress (:func:`mara_env.rules.loss_at`).
3. A task whose reported loss is <= its target completes; a task whose deadline has come without
   completing expires (in a slot or in the queue). Both leave and free their slot.
4. Tasks arriving in the new epoch join the first-come queue; free slots, lowest first, take
   tasks from its front.

Bookkeeping stays on the slots and a queue window: a task's changing state (progress, work, loss)
lives in its slot while it is slotted and is written to the per-task table when it leaves. Since
slots are filled from the front of the queue and tasks arrive in id order, the queue is the ids
from ``queue_head`` to ``next_arrival`` minus those that expired while queued.

Example:
    >>> import numpy as np
    >>> from mara_env import get_config
    >>> core = ClusterBatch(get_config("tiny"), 3)
    >>> core.reset(np.arange(3), [np.random.default_rng(seed) for seed in (0, 1, 2)])
    >>> epoch = core.advance(np.zeros((3, 2), dtype=np.int64))  # both nodes on slot 0
    >>> core.epoch.tolist()
    [1, 1, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mara_env.config import ClusterConfig
from mara_env.errors import ConfigError, EnvStateError
from mara_env.layout import (
    S_BUDGET,
    S_FAMILY,
    S_LOG_TARGET,
    S_OCCUPIED,
    S_SERIAL,
    S_SPEED,
    SERIAL_SCALE,
    SLOT_FEATURES,
    SPEED_SCALE,
    TIME_SCALE,
)
from mara_env.rules import effective_share, epochs_to_target, loss_at, progress_gain
from mara_env.traces import TraceSource
from mara_env.workload import TaskTable, Workload, build_workload, sample_tasks, validate_tasks

FUTURE, ACTIVE, COMPLETED, EXPIRED = 0, 1, 2, 3
NO_TASK = -1
#: Tasks one episode may draw at most (the arrival serial in the observation must stay exact).
MAX_TASKS_PER_EPISODE = 99_999


@dataclass(frozen=True)
class BatchEpoch:
    """What happened in one epoch of every cluster of a batch (arrays, batch first).

    Attributes:
        epoch: The epoch that just ended in each cluster.
        completed: Number of tasks that completed.
        expired: Number of tasks whose deadline came (slotted or queued).
        arrived: Number of tasks that arrived for the next epoch.
        switches: Nodes that paid the switch cost.
        shaping: The shaping term ``gamma * Phi(s') - Phi(s)`` of the progress potential
            (``gamma``: ``config.shaping_discount``; ``Phi`` is 0 once an episode terminated).
        trained: ``(B, n_slots)`` whether each slot's task trained this epoch.
        completed_slots: ``(B, n_slots)`` slots whose task completed.
        expired_slots: ``(B, n_slots)`` slots whose task expired.
        departed_tasks: ``(B, n_slots)`` task id in each slot before departures.
        queue_expired: ``(cluster, task)`` index arrays of the tasks that expired in the queue.
    """

    epoch: np.ndarray
    completed: np.ndarray
    expired: np.ndarray
    arrived: np.ndarray
    switches: np.ndarray
    shaping: np.ndarray
    trained: np.ndarray
    completed_slots: np.ndarray
    expired_slots: np.ndarray
    departed_tasks: np.ndarray
    queue_expired: tuple[np.ndarray, np.ndarray]


#: Fields of a task's row, in the packed per-task table and in the slot holding it (float64;
#: ids and epochs are exact whole numbers). The first six change while the task trains (ordered
#: so that work and loss, their previous values, and the two losses are each one slice); the
#: row ends with a block of ``SLOT_FEATURES`` values in the observation's slot-column order
#: holding the task's constant features (0 in the other columns; see
#: :func:`mara_env.observation.slot_matrix`).
TASK_FIELDS = (
    "progress",
    "work",
    "loss",
    "previous_work",
    "previous_loss",
    "phi",
    "speed",
    "alpha",
    "target",
    "deadline",
    "arrival",
    "log_initial_loss",
    "log_gap",
    "family",
    "initial_loss",
    # the time features of the observation at epoch 0 and their change per epoch (0 in an
    # empty slot's row, so its time features come out 0)
    "time_left_at_0",
    "time_fraction_at_0",
    "age_at_0",
    "time_left_per_epoch",
    "time_fraction_per_epoch",
    "age_per_epoch",
    # per-task outcome (meaningful in the task table only)
    "end_epoch",
    "final_status",
    *(f"feature_{column}" for column in range(SLOT_FEATURES)),
)
FIELD = {name: index for index, name in enumerate(TASK_FIELDS)}
PROGRESS, WORK, LOSS, PREVIOUS_WORK, PREVIOUS_LOSS, PHI = range(6)
#: The current and the previous loss (a strided slice of a row).
LOSSES = slice(LOSS, PREVIOUS_LOSS + 1, PREVIOUS_LOSS - LOSS)
#: The time features at epoch 0 and their changes per epoch (blocks in the order of the
#: observation's time columns).
TIME_AT_0 = slice(FIELD["time_left_at_0"], FIELD["age_at_0"] + 1)
TIME_PER_EPOCH = slice(FIELD["time_left_per_epoch"], FIELD["age_per_epoch"] + 1)
#: Where the block of constant slot features starts in a row.
FEATURES = FIELD["feature_0"]
#: The row an empty slot (and the sentinel task) holds.
EMPTY_ROW = np.zeros(len(TASK_FIELDS))
EMPTY_ROW[[FIELD["loss"], FIELD["previous_loss"], FIELD["log_gap"], FIELD["alpha"]]] = 1.0
EMPTY_ROW[[FIELD["initial_loss"]]] = 1.0
EMPTY_ROW[FIELD["end_epoch"]] = -1.0


def _empty_rows(shape: tuple[int, int]) -> np.ndarray:
    """``(len(TASK_FIELDS), *shape)`` copies of :data:`EMPTY_ROW` (fields first)."""
    return np.broadcast_to(EMPTY_ROW[:, None, None], (len(TASK_FIELDS), *shape)).copy()


def task_rows(table: TaskTable, lengths: np.ndarray) -> np.ndarray:
    """``(len(TASK_FIELDS), len(table))`` packed rows of a task table at arrival, fields first
    (the layout of :attr:`ClusterBatch.task`).

    Args:
        table: The episode's tasks (sorted by arrival: a task's index is its serial).
        lengths: ``(len(table),)`` recorded points of each task's curve (its step budget in
            curve steps).
    """
    n = len(table)
    if np.shape(lengths) != (n,):
        raise ValueError(
            f"task_rows: expected {n} curve lengths (one per task), got shape {np.shape(lengths)}."
        )
    rows = np.zeros((len(TASK_FIELDS), n))
    initial = table.initial_loss.astype(np.float64)
    deadline, arrival = table.deadline.astype(np.float64), table.arrival.astype(np.float64)
    window = np.maximum(deadline - arrival, 1.0)
    log_gap = table.log_gap
    columns: dict[str, np.ndarray | float] = {
        "loss": initial,
        "previous_loss": initial,
        "speed": table.speed,
        "alpha": table.alpha,
        "target": table.target,
        "deadline": deadline,
        "arrival": arrival,
        "log_initial_loss": table.log_initial_loss,
        "log_gap": log_gap,
        "family": table.family,
        "initial_loss": initial,
        f"feature_{S_OCCUPIED}": 1.0,
        f"feature_{S_SPEED}": table.speed / SPEED_SCALE,
        f"feature_{S_LOG_TARGET}": -log_gap,
        f"feature_{S_SERIAL}": (np.arange(n) + 1.0) / SERIAL_SCALE,
        f"feature_{S_BUDGET}": np.asarray(lengths, dtype=np.float64) / table.speed / TIME_SCALE,
        "time_left_at_0": deadline / TIME_SCALE,
        "time_fraction_at_0": deadline / window,
        "age_at_0": -arrival / TIME_SCALE,
        "time_left_per_epoch": -1.0 / TIME_SCALE,
        "time_fraction_per_epoch": -1.0 / window,
        "age_per_epoch": 1.0 / TIME_SCALE,
        "end_epoch": -1.0,
    }
    for name, value in columns.items():
        rows[FIELD[name]] = value
    rows[FEATURES + S_FAMILY + table.family, np.arange(n)] = 1.0
    return rows


class ClusterBatch:
    """``batch_size`` clusters of one configuration, stepped together.

    Args:
        config: The cluster configuration (shared by every cluster of the batch).
        batch_size: Number of clusters.
        trace_source: Where curves come from (default: :func:`mara_env.default_trace_source`).
        record_history: Keep every reported point of each task and the node assignments of
            every epoch (Python lists: for the single-cluster forms, which expose them).

    Attributes:
        tasks: Each cluster's :class:`~mara_env.workload.TaskTable` of the current episode.
        epoch, next_arrival, n_tasks, queue_head, queue_length: ``(B,)`` per cluster.
        slot_task: ``(B, n_slots + 1)`` task id in each slot, plus a ``NO_TASK`` column.
        slot_offsets: ``(B, 1)`` offset of each cluster's first slot in ``slot_task.ravel()``.
        free_slots: ``(B,)`` number of empty slots.
        slot: ``(len(TASK_FIELDS), B, n_slots + 1)`` the row of the task in each slot, fields
            first (:data:`EMPTY_ROW` for an empty slot and the last column).
        task: ``(len(TASK_FIELDS), B, capacity + 1)`` every task's row; its changing fields are
            current only once it has left its slot (see :meth:`task_values`).
        node_task: ``(B, n_nodes)`` task each node trained in the last epoch.
        previous_slot: ``(B, n_nodes)`` slot of that task now (``n_slots``: idle, or it left).
        queue_min_deadline: ``(B,)`` earliest deadline in the queue (0 if empty).
        terminated, truncated: ``(B,)`` episode end flags, as of the last reset or epoch.
        completed, expired, switches, busy_node_epochs, wasted_node_epochs,
            slack_at_completion, illegal_actions, conflicts, potential: ``(B,)`` counters.
    """

    def __init__(
        self,
        config: ClusterConfig,
        batch_size: int,
        trace_source: TraceSource | None = None,
        *,
        record_history: bool = False,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise ConfigError(f"ClusterBatch: batch_size must be an int >= 1, got {batch_size!r}.")
        if batch_size < 1:
            raise ConfigError(f"ClusterBatch: batch_size must be >= 1, got {batch_size}.")
        if trace_source is None:
            from mara_env.sources import default_trace_source

            trace_source = default_trace_source()
        self.config = config
        self.trace_source = trace_source
        self.workload: Workload = build_workload(config, trace_source)
        self.batch_size = B = int(batch_size)
        self.record_history = record_history
        S, K = config.n_slots, config.n_nodes
        self.slot_offsets = (np.arange(B) * (S + 1))[:, None]
        self._all_clusters = np.arange(B)
        self.tasks: list[TaskTable | None] = [None] * B
        self.has_episode = np.zeros(B, dtype=bool)
        self._every_cluster_reset = False
        self.capacity = 0
        self.task = np.empty((len(TASK_FIELDS), B, 1))
        self.task_curve = np.zeros((B, 1), dtype=np.intp)
        self._allocate_tasks(0)
        self.slot_task = np.full((B, S + 1), NO_TASK, dtype=np.int64)
        self.slot_curve = np.zeros((B, S + 1), dtype=np.intp)
        self.slot = _empty_rows((B, S + 1))
        self.free_slots = np.full(B, S, dtype=np.int64)
        self.node_task = np.full((B, K), NO_TASK, dtype=np.int64)
        self.previous_slot = np.full((B, K), S, dtype=np.int64)
        self.epoch = np.zeros(B, dtype=np.int64)
        self.next_arrival = np.zeros(B, dtype=np.int64)
        self.n_tasks = np.zeros(B, dtype=np.int64)
        self.queue_head = np.zeros(B, dtype=np.int64)
        self.queue_length = np.zeros(B, dtype=np.int64)
        self.queue_min_deadline = np.zeros(B, dtype=np.int64)
        self.arrived_by = np.zeros((B, config.arrival_horizon + 1), dtype=np.int64)
        self.completed = np.zeros(B, dtype=np.int64)
        self.expired = np.zeros(B, dtype=np.int64)
        self.switches = np.zeros(B, dtype=np.int64)
        self.busy_node_epochs = np.zeros(B, dtype=np.int64)
        self.wasted_node_epochs = np.zeros(B)
        self.slack_at_completion = np.zeros(B)
        self.illegal_actions = np.zeros(B, dtype=np.int64)
        self.conflicts = np.zeros(B, dtype=np.int64)
        self.potential = np.zeros(B)
        self.terminated = np.zeros(B, dtype=bool)
        self.truncated = np.zeros(B, dtype=bool)
        self.history_work: list[dict[int, list[float]]] = [{} for _ in range(B)]
        self.history_progress: list[dict[int, list[float]]] = [{} for _ in range(B)]
        self.history_loss: list[dict[int, list[float]]] = [{} for _ in range(B)]
        self.assignments: list[list[np.ndarray]] = [[] for _ in range(B)]
        self.last_trained = np.zeros((B, S), dtype=bool)
        # logged history: (trained (B, S + 1), slot_task, (3, B, S + 1) progress, work and loss
        # of the slots) after an epoch, or (cluster, first, last) for the arrivals of tasks
        # first .. last - 1
        self._pending: list[tuple[Any, Any, Any]] = []

    # ------------------------------------------------------------------ reset
    def _allocate_tasks(self, capacity: int) -> None:
        """Grow the per-task table to ``capacity`` tasks per cluster (keeping its contents)."""
        table = _empty_rows((self.batch_size, capacity + 1))
        table[:, :, : self.capacity] = self.task[:, :, : self.capacity]
        curve = np.zeros((self.batch_size, capacity + 1), dtype=np.intp)
        curve[:, : self.capacity] = self.task_curve[:, : self.capacity]
        self.task, self.task_curve, self.capacity = table, curve, capacity

    def reset(
        self,
        clusters: np.ndarray | Sequence[int],
        rngs: Sequence[np.random.Generator],
        tasks: Sequence[TaskTable | None] | None = None,
    ) -> None:
        """Start a new episode in each of ``clusters``, drawing its tasks from its generator.

        Args:
            clusters: Indices of the clusters to reset.
            rngs: One generator per cluster in ``clusters`` (the tasks are drawn from it exactly
                as :func:`mara_env.workload.sample_tasks` draws them).
            tasks: Optional hand-made task tables (``None`` entries are drawn).

        Raises:
            ConfigError: For invalid hand-made tasks, or an episode with too many tasks.
        """
        indices = np.asarray(clusters, dtype=np.int64).reshape(-1)
        if len(rngs) != len(indices):
            raise ValueError(
                f"ClusterBatch.reset: {len(indices)} clusters but {len(rngs)} generators."
            )
        given = [None] * len(indices) if tasks is None else list(tasks)
        tables = []
        for rng, table in zip(rngs, given, strict=True):
            if table is None:
                table = sample_tasks(self.workload, rng)
            else:
                validate_tasks(table, self.workload)
            if len(table) > MAX_TASKS_PER_EPISODE:
                raise ConfigError(
                    f"An episode drew {len(table)} tasks, more than {MAX_TASKS_PER_EPISODE}; "
                    "lower the load or the arrival horizon."
                )
            tables.append(table)
        if self.record_history:
            if len(set(indices.tolist())) == self.batch_size:
                self._pending = []  # every cluster's history is about to be emptied
            else:
                self.flush_history()  # the logged points read the task table about to change
        need = max(len(table) for table in tables)
        if need > self.capacity:
            self._allocate_tasks(max(need, 2 * self.capacity))
        S, horizon = self.config.n_slots, self.config.arrival_horizon
        for cluster, table in zip(indices.tolist(), tables, strict=True):
            n = len(table)
            self.tasks[cluster] = table
            self.n_tasks[cluster] = n
            self.task[:, cluster] = EMPTY_ROW[:, None]
            self.task[:, cluster, :n] = task_rows(table, self.workload.lengths[table.curve_row])
            self.task_curve[cluster] = 0
            self.task_curve[cluster, :n] = table.curve_row
            self.arrived_by[cluster] = np.searchsorted(
                table.arrival, np.arange(horizon + 1), side="right"
            )
            if self.record_history:
                self.history_work[cluster] = {}
                self.history_progress[cluster] = {}
                self.history_loss[cluster] = {}
                self.assignments[cluster] = []
        self.has_episode[indices] = True
        self.slot_task[indices] = NO_TASK
        self.slot_curve[indices] = 0
        self.slot[:, indices] = EMPTY_ROW[:, None, None]
        self.free_slots[indices] = S
        self.node_task[indices] = NO_TASK
        self.previous_slot[indices] = S
        self.last_trained[indices] = False
        for counter in (
            self.epoch,
            self.next_arrival,
            self.queue_head,
            self.queue_length,
            self.queue_min_deadline,
            self.completed,
            self.expired,
            self.switches,
            self.busy_node_epochs,
            self.wasted_node_epochs,
            self.slack_at_completion,
            self.illegal_actions,
            self.conflicts,
            self.potential,
        ):
            counter[indices] = 0
        self._admit(indices)
        self._update_ends()

    # ------------------------------------------------------------------ dynamics
    def advance(self, slot_choice: np.ndarray) -> BatchEpoch:
        """Run one epoch in every cluster; node ``i`` of cluster ``b`` trains slot
        ``slot_choice[b, i]`` (``n_slots``, or an empty slot, is idle).

        Choices must already be legal (the environments turn masked ones into idle and apply
        ``max_nodes_per_task``).

        Raises:
            EnvStateError: If a cluster has no episode yet.
        """
        if not self._every_cluster_reset:
            if not self.has_episode.all():
                raise EnvStateError("ClusterBatch.advance() before every cluster was reset.")
            self._every_cluster_reset = True
        config, slot = self.config, self.slot
        B, S = self.batch_size, config.n_slots
        choice = np.minimum(slot_choice, S)
        flat = choice + self.slot_offsets
        node_task = self.slot_task.ravel()[flat]
        busy = node_task != NO_TASK
        if np.count_nonzero(busy) < busy.size:
            choice[~busy] = S  # an empty slot is idle
            flat = choice + self.slot_offsets
        switched = busy & (node_task != self.node_task)
        share = np.where(switched, 1.0 - config.switch_cost, busy)  # = busy - cost * switched
        width = B * (S + 1)
        chosen = flat.ravel()
        effective = np.bincount(chosen, weights=share.ravel(), minlength=width).reshape(B, S + 1)
        nodes = np.bincount(chosen, minlength=width).reshape(B, S + 1)
        nodes[:, S] = 0
        trained = nodes > 0
        ended_epoch = self.epoch.copy()

        # progress, work and loss of the trained tasks (all in their slots); a slot nobody
        # trained gains no progress and no work, so its loss and potential stay as they are
        np.copyto(slot[PREVIOUS_WORK : PREVIOUS_LOSS + 1], slot[WORK : LOSS + 1], where=trained)
        slot[PROGRESS] += progress_gain(slot[FIELD["speed"]], effective, slot[FIELD["alpha"]])
        slot[WORK] += nodes
        loss = loss_at(self.workload.curves, self.slot_curve, slot[PROGRESS])
        np.copyto(slot[LOSS], loss, where=trained)
        fraction = (slot[FIELD["log_initial_loss"]] - np.log(loss)) / slot[FIELD["log_gap"]]
        np.maximum(fraction, 0.0, out=fraction)
        np.copyto(slot[PHI], np.minimum(fraction, 1.0, out=fraction), where=trained)
        if self.record_history:
            self._record_points(trained)

        self.epoch += 1
        epoch = self.epoch
        n_switched = switched.sum(axis=1)
        self.switches += n_switched
        self.busy_node_epochs += busy.sum(axis=1)
        self.node_task = node_task
        if self.record_history:
            for cluster in range(B):
                self.assignments[cluster].append(node_task[cluster].copy())

        # departures from the slots (an empty slot's deadline is 0, before every new epoch)
        departed_tasks = self.slot_task[:, :S]
        completed_slots = trained[:, :S] & (loss[:, :S] <= slot[FIELD["target"], :, :S])
        expired_slots = (slot[FIELD["deadline"], :, :S] == epoch[:, None]) & ~completed_slots
        leaving = completed_slots | expired_slots
        if np.count_nonzero(leaving):
            n_completed = completed_slots.sum(axis=1)
            n_expired_slots = expired_slots.sum(axis=1)
            slack = slot[FIELD["deadline"], :, :S] - epoch[:, None]
            self.slack_at_completion += np.where(completed_slots, slack, 0.0).sum(axis=1)
            self.completed += n_completed
            self.wasted_node_epochs += np.where(expired_slots, slot[WORK, :, :S], 0.0).sum(axis=1)
            self.expired += n_expired_slots
            departed_tasks = departed_tasks.copy()
            self._leave(leaving, completed_slots)
        else:
            n_completed = n_expired_slots = np.zeros(B, dtype=np.int64)
        queue_expired = self._expire_queue()
        touched = None
        expired = n_expired_slots
        if len(queue_expired[0]):
            touched = np.zeros(B, dtype=bool)
            touched[queue_expired[0]] = True
            expired = expired + np.bincount(queue_expired[0], minlength=B)
        arrived = self._admit(self._all_clusters, touched)
        potential = slot[PHI].sum(axis=1)
        shaping = config.shaping_discount * potential - self.potential
        self.potential = potential
        kept = busy & (self.slot_task.ravel()[flat] == node_task)
        self.previous_slot = np.where(kept, choice, S)
        self.last_trained = trained[:, :S] & ~leaving
        self._update_ends()
        return BatchEpoch(
            epoch=ended_epoch,
            completed=n_completed,
            expired=expired,
            arrived=arrived,
            switches=n_switched,
            shaping=shaping,
            trained=trained[:, :S],
            completed_slots=completed_slots,
            expired_slots=expired_slots,
            departed_tasks=departed_tasks,
            queue_expired=queue_expired,
        )

    def _update_ends(self) -> None:
        late = self.epoch >= self.config.arrival_horizon
        if not np.count_nonzero(late):
            self.terminated = self.truncated = late
            return
        self.terminated = (
            late
            & (self.next_arrival == self.n_tasks)
            & (self.queue_length == 0)
            & (self.free_slots == self.config.n_slots)
        )
        self.truncated = ~self.terminated & (self.epoch >= self.config.max_epochs)

    def _record_points(self, trained: np.ndarray) -> None:
        """Log the points the trained tasks reported: copies of which slots trained, their tasks
        and their progress, work and loss (turned into the history lists lazily, by
        :meth:`flush_history`)."""
        self._pending.append(
            (trained.copy(), self.slot_task.copy(), self.slot[PROGRESS : LOSS + 1].copy())
        )

    def flush_history(self) -> None:
        """Append the logged points to ``history_work``, ``history_progress`` and
        ``history_loss`` (the single-cluster views call this before reading them)."""
        pending, self._pending = self._pending, []
        for entry in pending:
            if isinstance(entry[1], int):  # (cluster, first, end): arrivals of first .. end - 1
                arrived_in, first, end = entry
                losses = self.task[FIELD["initial_loss"], arrived_in, first:end].tolist()
                for task, loss in enumerate(losses, start=first):
                    self.history_work[arrived_in][task] = [0.0]
                    self.history_progress[arrived_in][task] = [0.0]
                    self.history_loss[arrived_in][task] = [loss]
                continue
            trained, slot_task, points = entry
            cluster, column = trained.nonzero()
            task_id = slot_task[cluster, column]
            progresses, works, losses = points[:, cluster, column].tolist()
            for b, task, work, progress, loss in zip(
                cluster.tolist(), task_id.tolist(), works, progresses, losses, strict=True
            ):
                self.history_work[b][task].append(work)
                self.history_progress[b][task].append(progress)
                self.history_loss[b][task].append(loss)

    def _leave(self, leaving: np.ndarray, completed: np.ndarray) -> None:
        """Write the leaving slots' rows back to the task table and empty the slots."""
        cluster, column = leaving.nonzero()
        task_id = self.slot_task[cluster, column]
        rows = self.slot[:, cluster, column]
        rows[PHI] = 0.0
        rows[FIELD["end_epoch"]] = self.epoch[cluster]
        rows[FIELD["final_status"]] = np.where(completed[cluster, column], COMPLETED, EXPIRED)
        self.task[:, cluster, task_id] = rows
        self.free_slots += np.bincount(cluster, minlength=self.batch_size)
        self.slot_task[cluster, column] = NO_TASK
        self.slot_curve[cluster, column] = 0
        self.slot[:, cluster, column] = EMPTY_ROW[:, None]

    def _rows_of(self, clusters: np.ndarray) -> slice | np.ndarray:
        """The index of ``clusters`` (ascending and distinct) into the per-cluster arrays: a
        slice, which reads them without copies, when they are every cluster."""
        return slice(None) if len(clusters) == self.batch_size else clusters

    def _queue_window(
        self, clusters: np.ndarray, rows: slice | np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Ids ``queue_head .. next_arrival - 1`` of ``clusters`` (padded with the sentinel) and
        which of them are still queued (``rows``: their index from :meth:`_rows_of`, if
        known)."""
        rows = clusters if rows is None else rows
        head, end = self.queue_head[rows], self.next_arrival[rows]
        width = int((end - head).max(initial=0))
        ids = head[:, None] + np.arange(width)
        inside = ids < end[:, None]
        ids = np.where(inside, ids, self.capacity)
        queued = inside & (self.task[FIELD["end_epoch"]][clusters[:, None], ids] < 0)
        return ids, queued

    def _expire_queue(self) -> tuple[np.ndarray, np.ndarray]:
        """Expire queued tasks whose deadline is the new epoch; their (cluster, task) ids."""
        # queue_min_deadline is the earliest deadline in each queue since the last admission
        # (0 when the queue is empty, never a new epoch)
        waiting = (self.queue_min_deadline == self.epoch).nonzero()[0]
        if not len(waiting):
            return waiting, waiting
        rows = self._rows_of(waiting)
        ids, queued = self._queue_window(waiting, rows)
        epoch = self.epoch[rows]
        due = queued & (self.task[FIELD["deadline"]][waiting[:, None], ids] == epoch[:, None])
        row, column = due.nonzero()
        cluster, task_id = waiting[row], ids[row, column]
        if len(cluster):
            self.task[FIELD["final_status"], cluster, task_id] = EXPIRED
            self.task[FIELD["end_epoch"], cluster, task_id] = self.epoch[cluster]
            count = np.bincount(cluster, minlength=self.batch_size)
            self.queue_length -= count
            self.expired += count
        return cluster, task_id

    def _admit(self, clusters: np.ndarray, touched: np.ndarray | None = None) -> np.ndarray:
        """Queue the tasks arriving by the current epoch, fill free slots from the queue front;
        the number of arrivals of each of ``clusters`` (``(B,)``: 0 for the others).

        The queue window of a cluster is read only if something can have changed its queue:
        arrivals, a free slot to fill, or ``touched`` (tasks expired from its queue).
        """
        horizon = self.config.arrival_horizon
        # the per-cluster arrays of ``clusters``: whole (basic indexing, no copies) for all
        every = clusters is self._all_clusters
        select = slice(None) if every else clusters
        arrived_now = self.arrived_by[clusters, np.minimum(self.epoch[select], horizon)]
        new = arrived_now - self.next_arrival[select]
        if every:
            arrived = new
        else:
            arrived = np.zeros(self.batch_size, dtype=np.int64)
            arrived[clusters] = new
        if not np.count_nonzero(new | self.queue_length[select]):
            return arrived  # nothing arrived, and the empty queues' heads are current
        if self.record_history:
            for position in new.nonzero()[0].tolist():
                cluster = int(clusters[position])
                first = int(self.next_arrival[cluster])
                self._pending.append((cluster, first, int(arrived_now[position])))
        self.next_arrival[select] = arrived_now
        self.queue_length[select] += new
        queue = self.queue_length[clusters]
        changed = (new > 0) | (self.free_slots[select] > 0)
        if touched is not None:
            changed |= touched[select]
        empty = clusters[queue == 0]
        self.queue_head[empty] = self.next_arrival[empty]
        self.queue_min_deadline[empty] = 0
        waiting = clusters[changed & (queue > 0)]
        if not len(waiting):
            return arrived
        rows = self._rows_of(waiting) if every else waiting
        ids, queued = self._queue_window(waiting, rows)
        take = np.minimum(self.free_slots[rows], self.queue_length[rows])
        if np.count_nonzero(take):
            free = self.slot_task[rows, :-1] == NO_TASK
            entering = queued & (queued.cumsum(axis=1) <= take[:, None])
            filling = free & (free.cumsum(axis=1) <= take[:, None])
            entry_row, entry_column = entering.nonzero()
            fill_row, fill_column = filling.nonzero()
            cluster, task_id = waiting[fill_row], ids[entry_row, entry_column]
            self.slot_task[cluster, fill_column] = task_id
            self.slot[:, cluster, fill_column] = self.task[:, cluster, task_id]
            self.slot_curve[cluster, fill_column] = self.task_curve[cluster, task_id]
            self.queue_length[rows] -= take
            self.free_slots[rows] -= take
            if not np.count_nonzero(self.queue_length[rows]):
                # every queued task entered: each queue is empty, its head the next arrival
                self.queue_head[rows] = self.next_arrival[rows]
                self.queue_min_deadline[rows] = 0
                return arrived
            queued = queued & ~entering
        # the queue head moves to the first task still queued
        still = queued.any(axis=1)
        first = np.where(still, queued.argmax(axis=1), queued.shape[1])
        self.queue_head[rows] = np.minimum(self.queue_head[rows] + first, self.next_arrival[rows])
        if np.count_nonzero(still):
            deadline = np.where(queued, self.task[FIELD["deadline"]][waiting[:, None], ids], np.inf)
            self.queue_min_deadline[rows] = np.where(still, deadline.min(axis=1), 0.0)
        else:
            self.queue_min_deadline[rows] = 0
        return arrived

    @property
    def nbytes(self) -> int:
        """Bytes held by the core's arrays (the state of every cluster, task tables included)."""
        return sum(value.nbytes for value in vars(self).values() if isinstance(value, np.ndarray))

    # ------------------------------------------------------------------ per-cluster reads
    def task_values(self, cluster: int, name: str) -> np.ndarray:
        """Field ``name`` (of :data:`TASK_FIELDS`) of every task of ``cluster``, current for
        slotted tasks too (a fresh array)."""
        field = FIELD[name]
        values = self.task[field, cluster, : self.n_tasks[cluster]].copy()
        occupied = np.flatnonzero(self.slot_task[cluster, :-1] != NO_TASK)
        values[self.slot_task[cluster, occupied]] = self.slot[field, cluster, occupied]
        return values

    def status(self, cluster: int) -> np.ndarray:
        """``FUTURE``, ``ACTIVE``, ``COMPLETED`` or ``EXPIRED`` of every task of ``cluster``."""
        n = int(self.n_tasks[cluster])
        final = self.task[FIELD["final_status"], cluster, :n].astype(np.int8)
        arrived = np.arange(n) < self.next_arrival[cluster]
        final[(final == FUTURE) & arrived] = ACTIVE
        return final

    def queue(self, cluster: int) -> list[int]:
        """Ids of ``cluster``'s queued tasks, first come first."""
        ids, queued = self._queue_window(np.array([cluster]))
        return ids[0, queued[0]].tolist()

    # ------------------------------------------------------------------ privileged API
    def privileged_epochs_to_target(
        self, cluster: int, slot: int, nodes: np.ndarray, held: int, horizon: int
    ) -> np.ndarray:
        """PRIVILEGED: epochs the task in ``slot`` of ``cluster`` needs to report a loss at or
        below its target with ``nodes[j]`` nodes from now on (:data:`mara_env.rules.NEVER`:
        not within ``horizon`` epochs), read from its hidden curve.

        ``held`` nodes trained the task last epoch and keep their whole share in the first
        epoch; the others pay the switch cost (:func:`mara_env.rules.effective_share`). Only
        clairvoyant references and diagnostics that compare schedulers with the truth may call
        this.

        Raises:
            ValueError: If the slot is empty.
        """
        task = int(self.slot_task[cluster, slot])
        if task == NO_TASK:
            raise ValueError(f"privileged_epochs_to_target: slot {slot} is empty.")
        nodes = np.asarray(nodes)
        row = self.slot[:, cluster, slot]
        return epochs_to_target(
            self.workload.curves[self.slot_curve[cluster, slot]],
            float(row[PROGRESS]),
            float(row[FIELD["target"]]),
            float(row[FIELD["speed"]]),
            float(row[FIELD["alpha"]]),
            effective_share(nodes, held, self.config.switch_cost),
            nodes,
            horizon,
        )

    def privileged_remaining_work(self, cluster: int) -> np.ndarray:
        """PRIVILEGED: true node-epochs one node still needs for each slot's task of ``cluster``.

        Counts curve steps to the first point after the current one at or below the target;
        ``inf`` for a task that never reaches its target and ``nan`` for an empty slot. A task
        that advances several steps per epoch reports only the point it lands on, so on a
        non-monotone curve it can skip that point and need more.
        """
        remaining = np.full(self.config.n_slots, np.nan)
        curves = self.workload.curves
        for column in np.flatnonzero(self.slot_task[cluster, :-1] != NO_TASK).tolist():
            row = self.slot[:, cluster, column]
            progress = float(row[PROGRESS])
            start = int(progress) + 1
            curve = curves[self.slot_curve[cluster, column]]
            hits = np.flatnonzero(curve[start:] <= row[FIELD["target"]])
            steps = np.inf if len(hits) == 0 else start + hits[0] - progress
            remaining[column] = steps / row[FIELD["speed"]]
        return remaining

    # ------------------------------------------------------------------ metrics
    def episode_metrics(self, cluster: int) -> dict[str, float]:
        """Metrics of ``cluster``'s episode so far (final once it has ended).

        Keys: ``completion_rate`` (completed / arrived), ``completed``, ``arrived``,
        ``expired``, ``utilisation`` (busy node-epochs / node-epochs elapsed), ``switches``,
        ``wasted_node_epochs`` (spent on tasks that expired), ``mean_slack_at_completion``
        (epochs left before the deadline), ``epochs``, ``illegal_actions`` (masked actions
        turned into idle), ``conflicts`` (choices over ``max_nodes_per_task`` turned into idle).
        """
        arrived, completed = int(self.next_arrival[cluster]), int(self.completed[cluster])
        epoch = int(self.epoch[cluster])
        node_epochs = epoch * self.config.n_nodes
        return {
            "completion_rate": completed / arrived if arrived else 0.0,
            "completed": float(completed),
            "arrived": float(arrived),
            "expired": float(self.expired[cluster]),
            "utilisation": int(self.busy_node_epochs[cluster]) / node_epochs
            if node_epochs
            else 0.0,
            "switches": float(self.switches[cluster]),
            "wasted_node_epochs": float(self.wasted_node_epochs[cluster]),
            "mean_slack_at_completion": (
                float(self.slack_at_completion[cluster]) / completed if completed else 0.0
            ),
            "epochs": float(epoch),
            "illegal_actions": float(self.illegal_actions[cluster]),
            "conflicts": float(self.conflicts[cluster]),
        }
