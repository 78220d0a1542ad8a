"""The batched vector env as a Stable-Baselines3 ``VecEnv`` (SB3 refuses Gymnasium ``VectorEnv``s).

:class:`SB3ClusterVecEnv` runs a :class:`mara_env.envs.vector_env.ClusterVectorEnv` in its
``SAME_STEP`` autoreset mode, which is what SB3 expects: when a sub-env's episode ends, ``step``
returns the next episode's first observation and puts the last one in
``infos[i]["terminal_observation"]`` (with ``"TimeLimit.truncated"`` set on truncation).
sb3-contrib's ``MaskablePPO`` reads the masks through ``env_method("action_masks")``, one row per
sub-env.

Needs ``stable-baselines3`` (the ``mara-env[torch]`` extra).

Example:
    >>> from mara_env.envs.sb3_vec_env import SB3ClusterVecEnv
    >>> venv = SB3ClusterVecEnv(4, config="tiny", seed=0)
    >>> observations = venv.reset()
    >>> observations.shape == (4, *venv.observation_space.shape)
    True
    >>> len(venv.env_method("action_masks"))
    4
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mara_env.envs.vector_env import ClusterVectorEnv

try:
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "mara_env.envs.sb3_vec_env needs stable-baselines3: pip install 'mara-env[torch]'."
    ) from error


class SB3ClusterVecEnv(VecEnv):
    """``num_envs`` clusters of the batched core as an SB3 ``VecEnv``.

    Args:
        num_envs: Number of sub-envs.
        seed: Seed of the first ``reset`` (sub-env ``i`` gets ``seed + i``); ``seed()`` sets
            the next one, as for SB3's own vector envs.
        **kwargs: Passed to :class:`~mara_env.envs.vector_env.ClusterVectorEnv` (``config``,
            overrides, ``strict``, ``trace_source``).

    Attributes:
        vector_env: The Gymnasium vector env it drives.
    """

    def __init__(self, num_envs: int, *, seed: int | None = None, **kwargs: Any) -> None:
        self.vector_env = ClusterVectorEnv(num_envs, autoreset_mode="SameStep", **kwargs)
        super().__init__(
            self.vector_env.num_envs,
            self.vector_env.single_observation_space,
            self.vector_env.single_action_space,
        )
        if seed is not None:
            self.seed(seed)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seeds = self._seeds
        seed: list[int | None] | None = None if all(s is None for s in seeds) else list(seeds)
        observations, _ = self.vector_env.reset(seed=seed)
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(
            self.num_envs, self.vector_env.config.n_nodes
        )

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async().")
        observations, rewards, terminated, truncated, infos = self.vector_env.step(self._actions)
        self._actions = None
        dones = terminated | truncated
        per_env: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for index in np.flatnonzero(dones).tolist():
            per_env[index]["terminal_observation"] = infos["final_obs"][index]
            per_env[index]["TimeLimit.truncated"] = bool(truncated[index] and not terminated[index])
            per_env[index]["episode_metrics"] = self._final_metrics(index, infos)
        return observations, rewards.astype(np.float32), dones, per_env

    def _final_metrics(self, index: int, infos: dict[str, Any]) -> dict[str, float]:
        return {"completion_rate": float(infos["final_info"]["completion_rate"][index])}

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_nodes * (n_slots + 1))`` bool masks of every sub-env."""
        return self.vector_env.action_masks()

    def close(self) -> None:
        self.vector_env.close()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """``action_masks`` gives each sub-env's mask function; other names read the vector env
        (the same value for every sub-env)."""
        chosen = self._indices(indices)
        if attr_name == "action_masks":
            return [self._mask_of(index) for index in chosen]
        value = getattr(self.vector_env, attr_name)
        return [value for _ in chosen]

    def _mask_of(self, index: int) -> Any:
        return lambda: self.vector_env.action_masks()[index]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(
            f"SB3ClusterVecEnv: sub-envs share one batched core; cannot set {attr_name!r} per env."
        )

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``action_masks`` returns each sub-env's mask; ``episode_metrics`` each one's metrics."""
        chosen = self._indices(indices)
        if method_name == "action_masks":
            masks = self.vector_env.action_masks()
            return [masks[index] for index in chosen]
        if method_name == "episode_metrics":
            return [self.vector_env.episode_metrics(index) for index in chosen]
        raise AttributeError(f"SB3ClusterVecEnv: sub-envs have no method {method_name!r}.")

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]
