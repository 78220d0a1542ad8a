"""One epoch of the world, as every environment form runs it: advance, reward, info."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from mara_env.envs.actions import resolve_joint_action
from mara_env.envs.infos import epoch_info
from mara_env.sim.observation import ObservationBuilder
from mara_env.sim.simulator import ClusterSimulator, EpochEvents
from mara_env.worlds.config import ClusterConfig

Count = TypeVar("Count", float, np.ndarray)


def team_reward(completed: Count, shaping: Count, config: ClusterConfig) -> Count:
    """The team reward of an epoch: completions plus the weighted potential-based shaping term
    (``completed`` and ``shaping`` may be numbers or per-cluster arrays).

    Example:
        >>> from mara_env import get_config
        >>> float(team_reward(2, 0.25, get_config("training", shaping_weight=2.0)))
        2.5
    """
    return completed + config.shaping_weight * shaping


def epoch_reward(events: EpochEvents, config: ClusterConfig) -> float:
    """The team reward of one epoch of one cluster (:func:`team_reward`)."""
    return float(team_reward(len(events.completed), events.shaping, config))


def finish_epoch(
    simulator: ClusterSimulator,
    builder: ObservationBuilder,
    slot_choice: np.ndarray,
    illegal: int,
    conflicts: int,
    *,
    task_ids: bool = False,
) -> tuple[float, dict[str, Any]]:
    """Advance the world with legal ``slot_choice`` and refresh the observations; the epoch's
    reward and info (:func:`mara_env.envs.infos.epoch_info`, with the opt-in task ids if
    ``task_ids``)."""
    events = simulator.advance(slot_choice)
    builder.refresh()
    info = epoch_info(simulator, events, illegal, conflicts, task_ids=task_ids)
    return epoch_reward(events, simulator.config), info


def joint_epoch(
    simulator: ClusterSimulator,
    builder: ObservationBuilder,
    actions: Any,
    *,
    strict: bool,
    task_ids: bool = False,
) -> tuple[float, dict[str, Any]]:
    """Run one epoch from simultaneous node actions (Parallel and Gymnasium forms)."""
    choices, illegal, conflicts = resolve_joint_action(
        actions, builder.mask(), simulator.config, strict=strict
    )
    simulator.core.illegal_actions[0] += illegal
    simulator.core.conflicts[0] += conflicts
    return finish_epoch(simulator, builder, choices, illegal, conflicts, task_ids=task_ids)
