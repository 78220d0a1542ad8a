"""Observation wrappers that append each slot's predicted remaining work and odds of success.

| | |
|---|---|
| AEC | ``PredictionAECWrapper(mara_env.env(...), predictor="wls")`` (``raw_env`` works too) |
| Parallel | ``PredictionParallelWrapper(mara_env.parallel_env(...), predictor="wls")`` |
| Gymnasium | ``PredictionGymWrapper(gym.make("mara_env/Cluster-v3", ...), predictor="wls")`` |
| Any form | ``add_predictions(env, predictor="wls", n_samples=32)`` picks the wrapper |
| Added features | ``n_slots * (len(quantile_levels) + 2)`` float32 values at the end of the vector |

Any :class:`mara_env.predictors.base.Predictor` works, given as an object or by its registered name
(:func:`mara_env.predictors.registry.make_predictor`). The wrappers append the same block of prediction
features to every node's observation, to ``state()`` and, in the Gymnasium form, to the central
observation (which is the state vector); everything else (action masks, rewards, infos,
rendering, spaces of actions) is the wrapped env's. The original vector comes first, unchanged, so
:func:`mara_env.sim.observation.decode_observation` still reads its part.

Prediction features (appended; ``n_slots`` blocks of ``len(quantile_levels) + 2`` values,
slot-major; index within a block: meaning; all 0 for an empty slot). With the default levels
(0.1, 0.5, 0.9) the indices are the constants :data:`NEED_Q10` .. :data:`SUCCESS_ALL_NODES`.
    0 .. L-1 ``need_q``: the ``quantile_levels[j]`` quantile of the predicted remaining work in
      node-epochs at one node (curve steps / speed), divided by the time left
      (deadline - epoch): needed / available on one node. Capped at ``need_cap`` (default 10);
      "never" (an infinite prediction) reads as the cap.
    L ``success_one_node``: predicted probability of reaching the target by the deadline on one
      node: P(remaining curve steps <= time_left * speed).
    L+1 ``success_all_nodes``: the same on all the nodes the task may get,
      ``m = ClusterConfig.task_node_limit``: P(remaining curve steps <= time_left *
      progress_gain(speed, m, alpha)) with the task's alpha
      (:func:`mara_env.sim.rules.progress_gain`). Both ignore switch costs.

:func:`decode_predictions` turns the block back into named arrays.

Inputs and timing:
    Predictions use only what a scheduler observes (:mod:`mara_env.predictors.env_histories`: losses
    relative to the loss at arrival, curve steps, target, time left, speed, family). They are
    computed once per epoch, in one batched ``predict`` call, and shared by every node's
    observation and ``state()``. A task whose history did not change since its last prediction
    (it was not trained) keeps its samples (``reuse_samples=True``, the default), so the call
    covers only the tasks trained in the last epoch and new arrivals; its time left still
    changes, so its features are recomputed from the kept samples every epoch.

    The privileged oracle (``predictor="oracle"``, :mod:`mara_env.predictors.oracle`) is the one
    exception: the wrapper binds it to the environment it wraps, so the appended block carries
    the true remaining need. Observations from such a wrapper are privileged; a policy that
    reads them must say so (``privileged = True``) wherever its results are shown.

Seeding:
    The predictor's generator is a child of the seed given to ``reset(seed=...)``; resets without
    a seed continue it. The same seed and actions give the same observations, and pickled
    wrappers continue identically.

Example:
    >>> import mara_env
    >>> env = PredictionAECWrapper(mara_env.env(config="tiny"), predictor="wls", n_samples=16)
    >>> env.reset(seed=0)
    >>> observation = env.observe("node_0")["observation"]
    >>> observation.shape  # 8 + 20 * 3 base values, then 3 slots x 5 prediction features
    (83,)
    >>> view = decode_predictions(observation, env.unwrapped.config.n_slots)
    >>> view.need.shape, view.success_one_node.shape
    ((3, 3), (3,))
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.wrappers import BaseParallelWrapper, BaseWrapper

from mara_env.predictors.base import Predictor
from mara_env.predictors.slot_features import NEED_CAP, PREDICTION_FEATURES, QUANTILE_LEVELS
from mara_env.predictors.slot_predictions import (
    NEED_Q10,
    NEED_Q50,
    NEED_Q90,
    SUCCESS_ALL_NODES,
    SUCCESS_ONE_NODE,
    PredictionOptions,
    PredictionView,
    PredictorOutputError,
    SlotPredictions,
    decode_predictions,
    resolve_predictor,
)
from mara_env.sim.simulator import ClusterSimulator

__all__ = [
    "NEED_Q10",
    "NEED_Q50",
    "NEED_Q90",
    "PREDICTION_FEATURES",
    "SUCCESS_ALL_NODES",
    "SUCCESS_ONE_NODE",
    "PredictionAECWrapper",
    "PredictionGymWrapper",
    "PredictionOptions",
    "PredictionParallelWrapper",
    "PredictionView",
    "PredictorOutputError",
    "SlotPredictions",
    "add_predictions",
    "decode_predictions",
    "resolve_predictor",
]


def _simulator_of(env: Any, wrapper: str) -> ClusterSimulator:
    simulator = getattr(env.unwrapped, "simulator", None)
    if not isinstance(simulator, ClusterSimulator):
        raise TypeError(
            f"{wrapper} wraps a mara_env environment (mara_env.env, raw_env, parallel_env or "
            f"gym.make('mara_env/Cluster-v3')), got {type(env.unwrapped).__name__}."
        )
    return simulator


def _extend_box(box: spaces.Space[Any], options: PredictionOptions, n_slots: int) -> spaces.Box:
    """``box`` with the prediction features appended."""
    if not isinstance(box, spaces.Box):
        raise TypeError(f"expected a Box space to extend, got {box!r}.")
    low, high = options.bounds(n_slots)
    return spaces.Box(
        np.concatenate((box.low, low)), np.concatenate((box.high, high)), dtype=np.float32
    )


def _options(
    n_samples: int, quantile_levels: tuple[float, ...], need_cap: float, reuse_samples: bool
) -> PredictionOptions:
    return PredictionOptions(n_samples, tuple(quantile_levels), need_cap, reuse_samples)


class PredictionAECWrapper(BaseWrapper[str, dict[str, np.ndarray], int]):
    """Appends per-slot predictions to a mara_env AEC env's observations and state.

    Args:
        env: ``mara_env.env(...)``, ``mara_env.raw_env(...)`` or a PettingZoo wrapper of them.
        predictor: A :class:`mara_env.predictors.base.Predictor` or a registered name.
        n_samples: Samples of remaining work drawn per task (:class:`PredictionOptions`).
        quantile_levels: Levels of the ``need`` features (:class:`PredictionOptions`).
        need_cap: Cap of the ``need`` features (:class:`PredictionOptions`).
        reuse_samples: Keep a task's samples while its history does not change
            (:class:`PredictionOptions`).

    Raises:
        TypeError: If ``env`` is not a mara_env AEC env or ``predictor`` is not a predictor.
        mara_env.predictors.registry.UnknownPredictorError: For an unknown predictor name.
        ValueError: For bad options.

    Example:
        >>> import mara_env
        >>> env = PredictionAECWrapper(mara_env.raw_env(config="tiny"), "wls")
        >>> env.reset(seed=1)
        >>> env.state().shape == env.state_space.shape
        True
    """

    def __init__(
        self,
        env: AECEnv[str, Any, Any],
        predictor: str | Predictor = "wls",
        *,
        n_samples: int = 16,
        quantile_levels: tuple[float, ...] = QUANTILE_LEVELS,
        need_cap: float = NEED_CAP,
        reuse_samples: bool = True,
    ) -> None:
        if not isinstance(env, AECEnv):
            raise TypeError(
                f"PredictionAECWrapper wraps a PettingZoo AEC env, got {type(env).__name__}; "
                "use PredictionParallelWrapper or PredictionGymWrapper for the other forms."
            )
        super().__init__(env)
        simulator = _simulator_of(env, "PredictionAECWrapper")
        options = _options(n_samples, quantile_levels, need_cap, reuse_samples)
        self.predictions = SlotPredictions(simulator, predictor, options)
        n_slots = simulator.config.n_slots
        base = env.observation_space(env.possible_agents[0])
        if not isinstance(base, spaces.Dict):
            raise TypeError(f"PredictionAECWrapper expects Dict observations, got {base!r}.")
        self._key: str = env.unwrapped.observation_key
        self._observation_space = spaces.Dict(
            {
                self._key: _extend_box(base[self._key], options, n_slots),
                "action_mask": base["action_mask"],
            }
        )
        self.observation_spaces = dict.fromkeys(env.possible_agents, self._observation_space)
        self.state_space = _extend_box(env.state_space, options, n_slots)
        self._raw, self._first_agent = env.unwrapped, env.possible_agents[0]

    # The attributes the agent_iter loop reads at every step, forwarded directly: PettingZoo's
    # BaseWrapper forwards them through __getattr__, which costs more than the rest of a step.
    @property
    def agents(self) -> list[str]:
        return self.env.agents

    @property
    def agent_selection(self) -> str:
        return self.env.agent_selection

    @property
    def terminations(self) -> dict[str, bool]:
        return self.env.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        return self.env.truncations

    @property
    def rewards(self) -> dict[str, float]:
        return self.env.rewards

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        return self.env.infos

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self.predictions.reset(seed)
        self.predictions.features()

    def step(self, action: Any) -> None:
        self.env.step(action)
        # An epoch ends with the last node's step, after which node 0 chooses first again: only
        # then (or at the episode's end) can there be a new epoch to predict.
        if self._raw.agent_selection == self._first_agent:
            self.predictions.features()

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable[str, Any, Any]:
        # The wrapped env's iterator: it reads the same agents without going through this layer.
        return self.env.agent_iter(max_iter)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        observation = self.env.observe(agent)
        if observation is None:
            return None
        # reset() and step() bring the features up to date, so the hot path skips the check.
        key = self._key
        return {
            key: np.concatenate((observation[key], self.predictions.current)),
            "action_mask": observation["action_mask"],
        }

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, termination, truncation, info = self.env.last(observe)
        if observation is not None:
            key = self._key
            observation = {
                key: np.concatenate((observation[key], self.predictions.current)),
                "action_mask": observation["action_mask"],
            }
        return observation, reward, termination, truncation, info

    def state(self) -> np.ndarray:
        return np.concatenate((self.env.state(), self.predictions.features()))


class PredictionParallelWrapper(BaseParallelWrapper[str, dict[str, np.ndarray], int]):
    """Appends per-slot predictions to a mara_env Parallel env's observations and state.

    Takes the arguments of :class:`PredictionAECWrapper`, with ``env`` a
    ``mara_env.parallel_env(...)``.

    Example:
        >>> import mara_env
        >>> env = PredictionParallelWrapper(mara_env.parallel_env(config="tiny"), "wls")
        >>> observations, infos = env.reset(seed=1)
        >>> env.observation_space("node_0").contains(observations["node_0"])
        True
    """

    def __init__(
        self,
        env: ParallelEnv[str, Any, Any],
        predictor: str | Predictor = "wls",
        *,
        n_samples: int = 16,
        quantile_levels: tuple[float, ...] = QUANTILE_LEVELS,
        need_cap: float = NEED_CAP,
        reuse_samples: bool = True,
    ) -> None:
        if not isinstance(env, ParallelEnv):
            raise TypeError(
                f"PredictionParallelWrapper wraps a PettingZoo Parallel env, got "
                f"{type(env).__name__}; use PredictionAECWrapper or PredictionGymWrapper."
            )
        super().__init__(env)
        simulator = _simulator_of(env, "PredictionParallelWrapper")
        options = _options(n_samples, quantile_levels, need_cap, reuse_samples)
        self.predictions = SlotPredictions(simulator, predictor, options)
        n_slots = simulator.config.n_slots
        base = env.observation_space(env.possible_agents[0])
        if not isinstance(base, spaces.Dict):
            raise TypeError(f"PredictionParallelWrapper expects Dict observations, got {base!r}.")
        self._key: str = env.unwrapped.observation_key
        self._observation_space = spaces.Dict(
            {
                self._key: _extend_box(base[self._key], options, n_slots),
                "action_mask": base["action_mask"],
            }
        )
        self.observation_spaces = dict.fromkeys(env.possible_agents, self._observation_space)
        self.state_space = _extend_box(env.state_space, options, n_slots)

    @property
    def agents(self) -> list[str]:
        return self.env.agents

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def _extend(self, observations: dict[str, Any]) -> dict[str, Any]:
        features, key = self.predictions.features(), self._key
        return {
            agent: {
                key: np.concatenate((observation[key], features)),
                "action_mask": observation["action_mask"],
            }
            for agent, observation in observations.items()
        }

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self.predictions.reset(seed)
        return self._extend(observations), infos

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        return self._extend(observations), rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        return np.concatenate((self.env.state(), self.predictions.features()))


class PredictionGymWrapper(
    gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray], gym.utils.RecordConstructorArgs
):
    """Appends per-slot predictions to the Gymnasium form's observation (its state vector).

    Takes the arguments of :class:`PredictionAECWrapper`, with ``env`` a
    ``gym.make("mara_env/Cluster-v3", ...)`` env or a ``ClusterGymEnv``.
    ``action_masks()`` is forwarded for sb3-contrib's MaskablePPO.

    Example:
        >>> import gymnasium as gym
        >>> import mara_env
        >>> env = PredictionGymWrapper(gym.make("mara_env/Cluster-v3", config="tiny"), "wls")
        >>> observation, info = env.reset(seed=1)
        >>> env.observation_space.contains(observation)
        True
    """

    def __init__(
        self,
        env: gym.Env[np.ndarray, np.ndarray],
        predictor: str | Predictor = "wls",
        *,
        n_samples: int = 16,
        quantile_levels: tuple[float, ...] = QUANTILE_LEVELS,
        need_cap: float = NEED_CAP,
        reuse_samples: bool = True,
    ) -> None:
        if not isinstance(env, gym.Env):
            raise TypeError(
                f"PredictionGymWrapper wraps a Gymnasium env, got {type(env).__name__}; use "
                "PredictionAECWrapper or PredictionParallelWrapper for PettingZoo envs."
            )
        # Recorded so that env.spec can rebuild the wrapped env (gym.make(env.spec)).
        gym.utils.RecordConstructorArgs.__init__(
            self,
            predictor=predictor,
            n_samples=n_samples,
            quantile_levels=quantile_levels,
            need_cap=need_cap,
            reuse_samples=reuse_samples,
        )
        gym.Wrapper.__init__(self, env)
        simulator = _simulator_of(env, "PredictionGymWrapper")
        options = _options(n_samples, quantile_levels, need_cap, reuse_samples)
        self.predictions = SlotPredictions(simulator, predictor, options)
        self.observation_space = _extend_box(
            env.observation_space, options, simulator.config.n_slots
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self.predictions.reset(seed)
        return np.concatenate((observation, self.predictions.features())), info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        observation = np.concatenate((observation, self.predictions.features()))
        return observation, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The wrapped env's per-node action masks (see ``ClusterGymEnv.action_masks``)."""
        masks: np.ndarray = self.env.get_wrapper_attr("action_masks")()
        return masks


def add_predictions(env: Any, predictor: str | Predictor = "wls", **options: Any) -> Any:
    """Wrap any form of the mara_env environment with the matching prediction wrapper.

    ``options`` are those of :class:`PredictionAECWrapper`.

    Raises:
        TypeError: If ``env`` is not a PettingZoo AEC or Parallel env or a Gymnasium env.

    Example:
        >>> import mara_env
        >>> type(add_predictions(mara_env.parallel_env(config="tiny"))).__name__
        'PredictionParallelWrapper'
    """
    if isinstance(env, AECEnv):
        return PredictionAECWrapper(env, predictor, **options)
    if isinstance(env, ParallelEnv):
        return PredictionParallelWrapper(env, predictor, **options)
    if isinstance(env, gym.Env):
        return PredictionGymWrapper(env, predictor, **options)
    raise TypeError(
        f"add_predictions: expected a mara_env AEC, Parallel or Gymnasium env, got "
        f"{type(env).__name__}."
    )
