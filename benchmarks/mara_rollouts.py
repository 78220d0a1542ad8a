"""Vectorised rollouts of the MARA scheduler for training: many clusters, one forward per node.

The clusters run in the batched multi-agent entry (:class:`mara_env.batched_nodes.BatchedNodesEnv`,
one per distinct config, over the simulation core every environment form uses); each cluster has
its own :class:`agents.mara.agent.Mara` scheduler object, which builds the epoch's features from
node 0's observation exactly as when it acts through :func:`agents.evaluation.evaluate`. The
nodes of all clusters are then decoded together: the encoder runs once on the batch, and node
``i`` of every cluster is chosen in one forward pass. Every batch then steps its clusters at once,
so rewards (with the config's potential-based shaping) are the environment's. Each episode is
reset with its own episode seed, as ``env.reset(seed=episode_seed)`` would.

A privileged teacher (the clairvoyant reference) can label every epoch for imitation; its labels
are targets only, the student never sees what the teacher reads.

Example:
    >>> import torch
    >>> from agents.mara.policy import MaraPolicy, PolicyConfig
    >>> from mara_env import get_config
    >>> policy = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
    >>> clusters = ClusterVector([get_config("tiny")] * 2, policy, seed=0)
    >>> batch = clusters.step()
    >>> batch.actions.shape
    torch.Size([2, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch

from agents.clairvoyant import Clairvoyant
from agents.mara.agent import Mara, batch_tensors
from agents.mara.features import EpochFeatures, NoPredictions
from agents.mara.policy import MaraPolicy
from mara_env import ClusterConfig
from mara_env.batched_nodes import BatchedNodesEnv
from mara_env.simulator import ClusterSimulator
from predictors.base import Predictor
from predictors.registry import make_predictor

#: Training episodes use environment seeds below this (evaluation uses 1000 and up).
TRAINING_SEED_LIMIT = 1000


@dataclass
class StepBatch:
    """One epoch of every cluster: inputs, choices and outcomes (tensors, batch first)."""

    slots: torch.Tensor
    globals: torch.Tensor
    mask: torch.Tensor
    previous: torch.Tensor
    actions: torch.Tensor
    log_prob: torch.Tensor
    value: torch.Tensor
    reward: torch.Tensor
    done: torch.Tensor
    teacher: torch.Tensor | None = None


def agent_seed(episode_seed: int, cluster: int) -> int:
    """The seed cluster ``cluster``'s scheduler is reset with for environment seed ``episode_seed``.

    Example:
        >>> agent_seed(3, 0) == agent_seed(3, 0) != agent_seed(3, 1)
        True
    """
    return int(np.random.SeedSequence([episode_seed, cluster]).generate_state(1)[0])


class _Bound:
    """What the clairvoyant teacher reads: its cluster's simulator view (privileged) and the
    config."""

    def __init__(self, simulator: ClusterSimulator) -> None:
        self.simulator = simulator
        self.config = simulator.config


class ClusterVector:
    """A vector of clusters stepped together by one shared policy.

    Args:
        configs: One config per cluster (e.g. cycling through workloads).
        policy: The shared network.
        seed: Seeds the sequence of training episode seeds (all below
            :data:`TRAINING_SEED_LIMIT`).
        predictor: Predictor name for the features (``"none"``: prediction features are 0).
        n_samples: Prediction samples per task.
        teacher: Also label each epoch with the clairvoyant reference's actions.
        episode_seeds: Fixed environment seeds to play once each instead of drawing seeds
            (validation); clusters that run out stop.
    """

    def __init__(
        self,
        configs: Sequence[ClusterConfig],
        policy: MaraPolicy,
        seed: int,
        *,
        predictor: str = "wls",
        n_samples: int = 16,
        teacher: bool = False,
        episode_seeds: Sequence[Sequence[int]] | None = None,
    ) -> None:
        if not configs:
            raise ValueError("ClusterVector needs at least one config.")
        self.configs = list(configs)
        self.policy = policy
        self._seeds = np.random.default_rng(seed)
        self._queues = None if episode_seeds is None else [list(s) for s in episode_seeds]
        groups: dict[ClusterConfig, list[int]] = {}
        for index, config in enumerate(self.configs):
            groups.setdefault(config, []).append(index)
        self.batches: list[BatchedNodesEnv] = []
        self._members: list[list[int]] = []
        self._place = [(0, 0)] * len(self.configs)  # cluster -> (its batch, its row there)
        for config, members in groups.items():
            for row, index in enumerate(members):
                self._place[index] = (len(self.batches), row)
            batch = BatchedNodesEnv(len(members), config, autoreset=False)
            batch.reset(seed=0)  # every cluster has an episode, even one that never plays
            self.batches.append(batch)
            self._members.append(members)
        self.agents = [
            Mara(
                policy,
                feature_predictor(predictor),
                n_samples,
                greedy=False,
                predictor_name=predictor,
            )
            for _ in self.configs
        ]
        self.teachers = [Clairvoyant() for _ in self.configs] if teacher else None
        self.active = [True] * len(self.configs)
        self.finished: list[dict[str, Any]] = []
        self._features: dict[int, EpochFeatures] = {}
        self._labels: dict[int, list[int]] = {}
        self._episode_seeds = [0] * len(self.configs)
        self._node_zero: list[tuple[np.ndarray, np.ndarray]] = []
        for index in range(len(self.configs)):
            self._start(index)
        self._observe_node_zero()
        for index in self.live:
            self._observe(index)

    def _observe_node_zero(self) -> None:
        """Node 0's observations and masks in every batch (before any node chose)."""
        self._node_zero = [
            batch.observe(np.zeros((batch.num_envs, 0), dtype=np.int64)) for batch in self.batches
        ]

    def _start(self, index: int) -> None:
        if self._queues is not None:
            if not self._queues[index]:
                self.active[index] = False
                return
            episode_seed = self._queues[index].pop(0)
        else:
            episode_seed = int(self._seeds.integers(TRAINING_SEED_LIMIT))
        config = self.configs[index]
        batch, row = self._place[index]
        self.batches[batch].reset_clusters([row], [episode_seed])
        self.agents[index].reset(config, agent_seed(episode_seed, index))
        if self.teachers is not None:
            teacher = self.teachers[index]
            teacher.reset(config, seed=episode_seed)
            simulator = ClusterSimulator.view_of(self.batches[batch].core, row)
            teacher.bind(cast(Any, _Bound(simulator)))
        self._episode_seeds[index] = episode_seed

    def _observe(self, index: int) -> None:
        """Build the current epoch's features (and teacher labels) of cluster ``index``."""
        batch, row = self._place[index]
        observation, mask = self._node_zero[batch]
        observation, mask = observation[row], mask[row]
        self._features[index] = self.agents[index].begin_epoch(observation, mask)
        if self.teachers is not None:
            teacher = self.teachers[index]
            given = {"observation": observation, "action_mask": mask}
            n_nodes = self.configs[index].n_nodes
            self._labels[index] = [teacher.act(given, node) for node in range(n_nodes)]

    @property
    def live(self) -> list[int]:
        """Indices of the clusters still playing."""
        return [i for i, on in enumerate(self.active) if on]

    @torch.no_grad()
    def step(
        self, *, greedy: bool = False, follow_teacher: bool = False, temperature: float = 1.0
    ) -> StepBatch:
        """Play one epoch in every live cluster; finished episodes restart (or stop).

        Args:
            greedy: Take the most likely actions (default: sample, each cluster with the
                uniform draws of its own scheduler, exactly as that scheduler acts alone).
            follow_teacher: Execute the teacher's actions instead of the policy's.
            temperature: Sampling temperature (validation only: training samples at 1).
        """
        live = self.live
        slots, globals_, mask, previous = batch_tensors([self._features[i] for i in live])
        encoded = self.policy.encode(slots, globals_)
        teacher_actions = None
        if self.teachers is not None:
            teacher_actions = torch.tensor([self._labels[i] for i in live], dtype=torch.int64)
        uniforms = None
        if not (greedy or follow_teacher):
            uniforms = torch.stack([self.agents[i].draws() for i in live])
        decoded = self.policy.decode(
            encoded,
            mask,
            previous,
            greedy=greedy,
            uniforms=uniforms,
            max_nodes_per_task=self.configs[0].max_nodes_per_task,
            actions=teacher_actions if follow_teacher else None,
            temperature=temperature,
        )
        rewards, dones = [], []
        joint = [
            np.full((batch.num_envs, batch.n_nodes), batch.config.idle_action, dtype=np.int64)
            for batch in self.batches
        ]
        for row, index in enumerate(live):
            chosen = decoded.actions[row].numpy().astype(np.int64)
            self.agents[index].end_epoch(chosen)
            if self.teachers is not None:
                # The teacher keeps nodes in place from what was executed, not from its plan.
                self.teachers[index]._chosen = chosen.copy()
            batch, place = self._place[index]
            joint[batch][place] = chosen
        outcomes = [batch.step(choices) for batch, choices in zip(self.batches, joint, strict=True)]
        for index in live:
            batch, place = self._place[index]
            batch_rewards, terminated, truncated, _ = outcomes[batch]
            done = bool(terminated[place] or truncated[place])
            rewards.append(float(batch_rewards[place]))
            dones.append(done)
            if done:
                metrics = self.batches[batch].episode_metrics(place)
                metrics["cluster"] = index
                metrics["seed"] = self._episode_seeds[index]
                self.finished.append(metrics)
                self._start(index)
        self._observe_node_zero()
        for index in live:
            if self.active[index]:
                self._observe(index)
        return StepBatch(
            slots=slots,
            globals=globals_,
            mask=mask,
            previous=previous,
            actions=decoded.actions,
            log_prob=decoded.log_prob,
            value=encoded.value,
            reward=torch.tensor(rewards, dtype=torch.float32),
            done=torch.tensor(dones, dtype=torch.float32),
            teacher=teacher_actions,
        )

    @torch.no_grad()
    def values(self) -> torch.Tensor:
        """Value estimates of every live cluster's current state (for bootstrapping)."""
        slots, globals_, _, _ = batch_tensors([self._features[i] for i in self.live])
        return self.policy.encode(slots, globals_).value


def feature_predictor(name: str) -> Predictor:
    """The predictor called ``name``, or :class:`NoPredictions` for ``"none"``."""
    return NoPredictions() if name == NoPredictions.name else make_predictor(name)
