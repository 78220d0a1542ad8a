"""Cluster-v2 for Gymnasium: one central scheduler assigns every node each epoch.

| | |
|---|---|
| Make | ``gym.make("mara_env/Cluster-v2", config="training", **overrides)`` |
| Action space | ``MultiDiscrete([n_slots + 1] * n_nodes)``: node ``i`` trains slot ``a[i]`` (``n_slots`` = idle) |
| Observation space | ``Box(float32, (8 + 20 * n_slots + 2 * n_nodes,))``: the centralised state vector |
| Action masks | ``env.action_masks()``: flat bool ``(n_nodes * (n_slots + 1),)``, for sb3-contrib ``MaskablePPO`` |
| Reward | tasks completed in the epoch (+ optional progress shaping) |

World, reward, episode end and infos are those of the AEC form (:mod:`mara_env.aec_env`); the
observation is its ``state()`` vector (:mod:`mara_env.observation`). Choices are applied in node
order like the Parallel form: masked ones become idle (``info["illegal_actions"]``), and nodes
over ``max_nodes_per_task`` idle (``info["conflicts"]``). ``strict=True`` raises on masked
actions.

Example:
    >>> import gymnasium as gym
    >>> import mara_env
    >>> env = gym.make("mara_env/Cluster-v2", config="tiny")
    >>> observation, info = env.reset(seed=1)
    >>> observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
    >>> env.unwrapped.action_masks().shape
    (8,)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mara_env.config import ClusterConfig
from mara_env.env_base import ClusterEnvBase, build_spaces
from mara_env.epoch import joint_epoch
from mara_env.errors import EnvStateError
from mara_env.render import RENDER_MODES
from mara_env.traces import TraceSource


class ClusterGymEnv(ClusterEnvBase, gym.Env[np.ndarray, np.ndarray]):
    """The cluster with a single central scheduler; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSource | None = None,
        render_mode: str | None = None,
        strict: bool = False,
        **overrides: Any,
    ) -> None:
        self._build_cluster(config, trace_source, render_mode, strict, overrides)
        _, _, self.observation_space = build_spaces(self.config)
        self.action_space = spaces.MultiDiscrete(
            np.full(self.config.n_nodes, self.config.n_actions, dtype=np.int64)
        )
        self._idle = np.full(self.config.n_nodes, self.config.idle_action, dtype=np.int64)

    def _observation(self) -> np.ndarray:
        return self.builder.state_vector(self._idle)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.simulator.reset(self.np_random)
        self.builder.refresh()
        if self.render_mode == "human":
            self.render()
        return self._observation(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.simulator.has_episode:
            raise EnvStateError("step() called before reset(); call env.reset(seed=...) first.")
        if self.simulator.terminated or self.simulator.truncated:
            raise EnvStateError("step() called after the episode ended; call env.reset() first.")
        reward, info = joint_epoch(self.simulator, self.builder, action, strict=self.strict)
        if self.render_mode == "human":
            self.render()
        return (
            self._observation(),
            float(reward),
            self.simulator.terminated,
            self.simulator.truncated,
            info,
        )

    def action_masks(self) -> np.ndarray:
        """Per-node masks, concatenated: the format sb3-contrib's ``MaskablePPO`` expects."""
        if not self.simulator.has_episode:
            raise EnvStateError("action_masks() called before reset().")
        mask = self.builder.mask().astype(bool)
        return np.tile(mask, self.config.n_nodes)
