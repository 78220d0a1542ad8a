"""One epoch of the world, as every environment form runs it: advance, reward, info."""

from __future__ import annotations

from typing import Any

import numpy as np

from mara_env.actions import resolve_joint_action
from mara_env.config import ClusterConfig
from mara_env.observation import ObservationBuilder
from mara_env.simulator import ClusterSimulator, EpochEvents


def epoch_reward(events: EpochEvents, config: ClusterConfig) -> float:
    """The team reward of one epoch: completions plus weighted potential-based shaping."""
    return len(events.completed) + config.shaping_weight * events.shaping


def epoch_info(events: EpochEvents, illegal: int, conflicts: int) -> dict[str, Any]:
    """The info dict describing one epoch's events."""
    return {
        "epoch": events.epoch,
        "completed": list(events.completed),
        "expired": list(events.expired),
        "arrived": len(events.arrived),
        "switches": events.switches,
        "illegal_actions": illegal,
        "conflicts": conflicts,
    }


def finish_epoch(
    simulator: ClusterSimulator,
    builder: ObservationBuilder,
    slot_choice: np.ndarray,
    illegal: int,
    conflicts: int,
) -> tuple[float, dict[str, Any]]:
    """Advance the world with legal ``slot_choice`` and refresh the observations."""
    events = simulator.advance(slot_choice)
    builder.refresh()
    return epoch_reward(events, simulator.config), epoch_info(events, illegal, conflicts)


def joint_epoch(
    simulator: ClusterSimulator, builder: ObservationBuilder, actions: Any, *, strict: bool
) -> tuple[float, dict[str, Any]]:
    """Run one epoch from simultaneous node actions (Parallel and Gymnasium forms)."""
    choices, illegal, conflicts = resolve_joint_action(
        actions, builder.mask(), simulator.config, strict=strict
    )
    simulator.core.illegal_actions[0] += illegal
    simulator.core.conflicts[0] += conflicts
    return finish_epoch(simulator, builder, choices, illegal, conflicts)
