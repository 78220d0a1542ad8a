"""The rows a reach model is fitted and scored on: each visible task, now and then, with what
the observation says and whether it could still finish with ``k`` nodes.

An episode is played by a driver scheduler (earliest deadline first by default, so the tasks are
seen in the states a deadline-driven scheduler leaves them in). Every ``every`` epochs, at the
epoch's first node, each visible task gives one row per node count ``k = 1..K``: its
:func:`mara_env.agents.reach.reach_features` and, **privileged** (the label, never an input),
whether it reports a loss at or below its target by its deadline when ``k`` nodes train it from
now on, by the clairvoyant reference's exact stepping
(:meth:`mara_env.sim.simulator.ClusterSimulator.privileged_epochs_to_target`; nodes that trained
it last epoch pay no switch cost).

Example:
    >>> from mara_env import get_config
    >>> config = get_config("training", arrival_horizon=20)
    >>> rows = collect_reach_rows(config, [0], every=5, progress=False, workload="short")
    >>> rows.features.shape[1:] == (config.task_node_limit, len(FEATURES))
    True
    >>> len(rows.reached) == len(rows.features) == len(rows.elapsed), str(rows.episode[0])
    (True, 'short/0')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from mara_env import ClusterConfig, node_turns
from mara_env.agents.reach import FEATURES, reach_features
from mara_env.benchmarks.prediction.audit_episodes import COLUMNS
from mara_env.benchmarks.prediction.driven_episodes import driven_episode
from mara_env.sim.observation import SlotView, decode_observation
from mara_env.sim.simulator import ClusterSimulator

#: The scheduler that plays the episodes rows are taken from.
DRIVER = "edf"


@dataclass(frozen=True)
class ReachRows:
    """Judged tasks, one per visible task and sampled epoch.

    Attributes:
        features: ``(n, K, len(FEATURES))``: the model's inputs for each node count.
        reached: ``(n, K)`` bool: whether ``k`` nodes from now on reach the target in time.
        episode: ``(n,)``: the episode's name, ``"<workload>/<seed>"``.
        elapsed: ``(n,)``: the share of the task's deadline window elapsed.
        observed: ``(n, len(OBSERVED_COLUMNS))``: the observation's own slot columns and the
            family code (what the information ladder's observation probe reads).
    """

    features: np.ndarray
    reached: np.ndarray
    episode: np.ndarray
    elapsed: np.ndarray
    observed: np.ndarray

    def __len__(self) -> int:
        return len(self.episode)

    def subset(self, keep: np.ndarray) -> ReachRows:
        """The rows where ``keep`` (a bool mask or indices) selects."""
        return ReachRows(*(array[keep] for array in self._arrays()))

    def _arrays(self) -> tuple[np.ndarray, ...]:
        return (self.features, self.reached, self.episode, self.elapsed, self.observed)

    @classmethod
    def joined(cls, parts: Sequence[ReachRows], width: int) -> ReachRows:
        """The rows of ``parts`` one after the other (``width``: the node counts K)."""
        if not parts:
            return cls(
                np.zeros((0, width, len(FEATURES))),
                np.zeros((0, width), dtype=bool),
                np.zeros(0, dtype=str),
                np.zeros(0),
                np.zeros((0, len(OBSERVED_COLUMNS))),
            )
        arrays = zip(*(part._arrays() for part in parts), strict=True)
        return cls(*(np.concatenate(list(array)) for array in arrays))


#: The observation's slot columns the ladder's observation probe reads (the audits' own), and
#: the family code.
OBSERVED_COLUMNS = (*COLUMNS, "family")


def episode_rows(
    config: ClusterConfig, seed: int, every: int, driver: str = DRIVER, workload: str = ""
) -> ReachRows:
    """The rows of one episode of ``config`` played by ``driver`` (module docstring), named
    ``"<workload>/<seed>"``."""
    env, scheduler = driven_episode(config, driver, seed)
    parts: list[ReachRows] = []
    epoch = 0
    for agent, node in node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            if epoch % every == 0:
                view = decode_observation(np.asarray(observation["observation"]), config)
                parts.append(_judged(env.simulator, view, config, f"{workload}/{seed}"))
            epoch += 1
        env.step(scheduler.act(observation, node))
    return ReachRows.joined(parts, config.task_node_limit)


def _judged(
    simulator: ClusterSimulator, view: SlotView, config: ClusterConfig, episode: str
) -> ReachRows:
    slots = np.flatnonzero(view.occupied & (view.time_left >= 1))
    nodes = np.arange(1, config.task_node_limit + 1)
    reached = np.zeros((len(slots), len(nodes)), dtype=bool)
    for row, slot in enumerate(slots.tolist()):
        time_left = int(view.time_left[slot])
        held = int(view.nodes_last_epoch[slot])
        epochs = simulator.privileged_epochs_to_target(slot, nodes, held, time_left)
        reached[row] = epochs <= time_left
    observed = np.column_stack([getattr(view, name)[slots] for name in OBSERVED_COLUMNS])
    return ReachRows(
        reach_features(view, config)[slots],
        reached,
        np.full(len(slots), episode),
        1.0 - view.time_left_fraction[slots],
        observed.astype(np.float64),
    )


def collect_reach_rows(
    config: ClusterConfig,
    seeds: Sequence[int],
    *,
    every: int = 2,
    driver: str = DRIVER,
    progress: bool = True,
    workload: str = "episode",
) -> ReachRows:
    """The rows of one episode per seed of ``config``, judged every ``every`` epochs; episodes
    are named ``"<workload>/<seed>"``."""
    parts = [
        episode_rows(config, int(seed), every, driver, workload)
        for seed in tqdm(
            list(seeds), desc=workload, unit="episode", disable=not progress, leave=False
        )
    ]
    return ReachRows.joined(parts, config.task_node_limit)
