"""What the AEC, Parallel and Gymnasium forms share: config, simulator, observations, rendering."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from mara_env.config import ClusterConfig, get_config
from mara_env.observation import FEATURE_BOUND, ObservationBuilder, observation_size, state_size
from mara_env.render import Renderer
from mara_env.simulator import ClusterSimulator
from mara_env.traces import TraceSource


def build_spaces(config: ClusterConfig) -> tuple[spaces.Dict, spaces.Discrete, spaces.Box]:
    """One node's observation and action spaces, and the state space."""
    observation = spaces.Dict(
        {
            "observation": spaces.Box(
                -FEATURE_BOUND, FEATURE_BOUND, shape=(observation_size(config),), dtype=np.float32
            ),
            "action_mask": spaces.Box(0, 1, shape=(config.n_actions,), dtype=np.int8),
        }
    )
    state = spaces.Box(-FEATURE_BOUND, FEATURE_BOUND, shape=(state_size(config),), dtype=np.float32)
    return observation, spaces.Discrete(config.n_actions), state


class ClusterEnvBase:
    """Mixin of every environment form; list it first among the bases so ``render`` and
    ``close`` here take precedence.

    Attributes:
        config: The resolved configuration.
        simulator: The simulation core.
        builder: Builds observations, masks and states from the simulator.
        renderer: Renders the simulator in ``render_mode``.
        strict: Whether masked actions raise instead of idling.
    """

    config: ClusterConfig
    simulator: ClusterSimulator
    builder: ObservationBuilder
    renderer: Renderer
    render_mode: str | None
    strict: bool

    def _build_cluster(
        self,
        config: str | ClusterConfig,
        trace_source: TraceSource | None,
        render_mode: str | None,
        strict: bool,
        overrides: dict[str, Any],
    ) -> None:
        self.config = get_config(config, **overrides)
        # the id of the rules this instance runs (the class attribute names the default's)
        self.metadata = {**getattr(type(self), "metadata", {}), "name": self.config.env_id}
        self.simulator = ClusterSimulator(self.config, trace_source)
        self.builder = ObservationBuilder(self.simulator)
        self.renderer = Renderer(self.simulator, render_mode)
        self.render_mode = render_mode
        self.strict = strict

    def episode_metrics(self) -> dict[str, float]:
        """Metrics of the current episode (see ``ClusterSimulator.episode_metrics``)."""
        return self.simulator.episode_metrics()

    def render(self) -> str | np.ndarray | None:
        """Render in ``render_mode``: ansi text, an RGB Gantt picture, or print for human."""
        return self.renderer.render()

    def close(self) -> None:
        """Release rendering resources (none are held)."""
        self.renderer.close()
