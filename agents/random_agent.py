"""The random scheduler: the floor every other scheduler should clear."""

from __future__ import annotations

import numpy as np

from mara_env import ClusterConfig
from mara_env.agents.base import Observation


class RandomScheduler:
    """Each node picks uniformly among the slots its mask allows; idle only if there are none.

    Nodes choose independently every epoch, so the random scheduler also pays many switch costs.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=1)
        >>> scheduler = RandomScheduler()
        >>> scheduler.reset(env.config, seed=1)
        >>> observation = env.observe("node_0")
        >>> action = scheduler.act(observation, node=0)
        >>> bool(observation["action_mask"][action])
        True
    """

    name = "random"

    def __init__(self) -> None:
        self.rng = np.random.default_rng()

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Start an episode; the choices are drawn from a generator seeded with ``seed``."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, node: int) -> int:
        """A uniformly random allowed slot, or idle if no slot is allowed."""
        mask = np.asarray(observation["action_mask"])
        legal = np.flatnonzero(mask[:-1])
        if len(legal) == 0:
            return len(mask) - 1  # idle is the last action
        return int(legal[self.rng.integers(len(legal))])
