"""One epoch of the world, as every environment form runs it: advance, reward, info."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np

from mara_env.actions import resolve_joint_action
from mara_env.config import ClusterConfig
from mara_env.observation import ObservationBuilder
from mara_env.simulator import ClusterSimulator, EpochEvents

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


def epoch_info(
    events: EpochEvents, illegal: int, conflicts: int, completion_rate: float | None = None
) -> dict[str, Any]:
    """The info dict describing one epoch's events.

    Args:
        events: What the epoch did (:meth:`mara_env.simulator.ClusterSimulator.advance`).
        illegal: Node choices of empty slots turned into idle this epoch.
        conflicts: Node choices over ``max_nodes_per_task`` turned into idle this epoch.
        completion_rate: The episode's completion rate, given when the epoch ended the episode.

    Returns:
        The counts ``epoch``, ``completed``, ``expired``, ``arrived``, ``switches``,
        ``illegal_actions`` and ``conflicts`` (those the vector form reports per sub-env), the
        ids of the tasks that completed or expired (``completed_tasks``, ``expired_tasks``) and,
        when ``completion_rate`` is given, ``completion_rate`` (as the vector form reports it
        at an episode's end).
    """
    info: dict[str, Any] = {
        "epoch": events.epoch,
        "completed": len(events.completed),
        "expired": len(events.expired),
        "arrived": len(events.arrived),
        "switches": events.switches,
        "illegal_actions": illegal,
        "conflicts": conflicts,
        "completed_tasks": list(events.completed),
        "expired_tasks": list(events.expired),
    }
    if completion_rate is not None:
        info["completion_rate"] = completion_rate
    return info


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
    ended = simulator.terminated or simulator.truncated
    rate = simulator.episode_metrics()["completion_rate"] if ended else None
    return epoch_reward(events, simulator.config), epoch_info(events, illegal, conflicts, rate)


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
