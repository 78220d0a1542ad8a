"""The simulation core: a batch of clusters stepped together, its state in NumPy arrays.

Every environment form runs on :class:`ClusterBatch`: the AEC, Parallel and Gymnasium envs over a
batch of one cluster (through :class:`mara_env.sim.simulator.ClusterSimulator`), the vector env and
the batched multi-agent entry over many. State is explicit (arrays with a leading batch axis);
all randomness of an episode is drawn when a cluster is reset, from the generator the caller
passes for that cluster; :meth:`ClusterBatch.advance` is deterministic. The epoch itself runs as
compiled loops over the clusters (:mod:`mara_env.sim.dynamics`): a batch of one cluster then costs
about what a scalar simulator costs, where array operations would pay a microsecond or more
each whatever the batch size.

One epoch, given each node's choice of visible slot (or idle), in every cluster at once:

1. A node that trains a task it did not train in the previous epoch (or idled then) loses
   ``switch_cost`` of the epoch. A task served by nodes with effective shares ``e_1..e_k``
   advances ``progress_gain(speed, e_1 + ... + e_k, alpha)`` curve steps
   (:func:`mara_env.sim.rules.progress_gain`).
2. Each trained task reports the loss at its new progress (:func:`mara_env.sim.rules.loss_after`).
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
from typing import Any

import numpy as np

from mara_env.curves.traces import TraceSourceLike
from mara_env.errors import ConfigError, EnvStateError
from mara_env.sim.dynamics import advance_clusters, start_episode
from mara_env.sim.epoch_report import COUNT_METRICS, BatchEpoch
from mara_env.sim.rules import effective_share, epochs_to_target
from mara_env.sim.task_fields import (
    ACTIVE,
    COMPLETED,
    EMPTY_ROW,
    EXPIRED,
    FEATURES,
    FIELD,
    FUTURE,
    NO_TASK,
    PHI,
    PROGRESS,
    TASK_FIELDS,
)
from mara_env.sim.task_rows import empty_rows, row_fields, task_rows
from mara_env.sim.workload import (
    TaskTable,
    Workload,
    build_workload,
    sample_tasks,
    validate_tasks,
)
from mara_env.worlds.config import ClusterConfig

__all__ = [
    "ACTIVE",
    "COMPLETED",
    "COUNT_METRICS",
    "EXPIRED",
    "FEATURES",
    "FIELD",
    "FUTURE",
    "MAX_TASKS_PER_EPISODE",
    "NO_TASK",
    "TASK_FIELDS",
    "BatchEpoch",
    "ClusterBatch",
    "task_rows",
]

#: Tasks one episode may draw at most (the arrival serial in the observation must stay exact).
MAX_TASKS_PER_EPISODE = 99_999


class ClusterBatch:
    """``batch_size`` clusters of one configuration, stepped together.

    Args:
        config: The cluster configuration (shared by every cluster of the batch).
        batch_size: Number of clusters.
        trace_source: Where curves come from (default: :func:`mara_env.default_trace_source`).
        record_history: Keep every reported point of each task and the node assignments of
            every epoch (Python lists: for the single-cluster forms, which expose them).

    Attributes:
        tasks: Each cluster's :class:`~mara_env.sim.workload.TaskTable` of the current episode.
        epoch, next_arrival, n_tasks, queue_head, queue_length: ``(B,)`` per cluster.
        slot_task: ``(B, n_slots + 1)`` task id in each slot, plus a ``NO_TASK`` column.
        slot_deadline: ``(B, n_slots + 1)`` the deadline of each slot's task (0 if empty): its
            row's, compact for the epoch's expiry test.
        free_slots: ``(B,)`` number of empty slots.
        slot: ``(B, n_slots + 1, len(TASK_FIELDS))`` the row of the task in each slot
            (:data:`EMPTY_ROW` for an empty slot and the last column).
        task: ``(B, capacity + 1, len(TASK_FIELDS))`` every task's row; its changing fields are
            current only once it has left its slot (see :meth:`task_values`). Rows from
            ``n_tasks`` on are unused.
        node_task: ``(B, n_nodes)`` task each node trained in the last epoch.
        previous_slot: ``(B, n_nodes)`` slot of that task now (``n_slots``: idle, or it left).
        queue_min_deadline: ``(B,)`` earliest deadline in the queue (0 if empty).
        queue_deadline: ``(B, capacity + 1)`` each task's deadline while it has not expired in
            the queue (0 once it has): the queue's bookkeeping, compact for its scans.
        terminated, truncated: ``(B,)`` episode end flags, as of the last reset or epoch.
        completed, expired, switches, busy_node_epochs, wasted_node_epochs, useful_node_epochs,
            idle_while_feasible, slack_at_completion, illegal_actions, conflicts, potential: ``(B,)`` counters.
    """

    def __init__(
        self,
        config: ClusterConfig,
        batch_size: int,
        trace_source: TraceSourceLike | None = None,
        *,
        record_history: bool = False,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
            raise ConfigError(f"ClusterBatch: batch_size must be an int >= 1, got {batch_size!r}.")
        if batch_size < 1:
            raise ConfigError(f"ClusterBatch: batch_size must be >= 1, got {batch_size}.")
        from mara_env.curves.sources import resolve_trace_source

        trace_source = resolve_trace_source(trace_source)
        self.config = config
        self.trace_source = trace_source
        self.workload: Workload = build_workload(config, trace_source)
        self.batch_size = B = int(batch_size)
        self.record_history = record_history
        S, K = config.n_slots, config.n_nodes
        self._all_clusters = np.arange(B)
        self.tasks: list[TaskTable | None] = [None] * B
        self.has_episode = np.zeros(B, dtype=bool)
        self._every_cluster_reset = False
        self.capacity = 0
        self.task = np.empty((B, 1, len(TASK_FIELDS)))
        self.task_curve = np.zeros((B, 1), dtype=np.intp)
        self.queue_deadline = np.zeros((B, 1), dtype=np.int64)
        self._allocate_tasks(0)
        self.slot_task = np.full((B, S + 1), NO_TASK, dtype=np.int64)
        self.slot_curve = np.zeros((B, S + 1), dtype=np.intp)
        self.slot_deadline = np.zeros((B, S + 1), dtype=np.int64)
        self.slot = empty_rows((B, S + 1))
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
        self.useful_node_epochs = np.zeros(B)
        self.idle_while_feasible = np.zeros(B, dtype=np.int64)
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
        table = empty_rows((self.batch_size, capacity + 1))
        table[:, : self.capacity] = self.task[:, : self.capacity]
        curve = np.zeros((self.batch_size, capacity + 1), dtype=np.intp)
        curve[:, : self.capacity] = self.task_curve[:, : self.capacity]
        deadline = np.zeros((self.batch_size, capacity + 1), dtype=np.int64)
        deadline[:, : self.capacity] = self.queue_deadline[:, : self.capacity]
        self.task, self.task_curve, self.queue_deadline = table, curve, deadline
        self.capacity = capacity

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
                as :func:`mara_env.sim.workload.sample_tasks` draws them).
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
        config, lengths = self.config, self.workload.lengths
        arrived = np.zeros(self.batch_size, dtype=np.int64)
        for cluster, table in zip(indices.tolist(), tables, strict=True):
            self.tasks[cluster] = table
            if self.record_history:
                self.history_work[cluster] = {}
                self.history_progress[cluster] = {}
                self.history_loss[cluster] = {}
                self.assignments[cluster] = []
            arrived[cluster] = start_episode(
                cluster,
                config.n_slots,
                config.arrival_horizon,
                config.max_epochs,
                EMPTY_ROW,
                table.curve_row,
                row_fields(table, lengths[table.curve_row]),
                self.n_tasks,
                self.epoch,
                self.node_task,
                self.previous_slot,
                self.last_trained,
                self._statistics(),
                self.terminated,
                self.truncated,
                *self._queue_and_slots(),
            )
        self.has_episode[indices] = True
        if self.record_history:
            self._log_arrivals(indices, arrived)

    def _statistics(self) -> tuple[np.ndarray, ...]:
        """The episode's per-cluster counters (zeroed when it starts)."""
        return (
            self.completed,
            self.expired,
            self.switches,
            self.busy_node_epochs,
            self.wasted_node_epochs,
            self.useful_node_epochs,
            self.idle_while_feasible,
            self.slack_at_completion,
            self.illegal_actions,
            self.conflicts,
            self.potential,
        )

    # ------------------------------------------------------------------ dynamics
    def advance(self, slot_choice: np.ndarray) -> BatchEpoch:
        """Run one epoch in every cluster; node ``i`` of cluster ``b`` trains slot
        ``slot_choice[b, i]`` (``n_slots``, or an empty slot, is idle).

        Choices must already be legal (the environments turn masked ones into idle and apply
        ``max_nodes_per_task``). The epoch runs compiled (:func:`mara_env.sim.dynamics.advance_clusters`).

        Raises:
            EnvStateError: If a cluster has no episode yet.
        """
        if not self._every_cluster_reset:
            if not self.has_episode.all():
                raise EnvStateError("ClusterBatch.advance() before every cluster was reset.")
            self._every_cluster_reset = True
        config = self.config
        S = config.n_slots
        ended_epoch = self.epoch.copy()
        points = np.empty((3, self.batch_size, S if self.record_history else 0))
        (
            self.node_task,
            self.previous_slot,
            trained,
            self.last_trained,
            completed_slots,
            expired_slots,
            departed_tasks,
            n_completed,
            n_expired,
            arrived,
            n_switched,
            expired_cluster,
            expired_task,
            self.terminated,
            self.truncated,
        ) = advance_clusters(
            np.asarray(slot_choice, dtype=np.int64),
            config.switch_cost,
            config.task_node_limit,
            config.arrival_horizon,
            config.max_epochs,
            self.workload.curves,
            EMPTY_ROW,
            self.n_tasks,
            self.node_task,
            self.epoch,
            self.completed,
            self.expired,
            self.switches,
            self.busy_node_epochs,
            self.wasted_node_epochs,
            self.useful_node_epochs,
            self.idle_while_feasible,
            self.slack_at_completion,
            points,
            *self._queue_and_slots(),
        )
        if self.record_history:
            self._pending.append((trained, departed_tasks, points))
            for cluster in range(self.batch_size):
                self.assignments[cluster].append(self.node_task[cluster].copy())
            self._log_arrivals(self._all_clusters, arrived)
        # a contiguous copy: NumPy then sums each row as it summed the earlier layout's rows,
        # so the shaping rewards stay bit for bit
        potential = np.ascontiguousarray(self.slot[:, :, PHI]).sum(axis=1)
        shaping = config.shaping_discount * potential - self.potential
        self.potential = potential
        return BatchEpoch(
            epoch=ended_epoch,
            completed=n_completed,
            expired=n_expired,
            arrived=arrived,
            switches=n_switched,
            shaping=shaping,
            trained=trained,
            completed_slots=completed_slots,
            expired_slots=expired_slots,
            departed_tasks=departed_tasks,
            queue_expired=(expired_cluster, expired_task),
        )

    def _log_arrivals(self, clusters: np.ndarray, arrived: np.ndarray) -> None:
        """Log the arrivals of ``clusters`` (their first points, added by :meth:`flush_history`)."""
        for cluster in clusters[arrived[clusters] > 0].tolist():
            end = int(self.next_arrival[cluster])
            self._pending.append((cluster, end - int(arrived[cluster]), end))

    def flush_history(self) -> None:
        """Append the logged points to ``history_work``, ``history_progress`` and
        ``history_loss`` (the single-cluster views call this before reading them)."""
        pending, self._pending = self._pending, []
        for entry in pending:
            if isinstance(entry[1], int):  # (cluster, first, end): arrivals of first .. end - 1
                arrived_in, first, end = entry
                losses = self.task[arrived_in, first:end, FIELD["initial_loss"]].tolist()
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

    def _queue_and_slots(self) -> tuple[np.ndarray, ...]:
        """The state arrays :func:`mara_env.sim.dynamics.admit_cluster` updates, in its order (the
        compiled episode start and epoch take them last)."""
        return (
            self.arrived_by,
            self.next_arrival,
            self.queue_head,
            self.queue_length,
            self.queue_min_deadline,
            self.queue_deadline,
            self.free_slots,
            self.slot,
            self.slot_task,
            self.slot_curve,
            self.slot_deadline,
            self.task,
            self.task_curve,
        )

    def _queue_window(self, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ids ``queue_head .. next_arrival - 1`` of ``clusters`` (padded with the sentinel) and
        which of them are still queued."""
        head, end = self.queue_head[clusters], self.next_arrival[clusters]
        width = int((end - head).max(initial=0))
        ids = head[:, None] + np.arange(width)
        inside = ids < end[:, None]
        ids = np.where(inside, ids, self.capacity)
        queued = inside & (self.queue_deadline[clusters[:, None], ids] > 0)
        return ids, queued

    @property
    def nbytes(self) -> int:
        """Bytes held by the core's arrays (the state of every cluster, task tables included)."""
        return sum(value.nbytes for value in vars(self).values() if isinstance(value, np.ndarray))

    # ------------------------------------------------------------------ per-cluster reads
    def task_values(self, cluster: int, name: str) -> np.ndarray:
        """Field ``name`` (of :data:`TASK_FIELDS`) of every task of ``cluster``, current for
        slotted tasks too (a fresh array)."""
        field = FIELD[name]
        values = self.task[cluster, : self.n_tasks[cluster], field].copy()
        occupied = np.flatnonzero(self.slot_task[cluster, :-1] != NO_TASK)
        values[self.slot_task[cluster, occupied]] = self.slot[cluster, occupied, field]
        return values

    def status(self, cluster: int) -> np.ndarray:
        """``FUTURE``, ``ACTIVE``, ``COMPLETED`` or ``EXPIRED`` of every task of ``cluster``."""
        n = int(self.n_tasks[cluster])
        final = self.task[cluster, :n, FIELD["final_status"]].astype(np.int8)
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
        below its target with ``nodes[j]`` nodes from now on (:data:`mara_env.sim.rules.NEVER`:
        not within ``horizon`` epochs), read from its hidden curve.

        ``held`` nodes trained the task last epoch and keep their whole share in the first
        epoch; the others pay the switch cost (:func:`mara_env.sim.rules.effective_share`). Only
        clairvoyant references and diagnostics that compare schedulers with the truth may call
        this.

        Raises:
            ValueError: If the slot is empty.
        """
        task = int(self.slot_task[cluster, slot])
        if task == NO_TASK:
            raise ValueError(f"privileged_epochs_to_target: slot {slot} is empty.")
        nodes = np.asarray(nodes)
        row = self.slot[cluster, slot]
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
            row = self.slot[cluster, column]
            progress = float(row[PROGRESS])
            start = int(progress) + 1
            curve = curves[self.slot_curve[cluster, column]]
            hits = np.flatnonzero(curve[start:] <= row[FIELD["target"]])
            steps = np.inf if len(hits) == 0 else start + hits[0] - progress
            remaining[column] = steps / row[FIELD["speed"]]
        return remaining

    # ------------------------------------------------------------------ metrics
    def completion_rates(self) -> np.ndarray:
        """``(B,)`` tasks completed / tasks arrived so far in each cluster's episode (0 before
        any arrival): the ``completion_rate`` of :meth:`episode_metrics` and of the infos."""
        return self.completed / np.maximum(self.next_arrival, 1)

    def episode_metrics(self, cluster: int) -> dict[str, float]:
        """Metrics of ``cluster``'s episode so far (final once it has ended).

        Keys: ``completion_rate`` (completed / arrived), ``completed``, ``arrived``,
        ``expired``, ``utilisation`` (busy node-epochs / node-epochs elapsed), ``switches``,
        ``wasted_node_epochs`` (spent on tasks that expired), ``useful_node_epochs`` (spent
        on tasks that completed) and ``useful_utilisation`` (their share of the node-epochs
        elapsed), ``idle_while_feasible`` (idle node-epochs that a slotted task able to reach
        its target by its deadline with every node it may get could have used; privileged),
        ``mean_slack_at_completion``
        (epochs left before the deadline), ``epochs``, ``illegal_actions`` (masked actions
        turned into idle), ``conflicts`` (choices over ``max_nodes_per_task`` turned into idle).
        """
        arrived, completed = int(self.next_arrival[cluster]), int(self.completed[cluster])
        epoch = int(self.epoch[cluster])
        node_epochs = epoch * self.config.n_nodes
        return {
            "completion_rate": float(self.completion_rates()[cluster]),
            "completed": float(completed),
            "arrived": float(arrived),
            "expired": float(self.expired[cluster]),
            "utilisation": int(self.busy_node_epochs[cluster]) / node_epochs
            if node_epochs
            else 0.0,
            "switches": float(self.switches[cluster]),
            "wasted_node_epochs": float(self.wasted_node_epochs[cluster]),
            "useful_node_epochs": float(self.useful_node_epochs[cluster]),
            "useful_utilisation": float(self.useful_node_epochs[cluster]) / node_epochs
            if node_epochs
            else 0.0,
            "idle_while_feasible": float(self.idle_while_feasible[cluster]),
            "mean_slack_at_completion": (
                float(self.slack_at_completion[cluster]) / completed if completed else 0.0
            ),
            "epochs": float(epoch),
            "illegal_actions": float(self.illegal_actions[cluster]),
            "conflicts": float(self.conflicts[cluster]),
        }
