"""Cluster in Gymnasium's vector form: ``num_envs`` clusters stepped together as arrays.

| | |
|---|---|
| Make | ``gym.make_vec("mara_env/Cluster-v3", num_envs=N, vectorization_mode="vector_entry_point", **config)`` |
| Action space | ``MultiDiscrete`` of shape ``(N, n_nodes)``: node ``i`` of sub-env ``b`` trains slot ``a[b, i]`` |
| Observation space | ``Box(float32, (N, 8 + 20 * n_slots + 2 * n_nodes))``: each sub-env's centralised state |
| Action masks | ``infos["action_mask"]``: int8 ``(N, n_nodes, n_slots + 1)``; ``envs.action_masks()``: bool ``(N, n_nodes * (n_slots + 1))``; ``envs.sample_mask()``: per sub-env, for ``single_action_space.sample`` |
| Reward | ``(N,)`` float64: tasks completed in the epoch (+ optional progress shaping) |
| Autoreset | ``metadata["autoreset_mode"]``: ``NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED`` (``autoreset_mode=...``) |
| Sub-envs | ``call``, ``get_attr``, ``set_attr`` as Gymnasium's ``SyncVectorEnv`` (see :meth:`ClusterVectorEnv.call`) |

Sub-env ``b`` is the single Gymnasium env (:mod:`mara_env.envs.gym_env`) played on one cluster of a
:class:`mara_env.sim.core.ClusterBatch`: the same world, observation, mask, reward, episode end,
infos and treatment of masked actions (idle and counted, or ``ActionError`` with
``strict=True``). After ``reset(seed=s)`` sub-env ``b`` plays, step for step, the episodes of
the single env reset with ``seed=s + b`` (as Gymnasium's ``SyncVectorEnv`` seeds them), each
sub-env drawing from its own generator; ``SyncVectorEnv`` over single envs returns the same
observations, rewards, flags and infos in every autoreset mode.

Autoreset, declared in ``metadata["autoreset_mode"]``; a sub-env is reset from its own
generator, like ``reset()`` without a seed:

* ``NEXT_STEP`` (Gymnasium's default): the step after a sub-env's episode ends ignores its
  action and resets it, returning the new episode's first observation and reset info with
  reward 0 and both flags False.
* ``SAME_STEP`` (what Stable-Baselines3 expects, see :mod:`mara_env.envs.sb3_vec_env`): the step
  that ends an episode returns its reward and flags with the next episode's first observation
  and reset info; the last observation and info are in ``infos["final_obs"]`` and
  ``infos["final_info"]`` (masked by ``infos["_final_obs"]`` and ``infos["_final_info"]``;
  both keys only in steps where an episode ended, as ``SyncVectorEnv`` gives them).
* ``DISABLED`` (what TorchRL prefers): nothing is reset by ``step``; reset the finished
  sub-envs with ``reset(options={"reset_mask": mask})`` (a bool ``(N,)`` array; the other
  sub-envs keep their episodes). ``step`` refuses to run while a finished sub-env waits.

``reset(options={"reset_mask": mask})`` works in every mode; with ``seed=s`` sub-env ``b`` of
the mask is reset with ``s + b``.

Infos: the single env's (:mod:`mara_env.envs.infos`: the same keys at ``reset`` and every step)
batched as Gymnasium batches them: each key an ``(N, ...)`` array followed by its ``_key`` mask
of the sub-envs it is given for (every sub-env, except after a masked ``reset``), and
``action_mask`` for the observations returned. The opt-in task ids are not offered here.

Example:
    >>> import gymnasium as gym
    >>> import numpy as np
    >>> import mara_env
    >>> envs = gym.make_vec("mara_env/Cluster-v3", num_envs=4,
    ...                     vectorization_mode="vector_entry_point", config="tiny")
    >>> observations, infos = envs.reset(seed=0)
    >>> observations.shape == envs.observation_space.shape
    True
    >>> infos["action_mask"].shape  # (envs, nodes, slots + idle)
    (4, 2, 4)
    >>> actions = np.argmax(infos["action_mask"], axis=2)  # the first legal action of every node
    >>> observations, rewards, terminations, truncations, infos = envs.step(actions)
    >>> rewards.shape, envs.metadata["autoreset_mode"].value
    ((4,), 'NextStep')
    >>> envs.call("episode_metrics")[0]["epochs"]
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.actions import resolve_batch_actions
from mara_env.envs.env_base import build_spaces
from mara_env.envs.epoch import team_reward
from mara_env.envs.infos import (
    ACTION_MASK,
    batch_epoch_infos,
    batch_reset_infos,
    merge_rows,
    with_masks,
)
from mara_env.errors import ConfigError, EnvStateError
from mara_env.sim.core import ClusterBatch
from mara_env.sim.observation import occupied_masks, state_vectors
from mara_env.sim.simulator import ClusterSimulator
from mara_env.worlds.config import ClusterConfig, check_keywords, keyword_parameters
from mara_env.worlds.presets import get_config

#: The autoreset modes the vector env runs, Gymnasium's default first.
AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)
#: What ``call`` and ``get_attr`` give for each sub-env (see :meth:`ClusterVectorEnv.call`).
SUB_ENV_METHODS = ("action_masks", "episode_metrics", "node_masks", "sample_mask")
SUB_ENV_ATTRIBUTES = (
    "action_space",
    "config",
    "np_random",
    "observation_space",
    "render_mode",
    "simulator",
    "strict",
)
#: What ``set_attr`` may change.
SETTABLE_ATTRIBUTES = ("np_random", "strict")


def advance_batch(
    core: ClusterBatch, choices: np.ndarray, illegal: np.ndarray, conflicts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Advance every cluster of ``core`` one epoch with legal ``choices``; the step's outcome.

    Returns ``(rewards, terminations, truncations, infos)`` as the batched forms report them
    before any reset: rewards are completions plus the config's shaping; ``infos`` are
    :func:`mara_env.envs.infos.batch_epoch_infos` (``(B,)`` arrays, no masks) with the epoch's
    ``illegal`` and ``conflicts`` counts.
    """
    epoch = core.advance(choices)
    rewards = team_reward(epoch.completed, epoch.shaping, core.config)
    infos = batch_epoch_infos(core, epoch, illegal, conflicts)
    return rewards, core.terminated.copy(), core.truncated.copy(), infos


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


def reset_mask_of(options: dict[str, Any] | None, num_envs: int) -> np.ndarray | None:
    """The ``reset_mask`` of ``reset(options=...)``, checked as ``SyncVectorEnv`` checks it.

    Raises:
        ConfigError: If it is not a bool NumPy array of shape ``(num_envs,)`` with a True.
    """
    if not options or "reset_mask" not in options:
        return None
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (num_envs,):
        raise ConfigError(
            f"reset(options={{'reset_mask': ...}}): expected a bool NumPy array of shape "
            f"({num_envs},) (True: reset that sub-env), got {mask!r}."
        )
    if not mask.any():
        raise ConfigError(
            "reset(options={'reset_mask': ...}): the mask resets no sub-env; give at least one "
            "True, or do not reset."
        )
    return mask.copy()


class ClusterVectorEnv(VectorEnv):
    """``num_envs`` clusters as one Gymnasium ``VectorEnv``; see the module docstring.

    Args:
        num_envs: Number of sub-envs (clusters).
        config: A preset name or a ``ClusterConfig``; keyword overrides as for the single env.
        trace_source: Where curves come from.
        strict: Raise on masked actions instead of idling.
        render_mode: Only ``None`` (render single envs to look at an episode).
        autoreset_mode: ``AutoresetMode.NEXT_STEP`` (default), ``SAME_STEP`` or ``DISABLED``
            (or their string values).

    Raises:
        UnexpectedArgumentError: For a keyword that is neither an argument nor a config field.
        ConfigError: For an unknown autoreset mode, a render mode, or an invalid config.

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
        trace_source: TraceSourceLike | None = None,
        strict: bool = False,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **overrides: Any,
    ) -> None:
        check_keywords(
            overrides, "ClusterVectorEnv.__init__()", keyword_parameters(ClusterVectorEnv)
        )
        mode = next((m for m in AUTORESET_MODES if autoreset_mode in (m, m.value)), None)
        if mode is None:
            raise ConfigError(
                f"ClusterVectorEnv: autoreset_mode must be one of "
                f"{[m.value for m in AUTORESET_MODES]}, got {autoreset_mode!r}."
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
        self._everyone = np.ones(self.num_envs, dtype=bool)
        # sub-envs whose episode ended (NEXT_STEP: reset at the next step; DISABLED: waiting)
        self._ended = np.zeros(self.num_envs, dtype=bool)
        self._idle = np.full(
            (self.num_envs, self.config.n_nodes), self.config.idle_action, dtype=np.int64
        )
        self._masks = np.zeros((self.num_envs, self.config.n_actions), dtype=np.int8)
        self._started = False

    # ------------------------------------------------------------------ reset and step
    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env (sub-env ``i`` with ``seed + i`` or ``seed[i]``), or only those
        of ``options["reset_mask"]``.

        Raises:
            ConfigError: For a malformed seed or ``reset_mask``.
            EnvStateError: For a masked reset before the first full one.
        """
        mask = reset_mask_of(options, self.num_envs)
        chosen = self._everyone if mask is None else mask
        if not self._started and not chosen.all():
            raise EnvStateError(
                "reset(options={'reset_mask': ...}) before the first reset of every sub-env; "
                "call envs.reset(seed=...) first."
            )
        seeds = sub_env_seeds(seed, self.num_envs)
        indices = np.flatnonzero(chosen)
        for index in indices.tolist():
            if seeds[index] is not None:
                self.np_randoms[index] = seeding.np_random(seeds[index])[0]
        self.core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
        self._ended[chosen] = False
        self._started = True
        observations = self._observations()
        infos = {**batch_reset_infos(self.core), ACTION_MASK: self.node_masks()}
        return observations, with_masks(infos, chosen)

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Run one epoch in every sub-env (and reset those the autoreset mode resets).

        Raises:
            EnvStateError: Before ``reset``, or (``DISABLED``) while a finished sub-env waits
                for its reset.
            ActionError: For actions of the wrong shape, type or range (or masked ones with
                ``strict``).
        """
        if not self._started:
            raise EnvStateError("step() called before reset(); call envs.reset(seed=...) first.")
        mode, core = self.autoreset_mode, self.core
        if mode == AutoresetMode.DISABLED and self._ended.any():
            raise EnvStateError(
                f"step(): sub-envs {np.flatnonzero(self._ended).tolist()} ended and autoreset "
                "is DISABLED; reset them with envs.reset(options={'reset_mask': mask}) first."
            )
        resetting = self._ended if mode == AutoresetMode.NEXT_STEP else ~self._everyone
        choices, illegal, conflicts = resolve_batch_actions(
            actions, self._masks, self.config, strict=self.strict
        )
        if resetting.any():
            choices[resetting] = self.config.idle_action
            illegal[resetting] = 0
            conflicts[resetting] = 0
        core.illegal_actions += illegal
        core.conflicts += conflicts
        rewards, terminated, truncated, infos = advance_batch(core, choices, illegal, conflicts)
        if resetting.any():
            rewards = np.where(resetting, 0.0, rewards)
            terminated &= ~resetting
            truncated &= ~resetting
        done = terminated | truncated
        restart = resetting | done if mode == AutoresetMode.SAME_STEP else resetting
        final: dict[str, Any] = {}
        if mode == AutoresetMode.SAME_STEP and done.any():
            final = {
                "final_obs": self._observations(),
                "_final_obs": done.copy(),
                "final_info": with_masks({**infos, ACTION_MASK: self.node_masks()}, done),
                "_final_info": done.copy(),
            }
        if restart.any():
            indices = np.flatnonzero(restart)
            core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
            infos = merge_rows(infos, batch_reset_infos(core), restart)
        self._ended = done if mode != AutoresetMode.SAME_STEP else ~self._everyone
        observations = self._observations()
        infos[ACTION_MASK] = self.node_masks()
        laid_out = {**with_masks(infos, self._everyone), **final}
        return observations, rewards.astype(np.float64), terminated, truncated, laid_out

    def _observations(self) -> np.ndarray:
        """The clusters' current observations (a fresh array); keeps their masks."""
        self._masks = occupied_masks(self.core)
        return state_vectors(self.core, None, self._idle)

    # ------------------------------------------------------------------ masks
    def _check_started(self, call: str) -> None:
        if not self._started:
            raise EnvStateError(f"{call} called before reset(); call envs.reset(seed=...) first.")

    def node_masks(self) -> np.ndarray:
        """``(num_envs, n_nodes, n_slots + 1)`` int8: each sub-env's per-node masks (the
        single env's ``node_masks()``, batched; also ``infos["action_mask"]``).

        Raises:
            EnvStateError: Before ``reset``.
        """
        self._check_started("node_masks()")
        return np.repeat(self._masks[:, None, :], self.config.n_nodes, axis=1)

    def action_masks(self) -> np.ndarray:
        """``(num_envs, n_nodes * (n_slots + 1))`` bool: each sub-env's per-node masks,
        concatenated (the single env's ``action_masks()``, batched).

        Raises:
            EnvStateError: Before ``reset``.
        """
        self._check_started("action_masks()")
        return self.node_masks().reshape(self.num_envs, -1).astype(bool)

    def sample_mask(self) -> tuple[tuple[np.ndarray, ...], ...]:
        """Each sub-env's per-node int8 masks as a tuple (the single env's ``sample_mask()``):
        entry ``b`` is the mask ``envs.single_action_space.sample(mask=...)`` takes for sub-env
        ``b`` (Gymnasium batches a ``MultiDiscrete`` space into a ``Box``, which takes no mask).

        Example:
            >>> import numpy as np
            >>> envs = ClusterVectorEnv(3, "tiny")
            >>> _ = envs.reset(seed=0)
            >>> actions = np.stack([envs.single_action_space.sample(mask=mask)
            ...                     for mask in envs.sample_mask()])
            >>> actions.shape
            (3, 2)

        Raises:
            EnvStateError: Before ``reset``.
        """
        self._check_started("sample_mask()")
        return tuple(tuple(rows) for rows in self.node_masks())

    def episode_metrics(self, index: int) -> dict[str, float]:
        """Metrics of sub-env ``index``'s current episode (see the single env's)."""
        return self.core.episode_metrics(index)

    # ------------------------------------------------------------------ sub-envs
    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """What calling method ``name`` of each sub-env (or reading attribute ``name``) gives,
        as ``SyncVectorEnv.call`` returns it: one entry per sub-env.

        The sub-envs' methods are :data:`SUB_ENV_METHODS` (``action_masks``, ``node_masks``,
        ``sample_mask``: the rows of this env's own; ``episode_metrics``), their attributes
        :data:`SUB_ENV_ATTRIBUTES` (``np_random``: each one's generator; ``simulator``: a
        read-only view of its cluster; the spaces are the single env's; the rest is shared).

        Raises:
            AttributeError: For another name, or arguments given to an attribute or to a
                method that takes none.
        """
        if name not in SUB_ENV_METHODS + SUB_ENV_ATTRIBUTES:
            raise AttributeError(
                f"ClusterVectorEnv.call({name!r}): the sub-envs have no such method or "
                f"attribute; they have the methods {list(SUB_ENV_METHODS)} and the attributes "
                f"{list(SUB_ENV_ATTRIBUTES)}."
            )
        if args or kwargs:
            raise AttributeError(
                f"ClusterVectorEnv.call({name!r}): it takes no arguments, got {args} {kwargs}."
            )
        if name == "episode_metrics":
            return tuple(self.episode_metrics(index) for index in range(self.num_envs))
        if name in SUB_ENV_METHODS:
            return tuple(getattr(self, name)())
        values = {
            "action_space": lambda _: self.single_action_space,
            "observation_space": lambda _: self.single_observation_space,
            "np_random": lambda index: self.np_randoms[index],
            "simulator": lambda index: ClusterSimulator.view_of(self.core, index),
        }
        read = values.get(name, lambda _: getattr(self, name))
        return tuple(read(index) for index in range(self.num_envs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Attribute ``name`` of each sub-env (``call(name)``, as ``SyncVectorEnv`` does)."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of each sub-env: ``values`` gives one per sub-env (a list or
        tuple) or one for all, as for ``SyncVectorEnv``.

        ``np_random`` sets each sub-env's generator (its next episodes are drawn from it);
        ``strict`` must be the same for every sub-env (they share one batched core).

        Raises:
            AttributeError: For a name other than :data:`SETTABLE_ATTRIBUTES`.
            ConfigError: For a list of the wrong length, or differing ``strict`` values.
        """
        if name not in SETTABLE_ATTRIBUTES:
            raise AttributeError(
                f"ClusterVectorEnv.set_attr({name!r}): only {list(SETTABLE_ATTRIBUTES)} can be "
                "set (the sub-envs share one batched core and configuration)."
            )
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ConfigError(
                f"ClusterVectorEnv.set_attr({name!r}): expected one value per sub-env "
                f"({self.num_envs}) or a single value, got {len(values)}."
            )
        if name == "np_random":
            if not all(isinstance(value, np.random.Generator) for value in values):
                raise ConfigError(
                    "ClusterVectorEnv.set_attr('np_random'): expected numpy.random.Generator "
                    "values (e.g. from gymnasium.utils.seeding.np_random(seed)[0])."
                )
            self.np_randoms = list(values)
            return
        if len(set(map(bool, values))) != 1:
            raise ConfigError(
                "ClusterVectorEnv.set_attr('strict'): the sub-envs share one batched core, so "
                f"strict must be the same for all of them, got {list(values)}."
            )
        self.strict = bool(values[0])


def make_vector_env(num_envs: int = 1, **kwargs: Any) -> ClusterVectorEnv:
    """The vector entry point registered with Gymnasium (arguments as :class:`ClusterVectorEnv`)."""
    return ClusterVectorEnv(num_envs, **kwargs)
