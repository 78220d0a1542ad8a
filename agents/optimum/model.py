"""The offline optimum as a mixed-integer linear program, solved with HiGHS.

Time-indexed, over the epochs each task can be trained in. The variables:

* ``z[i, t, k, h]`` (binary, at most one per task and epoch): task ``i`` has ``k`` nodes in
  epoch ``t``, ``h`` of which trained it in ``t - 1`` (they *stay*, and pay no switch cost). This
  linearises the speed-up: the epoch's gain is
  ``sum z * speed * (h + (k - h)(1 - switch_cost))**alpha``, a constant per level, so progress
  ``P[i, t]`` (the gains summed up to ``t``) is linear;
* ``c[i, t]`` (binary): ``i`` completes in ``t``, which needs it trained in ``t`` and ``P[i, t]``
  in one of its landing intervals (:mod:`mara_env.agents.optimum.instance`), chosen by
  ``e[i, m]`` (binary) with big-M bounds; a completed task is trained no more.

**Nodes.** Nodes are alike, so the program counts them per task and leaves which node goes where
to :func:`node_schedule`; its node rows say when counts and stays can be realised by nodes
(:func:`_node_rows`), so no two schedules that only swap nodes are searched twice.

**Slots.** Only tasks in the cluster's ``n_slots`` visible slots can be trained. Slots are filled
from a first-come queue and kept until a task leaves, so (for the task ids in arrival order) the
slotted tasks are always the ``n_slots`` earliest of those present: task ``i`` can be trained in
``t`` only while fewer than ``n_slots`` earlier tasks are present, which is linear in the
``c`` of the earlier tasks (hopeless ones are present until they expire).

Completing in the first landing epoch, as the simulator does, is never worse than what the
program declares (a task that leaves earlier frees its nodes and slot earlier), so the program's
optimum is the world's. Its reported count is checked by replaying the schedule in the
simulator (:class:`mara_env.agents.optimum.agent.OfflineOptimum`): landing exactly on an interval's
edge is decided by the simulator's own floating-point sums, so the program keeps
:data:`EDGE_MARGIN` away from the open end.

Example:
    >>> import mara_env
    >>> from mara_env.agents.optimum.instance import instance_of
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=3)
    >>> solution = solve(instance_of(env.simulator), time_limit=60.0)
    >>> solution.status, solution.completed == solution.bound
    ('optimal', True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from mara_env.agents.optimum.instance import Instance

#: Progress the program keeps below an interval's open end, so that float sums cannot cross it.
EDGE_MARGIN = 1e-6
#: A schedule entry for an idle node.
IDLE = -1
#: ``scipy.optimize.milp``'s status for a program with no solution.
INFEASIBLE = 2


@dataclass(frozen=True)
class Solution:
    """A solved (or time-limited) program.

    Attributes:
        schedule: ``(n_epochs, n_nodes)`` task id each node trains in each epoch (:data:`IDLE`).
        completed: Tasks the schedule completes, by the program's count (``-1``: no schedule).
        bound: The solver's proven upper bound on completions (equal to ``completed`` when
            ``status`` is ``"optimal"``).
        status: ``"optimal"``, ``"time_limit"`` (a schedule, not proven optimal),
            ``"no_schedule"`` (the time ran out before any schedule was found) or
            ``"infeasible"`` (proven: no schedule completes ``at_least`` tasks; ``bound`` is
            one less).
        seconds: Wall time of the solve.
        variables: Size of the program.
        constraints: Rows of the program.
    """

    schedule: np.ndarray
    completed: int
    bound: int
    status: str
    seconds: float
    variables: int
    constraints: int


class _Program:
    """Columns and rows of a sparse program, added one by one."""

    def __init__(self) -> None:
        self.integer: list[int] = []
        self.upper: list[float] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.values: list[float] = []
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []

    def column(self, *, integer: bool = True, upper: float = 1.0) -> int:
        self.integer.append(int(integer))
        self.upper.append(upper)
        return len(self.integer) - 1

    def row(self, terms: dict[int, float], lower: float, upper: float) -> None:
        index = len(self.row_lower)
        for col, value in terms.items():
            self.rows.append(index)
            self.cols.append(col)
            self.values.append(value)
        self.row_lower.append(lower)
        self.row_upper.append(upper)


#: A task's levels in an epoch: ``(column, nodes k, stayers h)`` of each ``z[i, t, k, h]``.
Levels = list[tuple[int, int, int]]


@dataclass
class _Columns:
    """The program's columns, by task and epoch (see the module docstring)."""

    levels: dict[tuple[int, int], Levels]
    done: dict[tuple[int, int], int]
    progress: dict[tuple[int, int], int]
    completed_by: dict[tuple[int, int], int]
    interval: dict[tuple[int, int], int]


def _columns(instance: Instance, program: _Program) -> _Columns:
    most = instance.config.task_node_limit
    columns = _Columns({}, {}, {}, {}, {})
    for i in instance.hopeful_tasks:
        task = instance.tasks[i]
        for t in task.epochs:
            columns.levels[i, t] = [
                (program.column(), k, h)
                for k in range(1, most + 1)
                for h in range(k + 1 if t > task.arrival else 1)
            ]
            columns.done[i, t] = program.column()
            columns.progress[i, t] = program.column(integer=False, upper=task.reach)
            columns.completed_by[i, t] = program.column(integer=False)
        for m in range(len(task.landing)):
            columns.interval[i, m] = program.column()
    return columns


def solve(instance: Instance, time_limit: float = 600.0, *, at_least: int = 0) -> Solution:
    """The schedule that completes the most tasks of ``instance``, found by HiGHS within
    ``time_limit`` seconds (see the module docstring for the program).

    Args:
        instance: The episode.
        time_limit: Seconds HiGHS may spend (> 0).
        at_least: Only schedules that complete at least this many tasks are searched, e.g. one
            more than a known schedule completes: the search is then far smaller, and
            ``"infeasible"`` proves that none does.

    Raises:
        ValueError: If ``time_limit`` is not a positive number.
    """
    if not time_limit > 0:
        raise ValueError(
            f"solve: time_limit must be a positive number of seconds, got {time_limit!r}."
        )
    config = instance.config
    hopeful = len(instance.hopeful_tasks)
    idle = np.full((instance.n_epochs, config.n_nodes), IDLE, dtype=np.int64)
    if at_least > hopeful:  # more than the tasks any schedule can complete
        return Solution(idle, -1, hopeful, "infeasible", 0.0, 0, 0)
    program = _Program()
    columns = _columns(instance, program)
    _node_rows(instance, program, columns.levels)
    for i in instance.hopeful_tasks:
        _completion_rows(instance, program, i, columns)
    _slot_rows(instance, program, columns)
    if at_least > 0:
        program.row({col: 1.0 for col in columns.done.values()}, float(at_least), np.inf)
    objective = np.zeros(len(program.integer))
    objective[list(columns.done.values())] = -1.0
    matrix = sparse.csr_array(
        (program.values, (program.rows, program.cols)),
        shape=(len(program.row_lower), len(program.integer)),
    )
    start = time.perf_counter()
    result = milp(
        objective,
        integrality=np.array(program.integer),
        bounds=Bounds(np.zeros(len(program.upper)), np.array(program.upper)),
        constraints=LinearConstraint(matrix, program.row_lower, program.row_upper),
        options={"time_limit": float(time_limit), "disp": False},
    )
    seconds = time.perf_counter() - start
    dual = getattr(result, "mip_dual_bound", None)
    bound = hopeful if dual is None or not np.isfinite(dual) else int(np.floor(-dual + 1e-6))
    if result.status == INFEASIBLE:
        return Solution(idle, -1, at_least - 1, "infeasible", seconds, *matrix.shape[::-1])
    if result.x is None:
        return Solution(idle, -1, bound, "no_schedule", seconds, *matrix.shape[::-1])
    counts = np.zeros((instance.n_epochs, len(instance.tasks)), dtype=np.int64)
    stays = np.zeros_like(counts)
    for (i, t), chosen in columns.levels.items():
        for col, k, h in chosen:
            if result.x[col] > 0.5:
                counts[t, i], stays[t, i] = k, h
    completed = round(-float(result.fun))
    status = "optimal" if result.status == 0 else "time_limit"
    return Solution(
        node_schedule(counts, stays, config.n_nodes),
        completed,
        completed if status == "optimal" else max(bound, completed),
        status,
        seconds,
        *matrix.shape[::-1],
    )


def _node_rows(
    instance: Instance, program: _Program, levels: dict[tuple[int, int], Levels]
) -> None:
    """At most one level per task and epoch; nodes and stays that some assignment realises.

    With ``k[i]`` nodes on task ``i`` in ``t - 1`` and ``t``, of which ``h[i]`` stay, the nodes
    that move (every node but the stayers, ``N - sum h``) must be matched to the places that need
    one (idle included) without sending a node back to its own task: a loopless transport, which
    exists exactly when ``k[i, t-1] - h[i] + k[i, t] - h[i] <= N - sum h`` for every task. Only
    nodes that trained ``i`` in ``t - 1`` can stay on it: ``h[i] <= k[i, t-1]``.
    """
    n_nodes = instance.config.n_nodes
    by_epoch: dict[int, list[int]] = {}
    for (i, t), chosen in levels.items():
        program.row({col: 1.0 for col, _, _ in chosen}, -np.inf, 1.0)
        by_epoch.setdefault(t, []).append(i)
    for t, present in by_epoch.items():
        program.row(
            {col: float(k) for i in present for col, k, _ in levels[i, t]}, -np.inf, n_nodes
        )
        stayers = program.column(integer=False, upper=float(n_nodes))
        terms = {col: float(h) for i in present for col, _, h in levels[i, t] if h}
        program.row({**terms, stayers: -1.0}, 0.0, 0.0)
        for i in set(present) | set(by_epoch.get(t - 1, [])):
            moving = {stayers: 1.0}
            for col, k, h in levels.get((i, t), []):
                moving[col] = float(k - 2 * h)
            for col, k, _ in levels.get((i, t - 1), []):
                moving[col] = float(k)
            program.row(moving, -np.inf, n_nodes)
            if (i, t) in levels and (i, t - 1) in levels:
                held = {col: -float(k) for col, k, _ in levels[i, t - 1]}
                held.update({col: float(h) for col, _, h in levels[i, t] if h})
                program.row(held, -np.inf, 0.0)


def _completion_rows(instance: Instance, program: _Program, i: int, columns: _Columns) -> None:
    """Task ``i``'s progress and completion: it completes at most once, in an epoch it is
    trained in, with its progress in the landing interval it picks, and is trained no more
    after it; a task that never completes is never trained (nodes spent on it help no one, so
    an optimum exists that does not, and the rule prunes every schedule that differs only there)."""
    task = instance.tasks[i]
    switch_cost = instance.config.switch_cost
    big = task.reach + 1.0
    first_start = float(task.landing[0, 0])
    intervals = range(len(task.landing))
    final = columns.completed_by[i, task.last_epoch]
    program.row({**{columns.interval[i, m]: 1.0 for m in intervals}, final: -1.0}, 0.0, 0.0)
    for t in task.epochs:
        chosen = columns.levels[i, t]
        done, progress, by = columns.done[i, t], columns.progress[i, t], columns.completed_by[i, t]
        before = (
            {}
            if t == task.arrival
            else {"progress": columns.progress[i, t - 1], "by": columns.completed_by[i, t - 1]}
        )
        step = {progress: 1.0, **{col: -task.gain(k, h, switch_cost) for col, k, h in chosen}}
        count = {by: 1.0, done: -1.0}
        if before:
            step[before["progress"]] = -1.0
            count[before["by"]] = -1.0
        program.row(step, 0.0, 0.0)
        program.row(count, 0.0, 0.0)
        trained = {col: 1.0 for col, _, _ in chosen}
        program.row({done: 1.0, **{col: -1.0 for col in trained}}, -np.inf, 0.0)
        if before:
            program.row({**trained, before["by"]: 1.0}, -np.inf, 1.0)
        program.row({**trained, final: -1.0}, -np.inf, 0.0)
        # progress never falls: once completed, it is at least the first interval's start (the
        # big-M rows below say so too, but this one the relaxation keeps)
        program.row({progress: 1.0, by: -first_start}, 0.0, np.inf)
        lower = {progress: 1.0, done: -big}
        upper = {progress: 1.0, done: big}
        for m, (first, end) in enumerate(task.landing):
            lower[columns.interval[i, m]] = -float(first)
            upper[columns.interval[i, m]] = -(float(end) - EDGE_MARGIN)
        program.row(lower, -big, np.inf)
        program.row(upper, -np.inf, big)


def _slot_rows(instance: Instance, program: _Program, columns: _Columns) -> None:
    """Task ``i`` is trained in ``t`` only while fewer than ``n_slots`` earlier tasks are present."""
    slots = instance.config.n_slots
    tasks = instance.tasks
    for (i, t), chosen in columns.levels.items():
        earlier = [j for j in range(i) if tasks[j].arrival <= t <= tasks[j].last_epoch]
        spare = len(earlier) - (slots - 1)
        if spare <= 0:
            continue
        # present(j, t) = 1 - completed_by(j, t - 1); sum present <= slots - 1 + spare (1 - trained)
        terms: dict[int, float] = {col: float(spare) for col, _, _ in chosen}
        for j in earlier:
            col = columns.completed_by.get((j, t - 1))
            if col is not None:
                terms[col] = -1.0
        program.row(terms, -np.inf, 0.0)


def node_schedule(counts: np.ndarray, stays: np.ndarray, n_nodes: int) -> np.ndarray:
    """``(epochs, n_nodes)`` task of each node (:data:`IDLE`) that gives task ``i`` ``counts[t, i]``
    nodes in epoch ``t``, ``stays[t, i]`` of which trained it in ``t - 1``.

    Each epoch, every task keeps ``stays`` of its nodes; the other nodes are matched to the
    places left (idle included) without going back to their own task, by an assignment that
    exists whenever the program's node rows hold.

    Example:
        >>> counts = np.array([[2, 0], [1, 1]])
        >>> stays = np.array([[0, 0], [1, 0]])
        >>> node_schedule(counts, stays, 2).tolist()
        [[0, 0], [0, 1]]
    """
    from scipy.optimize import linear_sum_assignment

    epochs, n_tasks = counts.shape
    schedule = np.full((epochs, n_nodes), IDLE, dtype=np.int64)
    previous = np.full(n_nodes, IDLE, dtype=np.int64)
    for t in range(epochs):
        now = np.full(n_nodes, IDLE, dtype=np.int64)
        movers = []
        kept = np.zeros(n_tasks, dtype=np.int64)
        for node in range(n_nodes):
            task = int(previous[node])
            if task != IDLE and kept[task] < stays[t, task]:
                now[node] = task
                kept[task] += 1
            else:
                movers.append(node)
        places = [i for i in range(n_tasks) for _ in range(counts[t, i] - stays[t, i])]
        places += [IDLE] * (len(movers) - len(places))
        cost = np.array(
            [
                [1.0 if place != IDLE and place == previous[node] else 0.0 for place in places]
                for node in movers
            ]
        ).reshape(len(movers), len(places))
        rows, cols = linear_sum_assignment(cost)
        if cost[rows, cols].sum() > 0:
            raise RuntimeError(
                f"node_schedule: epoch {t}'s node counts and stays have no assignment in which "
                "every moving node changes task; the program's node rows should rule this out."
            )
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            now[movers[row]] = places[col]
        schedule[t] = previous = now
    return schedule
