"""The cluster for Gymnasium: one central scheduler assigns every node each epoch.

| | |
|---|---|
| Make | ``gym.make("mara_env/Cluster-v3", config="training", **overrides)`` |
| Action space | ``MultiDiscrete([n_slots + 1] * n_nodes)``: node ``i`` trains slot ``a[i]`` (``n_slots`` = idle) |
| Observation space | ``Box(float32, (8 + 20 * n_slots + 2 * n_nodes,))``: the centralised state vector |
| Action masks | ``info["action_mask"]`` and ``env.unwrapped.node_masks()``: int8 ``(n_nodes, n_slots + 1)``; ``sample_mask()``: their rows as a tuple, for ``MultiDiscrete.sample(mask=...)``; ``action_masks()``: flat bool ``(n_nodes * (n_slots + 1),)``, for sb3-contrib ``MaskablePPO`` |
| Reward | tasks completed in the epoch (+ optional progress shaping) |

World, reward, episode end and infos are those of the AEC form (:mod:`mara_env.envs.aec_env`); the
observation is its ``state()`` vector (:mod:`mara_env.sim.observation`). Choices are applied in node
order like the Parallel form: masked ones become idle (``info["illegal_actions"]``), and nodes
over ``max_nodes_per_task`` idle (``info["conflicts"]``). ``strict=True`` raises on masked
actions.

Infos: the schema of :mod:`mara_env.envs.infos` (the same keys at ``reset`` and every step, NumPy
scalars) plus ``action_mask``, the masks for the observation returned with it.

Arguments: those of the AEC form less ``max_cycles`` (pass ``max_episode_steps`` to
``gym.make``) and ``observation_key`` (the observation is one vector). An unknown keyword
raises :class:`mara_env.errors.UnexpectedArgumentError`, a ``TypeError`` with Python's message,
so TorchRL's ``GymEnv`` drops the ``frameskip`` it passes.

Example:
    >>> import gymnasium as gym
    >>> import mara_env
    >>> env = gym.make("mara_env/Cluster-v3", config="tiny")
    >>> observation, info = env.reset(seed=1)
    >>> observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
    >>> env.unwrapped.action_masks().shape, info["action_mask"].shape
    ((8,), (2, 4))
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.env_base import ClusterEnvBase, build_spaces
from mara_env.envs.epoch import joint_epoch
from mara_env.envs.infos import ACTION_MASK
from mara_env.envs.render import RENDER_MODES
from mara_env.errors import EnvStateError
from mara_env.worlds.config import ClusterConfig


class ClusterGymEnv(ClusterEnvBase, gym.Env[np.ndarray, np.ndarray]):
    """The cluster with a single central scheduler; see the module docstring."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSourceLike | None = None,
        render_mode: str | None = None,
        strict: bool = False,
        info_task_ids: bool = False,
        **overrides: Any,
    ) -> None:
        self._build_cluster(
            config, trace_source, render_mode, strict, overrides, info_task_ids=info_task_ids
        )
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
        return self._observation(), self._with_mask(self._reset_info())

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.simulator.has_episode:
            raise EnvStateError("step() called before reset(); call env.reset(seed=...) first.")
        if any(self._episode_end()):
            raise EnvStateError("step() called after the episode ended; call env.reset() first.")
        reward, info = joint_epoch(
            self.simulator, self.builder, action, strict=self.strict, task_ids=self.info_task_ids
        )
        if self.render_mode == "human":
            self.render()
        terminated, truncated = self._episode_end()
        return self._observation(), float(reward), terminated, truncated, self._with_mask(info)

    def _with_mask(self, info: dict[str, Any]) -> dict[str, Any]:
        info[ACTION_MASK] = self.node_masks()
        return info

    def node_masks(self) -> np.ndarray:
        """``(n_nodes, n_slots + 1)`` int8: each node's action mask (a fresh array; also
        ``info["action_mask"]``). Every node may choose any occupied slot, or idle.

        Raises:
            EnvStateError: Before the first ``reset``.
        """
        if not self.simulator.has_episode:
            raise EnvStateError("node_masks() called before reset().")
        return np.tile(self.builder.mask(), (self.config.n_nodes, 1))

    def action_masks(self) -> np.ndarray:
        """Per-node masks, concatenated, bool: the format sb3-contrib's ``MaskablePPO`` expects.

        Raises:
            EnvStateError: Before the first ``reset``.
        """
        if not self.simulator.has_episode:
            raise EnvStateError("action_masks() called before reset().")
        return self.node_masks().reshape(-1).astype(bool)

    def sample_mask(self) -> tuple[np.ndarray, ...]:
        """Per-node int8 masks as a tuple: the format ``MultiDiscrete.sample(mask=...)`` takes.

        Example:
            >>> import gymnasium as gym
            >>> import mara_env
            >>> env = gym.make("mara_env/Cluster-v3", config="tiny")
            >>> _ = env.reset(seed=0)
            >>> action = env.action_space.sample(mask=env.unwrapped.sample_mask())

        Raises:
            EnvStateError: Before the first ``reset``.
        """
        if not self.simulator.has_episode:
            raise EnvStateError("sample_mask() called before reset().")
        return tuple(self.node_masks())
