"""The compiled loops of :class:`mara_env.sim.core.ClusterBatch`: a cluster's episode start
(:func:`start_episode`: its task rows, :func:`admit_cluster` of epoch 0's arrivals and
:func:`episode_end`), and one epoch of every cluster of a batch (:func:`advance_clusters`).

The core keeps its state in NumPy arrays with a leading batch axis (see its docstring for the
layout and the epoch's four steps). These functions update those arrays in place, one cluster at a
time, compiled with Numba: a loop over one cluster's nodes and slots costs nanoseconds where each
NumPy call costs a microsecond or more, so a batch of one cluster steps as fast as a scalar
simulator and a batch of many costs in proportion to its size.

Each rule of the world comes from :mod:`mara_env.sim.rules` (:func:`~mara_env.sim.rules.progress_gain`,
:func:`~mara_env.sim.rules.loss_after`); the bookkeeping is written with the same floating-point
operations, in the same order, as the array forms, so every form plays the same episodes
(``tests/test_core_reference.py`` plays them against the per-cluster reference simulator).

The first call of each function in a process compiles it, or loads it from Numba's cache beside
this file (a few seconds once, then well under one).
"""

from __future__ import annotations

import numpy as np
from numba import literal_unroll, njit

from mara_env.curves.families import OTHER_FAMILY as N_FAMILIES
from mara_env.sim.layout import (
    S_BUDGET,
    S_FAMILY,
    S_LOG_TARGET,
    S_OCCUPIED,
    S_SERIAL,
    S_SPEED,
    SERIAL_SCALE,
    SPEED_SCALE,
    TIME_SCALE,
)
from mara_env.sim.rules import log_of_loss_of_task, loss_after, progress_gain_of_task
from mara_env.sim.task_fields import (
    AGE_AT_0,
    AGE_PER_EPOCH,
    ALPHA,
    ARRIVAL,
    COMPLETED,
    DEADLINE,
    END_EPOCH,
    EXPIRED,
    FAMILY,
    FEATURES,
    FINAL_STATUS,
    INITIAL_LOSS,
    LOG_GAP,
    LOG_INITIAL_LOSS,
    LOG_LOSS,
    LOG_PREVIOUS_LOSS,
    LOSS,
    NO_TASK,
    PHI,
    PREVIOUS_LOSS,
    PREVIOUS_WORK,
    PROGRESS,
    SPEED,
    TARGET,
    TARGET_STEP,
    TIME_FRACTION_AT_0,
    TIME_FRACTION_PER_EPOCH,
    TIME_LEFT_AT_0,
    TIME_LEFT_PER_EPOCH,
    WORK,
)


@njit(cache=True)
def write_task_rows(
    rows: np.ndarray,
    family: np.ndarray,
    speed: np.ndarray,
    alpha: np.ndarray,
    target: np.ndarray,
    deadline: np.ndarray,
    arrival: np.ndarray,
    initial_loss: np.ndarray,
    log_initial_loss: np.ndarray,
    log_gap: np.ndarray,
    lengths: np.ndarray,
    demand: np.ndarray,
) -> None:
    """Write each task's row at arrival into ``rows`` (``(n, len(TASK_FIELDS))``; a task's
    index is its arrival serial): its constant fields, the time features at epoch 0 and their
    change per epoch, and its block of constant slot features."""
    rows[:] = 0.0
    for task_id in range(rows.shape[0]):
        row = rows[task_id]
        initial = float(initial_loss[task_id])
        log_initial = log_initial_loss[task_id]
        row[LOSS] = row[PREVIOUS_LOSS] = row[INITIAL_LOSS] = initial
        row[LOG_LOSS] = row[LOG_PREVIOUS_LOSS] = log_initial
        row[SPEED] = speed[task_id]
        row[ALPHA] = alpha[task_id]
        row[TARGET] = target[task_id]
        row[DEADLINE] = end = float(deadline[task_id])
        row[ARRIVAL] = start = float(arrival[task_id])
        row[LOG_INITIAL_LOSS] = log_initial
        row[LOG_GAP] = log_gap[task_id]
        row[FAMILY] = family[task_id]
        row[TARGET_STEP] = demand[task_id] * speed[task_id]
        window = max(end - start, 1.0)
        row[TIME_LEFT_AT_0] = end / TIME_SCALE
        row[TIME_FRACTION_AT_0] = end / window
        row[AGE_AT_0] = -start / TIME_SCALE
        row[TIME_LEFT_PER_EPOCH] = -1.0 / TIME_SCALE
        row[TIME_FRACTION_PER_EPOCH] = -1.0 / window
        row[AGE_PER_EPOCH] = 1.0 / TIME_SCALE
        row[END_EPOCH] = -1.0
        row[FEATURES + S_OCCUPIED] = 1.0
        row[FEATURES + S_SPEED] = speed[task_id] / SPEED_SCALE
        row[FEATURES + S_LOG_TARGET] = -log_gap[task_id]
        if family[task_id] < N_FAMILIES:  # a family of your own shows no shipped column
            row[FEATURES + S_FAMILY + family[task_id]] = 1.0
        row[FEATURES + S_SERIAL] = (task_id + 1.0) / SERIAL_SCALE
        row[FEATURES + S_BUDGET] = float(lengths[task_id]) / speed[task_id] / TIME_SCALE


@njit(cache=True)
def admit_cluster(
    b: int,
    touched: bool,
    epoch: np.ndarray,
    horizon: int,
    arrived_by: np.ndarray,
    next_arrival: np.ndarray,
    queue_head: np.ndarray,
    queue_length: np.ndarray,
    queue_min_deadline: np.ndarray,
    queue_deadline: np.ndarray,
    free_slots: np.ndarray,
    slot: np.ndarray,
    slot_task: np.ndarray,
    slot_curve: np.ndarray,
    slot_deadline: np.ndarray,
    task: np.ndarray,
    task_curve: np.ndarray,
) -> int:
    """Queue cluster ``b``'s arrivals by its current epoch and fill its free slots, lowest
    first, from the queue's front; the number of arrivals.

    The queue is read only if something can have changed it: arrivals, a free slot to fill, or
    ``touched`` (tasks expired from it this epoch).
    """
    arrived_now = arrived_by[b, min(epoch[b], horizon)]
    new = arrived_now - next_arrival[b]
    next_arrival[b] = arrived_now
    queue_length[b] += new
    if queue_length[b] == 0:
        queue_head[b] = arrived_now
        queue_min_deadline[b] = 0
        return new
    if new == 0 and free_slots[b] == 0 and not touched:
        return new
    take = min(free_slots[b], queue_length[b])
    entered = 0
    column = 0
    first_left = -1
    earliest = np.iinfo(np.int64).max
    for task_id in range(queue_head[b], arrived_now):
        deadline = queue_deadline[b, task_id]
        if deadline == 0:
            continue  # it left the queue (expired)
        if entered < take:
            while slot_task[b, column] != NO_TASK:
                column += 1
            slot_task[b, column] = task_id
            slot_deadline[b, column] = deadline
            slot[b, column, :] = task[b, task_id, :]
            slot_curve[b, column] = task_curve[b, task_id]
            entered += 1
            continue
        if first_left < 0:
            first_left = task_id
        earliest = min(earliest, deadline)
    queue_length[b] -= take
    free_slots[b] -= take
    if queue_length[b] == 0:
        queue_head[b] = arrived_now
        queue_min_deadline[b] = 0
    else:
        queue_head[b] = first_left
        queue_min_deadline[b] = earliest
    return new


@njit(cache=True)
def episode_end(
    b: int,
    epoch: np.ndarray,
    next_arrival: np.ndarray,
    n_tasks: np.ndarray,
    queue_length: np.ndarray,
    free_slots: np.ndarray,
    n_slots: int,
    horizon: int,
    max_epochs: int,
) -> tuple[bool, bool]:
    """``(terminated, truncated)`` of cluster ``b``: after the arrival horizon, terminated once
    every task arrived and left; truncated at ``max_epochs`` otherwise."""
    if epoch[b] < horizon:
        return False, False
    terminated = next_arrival[b] == n_tasks[b] and queue_length[b] == 0 and free_slots[b] == n_slots
    return terminated, not terminated and epoch[b] >= max_epochs


@njit(cache=True)
def episode_ends(
    epoch: np.ndarray,
    next_arrival: np.ndarray,
    n_tasks: np.ndarray,
    queue_length: np.ndarray,
    free_slots: np.ndarray,
    n_slots: int,
    horizon: int,
    max_epochs: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(terminated, truncated)`` of every cluster (:func:`episode_end`)."""
    terminated = np.zeros(len(epoch), dtype=np.bool_)
    truncated = np.zeros(len(epoch), dtype=np.bool_)
    for b in range(len(epoch)):
        terminated[b], truncated[b] = episode_end(
            b, epoch, next_arrival, n_tasks, queue_length, free_slots, n_slots, horizon, max_epochs
        )
    return terminated, truncated


@njit(cache=True)
def start_episode(
    b: int,
    n_slots: int,
    horizon: int,
    max_epochs: int,
    empty_row: np.ndarray,
    curve_row: np.ndarray,
    row_fields: tuple[np.ndarray, ...],
    n_tasks: np.ndarray,
    epoch: np.ndarray,
    node_task: np.ndarray,
    previous_slot: np.ndarray,
    last_trained: np.ndarray,
    statistics: tuple[np.ndarray, ...],
    terminated: np.ndarray,
    truncated: np.ndarray,
    *queue_and_slots: np.ndarray,
) -> int:
    """Start cluster ``b``'s episode; the number of tasks arriving at epoch 0.

    The episode's tasks are given by their curve rows and ``row_fields``, the arguments of
    :func:`write_task_rows` after ``rows``; ``statistics`` are the episode's per-cluster counters
    (zeroed); ``queue_and_slots`` as for :func:`admit_cluster`. Writes the task rows, counts the
    arrivals by epoch, empties the queue, the slots and the nodes, admits epoch 0's arrivals
    and sets the episode's end flags.
    """
    (
        arrived_by,
        next_arrival,
        queue_head,
        queue_length,
        queue_min_deadline,
        queue_deadline,
        free_slots,
        slot,
        slot_task,
        slot_curve,
        slot_deadline,
        task,
        task_curve,
    ) = queue_and_slots
    n = len(curve_row)
    n_tasks[b] = n
    # (rows from n on are never read: they may keep an earlier episode's tasks)
    rows = task[b, :n]
    write_task_rows(rows, *row_fields)
    task_curve[b, :n] = curve_row
    arrived = 0
    for task_id in range(n):
        queue_deadline[b, task_id] = int(rows[task_id, DEADLINE])
    for now in range(horizon + 1):  # arrivals are sorted
        while arrived < n and rows[arrived, ARRIVAL] <= now:
            arrived += 1
        arrived_by[b, now] = arrived
    epoch[b] = next_arrival[b] = queue_head[b] = queue_length[b] = queue_min_deadline[b] = 0
    slot_task[b] = NO_TASK
    slot_curve[b] = 0
    slot_deadline[b] = 0
    slot[b] = empty_row
    free_slots[b] = n_slots
    node_task[b] = NO_TASK
    previous_slot[b] = n_slots
    last_trained[b] = False
    for counter in literal_unroll(statistics):
        counter[b] = 0
    new = admit_cluster(b, False, epoch, horizon, *queue_and_slots)
    terminated[b], truncated[b] = episode_end(
        b, epoch, next_arrival, n_tasks, queue_length, free_slots, n_slots, horizon, max_epochs
    )
    return new


@njit(cache=True)
def _leave(
    b: int,
    column: int,
    status: int,
    now: int,
    slot: np.ndarray,
    slot_task: np.ndarray,
    slot_curve: np.ndarray,
    slot_deadline: np.ndarray,
    task: np.ndarray,
    empty_row: np.ndarray,
    free_slots: np.ndarray,
) -> None:
    """Write the row in ``column`` of cluster ``b`` back to the task table and empty the slot."""
    task_id = slot_task[b, column]
    task[b, task_id, :] = slot[b, column, :]
    task[b, task_id, PHI] = 0.0
    task[b, task_id, END_EPOCH] = now
    task[b, task_id, FINAL_STATUS] = status
    slot_task[b, column] = NO_TASK
    slot_curve[b, column] = 0
    slot_deadline[b, column] = 0
    slot[b, column, :] = empty_row
    free_slots[b] += 1


@njit(cache=True)
def idle_nodes_a_feasible_task_could_use(
    idle: int,
    node_limit: int,
    now: int,
    nodes: np.ndarray,
    slot: np.ndarray,
    slot_task: np.ndarray,
    slot_deadline: np.ndarray,
) -> int:
    """Of ``idle`` nodes this epoch, how many a still-feasible slotted task could have used:
    ``min(idle, sum of node_limit - nodes[column])`` over the slots whose task held fewer than
    ``node_limit`` nodes and could still reach its target by its deadline with ``node_limit``
    nodes from now on (switch costs aside; privileged: it reads the task's ``target_step``)."""
    if idle == 0:
        return 0
    room = 0
    for column in range(len(slot_deadline)):
        if slot_task[column] == NO_TASK or nodes[column] >= node_limit:
            continue
        epochs_left = slot_deadline[column] - now
        reach = epochs_left * progress_gain_of_task(
            slot[column, SPEED], float(node_limit), slot[column, ALPHA]
        )
        if slot[column, TARGET_STEP] - slot[column, PROGRESS] <= reach:
            room += node_limit - nodes[column]
    return min(idle, room)


@njit(cache=True)
def advance_clusters(
    slot_choice: np.ndarray,
    switch_cost: float,
    node_limit: int,
    horizon: int,
    max_epochs: int,
    curves: np.ndarray,
    empty_row: np.ndarray,
    n_tasks: np.ndarray,
    node_task: np.ndarray,
    epoch: np.ndarray,
    completed: np.ndarray,
    expired: np.ndarray,
    switches: np.ndarray,
    busy_node_epochs: np.ndarray,
    wasted_node_epochs: np.ndarray,
    useful_node_epochs: np.ndarray,
    idle_while_feasible: np.ndarray,
    slack_at_completion: np.ndarray,
    points: np.ndarray,
    # the state :func:`admit_cluster` updates, in its order
    arrived_by: np.ndarray,
    next_arrival: np.ndarray,
    queue_head: np.ndarray,
    queue_length: np.ndarray,
    queue_min_deadline: np.ndarray,
    queue_deadline: np.ndarray,
    free_slots: np.ndarray,
    slot: np.ndarray,
    slot_task: np.ndarray,
    slot_curve: np.ndarray,
    slot_deadline: np.ndarray,
    task: np.ndarray,
    task_curve: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """Run one epoch in every cluster (see :meth:`mara_env.sim.core.ClusterBatch.advance`).

    Updates the state arrays in place, and ``points`` (``(3, B, n_slots)``: progress, work and
    loss of the trained slots before departures) unless it is empty. Returns fresh arrays:
    ``node_task``, ``previous_slot`` (``(B, n_nodes)``), ``trained``, ``last_trained``,
    ``completed_slots``, ``expired_slots``, ``departed_tasks`` (``(B, n_slots)``), the per-cluster
    counts ``n_completed``, ``n_expired`` (slots and queue), ``arrived``, ``n_switched``, and the
    ``(cluster, task)`` ids of the tasks that expired in the queue.
    """
    n_clusters, n_nodes = slot_choice.shape
    n_slots = slot_task.shape[1] - 1
    record = points.shape[2] > 0
    switched_share = 1.0 - switch_cost
    new_node_task = np.empty_like(node_task)
    previous_slot = np.empty_like(node_task)
    trained = np.zeros((n_clusters, n_slots), dtype=np.bool_)
    last_trained = np.zeros((n_clusters, n_slots), dtype=np.bool_)
    completed_slots = np.zeros((n_clusters, n_slots), dtype=np.bool_)
    expired_slots = np.zeros((n_clusters, n_slots), dtype=np.bool_)
    departed_tasks = slot_task[:, :n_slots].copy()
    n_completed = np.zeros(n_clusters, dtype=np.int64)
    n_expired = np.zeros(n_clusters, dtype=np.int64)
    arrived = np.zeros(n_clusters, dtype=np.int64)
    n_switched = np.zeros(n_clusters, dtype=np.int64)
    queued = 0
    for b in range(n_clusters):
        queued += queue_length[b]
    queue_expired_cluster = np.empty(queued, dtype=np.int64)
    queue_expired_task = np.empty(queued, dtype=np.int64)
    n_queue_expired = 0
    chosen = np.empty(n_nodes, dtype=np.int64)
    effective = np.empty(n_slots + 1)
    nodes = np.empty(n_slots + 1, dtype=np.int64)
    for b in range(n_clusters):
        # 1. each node's slot (an empty one is idle) and effective share of the epoch
        effective[:] = 0.0
        nodes[:] = 0
        busy = 0
        for i in range(n_nodes):
            column = min(slot_choice[b, i], n_slots)
            task_id = slot_task[b, column]
            if task_id == NO_TASK:
                column = n_slots
                share = 0.0
            else:
                busy += 1
                if task_id != node_task[b, i]:
                    n_switched[b] += 1
                    share = switched_share
                else:
                    share = 1.0
            chosen[i] = column
            new_node_task[b, i] = task_id
            effective[column] += share
            nodes[column] += 1
        nodes[n_slots] = 0
        idle_while_feasible[b] += idle_nodes_a_feasible_task_could_use(
            n_nodes - busy, node_limit, epoch[b], nodes, slot[b], slot_task[b], slot_deadline[b]
        )
        # 2. progress, work and loss of the trained tasks
        for column in range(n_slots + 1):
            if nodes[column] == 0:
                continue  # no progress (``progress_gain`` of a share of 0 is 0) and no work
            slot[b, column, PREVIOUS_WORK] = slot[b, column, WORK]
            slot[b, column, PREVIOUS_LOSS] = slot[b, column, LOSS]
            slot[b, column, LOG_PREVIOUS_LOSS] = slot[b, column, LOG_LOSS]
            slot[b, column, PROGRESS] += progress_gain_of_task(
                slot[b, column, SPEED], effective[column], slot[b, column, ALPHA]
            )
            slot[b, column, WORK] += nodes[column]
            loss = loss_after(curves, slot_curve[b, column], slot[b, column, PROGRESS])
            log_loss = log_of_loss_of_task(loss)
            slot[b, column, LOSS] = loss
            slot[b, column, LOG_LOSS] = log_loss
            fraction = (slot[b, column, LOG_INITIAL_LOSS] - log_loss) / slot[b, column, LOG_GAP]
            if fraction < 0.0:
                fraction = 0.0
            if fraction > 1.0:
                fraction = 1.0
            slot[b, column, PHI] = fraction
            if record:
                points[0, b, column] = slot[b, column, PROGRESS]
                points[1, b, column] = slot[b, column, WORK]
                points[2, b, column] = loss
        epoch[b] += 1
        now = epoch[b]
        switches[b] += n_switched[b]
        busy_node_epochs[b] += busy
        # 3. departures from the slots (an empty slot's deadline is 0, before every epoch)
        for column in range(n_slots):
            trained[b, column] = nodes[column] > 0
            if trained[b, column] and slot[b, column, LOSS] <= slot[b, column, TARGET]:
                completed_slots[b, column] = True
                n_completed[b] += 1
                useful_node_epochs[b] += slot[b, column, WORK]
                slack_at_completion[b] += slot[b, column, DEADLINE] - now
                status = COMPLETED
            elif slot_deadline[b, column] == now:
                expired_slots[b, column] = True
                n_expired[b] += 1
                wasted_node_epochs[b] += slot[b, column, WORK]
                status = EXPIRED
            else:
                last_trained[b, column] = trained[b, column]
                continue
            _leave(
                b,
                column,
                status,
                now,
                slot,
                slot_task,
                slot_curve,
                slot_deadline,
                task,
                empty_row,
                free_slots,
            )
        completed[b] += n_completed[b]
        # ... and from the queue (its earliest deadline is 0 when it is empty, never an epoch)
        touched = False
        if queue_min_deadline[b] == now:
            for task_id in range(queue_head[b], next_arrival[b]):
                if queue_deadline[b, task_id] == now:
                    queue_deadline[b, task_id] = 0
                    task[b, task_id, FINAL_STATUS] = EXPIRED
                    task[b, task_id, END_EPOCH] = now
                    queue_length[b] -= 1
                    n_expired[b] += 1
                    queue_expired_cluster[n_queue_expired] = b
                    queue_expired_task[n_queue_expired] = task_id
                    n_queue_expired += 1
                    touched = True
        expired[b] += n_expired[b]
        # 4. arrivals join the queue; free slots take tasks from its front
        arrived[b] = admit_cluster(
            b,
            touched,
            epoch,
            horizon,
            arrived_by,
            next_arrival,
            queue_head,
            queue_length,
            queue_min_deadline,
            queue_deadline,
            free_slots,
            slot,
            slot_task,
            slot_curve,
            slot_deadline,
            task,
            task_curve,
        )
        # a node keeps its slot for the next epoch if that slot still holds its task
        for i in range(n_nodes):
            task_id = new_node_task[b, i]
            kept = task_id != NO_TASK and slot_task[b, chosen[i]] == task_id
            previous_slot[b, i] = chosen[i] if kept else n_slots
    terminated, truncated = episode_ends(
        epoch, next_arrival, n_tasks, queue_length, free_slots, n_slots, horizon, max_epochs
    )
    return (
        new_node_task,
        previous_slot,
        trained,
        last_trained,
        completed_slots,
        expired_slots,
        departed_tasks,
        n_completed,
        n_expired,
        arrived,
        n_switched,
        queue_expired_cluster[:n_queue_expired],
        queue_expired_task[:n_queue_expired],
        terminated,
        truncated,
    )
