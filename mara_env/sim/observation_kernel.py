"""The observation's features of every cluster of a batch, compiled (:mod:`mara_env.sim.observation`
documents the columns and holds the Python entry points).

Like the epoch (:mod:`mara_env.sim.dynamics`), these loops read the core's arrays one cluster at a time
with Numba, and compute each feature with the same floating-point operations, in the same order,
as the array expressions they replace, so observations are bit for bit those of the earlier
NumPy code (``tests/test_observation_reference.py`` checks them against a slow reference).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mara_env.sim.layout import (
    G_ACTIVE,
    G_EPOCH,
    G_OPEN,
    G_QUEUE,
    G_QUEUE_TIME,
    GLOBAL_FEATURES,
    S_LOG_LOSS,
    S_NODES_LAST,
    S_PROGRESS,
    S_SLOPE,
    S_STEPS,
    S_TIME_LEFT,
    S_WORK,
    SLOT_FEATURES,
    STEP_SCALE,
    TIME_SCALE,
)
from mara_env.sim.task_fields import (
    FEATURES,
    LOG_INITIAL_LOSS,
    LOG_LOSS,
    LOG_PREVIOUS_LOSS,
    PHI,
    PREVIOUS_WORK,
    PROGRESS,
    TIME_AT_0,
    TIME_PER_EPOCH,
    WORK,
)

_TIME_AT_0, _TIME_PER_EPOCH = TIME_AT_0.start, TIME_PER_EPOCH.start
_TIME_COLUMNS = TIME_AT_0.stop - TIME_AT_0.start


@njit(cache=True)
def _slot_features(
    out: np.ndarray, b: int, column: int, slot: np.ndarray, epoch: int, nodes_last: float
) -> None:
    """Write the features of slot ``column`` of cluster ``b`` into ``out`` (one slot's
    ``SLOT_FEATURES`` values; node-specific columns 0)."""
    for feature in range(SLOT_FEATURES):
        out[feature] = slot[b, column, FEATURES + feature]
    log_loss = slot[b, column, LOG_LOSS]
    log_previous_loss = slot[b, column, LOG_PREVIOUS_LOSS]
    out[S_LOG_LOSS] = log_loss - slot[b, column, LOG_INITIAL_LOSS]
    out[S_PROGRESS] = slot[b, column, PHI]
    for offset in range(_TIME_COLUMNS):
        elapsed = epoch * slot[b, column, _TIME_PER_EPOCH + offset]
        out[S_TIME_LEFT + offset] = slot[b, column, _TIME_AT_0 + offset] + elapsed
    out[S_WORK] = slot[b, column, WORK] * (1.0 / TIME_SCALE)
    out[S_STEPS] = slot[b, column, PROGRESS] * (1.0 / STEP_SCALE)
    worked = max(slot[b, column, WORK] - slot[b, column, PREVIOUS_WORK], 1.0)
    out[S_SLOPE] = (log_previous_loss - log_loss) / worked
    out[S_NODES_LAST] = nodes_last


@njit(cache=True)
def _nodes_last(previous_slot: np.ndarray, b: int, n_slots: int) -> np.ndarray:
    """How many of cluster ``b``'s nodes trained each slot's task last epoch."""
    counts = np.zeros(n_slots + 1, dtype=np.int64)
    for node in range(previous_slot.shape[1]):
        counts[previous_slot[b, node]] += 1
    return counts


@njit(cache=True)
def fill_slot_features(
    out: np.ndarray, slot: np.ndarray, epoch: np.ndarray, previous_slot: np.ndarray
) -> None:
    """Write ``(B, n_slots, SLOT_FEATURES)`` float64 slot features into ``out``."""
    n_clusters, n_slots = out.shape[0], out.shape[1]
    per_node = 1.0 / previous_slot.shape[1]
    for b in range(n_clusters):
        counts = _nodes_last(previous_slot, b, n_slots)
        for column in range(n_slots):
            _slot_features(out[b, column], b, column, slot, epoch[b], counts[column] * per_node)


@njit(cache=True)
def fill_shared_observations(
    out: np.ndarray,
    slot: np.ndarray,
    epoch: np.ndarray,
    previous_slot: np.ndarray,
    queue_length: np.ndarray,
    queue_min_deadline: np.ndarray,
    free_slots: np.ndarray,
    arrival_horizon: int,
    global_scales: np.ndarray,
    bound: float,
) -> None:
    """Write ``(B, observation size)`` float32 observations at the epoch start into ``out``:
    the global features (whole numbers times ``global_scales``) and the slot features, each
    clipped to ``[-bound, bound]`` (node-specific entries 0)."""
    n_clusters, n_slots = out.shape[0], slot.shape[1] - 1
    per_node = 1.0 / previous_slot.shape[1]
    whole = np.zeros(GLOBAL_FEATURES, dtype=np.int64)
    features = np.empty(SLOT_FEATURES)
    for b in range(n_clusters):
        now, queued = epoch[b], queue_length[b]
        whole[G_EPOCH] = now
        whole[G_OPEN] = now < arrival_horizon
        whole[G_QUEUE] = queued
        whole[G_QUEUE_TIME] = (queue_min_deadline[b] - now) * (queued > 0)
        whole[G_ACTIVE] = n_slots - free_slots[b]
        for index in range(GLOBAL_FEATURES):
            out[b, index] = _clipped(whole[index] * global_scales[index], bound)
        counts = _nodes_last(previous_slot, b, n_slots)
        for column in range(n_slots):
            _slot_features(features, b, column, slot, now, counts[column] * per_node)
            start = GLOBAL_FEATURES + column * SLOT_FEATURES
            for feature in range(SLOT_FEATURES):
                out[b, start + feature] = _clipped(features[feature], bound)


@njit(cache=True)
def _clipped(value: float, bound: float) -> float:
    """``min(max(value, -bound), bound)`` as NumPy's ``maximum`` and ``minimum`` take it (NaN
    stays NaN)."""
    if value < -bound:
        return -bound
    if value > bound:
        return bound
    return value
