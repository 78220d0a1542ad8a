"""The offline optimum as a scheduler: it solves the episode's program when bound, then plays it.

**It breaks the information boundary further than any other agent:** when bound to a just-reset
environment it reads every task of the episode, those still to arrive included, with their hidden
curves (:func:`mara_env.agents.optimum.instance.instance_of`), and plays the best schedule it
proves or finds, node by node:

1. the clairvoyant reference plays the episode on a copy of the environment: its schedule is
   the floor;
2. the program of :mod:`mara_env.agents.optimum.model` searches only the schedules that complete
   more (``at_least``), which makes the search far smaller;
3. the program's schedule is played if there is one; else the clairvoyant's, which is then the
   proven optimum (the program is infeasible) or the best known (the time ran out).

So the optimum never completes fewer tasks than the clairvoyant reference, even when cut short.
Playing the schedule in the environment is what checks the program: the completions the
environment counts must equal :attr:`OfflineOptimum.solution`'s.

Example:
    >>> from mara_env.agents import evaluate
    >>> optimum = OfflineOptimum(time_limit=60.0)
    >>> rows = evaluate(optimum, "tiny", seeds=[3])
    >>> rows[0]["completed"] == optimum.solution.completed
    True
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from mara_env import node_turns, raw_env
from mara_env.agents.base import EpochScheduler
from mara_env.agents.clairvoyant import Clairvoyant
from mara_env.agents.evaluation import start_episode
from mara_env.agents.optimum.instance import instance_of
from mara_env.agents.optimum.model import IDLE, Solution, solve
from mara_env.envs.env_base import ClusterEnvBase
from mara_env.sim.observation import SlotView


class OfflineOptimum(EpochScheduler):
    """Plays the schedule that completes the most tasks of the episode (privileged: it knows
    every task, present and future, and their curves).

    Args:
        time_limit: Seconds the solver may spend on an episode (> 0); past it, the best
            schedule known (the program's, or else the clairvoyant reference's) is played and
            :attr:`solution` says it is not proven optimal.

    Attributes:
        solution: The schedule played in the current episode, its completions, bound and
            status (``None`` before :meth:`bind`).
        from_clairvoyant: Whether that schedule is the clairvoyant reference's (the program
            found none better).
    """

    name = "offline_optimum"
    privileged = True

    def __init__(self, time_limit: float = 600.0) -> None:
        super().__init__()
        if not 0.0 < time_limit < np.inf:
            raise ValueError(
                f"OfflineOptimum: time_limit must be a finite number of seconds > 0, got {time_limit!r}."
            )
        self.time_limit = float(time_limit)
        self.solution: Solution | None = None
        self.from_clairvoyant = False
        self._env: ClusterEnvBase | None = None

    def bind(self, env: ClusterEnvBase) -> None:
        """Solve the episode ``env`` was just reset to (call after ``env.reset`` and :meth:`reset`)."""
        if env.config != self.config:
            raise ValueError(
                "OfflineOptimum.bind: the environment's config differs from the one the scheduler "
                "was reset with; reset the scheduler with env.config first."
            )
        self._env = env
        floor, floor_completed = clairvoyant_schedule(env)
        found = solve(instance_of(env.simulator), self.time_limit, at_least=floor_completed + 1)
        self.from_clairvoyant = found.completed < 0
        if not self.from_clairvoyant:
            self.solution = found
            return
        proven = found.status == "infeasible"
        self.solution = dataclasses.replace(
            found,
            schedule=floor,
            completed=floor_completed,
            bound=floor_completed if proven else max(found.bound, floor_completed),
            status="optimal" if proven else "time_limit",
        )

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Each node's task in this epoch of the schedule, as the slot that holds it."""
        config = self.config
        idle = np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        if self._env is None or self.solution is None:
            raise RuntimeError(
                "OfflineOptimum needs the environment: it solves the whole episode. Call "
                "bind(env) after env.reset() and reset(); mara_env.agents.evaluate does this for you."
            )
        state = self._env.simulator.state
        schedule = self.solution.schedule
        if state.epoch >= len(schedule):
            return idle
        where = state.task_slot
        for node, task in enumerate(schedule[state.epoch].tolist()):
            if task != IDLE and where[task] >= 0:
                idle[node] = where[task]
        return idle


def clairvoyant_schedule(env: ClusterEnvBase) -> tuple[np.ndarray, int]:
    """**Privileged**: the clairvoyant reference's ``(epochs, n_nodes)`` schedule of task ids
    (:data:`~mara_env.agents.optimum.model.IDLE`) on the episode ``env`` was just reset to, and
    its completions, played on a copy of ``env`` (which is left as it was)."""
    if not isinstance(env, raw_env):
        raise TypeError(
            f"OfflineOptimum plays the clairvoyant reference on a copy of the AEC environment "
            f"(mara_env.raw_env), got {type(env).__name__}; evaluate it with "
            "mara_env.agents.evaluate, which uses that form."
        )
    twin = copy.deepcopy(env)
    reference = Clairvoyant()
    start_episode(reference, twin, 0)  # the clairvoyant reference draws nothing at random
    for _, node in node_turns(twin):
        twin.step(reference.act(twin.observe(twin.agent_selection), node))
    state = twin.simulator.state
    schedule = np.array(state.assignments, dtype=np.int64).reshape(-1, env.config.n_nodes)
    return np.where(schedule < 0, IDLE, schedule), int(state.completed)
