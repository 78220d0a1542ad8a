"""One episode as the offline optimum sees it: every task, present and future, with its hidden curve.

The optimum, like the clairvoyant reference, breaks the information boundary on purpose; unlike
it, it also knows the tasks that have not arrived yet. :func:`instance_of` reads all of that from
a reset simulator. What the optimum then needs of each task is where its progress may land for it
to complete: the curve reports ``curve[floor(progress)]`` after each epoch it is trained
(:func:`mara_env.sim.rules.loss_after`), so the progress values whose report is at or below the
target form a union of intervals ``[first, end)`` of whole curve steps (:func:`landing_intervals`).
A task whose intervals all lie beyond the progress its deadline allows even at the most nodes is
*hopeless*: it never completes, but it still takes a slot until it expires.

Example:
    >>> import numpy as np
    >>> curve = np.array([1.0, 0.8, 0.5, 0.7, 0.4, 0.3])
    >>> landing_intervals(curve, target=0.55, reach=10.0).tolist()
    [[2.0, 3.0], [4.0, 11.0]]
    >>> landing_intervals(curve, target=0.55, reach=1.5).tolist()  # nothing within reach
    []
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mara_env import ClusterConfig
from mara_env.sim.rules import progress_gain
from mara_env.sim.simulator import ClusterSimulator


def landing_intervals(curve: np.ndarray, target: float, reach: float) -> np.ndarray:
    """``(m, 2)`` intervals ``[first, end)`` of progress at which ``curve`` reports a loss at or
    below ``target``, among progress values up to ``reach`` (the last point repeats past the
    curve's end, so an interval that reaches it ends at ``floor(reach) + 1``)."""
    last_step = math.floor(reach)
    steps = np.minimum(np.arange(last_step + 1), len(curve) - 1)
    lands = np.asarray(curve)[steps] <= target
    edges = np.diff(np.concatenate(([0], lands.astype(np.int8), [0])))
    first = np.flatnonzero(edges == 1)
    end = np.flatnonzero(edges == -1)
    return np.stack((first, end), axis=1).astype(np.float64).reshape(-1, 2)


@dataclass(frozen=True)
class Task:
    """One task of an episode, as the optimum plans it.

    Attributes:
        arrival: First epoch the task can be trained.
        last_epoch: Last epoch it can be trained and still complete (its deadline minus one,
            or the episode's last epoch if that comes first).
        speed: Curve steps one node advances it per epoch.
        alpha: Its parallel-scaling exponent.
        reach: The most progress it can make by ``last_epoch`` (every epoch at the most nodes).
        landing: ``(m, 2)`` progress intervals ``[first, end)`` at which it completes
            (:func:`landing_intervals`), within the progress its window allows; empty if it is
            hopeless.
    """

    arrival: int
    last_epoch: int
    speed: float
    alpha: float
    reach: float
    landing: np.ndarray

    @property
    def epochs(self) -> range:
        """The epochs it can be trained in."""
        return range(self.arrival, self.last_epoch + 1)

    @property
    def hopeful(self) -> bool:
        """Whether a landing interval lies within its reach (a task that is not hopeful never
        completes; one that is may still not, even alone: its gains may step over every interval)."""
        return len(self.landing) > 0

    def gain(self, nodes: int, held: int, switch_cost: float) -> float:
        """Curve steps it advances in an epoch with ``nodes`` nodes, ``held`` of which trained it
        in the epoch before (the others pay ``switch_cost``), as the simulator's rule gives."""
        share = held + (nodes - held) * (1.0 - switch_cost)
        return float(progress_gain(self.speed, share, self.alpha))


@dataclass(frozen=True)
class Instance:
    """An episode's tasks in arrival order (the simulator's task ids) and its cluster.

    Attributes:
        config: The cluster configuration.
        tasks: Every task of the episode, indexed by task id.
    """

    config: ClusterConfig
    tasks: tuple[Task, ...]

    @property
    def n_epochs(self) -> int:
        """Epochs up to the last one any task can be trained in."""
        return max((task.last_epoch + 1 for task in self.tasks), default=0)

    @property
    def hopeful_tasks(self) -> list[int]:
        """Ids of the hopeful tasks (:attr:`Task.hopeful`): the only ones any schedule completes."""
        return [index for index, task in enumerate(self.tasks) if task.hopeful]


def instance_of(simulator: ClusterSimulator) -> Instance:
    """**Privileged**: the episode a just-reset ``simulator`` will play, every task included.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=0)
        >>> instance = instance_of(env.simulator)
        >>> len(instance.tasks) == len(env.simulator.state.tasks)
        True
    """
    config = simulator.config
    table = simulator.state.tasks
    curves = simulator.workload.curves
    most_nodes = config.task_node_limit
    tasks = []
    for index in range(len(table)):
        arrival = int(table.arrival[index])
        last_epoch = min(int(table.deadline[index]), config.max_epochs) - 1
        speed, alpha = float(table.speed[index]), float(table.alpha[index])
        reach = float(progress_gain(speed, float(most_nodes), alpha)) * (last_epoch + 1 - arrival)
        curve = curves[int(table.curve_row[index])]
        landing = landing_intervals(curve, float(table.target[index]), reach)
        tasks.append(Task(arrival, last_epoch, speed, alpha, reach, landing))
    return Instance(config, tuple(tasks))
