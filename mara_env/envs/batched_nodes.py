"""A batched multi-agent entry: every node of ``num_envs`` clusters, as arrays, for MARL trainers.

The AEC form lets node ``i`` see the choices of nodes ``0..i-1`` of the same epoch, which is what
makes a policy autoregressive. Here the caller's decoder supplies those "choices so far": it asks
for node ``i``'s observations and masks in all clusters at once given the earlier nodes'
choices (:meth:`BatchedNodesEnv.observe`), or for every node's at once given a whole joint
choice (:meth:`BatchedNodesEnv.observe_all`, e.g. to recompute log-probabilities in a PPO
update), and then steps every cluster with the joint choice.

Each cluster is the AEC env (:mod:`mara_env.envs.aec_env`) played on one cluster of a
:class:`mara_env.sim.core.ClusterBatch`: node ``i``'s observation and mask given the choices of
nodes ``0..i-1`` are those the AEC env gives node ``i`` after they stepped with those choices, and
:meth:`~BatchedNodesEnv.step` pays the AEC env's shared reward. A masked choice (an empty slot,
or a task already at ``max_nodes_per_task``) becomes idle and is counted in
``illegal_actions``, as in the AEC env; ``strict=True`` raises instead. Sub-env ``b`` of
``reset(seed=s)`` plays the episodes of the AEC env reset with ``seed=s + b``; finished clusters
are reset at the next step (``NEXT_STEP`` autoreset: the joint choice given for them is ignored,
they pay reward 0 and return the new episode's first observations).

Example (a decoder that picks uniformly among the legal actions, node by node):
    >>> import numpy as np
    >>> from mara_env.envs.batched_nodes import BatchedNodesEnv
    >>> envs = BatchedNodesEnv(8, config="tiny")
    >>> envs.reset(seed=0)
    >>> rng = np.random.default_rng(0)
    >>> for epoch in range(5):
    ...     choices = np.zeros((envs.num_envs, 0), dtype=np.int64)
    ...     for node in range(envs.n_nodes):
    ...         observations, masks = envs.observe(choices)  # node `node` in every cluster
    ...         scores = rng.random(masks.shape) * masks
    ...         choices = np.column_stack((choices, scores.argmax(axis=1)))
    ...     rewards, terminations, truncations, infos = envs.step(choices)
    >>> observations.shape, rewards.shape
    ((8, 68), (8,))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.utils import seeding

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.actions import resolve_batch_actions
from mara_env.envs.env_base import build_spaces
from mara_env.envs.infos import batch_reset_infos, merge_rows, with_masks
from mara_env.envs.vector_env import advance_batch, sub_env_seeds
from mara_env.errors import ActionError, EnvStateError
from mara_env.sim.core import ClusterBatch
from mara_env.sim.observation import (
    G_DECIDED,
    G_IDLE,
    G_NODE,
    GLOBAL_FEATURES,
    S_MINE,
    S_NODES_NOW,
    SLOT_FEATURES,
    occupied_masks,
    shared_observations,
    state_vectors,
)
from mara_env.worlds.config import ClusterConfig, check_keywords, keyword_parameters
from mara_env.worlds.presets import get_config


class BatchedNodesEnv:
    """Every node of ``num_envs`` clusters; see the module docstring.

    Args:
        num_envs: Number of clusters.
        config: A preset name or a ``ClusterConfig``; keyword overrides as for the AEC env.
        trace_source: Where curves come from.
        strict: Raise on masked choices instead of idling.
        autoreset: Reset finished clusters at the next step (``NEXT_STEP``); with ``False`` a
            finished cluster stays as it ended (its choices are ignored and it pays 0) until
            :meth:`reset_clusters` starts its next episode.

    Attributes:
        core: The batched simulation core.
        config: The resolved configuration.
        observation_space, action_space, state_space: One node's spaces (the AEC env's).
    """

    def __init__(
        self,
        num_envs: int,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSourceLike | None = None,
        strict: bool = False,
        autoreset: bool = True,
        **overrides: Any,
    ) -> None:
        check_keywords(overrides, "BatchedNodesEnv.__init__()", keyword_parameters(BatchedNodesEnv))
        self.config = get_config(config, **overrides)
        self.autoreset = autoreset
        self.core = ClusterBatch(self.config, num_envs, trace_source)
        self.num_envs = self.core.batch_size
        self.n_nodes = self.config.n_nodes
        self.strict = strict
        node_space, action_space, self.state_space = build_spaces(self.config)
        self.observation_space = node_space["observation"]
        self.action_space = action_space
        self.np_randoms = [seeding.np_random()[0] for _ in range(self.num_envs)]
        self._everyone = np.arange(self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._shared = np.zeros((self.num_envs, 0), dtype=np.float32)
        self._masks = np.zeros((self.num_envs, self.config.n_actions), dtype=np.int8)
        slot_offsets = GLOBAL_FEATURES + SLOT_FEATURES * np.arange(self.config.n_slots)
        self._now_index = slot_offsets + S_NODES_NOW
        self._mine_index = slot_offsets + S_MINE
        self._started = False

    def reset(self, seed: int | list[int | None] | None = None) -> None:
        """Reset every cluster; cluster ``i`` with ``seed + i`` (or ``seed[i]``)."""
        for index, sub_seed in enumerate(sub_env_seeds(seed, self.num_envs)):
            if sub_seed is not None:
                self.np_randoms[index] = seeding.np_random(sub_seed)[0]
        self.core.reset(self._everyone, self.np_randoms)
        self._autoreset[:] = False
        self._refresh()
        self._started = True

    def reset_clusters(self, clusters: Any, seeds: list[int | None]) -> None:
        """Start the next episode of each of ``clusters``: with a new generator from its seed,
        or (``None``) continuing the cluster's own."""
        indices = np.asarray(clusters, dtype=np.int64).reshape(-1)
        if len(seeds) != len(indices):
            raise ValueError(f"reset_clusters: {len(indices)} clusters but {len(seeds)} seeds.")
        for index, sub_seed in zip(indices.tolist(), seeds, strict=True):
            if sub_seed is not None:
                self.np_randoms[index] = seeding.np_random(sub_seed)[0]
        self.core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
        self._autoreset[indices] = False
        self._refresh()
        self._started = True

    def _refresh(self) -> None:
        self._shared = shared_observations(self.core)
        self._masks = occupied_masks(self.core)

    def _check_started(self) -> None:
        if not self._started:
            raise EnvStateError("call reset(seed=...) before observing or stepping.")

    def _resolve(self, choices: Any, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first ``width`` nodes' choices, legal as the AEC env makes them (padded with
        idle to all nodes), their illegal counts per cluster, and the per-slot counts."""
        values = np.asarray(choices)
        if values.shape != (self.num_envs, width):
            raise ActionError(
                f"BatchedNodesEnv: expected choices of shape {(self.num_envs, width)} (clusters, "
                f"nodes so far), got {values.shape}."
            )
        padded = np.full((self.num_envs, self.n_nodes), self.config.idle_action, dtype=np.int64)
        if width:
            if values.dtype == bool or values.dtype.kind not in "iu":
                raise ActionError(f"BatchedNodesEnv: choices must be integers, got {values.dtype}.")
            padded[:, :width] = values
        legal, illegal, over_cap = resolve_batch_actions(
            padded, self._masks, self.config, strict=self.strict
        )
        if self.strict and over_cap.any():
            cluster = int(np.flatnonzero(over_cap)[0])
            raise ActionError(
                f"BatchedNodesEnv: cluster {cluster} chose a task already at max_nodes_per_task "
                "(strict mode)."
            )
        return legal, illegal + over_cap, legal[:, :width]

    def observe(self, choices_so_far: Any) -> tuple[np.ndarray, np.ndarray]:
        """Observations and masks of node ``i = choices_so_far.shape[1]`` in every cluster.

        Args:
            choices_so_far: ``(num_envs, i)`` the choices of nodes ``0..i-1`` this epoch.

        Returns:
            ``(num_envs, observation size)`` float32 and ``(num_envs, n_slots + 1)`` int8.
        """
        self._check_started()
        width = np.shape(choices_so_far)[1] if np.ndim(choices_so_far) == 2 else -1
        if not 0 <= width < self.n_nodes:
            raise ActionError(
                f"BatchedNodesEnv.observe: expected (num_envs, i) choices with i < {self.n_nodes}, "
                f"got shape {np.shape(choices_so_far)}."
            )
        legal, _, _ = self._resolve(choices_so_far, width)
        counts = self._counts(legal[:, :width])[:, None, :]
        observations, masks = self._node_views(counts, np.array([width]))
        return observations[:, 0], masks[:, 0]

    def observe_all(self, choices: Any) -> tuple[np.ndarray, np.ndarray]:
        """Every node's observations and masks given a whole joint choice (node ``i`` sees the
        choices of nodes ``0..i-1``).

        Returns:
            ``(num_envs, n_nodes, observation size)`` float32 and
            ``(num_envs, n_nodes, n_slots + 1)`` int8.
        """
        self._check_started()
        legal, _, _ = self._resolve(choices, self.n_nodes)
        one_hot = legal[:, :, None] == np.arange(self.config.n_actions)
        before = np.cumsum(one_hot, axis=1) - one_hot  # per node: choices of the nodes before
        return self._node_views(before, np.arange(self.n_nodes))

    def _counts(self, legal: np.ndarray) -> np.ndarray:
        """``(num_envs, n_actions)`` how many of the given choices went to each action."""
        return (legal[:, :, None] == np.arange(self.config.n_actions)).sum(axis=1)

    def _epoch_views(self, counts: np.ndarray, decided: np.ndarray) -> np.ndarray:
        """The shared observations after ``decided[j]`` nodes chose, ``counts[:, j]`` per action
        (``(num_envs, len(decided), size)``; node-specific entries 0)."""
        n_slots, per_node = self.config.n_slots, 1.0 / self.n_nodes
        views = np.repeat(self._shared[:, None, :], len(decided), axis=1)
        views[:, :, G_DECIDED] = decided[None, :] * per_node
        slot_counts = counts[:, :, :n_slots]
        chosen = slot_counts > 0
        values = views[:, :, self._now_index]
        values[chosen] = slot_counts[chosen] * per_node
        views[:, :, self._now_index] = values
        return views

    def _node_views(self, counts: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_slots = self.config.n_slots
        observations = self._epoch_views(counts, nodes)
        observations[:, :, G_NODE] = nodes[None, :] * (1.0 / self.n_nodes)
        previous = self.core.previous_slot[:, nodes]
        cluster, row = np.nonzero(previous < n_slots)
        observations[cluster, row, self._mine_index[previous[cluster, row]]] = 1.0
        idle_cluster, idle_row = np.nonzero(previous >= n_slots)
        observations[idle_cluster, idle_row, G_IDLE] = 1.0
        masks = np.repeat(self._masks[:, None, :], len(nodes), axis=1)
        cap = self.config.max_nodes_per_task
        if cap is not None:
            full = counts[:, :, :n_slots] >= cap
            masks[:, :, :n_slots][full] = 0
        return observations, masks

    def state(self, choices_so_far: Any | None = None) -> np.ndarray:
        """``(num_envs, state size)`` centralised states (the AEC env's ``state()``) given the
        choices of the first nodes this epoch (``None``: none yet)."""
        self._check_started()
        if choices_so_far is None:
            choices_so_far = np.zeros((self.num_envs, 0), dtype=np.int64)
        width = np.shape(choices_so_far)[1] if np.ndim(choices_so_far) == 2 else -1
        if not 0 <= width <= self.n_nodes:
            raise ActionError(
                f"BatchedNodesEnv.state: expected (num_envs, i) choices with i <= {self.n_nodes}, "
                f"got shape {np.shape(choices_so_far)}."
            )
        legal, _, _ = self._resolve(choices_so_far, width)
        legal[:, width:] = self.config.idle_action
        counts = self._counts(legal[:, :width])[:, None, :]
        shared = self._epoch_views(counts, np.array([width]))[:, 0]
        return state_vectors(self.core, shared, legal)

    def masks(self) -> np.ndarray:
        """``(num_envs, n_slots + 1)`` int8 masks at the epoch start (node 0's)."""
        self._check_started()
        return self._masks.copy()

    def step(self, choices: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Run one epoch in every cluster with the joint ``(num_envs, n_nodes)`` choice.

        Returns:
            ``(rewards, terminations, truncations, infos)``, each ``(num_envs,)``; infos as the
            vector env's (:mod:`mara_env.envs.infos`, without ``action_mask``): a cluster reset by
            this step reports its reset info, one left finished (``autoreset=False``) is
            masked out.
        """
        self._check_started()
        core, config = self.core, self.config
        legal, illegal, _ = self._resolve(choices, self.n_nodes)
        resetting = self._autoreset
        if resetting.any():
            legal[resetting] = config.idle_action
            illegal[resetting] = 0
        core.illegal_actions += illegal
        rewards, terminated, truncated, infos = advance_batch(
            core, legal, illegal, np.zeros_like(illegal)
        )
        stepped = ~resetting
        if resetting.any():
            if self.autoreset:
                indices = np.flatnonzero(resetting)
                core.reset(indices, [self.np_randoms[i] for i in indices.tolist()])
                infos = merge_rows(infos, batch_reset_infos(core), resetting)
            rewards = np.where(resetting, 0.0, rewards)
            terminated &= stepped
            truncated &= stepped
        self._autoreset |= terminated | truncated
        if self.autoreset:
            self._autoreset = terminated | truncated
        self._refresh()
        present = stepped | resetting if self.autoreset else stepped
        return rewards.astype(np.float64), terminated, truncated, with_masks(infos, present)

    def episode_metrics(self, index: int) -> dict[str, float]:
        """Metrics of cluster ``index``'s current episode."""
        return self.core.episode_metrics(index)
