"""A task table packed into the rows the simulation core keeps per task: :func:`task_rows`.

One row per task, its fields in :data:`mara_env.sim.task_fields.TASK_FIELDS` order, as a task
stands at arrival (no progress, its initial loss); the core writes a task's changing fields back
into its row when the task leaves its slot.

Example:
    >>> import numpy as np
    >>> from mara_env import get_config
    >>> from mara_env.curves.sources import default_trace_source
    >>> from mara_env.sim.workload import build_workload, sample_tasks
    >>> workload = build_workload(get_config("tiny"), default_trace_source())
    >>> table = sample_tasks(workload, np.random.default_rng(0))
    >>> rows = task_rows(table, workload.lengths[table.curve_row])
    >>> rows.shape == (len(TASK_FIELDS), len(table))
    True
"""

from __future__ import annotations

import numpy as np

from mara_env.sim.dynamics import write_task_rows
from mara_env.sim.task_fields import EMPTY_ROW, TASK_FIELDS
from mara_env.sim.workload import TaskTable


def empty_rows(shape: tuple[int, int]) -> np.ndarray:
    """``(*shape, len(TASK_FIELDS))`` copies of :data:`EMPTY_ROW`."""
    return np.broadcast_to(EMPTY_ROW, (*shape, len(TASK_FIELDS))).copy()


def task_rows(table: TaskTable, lengths: np.ndarray) -> np.ndarray:
    """``(len(TASK_FIELDS), len(table))`` packed rows of a task table at arrival, fields first
    (transposed, the rows of a cluster in :attr:`ClusterBatch.task`).

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
    rows = np.empty((n, len(TASK_FIELDS)))
    fill_task_rows(rows, table, lengths)
    return rows.T


def fill_task_rows(rows: np.ndarray, table: TaskTable, lengths: np.ndarray) -> None:
    """Write the rows of :func:`task_rows` into ``rows`` (``(len(table), len(TASK_FIELDS))``,
    e.g. a cluster's first rows of :attr:`ClusterBatch.task`)."""
    write_task_rows(rows, *row_fields(table, lengths))


def row_fields(table: TaskTable, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arguments of :func:`mara_env.sim.dynamics.write_task_rows` after ``rows``."""
    return (
        table.family,
        table.speed,
        table.alpha,
        table.target,
        table.deadline,
        table.arrival,
        table.initial_loss,
        table.log_initial_loss,
        table.log_gap,
        lengths,
        table.demand,
    )
