"""The infos every form returns: one fixed schema, the same keys at ``reset`` and every step.

Each value is a NumPy scalar of a fixed dtype in the single-cluster forms (AEC, Parallel,
Gymnasium) and an array of that dtype with a leading sub-env axis in the batched forms (the
vector env, :class:`mara_env.BatchedNodesEnv`), which add Gymnasium's ``_key`` masks. Libraries
that build their specs from the first info they see (TorchRL reads the ``reset`` infos) then
find every key of every step, and values of one shape.

The keys, in order, their dtypes and meanings are :data:`INFO_FIELDS` (the environment
card, ``docs/environment.md``, lists them): the epoch that just ended, its counts, and the
episode's completion rate so far.

The Gymnasium forms add ``action_mask``: int8, ``(n_nodes, n_slots + 1)`` per cluster, each
node's mask for the observation returned with it (``tuple(info["action_mask"])`` is the mask
``MultiDiscrete.sample`` takes). The PettingZoo forms carry their masks in the observations.

Opt-in (``info_task_ids=True``, single-cluster forms only): ``completed_tasks`` and
``expired_tasks``, int64 arrays of the ids of the tasks that completed (in the order of the
first node that chose them) or expired (ascending) in the epoch; empty at ``reset``. Their
length varies from step to step, which is why they are not in the default schema.

Example:
    >>> import mara_env
    >>> env = mara_env.parallel_env(config="tiny")
    >>> _, infos = env.reset(seed=0)
    >>> actions = dict.fromkeys(env.agents, env.config.idle_action)
    >>> _, _, _, _, step_infos = env.step(actions)
    >>> list(infos["node_0"]) == list(step_infos["node_0"]) == list(INFO_FIELDS)
    True
    >>> int(infos["node_0"]["epoch"]), int(step_infos["node_0"]["epoch"])
    (-1, 0)
    >>> type(step_infos["node_0"]["completed"]).__name__
    'int64'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mara_env.sim.core import ClusterBatch
from mara_env.sim.epoch_report import BatchEpoch
from mara_env.sim.simulator import ClusterSimulator, EpochEvents

#: Every info key, in order: its dtype and meaning (the table above).
INFO_FIELDS: Mapping[str, tuple[type[np.generic], str]] = {
    "epoch": (np.int64, "the epoch that just ended (-1 at `reset`)"),
    "completed": (np.int64, "tasks that completed in it"),
    "expired": (np.int64, "tasks whose deadline came in it (slotted or queued)"),
    "arrived": (np.int64, "tasks that arrived for the next epoch (at `reset`: for the first)"),
    "switches": (np.int64, "nodes that paid the switch cost"),
    "illegal_actions": (np.int64, "masked choices turned into idle"),
    "conflicts": (
        np.int64,
        "choices over `max_nodes_per_task` turned into idle (0 in the AEC form, whose masks "
        "prevent them)",
    ),
    "completion_rate": (
        np.float64,
        "completed / arrived so far in the episode (0 before any arrival); after its last epoch, "
        "the episode's",
    ),
}
#: The key of the Gymnasium forms' per-node masks.
ACTION_MASK = "action_mask"
#: The opt-in keys (``info_task_ids=True``): ids of the tasks that completed or expired.
TASK_ID_FIELDS = ("completed_tasks", "expired_tasks")


def info_values(*, batched: bool, **values: Any) -> dict[str, Any]:
    """The schema's keys, in order, with ``values`` cast to their dtypes: NumPy scalars, or
    arrays with a leading sub-env axis when ``batched``.

    Raises:
        KeyError: If the keys are not exactly those of :data:`INFO_FIELDS` (a bug, not a user
            error: every builder passes them all).
    """
    if values.keys() != INFO_FIELDS.keys():
        raise KeyError(f"info_values: expected the keys {list(INFO_FIELDS)}, got {sorted(values)}.")
    if batched:
        return {
            key: np.asarray(values[key], dtype=dtype) for key, (dtype, _) in INFO_FIELDS.items()
        }
    return {key: dtype(values[key]) for key, (dtype, _) in INFO_FIELDS.items()}


def copy_info(info: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a single-cluster form's ``info`` whose task-id arrays are copies too (each
    agent gets its own)."""
    copied = dict(info)
    for key in TASK_ID_FIELDS:
        if key in copied:
            copied[key] = copied[key].copy()
    return copied


def reset_info(simulator: ClusterSimulator, *, task_ids: bool = False) -> dict[str, Any]:
    """The info of a single-cluster form right after ``reset`` (no epoch has ended)."""
    info = info_values(
        batched=False,
        epoch=-1,
        completed=0,
        expired=0,
        arrived=simulator.state.next_arrival,
        switches=0,
        illegal_actions=0,
        conflicts=0,
        completion_rate=0.0,
    )
    if task_ids:
        info.update({key: np.zeros(0, dtype=np.int64) for key in TASK_ID_FIELDS})
    return info


def epoch_info(
    simulator: ClusterSimulator,
    events: EpochEvents,
    illegal: int,
    conflicts: int,
    *,
    task_ids: bool = False,
) -> dict[str, Any]:
    """The info of a single-cluster form after the epoch ``events`` describe.

    Args:
        simulator: The cluster, after the epoch (its completion rate so far is reported).
        events: What the epoch did (:meth:`mara_env.sim.simulator.ClusterSimulator.advance`).
        illegal: Node choices of empty slots turned into idle this epoch.
        conflicts: Node choices over ``max_nodes_per_task`` turned into idle this epoch.
        task_ids: Add the opt-in ``completed_tasks`` and ``expired_tasks``.
    """
    info = info_values(
        batched=False,
        epoch=events.epoch,
        completed=len(events.completed),
        expired=len(events.expired),
        arrived=len(events.arrived),
        switches=events.switches,
        illegal_actions=illegal,
        conflicts=conflicts,
        completion_rate=simulator.core.completion_rates()[0],
    )
    if task_ids:
        info["completed_tasks"] = np.array(events.completed, dtype=np.int64)
        info["expired_tasks"] = np.array(events.expired, dtype=np.int64)
    return info


def batch_reset_infos(core: ClusterBatch) -> dict[str, np.ndarray]:
    """``(B,)`` arrays: the info of every cluster of ``core`` as if it had just been reset
    (callers take the rows of the clusters that were)."""
    zeros = np.zeros(core.batch_size, dtype=np.int64)
    return info_values(
        batched=True,
        epoch=np.full(core.batch_size, -1, dtype=np.int64),
        completed=zeros,
        expired=zeros,
        arrived=core.next_arrival.copy(),
        switches=zeros,
        illegal_actions=zeros,
        conflicts=zeros,
        completion_rate=np.zeros(core.batch_size),
    )


def batch_epoch_infos(
    core: ClusterBatch, epoch: BatchEpoch, illegal: np.ndarray, conflicts: np.ndarray
) -> dict[str, np.ndarray]:
    """``(B,)`` arrays: the info of every cluster of ``core`` after the batch ``epoch``."""
    return info_values(
        batched=True,
        epoch=epoch.epoch,
        completed=epoch.completed,
        expired=epoch.expired,
        arrived=epoch.arrived,
        switches=epoch.switches,
        illegal_actions=illegal,
        conflicts=conflicts,
        completion_rate=core.completion_rates(),
    )


def with_masks(infos: Mapping[str, np.ndarray], present: np.ndarray) -> dict[str, np.ndarray]:
    """Batched ``infos`` in Gymnasium's vector layout: each key followed by its ``_key`` mask
    (a copy of ``present``, the sub-envs the values are for; the others' values are 0, as
    ``SyncVectorEnv`` leaves them)."""
    laid_out: dict[str, np.ndarray] = {}
    everyone = bool(present.all())
    for key, values in infos.items():
        if not everyone:
            values = np.where(_rows(present, values), values, 0).astype(values.dtype)
        laid_out[key], laid_out[f"_{key}"] = values, present.copy()
    return laid_out


def _rows(chosen: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``chosen`` (one bool per sub-env) shaped to broadcast over ``values``' rows."""
    return chosen.reshape(-1, *([1] * (values.ndim - 1)))


def merge_rows(
    into: Mapping[str, np.ndarray], rows: Mapping[str, np.ndarray], chosen: np.ndarray
) -> dict[str, np.ndarray]:
    """``into`` with the ``chosen`` sub-envs' entries taken from ``rows`` (same keys)."""
    merged = {}
    for key, values in into.items():
        merged[key] = np.where(_rows(chosen, values), rows[key], values)
    return merged
