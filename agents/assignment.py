"""Turning a priority order of slots into one action per node.

Two steps shared by the priority heuristics:

1. :func:`nodes_per_slot` hands out nodes along the priority order, one per task; when nodes
   remain after every task has one, it wraps around and gives the top tasks a second node, then
   a third, ... (never more than ``cap``, the config's ``task_node_limit``). An idle node
   trains nothing, so even with diminishing returns (``alpha < 1``) an extra node on a top task
   is worth more.
2. :func:`keep_nodes_in_place` decides which node trains which task: a node that trained a slot's
   task last epoch keeps it while that task still wants nodes (switching costs ``switch_cost``
   of an epoch); the other nodes fill the remaining places in priority order.

Example:
    >>> import numpy as np
    >>> counts = nodes_per_slot(np.array([2, 0]), n_nodes=3, n_slots=3, cap=None)
    >>> counts.tolist()
    [1, 0, 2]
    >>> keep_nodes_in_place(counts, np.array([0, 3, 3]), np.array([2, 0]), idle=3).tolist()
    [0, 2, 2]
"""

from __future__ import annotations

import numpy as np


def nodes_per_slot(order: np.ndarray, n_nodes: int, n_slots: int, cap: int | None) -> np.ndarray:
    """How many nodes each slot gets when nodes are dealt out along ``order``, wrapping around.

    Args:
        order: Slots in priority order (highest first); each slot at most once.
        n_nodes: Nodes to hand out.
        n_slots: Number of slots (length of the result).
        cap: Most nodes one slot may get (``None``: no limit); schedulers pass
            :attr:`mara_env.ClusterConfig.task_node_limit`.

    Returns:
        An int array of length ``n_slots``.
    """
    counts = np.zeros(n_slots, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    if len(order) == 0:
        return counts
    rounds = -(-n_nodes // len(order))  # never above n_nodes, so no node cap is needed here
    if cap is not None:
        rounds = min(cap, rounds)
    dealt = np.tile(order, rounds)[:n_nodes]
    np.add.at(counts, dealt, 1)
    return counts


def keep_nodes_in_place(
    counts: np.ndarray, previous: np.ndarray, order: np.ndarray, idle: int
) -> np.ndarray:
    """Assign nodes to slots so that ``counts[s]`` nodes train slot ``s``, moving few nodes.

    Args:
        counts: Nodes wanted per slot (from :func:`nodes_per_slot`).
        previous: Per node, the slot whose task it trained last epoch (``idle`` if none or if
            the task has left).
        order: Slots in priority order; free nodes fill places in this order.
        idle: The idle action.

    Returns:
        One action per node (a slot, or ``idle`` when no place is left).
    """
    wanted = np.asarray(counts, dtype=np.int64).copy()
    actions = np.full(len(previous), idle, dtype=np.int64)
    free: list[int] = []
    for node, slot in enumerate(np.asarray(previous).tolist()):
        if slot != idle and wanted[slot] > 0:
            actions[node] = slot
            wanted[slot] -= 1
        else:
            free.append(node)
    places = np.repeat(np.asarray(order, dtype=np.int64), wanted[order])
    taken = min(len(free), len(places))
    actions[free[:taken]] = places[:taken]
    return actions
