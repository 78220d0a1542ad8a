"""Action checks shared by the AEC, Parallel and Gymnasium forms.

An action out of the action space (wrong type or range) always raises :class:`ActionError`. An
action inside the space that the mask forbids (an empty slot, or a task already at
``max_nodes_per_task``) becomes idle and is counted, unless ``strict`` is set, in which case it
raises.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from mara_env.errors import ActionError
from mara_env.worlds.config import ClusterConfig

_PLAIN_INTS = (int, np.int64, np.int32, np.intp)


def check_action(action: Any, config: ClusterConfig, where: str) -> int:
    """Return ``action`` as an int in ``[0, n_slots]`` or raise :class:`ActionError`."""
    if type(action) in _PLAIN_INTS and 0 <= action <= config.n_slots:
        return int(action)  # the common case, checked cheaply
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ActionError(
            f"{where}: an action must be an int in [0, {config.n_slots}] (a slot, or "
            f"{config.idle_action} for idle), got {action!r} of type {type(action).__name__}."
        )
    value = int(action)
    if not 0 <= value <= config.n_slots:
        raise ActionError(
            f"{where}: action {value} is outside [0, {config.n_slots}] (slots 0..{config.n_slots - 1},"
            f" idle {config.idle_action})."
        )
    return value


def resolve_joint_action(
    actions: Any, occupied_mask: np.ndarray, config: ClusterConfig, *, strict: bool
) -> tuple[np.ndarray, int, int]:
    """Turn simultaneous node choices into legal ones, deterministically.

    Nodes are taken in index order: a choice of an empty slot is illegal (idle, counted); a
    choice of a task that already has ``max_nodes_per_task`` nodes from lower-indexed nodes is a
    conflict (idle, counted).

    Args:
        actions: One action per node.
        occupied_mask: The int8 action mask without the per-task limit.
        config: The cluster configuration.
        strict: Raise on an illegal action instead of idling.

    Returns:
        ``(legal slot choice per node, illegal count, conflict count)``.
    """
    if isinstance(actions, (list, tuple)):
        values: Any = actions  # each element is checked below, so a bool among ints is caught
        shape: tuple[int, ...] = (len(actions),)
    else:
        values = np.asarray(actions)
        shape = values.shape
        if values.dtype == bool:
            raise ActionError(f"joint action: each action must be an int, got booleans {values!r}.")
    if shape != (config.n_nodes,):
        raise ActionError(
            f"joint action: expected {config.n_nodes} actions (one per node), got shape {shape}."
        )
    choices = np.array(
        [check_action(value, config, f"joint action[{node}]") for node, value in enumerate(values)],
        dtype=np.int64,
    )
    legal, illegal, conflicts = resolve_batch_actions(
        choices[None], occupied_mask[None], config, strict=strict
    )
    return legal[0], int(illegal[0]), int(conflicts[0])


def resolve_batch_actions(
    actions: Any, masks: np.ndarray, config: ClusterConfig, *, strict: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`resolve_joint_action` for a batch of clusters at once.

    Args:
        actions: ``(B, n_nodes)`` integer actions (row ``b``: the nodes of cluster ``b``).
        masks: ``(B, n_slots + 1)`` int8 action masks without the per-task limit.
        config: The clusters' configuration.
        strict: Raise on an illegal action instead of idling.

    Returns:
        ``(legal slot choices (B, n_nodes), illegal counts (B,), conflict counts (B,))``.

    Raises:
        ActionError: For a wrong shape or dtype, an action outside ``[0, n_slots]``, or (with
            ``strict``) a masked action.

    Example:
        >>> import numpy as np
        >>> from mara_env import get_config
        >>> config = get_config("tiny", max_nodes_per_task=1)
        >>> masks = np.array([[1, 0, 0, 1]], dtype=np.int8)
        >>> choices, illegal, conflicts = resolve_batch_actions(
        ...     np.array([[0, 0]]), masks, config, strict=False)
        >>> choices.tolist(), conflicts.tolist()
        ([[0, 3]], [1])
    """
    values = np.asarray(actions)
    batch = masks.shape[0]
    if values.shape != (batch, config.n_nodes):
        raise ActionError(
            f"batch action: expected shape {(batch, config.n_nodes)} (clusters, nodes), got "
            f"{values.shape}."
        )
    if values.dtype == bool or values.dtype.kind not in "iu":
        raise ActionError(f"batch action: actions must be integers, got dtype {values.dtype}.")
    if values.size and (values.min() < 0 or values.max() > config.n_slots):
        raise ActionError(
            f"batch action: actions must lie in [0, {config.n_slots}] (slots 0..{config.n_slots - 1},"
            f" idle {config.idle_action}), got range [{values.min()}, {values.max()}]."
        )
    cap = config.max_nodes_per_task
    choices, illegal, conflicts, first_illegal = _resolve(
        values.astype(np.int64), masks, config.idle_action, -1 if cap is None else cap
    )
    if strict and first_illegal >= 0:
        cluster, node = divmod(first_illegal, config.n_nodes)
        where = f"node {node}" if batch == 1 else f"node {node} of cluster {cluster}"
        raise ActionError(
            f"joint action: {where} chose slot {values[cluster, node]}, which is empty "
            "(strict mode)."
        )
    return choices, illegal, conflicts


@njit(cache=True)
def _resolve(
    choices: np.ndarray, masks: np.ndarray, idle_action: int, cap: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Turn masked actions, then those over ``cap`` nodes per task (``cap < 0``: none), into
    idle, in place; the illegal and conflict counts per cluster and the flat index of the first
    illegal action (-1: none)."""
    n_clusters, n_nodes = choices.shape
    illegal = np.zeros(n_clusters, dtype=np.int64)
    conflicts = np.zeros(n_clusters, dtype=np.int64)
    chosen = np.zeros(masks.shape[1], dtype=np.int64)
    first_illegal = -1
    for b in range(n_clusters):
        chosen[:] = 0
        for node in range(n_nodes):
            action = choices[b, node]
            if masks[b, action] == 0:
                if first_illegal < 0:
                    first_illegal = b * n_nodes + node
                illegal[b] += 1
                choices[b, node] = idle_action
            elif cap >= 0 and action != idle_action:
                if chosen[action] >= cap:  # earlier nodes already took the task's share
                    conflicts[b] += 1
                    choices[b, node] = idle_action
                chosen[action] += 1
    return choices, illegal, conflicts, first_illegal
