"""A certified upper bound on an episode's completions that is cheap at any size.

The exact program (:mod:`mara_env.agents.optimum.model`) is solved in seconds to minutes for a
few nodes and tens of tasks; the leaderboard's episodes are larger. This bound relaxes it to the
one fact that binds when the cluster is busy, **node-epochs**:

* a task completes only once its progress reaches its first landing interval, and no node-epoch
  adds more than the task's ``speed`` to its progress (``k`` nodes add ``speed * share**alpha``
  with ``share <= k`` and ``alpha <= 1``), so it needs at least ``ceil(first / speed)`` of them;
* all of them fall between its arrival and its last epoch, so for any span of epochs
  ``[start, end]``, the tasks whose windows lie inside it share at most ``n_nodes`` node-epochs
  per epoch of the span.

The most tasks that fit every span bound what any schedule completes, and so does the linear
relaxation of that choice (each task taken in part), which HiGHS solves in seconds for a
leaderboard episode; its value, rounded down, is the bound. Slots, switch costs, the speed-up's
diminishing returns and the curves' noise are all relaxed, so the bound can only be loose, never
wrong. It is at most the number of *hopeful* tasks (those with a landing interval within reach).

Example:
    >>> import mara_env
    >>> from mara_env.agents.optimum.instance import instance_of
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=1)
    >>> instance = instance_of(env.simulator)
    >>> completion_bound(instance) <= len(instance.hopeful_tasks)
    True
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from mara_env.agents.optimum.instance import Instance, instance_of
from mara_env.sim.simulator import ClusterSimulator


def least_node_epochs(instance: Instance) -> dict[int, int]:
    """Node-epochs each hopeful task needs at the least: ``ceil(first landing / speed)``."""
    return {
        i: max(
            1, math.ceil(float(instance.tasks[i].landing[0, 0]) / instance.tasks[i].speed - 1e-9)
        )
        for i in instance.hopeful_tasks
    }


def completion_bound(instance: Instance) -> int:
    """The most tasks of ``instance`` whose least node-epochs fit the cluster's capacity in every
    span of epochs (see the module docstring): no schedule completes more."""
    need = least_node_epochs(instance)
    tasks = list(need)
    if not tasks:
        return 0
    arrival = np.array([instance.tasks[i].arrival for i in tasks])
    last = np.array([instance.tasks[i].last_epoch for i in tasks])
    cost = np.array([need[i] for i in tasks], dtype=np.float64)
    rows: list[int] = []
    cols: list[int] = []
    values: list[float] = []
    capacity: list[int] = []
    for start in np.unique(arrival).tolist():
        for end in np.unique(last[last >= start]).tolist():
            inside = np.flatnonzero((arrival >= start) & (last <= end))
            room = instance.config.n_nodes * (end - start + 1)
            if cost[inside].sum() <= room:
                continue  # every task of the span fits: the row cannot bind
            rows += [len(capacity)] * len(inside)
            cols += inside.tolist()
            values += cost[inside].tolist()
            capacity.append(room)
    if not capacity:
        return len(tasks)
    matrix = sparse.csr_array((values, (rows, cols)), shape=(len(capacity), len(tasks)))
    result = milp(
        -np.ones(len(tasks)),
        integrality=np.zeros(len(tasks)),
        bounds=Bounds(0, 1),
        constraints=LinearConstraint(matrix, -np.inf, np.array(capacity, dtype=np.float64)),
    )
    if result.x is None:
        raise RuntimeError(f"completion_bound: HiGHS returned no solution ({result.message}).")
    return math.floor(-float(result.fun) + 1e-6)


def episode_bound(simulator: ClusterSimulator) -> int:
    """**Privileged**: :func:`completion_bound` of the episode a just-reset ``simulator`` will play."""
    return completion_bound(instance_of(simulator))
