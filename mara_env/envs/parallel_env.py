"""The cluster in PettingZoo's Parallel form: every node chooses at once.

Same world, spaces, rewards, infos and arguments as the AEC form (:mod:`mara_env.envs.aec_env`;
``max_cycles``, ``observation_key`` and ``info_task_ids`` included), but all nodes choose
simultaneously, so no node sees the others' choices (``nodes_this_epoch`` is always 0). Use the AEC
form for autoregressive policies.

Conflict resolution is deterministic: choices are applied in node order; a masked choice
becomes idle (counted in ``illegal_actions``); with ``max_nodes_per_task`` set, nodes beyond the
limit on one task become idle (counted in ``conflicts``).

Example:
    >>> import mara_env
    >>> env = mara_env.parallel_env(config="tiny")
    >>> observations, infos = env.reset(seed=0)
    >>> actions = {agent: env.action_space(agent).sample(observations[agent]["action_mask"])
    ...            for agent in env.agents}
    >>> observations, rewards, terminations, truncations, infos = env.step(actions)
    >>> sorted(rewards) == sorted(env.agents)
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.aec_env import ENV_ID
from mara_env.envs.env_base import (
    OBSERVATION_KEY,
    ClusterEnvBase,
    build_spaces,
    check_observation_key,
)
from mara_env.envs.epoch import joint_epoch
from mara_env.envs.infos import copy_info
from mara_env.envs.render import RENDER_MODES
from mara_env.errors import ActionError, EnvStateError
from mara_env.worlds.config import ClusterConfig


class ClusterParallelEnv(ClusterEnvBase, ParallelEnv):
    """The cluster as a PettingZoo Parallel environment; see the module docstring."""

    metadata = {  # noqa: RUF012 - PettingZoo reads a class attribute
        "name": ENV_ID,
        "render_modes": list(RENDER_MODES),
        "render_fps": 4,
    }

    def __init__(
        self,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSourceLike | None = None,
        render_mode: str | None = None,
        strict: bool = False,
        max_cycles: int | None = None,
        observation_key: str = OBSERVATION_KEY,
        info_task_ids: bool = False,
        **overrides: Any,
    ) -> None:
        self._build_cluster(
            config,
            trace_source,
            render_mode,
            strict,
            overrides,
            max_cycles=max_cycles,
            info_task_ids=info_task_ids,
        )
        self.observation_key = check_observation_key(observation_key, "ClusterParallelEnv")
        self.possible_agents = [f"node_{i}" for i in range(self.config.n_nodes)]
        self.agents: list[str] = []
        observation_space, action_space, self.state_space = build_spaces(
            self.config, self.observation_key
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)
        self._observation_space, self._action_space = observation_space, action_space
        self.np_random, self.np_random_seed = seeding.np_random()

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        return {
            agent: {
                self.observation_key: self.builder.observe(node),
                "action_mask": self.builder.mask(),
            }
            for node, agent in enumerate(self.possible_agents)
            if agent in self.agents
        }

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        self.simulator.reset(self.np_random)
        self.builder.refresh()
        self.agents = self.possible_agents[:]
        if self.render_mode == "human":
            self.render()
        info = self._reset_info()
        return self._observations(), {agent: copy_info(info) for agent in self.agents}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        if not self.simulator.has_episode:
            raise EnvStateError("step() called before reset(); call env.reset(seed=...) first.")
        if not self.agents:
            raise EnvStateError("step() called after the episode ended; call env.reset() first.")
        if not isinstance(actions, dict) or set(actions) != set(self.agents):
            raise ActionError(
                f"{self.config.env_id} parallel step(): expected a dict with one action for each of "
                f"{self.agents}, got keys {sorted(actions) if isinstance(actions, dict) else actions!r}."
            )
        joint = [actions[agent] for agent in self.possible_agents]
        reward, info = joint_epoch(
            self.simulator, self.builder, joint, strict=self.strict, task_ids=self.info_task_ids
        )
        terminated, truncated = self._episode_end()
        observations = self._observations()
        agents = self.agents
        rewards = dict.fromkeys(agents, reward)
        terminations = dict.fromkeys(agents, terminated)
        truncations = dict.fromkeys(agents, truncated)
        infos = {agent: copy_info(info) for agent in agents}
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        if not self.simulator.has_episode:
            raise EnvStateError("state() called before reset(); call env.reset(seed=...) first.")
        idle = np.full(self.config.n_nodes, self.config.idle_action, dtype=np.int64)
        return self.builder.state_vector(idle)


def parallel_env(config: str | ClusterConfig = "training", **kwargs: Any) -> ClusterParallelEnv:
    """The Parallel environment; takes the same arguments as :class:`ClusterParallelEnv`."""
    return ClusterParallelEnv(config, **kwargs)
