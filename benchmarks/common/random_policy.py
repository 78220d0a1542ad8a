"""The random masked policy every benchmark drives environments with: a uniformly random legal
action, for one agent or for a whole batch of nodes at once.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> random_legal_action(rng, np.array([0, 1, 0, 1], dtype=np.int8)) in (1, 3)
    True
    >>> pick_legal_actions(np.array([[[False, True, True]]]), np.array([[0.9]])).tolist()
    [[2]]
"""

from __future__ import annotations

import numpy as np
from numba import njit


def random_legal_action(rng: np.random.Generator, mask: np.ndarray) -> int:
    """A uniformly random action among those ``mask`` allows (``mask`` is a 0/1 vector).

    Written for speed (one or two microseconds), so the policy weighs as little as possible in
    the figures.
    """
    legal = mask.nonzero()[0]
    return int(legal[int(rng.random() * legal.size)])


@njit(cache=True)
def pick_legal_actions(masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Each node's action uniform among its legal ones, batched: for ``masks`` of shape
    ``(envs, nodes, actions)`` and ``uniforms`` of shape ``(envs, nodes)`` in [0, 1), the
    ``floor(u * n_legal)``-th legal action of each node (the pick of
    :func:`random_legal_action`, compiled so that the policy weighs as little per node-decision
    in the vector figures as it does per agent-step in the AEC ones)."""
    n_envs, n_nodes, n_actions = masks.shape
    actions = np.empty((n_envs, n_nodes), dtype=np.int64)
    for env in range(n_envs):
        for node in range(n_nodes):
            legal = 0
            for action in range(n_actions):
                legal += masks[env, node, action]
            left = int(uniforms[env, node] * legal)
            for action in range(n_actions):
                if masks[env, node, action]:
                    if left == 0:
                        actions[env, node] = action
                        break
                    left -= 1
    return actions
