"""Cluster in Gymnasium's vector form: ``num_envs`` clusters stepped together as arrays.

| | |
|---|---|
| Make | ``gym.make_vec("mara_env/Cluster-v2", num_envs=N, vectorization_mode="vector_entry_point", **config)`` |
| Action space | ``MultiDiscrete`` of shape ``(N, n_nodes)``: node ``i`` of sub-env ``b`` trains slot ``a[b, i]`` |
| Observation space | ``Box(float32, (N, 8 + 20 * n_slots + 2 * n_nodes))``: each sub-env's centralised state |
| Action masks | ``envs.action_masks()``: bool ``(N, n_nodes * (n_slots + 1))``, as the single env's |
| Reward | ``(N,)`` float64: tasks completed in the epoch (+ optional progress shaping) |
| Autoreset | ``metadata["autoreset_mode"]``: ``NEXT_STEP`` (default) or ``SAME_STEP`` (``autoreset_mode=...``) |

Sub-env ``b`` is the single Gymnasium env (:mod:`mara_env.gym_env`) played on one cluster of a
:class:`mara_env.core.ClusterBatch`: the same world, observation, mask, reward, episode end and
treatment of masked actions (idle and counted, or ``ActionError`` with ``strict=True``). After
``reset(seed=s)`` sub-env ``b`` plays, step for step, the episodes of the single env reset with
``seed=s + b`` (as Gymnasium's ``SyncVectorEnv`` seeds them), each sub-env drawing from its own
generator.

Autoreset, declared in ``metadata["autoreset_mode"]``; a sub-env is reset from its own
generator, like ``reset()`` without a seed:

* ``NEXT_STEP`` (Gymnasium's default): the step after a sub-env's episode ends ignores its
  action and resets it, returning the new episode's first observation with reward 0 and both
  flags False.
* ``SAME_STEP`` (what Stable-Baselines3 expects, see :mod:`mara_env.sb3_vec_env`): the step
  that ends an episode returns its reward and flags with the next episode's first observation;
  the last observation is in ``infos["final_obs"]`` (masked by ``infos["_final_obs"]``).

Infos: one dict of ``(N,)`` arrays, each with its ``_key`` mask (Gymnasium's convention):
``epoch``, ``completed``, ``expired`` and ``arrived`` (counts), ``switches``,
``illegal_actions`` and ``conflicts`` for the sub-envs that stepped; ``completion_rate`` for
the sub-envs whose episode ended in this step. These are the single env's info keys and values,
less its lists of task ids (``completed_tasks``, ``expired_tasks``).

Example:
    >>> import gymnasium as gym
    >>> import numpy as np
    >>> import mara_env
    >>> envs = gym.make_vec("mara_env/Cluster-v2", num_envs=4,
    ...                     vectorization_mode="vector_entry_point", config="tiny")
    >>> observations, infos = envs.reset(seed=0)
    >>> observations.shape == envs.observation_space.shape
    True
    >>> masks = envs.action_masks().reshape(4, 2, 4)  # (envs, nodes, slots + idle)
    >>> actions = np.argmax(masks, axis=2)  # the first legal action of every node
    >>> observations, rewards, terminations, truncations, infos = envs.step(actions)
    >>> rewards.shape, envs.metadata["autoreset_mode"].value
    ((4,), 'NextStep')
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mara_env.actions import resolve_batch_actions
from mara_env.config import ClusterConfig, get_config
from mara_env.core import ClusterBatch
from mara_env.env_base import build_spaces
from mara_env.epoch import team_reward
from mara_env.errors import ConfigError, EnvStateError
from mara_env.observation import occupied_masks, state_vectors
from mara_env.traces import TraceSource

#: The per-step counts the infos carry (see the module docstring).
STEP_INFO_KEYS = ("epoch", "completed", "expired", "arrived", "switches")


def advance_batch(
    core: ClusterBatch,
    choices: np.ndarray,
    resetting: np.ndarray,
    counters: dict[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Advance every cluster of ``core`` one epoch with ``choices``; the step's outcome.

    Returns ``(rewards, terminations, truncations, infos)`` as the batched forms report them
    before any reset: rewards are completions plus the config's shaping, and ``infos`` holds
    the epoch's :data:`STEP_INFO_KEYS`, the per-cluster ``counters`` (e.g. illegal actions) and,
    for clusters whose episode just ended, ``completion_rate``; each with its ``_key`` mask of
    the clusters that stepped (not ``resetting``).
    """
    epoch = core.advance(choices)
    rewards = team_reward(epoch.completed, epoch.shaping, core.config)
    terminated, truncated = core.terminated.copy(), core.truncated.copy()
    stepped = ~resetting
    infos: dict[str, Any] = {}
    for key in STEP_INFO_KEYS:
        infos[key], infos[f"_{key}"] = getattr(epoch, key), stepped
    for key, values in counters.items():
        infos[key], infos[f"_{key}"] = values, stepped
    ended = (terminated | truncated) & stepped
    if ended.any():
        arrived = np.maximum(core.next_arrival, 1)
        infos["completion_rate"] = np.where(ended, core.completed / arrived, 0.0)
        infos["_completion_rate"] = ended
    return rewards, terminated, truncated, infos


def sub_env_seeds(seed: int | list[int | None] | None, num_envs: int) -> list[int | None]:
    """The seed of each sub-env for ``reset(seed=seed)``: ``seed + i``, or the given list.

    Raises:
        ConfigError: If a list has the wrong length.
    """
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, list, tuple)):
        raise ConfigError(f"reset(seed=...): expected an int or a list of seeds, got {seed!r}.")
    if isinstance(seed, (int, np.integer)):
        return [int(seed) + index for index in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ConfigError(f"reset(seed=...): expected {num_envs} seeds, got {len(seeds)}.")
    return seeds


class ClusterVectorEnv(VectorEnv):
    """``num_envs`` clusters as one Gymnasium ``VectorEnv``; see the module docstring.

    Args:
        num_envs: Number of sub-envs (clusters).
        config: A preset name or a ``ClusterConfig``; keyword overrides as for the single env.
        trace_source: Where curves come from.
        strict: Raise on masked actions instead of idling.
        render_mode: Only ``None`` (render single envs to look at an episode).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default) or ``AutoresetMode.SAME_STEP``
            (or their string values).

    Attributes:
        core: The batched simulation core.
        config: The resolved configuration.
        np_randoms: Each sub-env's generator (the one its episodes are drawn from).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        num_envs: int = 1,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSource | None = None,
        strict: bool = False,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **overrides: Any,
    ) -> None:
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        mode = next((m for m in modes if autoreset_mode in (m, m.value)), None)
        if mode is None:
            raise ConfigError(
                f"ClusterVectorEnv: autoreset_mode must be one of {[m.value for m in modes]}, "
                f"got {autoreset_mode!r}."
            )
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        if render_mode is not None:
            raise ConfigError(
                f"ClusterVectorEnv has no render modes (got {render_mode!r}); render a single "
                "env (gym.make) to look at an episode."
            )
        self.config = get_config(config, **overrides)
        self.core = ClusterBatch(self.config, num_envs, trace_source)
        self.num_envs = self.core.batch_size
        self.strict = strict
        self.render_mode = None
        _, _, state_space = build_spaces(self.config)
        self.single_observation_space = state_space
        self.single_action_space = spaces.MultiDiscrete(
            np.full(self.config.n_nodes, self.config.n_actions, dtype=np.int64)
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.np_randoms = [seeding.np_random()[0] for _ in range(self.num_envs)]
        self._everyone = np.arange(self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._idle = np.full(
            (self.num_envs, self.config.n_nodes), self.config.idle_action, dtype=np.int64
        )
        self._masks = np.zeros((self.num_envs, self.config.n_actions), dtype=np.int8)
        self._started = False

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env; sub-env ``i`` with ``seed + i`` (or ``seed[i]``)."""
        for index, sub_seed in enumerate(sub_env_seeds(seed, self.num_envs)):
            if sub_seed is not None:
                self.np_randoms[index] = seeding.np_random(sub_seed)[0]
        self.core.reset(self._everyone, self.np_randoms)
        self._autoreset[:] = False
        self._started = True
        return self._observations(), {}

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Run one epoch in every sub-env (and reset those whose episode ended last step)."""
        if not self._started:
            raise EnvStateError("step() called before reset(); call envs.reset(seed=...) first.")
        core, config = self.core, self.config
        resetting = self._autoreset
        choices, illegal, conflicts = resolve_batch_actions(
            actions, self._masks, config, strict=self.strict
        )
        if resetting.any():
            choices[resetting] = config.idle_action
            illegal[resetting] = 0
            conflicts[resetting] = 0
        core.illegal_actions += illegal
        core.conflicts += conflicts
        rewards, terminated, truncated, infos = advance_batch(
            core, choices, resetting, {"illegal_actions": illegal, "conflicts": conflicts}
        )
        stepped = ~resetting
        if resetting.any():
            indices = np.flatnonzero(resetting)
            core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
            rewards = np.where(resetting, 0.0, rewards)
            terminated &= stepped
            truncated &= stepped
        done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            if done.any():
                infos["final_obs"] = self._observations()
                infos["_final_obs"] = done
                indices = np.flatnonzero(done)
                core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
        else:
            self._autoreset = done
        return self._observations(), rewards.astype(np.float64), terminated, truncated, infos

    def _observations(self) -> np.ndarray:
        self._masks = occupied_masks(self.core)
        return state_vectors(self.core, None, self._idle)

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_nodes * (n_slots + 1))`` bool: each sub-env's per-node masks,
        concatenated (the single env's ``action_masks()``, batched)."""
        if not self._started:
            raise EnvStateError("action_masks() called before reset().")
        return np.tile(self._masks.astype(bool), (1, self.config.n_nodes))

    def episode_metrics(self, index: int) -> dict[str, float]:
        """Metrics of sub-env ``index``'s current episode (see the single env's)."""
        return self.core.episode_metrics(index)


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> ClusterVectorEnv:
    """The vector entry point registered with Gymnasium (arguments as :class:`ClusterVectorEnv`)."""
    return ClusterVectorEnv(num_envs, **kwargs)
