"""What the AEC, Parallel and Gymnasium forms share: config, simulator, observations, rendering."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.infos import reset_info
from mara_env.envs.render import Renderer
from mara_env.errors import ConfigError
from mara_env.sim.observation import FEATURE_BOUND, ObservationBuilder, observation_size, state_size
from mara_env.sim.simulator import ClusterSimulator
from mara_env.worlds.config import ClusterConfig, check_keywords, keyword_parameters
from mara_env.worlds.presets import get_config

#: The key of a node's observation vector in its observation dict, unless told otherwise.
OBSERVATION_KEY = "observation"


def build_spaces(
    config: ClusterConfig, observation_key: str = OBSERVATION_KEY
) -> tuple[spaces.Dict, spaces.Discrete, spaces.Box]:
    """One node's observation and action spaces (the vector under ``observation_key``, the mask
    under ``"action_mask"``), and the state space."""
    observation = spaces.Dict(
        {
            observation_key: spaces.Box(
                -FEATURE_BOUND, FEATURE_BOUND, shape=(observation_size(config),), dtype=np.float32
            ),
            "action_mask": spaces.Box(0, 1, shape=(config.n_actions,), dtype=np.int8),
        }
    )
    state = spaces.Box(-FEATURE_BOUND, FEATURE_BOUND, shape=(state_size(config),), dtype=np.float32)
    return observation, spaces.Discrete(config.n_actions), state


def check_observation_key(key: Any, where: str) -> str:
    """``key`` if it can name a node's observation vector beside ``"action_mask"``.

    Raises:
        ConfigError: If it is not a non-empty string, or is ``"action_mask"``.
    """
    if not isinstance(key, str) or not key or key == "action_mask":
        raise ConfigError(
            f"{where}: observation_key must be a non-empty str other than 'action_mask', got "
            f"{key!r}. Use 'observation' (PettingZoo's) or 'observations' (RLlib's)."
        )
    return key


class ClusterEnvBase:
    """Mixin of every environment form; list it first among the bases so ``render`` and
    ``close`` here take precedence.

    Attributes:
        config: The resolved configuration.
        simulator: The simulation core.
        builder: Builds observations, masks and states from the simulator.
        renderer: Renders the simulator in ``render_mode``.
        strict: Whether masked actions raise instead of idling.
        max_cycles: Epochs after which an episode is truncated (``None``: only the world's own
            end, :attr:`ClusterConfig.max_epochs` included).
        info_task_ids: Whether infos carry the opt-in task ids (:mod:`mara_env.envs.infos`).
    """

    config: ClusterConfig
    simulator: ClusterSimulator
    builder: ObservationBuilder
    renderer: Renderer
    render_mode: str | None
    strict: bool
    max_cycles: int | None
    info_task_ids: bool

    def _build_cluster(
        self,
        config: str | ClusterConfig,
        trace_source: TraceSourceLike | None,
        render_mode: str | None,
        strict: bool,
        overrides: dict[str, Any],
        *,
        max_cycles: int | None = None,
        info_task_ids: bool = False,
    ) -> None:
        where = f"{type(self).__name__}.__init__()"
        check_keywords(overrides, where, keyword_parameters(type(self).__init__))
        if max_cycles is not None and (
            isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1
        ):
            raise ConfigError(
                f"{where}: max_cycles must be None or an int >= 1 (epochs before the episode is "
                f"truncated), got {max_cycles!r}."
            )
        self.max_cycles = max_cycles
        self.info_task_ids = bool(info_task_ids)
        self.config = get_config(config, **overrides)
        # the id of the rules this instance runs (the class attribute names the default's)
        self.metadata = {**getattr(type(self), "metadata", {}), "name": self.config.env_id}
        self.simulator = ClusterSimulator(self.config, trace_source)
        self.builder = ObservationBuilder(self.simulator)
        self.renderer = Renderer(self.simulator, render_mode)
        self.render_mode = render_mode
        self.strict = strict

    def _episode_end(self) -> tuple[bool, bool]:
        """``(terminated, truncated)`` after the last epoch: the world's, and a truncation once
        ``max_cycles`` epochs have passed (an episode that terminated then is not truncated)."""
        terminated = self.simulator.terminated
        cut = self.max_cycles is not None and self.simulator.state.epoch >= self.max_cycles
        return terminated, self.simulator.truncated or (cut and not terminated)

    def _reset_info(self) -> dict[str, Any]:
        """The info right after ``reset`` (:func:`mara_env.envs.infos.reset_info`)."""
        return reset_info(self.simulator, task_ids=self.info_task_ids)

    def episode_metrics(self) -> dict[str, float]:
        """Metrics of the current episode (see ``ClusterSimulator.episode_metrics``)."""
        return self.simulator.episode_metrics()

    def render(self) -> str | np.ndarray | None:
        """Render in ``render_mode``: ansi text, an RGB Gantt picture, or print for human."""
        return self.renderer.render()

    def close(self) -> None:
        """Release rendering resources (none are held)."""
        self.renderer.close()
