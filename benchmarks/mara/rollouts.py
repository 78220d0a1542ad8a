"""Vectorised rollouts of the MARA scheduler for training: many clusters, one forward per node.

The clusters run in the batched multi-agent entry (:class:`mara_env.envs.batched_nodes.BatchedNodesEnv`,
one per distinct config, over the simulation core every environment form uses); each cluster has
its own :class:`mara_env.agents.mara.agent.Mara` scheduler object, which builds the epoch's features from
node 0's observation exactly as when it acts through :func:`mara_env.agents.evaluation.evaluate`. The
nodes of all clusters are then decoded together: the encoder runs once on the batch, and node
``i`` of every cluster is chosen in one forward pass, at the vector's sampling temperature (the
one the policy deploys with, so rollout log-probabilities are those of the shipped policy). Every
batch then steps its clusters at once. Each episode is reset with its own episode seed, as
``env.reset(seed=episode_seed)`` would.

Rewards are the environment's own: completions plus, with the configs' ``shaping_weight > 0``,
the potential-based progress term ``shaping_weight * (shaping_discount * Phi(s') - Phi(s))``. A
trainer sets ``shaping_discount`` to its return discount, so that the shaping telescopes in the
discounted return and leaves the optimal policy unchanged (see
:class:`mara_env.ClusterConfig`).

An optional ``critic`` (a separate network with its own parameters) supplies the value estimates;
without one the policy's own value head does.

A teacher (the clairvoyant reference, which is privileged, or another registered scheduler) can
label every epoch for imitation; its labels are targets only, the student never sees what the
teacher reads.

Example:
    >>> import torch
    >>> from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
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

from mara_env import ClusterConfig
from mara_env.agents.base import EpochScheduler, PrivilegedScheduler
from mara_env.agents.mara.agent import Mara, batch_tensors
from mara_env.agents.mara.features import EpochFeatures, NoPredictions
from mara_env.agents.mara.policy import Encoded, MaraPolicy
from mara_env.agents.registry import make_agent
from mara_env.benchmarks.common.seeds import TRAINING_SEEDS
from mara_env.benchmarks.common.stopwatch import Stopwatch
from mara_env.envs.batched_nodes import BatchedNodesEnv
from mara_env.predictors.base import Predictor, is_privileged
from mara_env.predictors.registry import make_predictor
from mara_env.sim.simulator import ClusterSimulator


@dataclass
class StepBatch:
    """One epoch of every cluster: inputs, choices and outcomes (tensors, batch first).

    ``log_prob`` is each node's log-probability at the vector's temperature; ``value`` the
    critic's raw output (a trainer with value normalisation maps it back to returns); ``reward``
    the environment's reward (completions plus the configs' shaping).
    """

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
    """What a privileged scheduler reads (the clairvoyant teacher, a policy fed the oracle):
    its cluster's simulator view and the config."""

    def __init__(self, simulator: ClusterSimulator) -> None:
        self.simulator = simulator
        self.config = simulator.config


class ClusterVector:
    """A vector of clusters stepped together by one shared policy.

    Args:
        configs: One config per cluster (e.g. cycling through workloads).
        policy: The shared network.
        seed: Seeds the sequence of training episode seeds (all below
            :data:`mara_env.benchmarks.common.seeds.TRAINING_SEEDS`).
        predictor: Predictor name for the features (``"none"``: prediction features are 0;
            ``"oracle"``, ``"oracle_noise_<sigma>"``: the privileged oracle, bound to each
            cluster every episode).
        n_samples: Prediction samples per task.
        teacher: Also label each epoch with this registered scheduler's actions (e.g.
            ``"clairvoyant"``; bound to each cluster every episode when it is privileged).
        episode_seeds: Fixed environment seeds to play once each instead of drawing seeds
            (validation); clusters that run out stop.
        temperature: Sampling temperature of every step (rollouts, validation): use the one
            the policy deploys with.
        critic: A separate value network (its ``encode(...).value``); default: the policy's.

    Raises:
        ValueError: For no configs or a non-positive temperature.
    """

    def __init__(
        self,
        configs: Sequence[ClusterConfig],
        policy: MaraPolicy,
        seed: int,
        *,
        predictor: str = "wls",
        n_samples: int = 16,
        teacher: str | None = None,
        episode_seeds: Sequence[Sequence[int]] | None = None,
        temperature: float = 1.0,
        critic: MaraPolicy | None = None,
    ) -> None:
        if not configs:
            raise ValueError("ClusterVector needs at least one config.")
        if not temperature > 0:
            raise ValueError(f"ClusterVector: temperature must be > 0, got {temperature!r}.")
        self.configs = list(configs)
        self.policy = policy
        self.critic = critic
        self.temperature = float(temperature)
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
        self.teachers = (
            None
            if teacher is None
            else [make_agent(teacher, world_version=c.world_version) for c in self.configs]
        )
        self.active = [True] * len(self.configs)
        self.finished: list[dict[str, Any]] = []
        self._features: dict[int, EpochFeatures] = {}
        self._labels: dict[int, list[int]] = {}
        self._episode_seeds = [0] * len(self.configs)
        self._node_zero: list[tuple[np.ndarray, np.ndarray]] = []
        #: Seconds of :meth:`step` spent on the features (observations, predictions, teacher
        #: labels), the policy (encoding, values, decoding) and the simulation (stepping and
        #: restarting episodes).
        self.stopwatch = Stopwatch()
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
            episode_seed = int(self._seeds.integers(TRAINING_SEEDS.stop))
        config = self.configs[index]
        batch, row = self._place[index]
        self.batches[batch].reset_clusters([row], [episode_seed])
        agent = self.agents[index]
        agent.reset(config, agent_seed(episode_seed, index))
        bound = cast(Any, _Bound(ClusterSimulator.view_of(self.batches[batch].core, row)))
        if agent.privileged:
            agent.bind(bound)
        if self.teachers is not None:
            teacher = self.teachers[index]
            teacher.reset(config, seed=episode_seed)
            if is_privileged(teacher):
                cast(PrivilegedScheduler, teacher).bind(bound)
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

    def _value(
        self, slots: torch.Tensor, globals_: torch.Tensor, encoded: Encoded | None = None
    ) -> torch.Tensor:
        """Value estimates: the critic's, or the policy's own head (read from ``encoded``, the
        policy's encoding of the same inputs, when the caller has it)."""
        if self.critic is None and encoded is not None:
            return encoded.value
        network = self.policy if self.critic is None else self.critic
        return network.encode(slots, globals_).value

    @torch.no_grad()
    def step(self, *, greedy: bool = False, follow_teacher: bool = False) -> StepBatch:
        """Play one epoch in every live cluster; finished episodes restart (or stop).

        Args:
            greedy: Take the most likely actions (default: sample at the vector's temperature,
                each cluster with the uniform draws of its own scheduler, exactly as that
                scheduler acts alone).
            follow_teacher: Execute the teacher's actions instead of the policy's (their
                log-probabilities are still the policy's at the vector's temperature).
        """
        live, watch = self.live, self.stopwatch
        with watch.part("features"):
            slots, globals_, mask, previous = batch_tensors([self._features[i] for i in live])
        with watch.part("policy"):
            encoded = self.policy.encode(slots, globals_)
            value = self._value(slots, globals_, encoded)
            teacher_actions = None
            if self.teachers is not None:
                labels = [self._labels[i] for i in live]
                teacher_actions = torch.tensor(labels, dtype=torch.int64)
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
                temperature=self.temperature,
            )
        with watch.part("simulation"):
            rewards, dones = self._advance(live, decoded.actions)
        with watch.part("features"):
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
            value=value,
            reward=torch.tensor(rewards, dtype=torch.float32),
            done=torch.tensor(dones, dtype=torch.float32),
            teacher=teacher_actions,
        )

    def _advance(self, live: list[int], actions: torch.Tensor) -> tuple[list[float], list[bool]]:
        """Step every batch with the live clusters' ``actions`` (one row each, in ``live``'s
        order); record and restart the episodes that ended; returns the rewards and dones."""
        rewards, dones = [], []
        joint = [
            np.full((batch.num_envs, batch.n_nodes), batch.config.idle_action, dtype=np.int64)
            for batch in self.batches
        ]
        for row, index in enumerate(live):
            chosen = actions[row].numpy().astype(np.int64)
            self.agents[index].end_epoch(chosen)
            teacher = None if self.teachers is None else self.teachers[index]
            if isinstance(teacher, EpochScheduler):
                # The teacher keeps nodes in place from what was executed, not from its plan.
                teacher._chosen = chosen.copy()
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
        return rewards, dones

    def inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The slot and global inputs of every live cluster's current state."""
        slots, globals_, _, _ = batch_tensors([self._features[i] for i in self.live])
        return slots, globals_

    @torch.no_grad()
    def values(self) -> torch.Tensor:
        """Value estimates of every live cluster's current state (for bootstrapping)."""
        return self._value(*self.inputs())


def feature_predictor(name: str) -> Predictor:
    """The predictor called ``name``, or :class:`NoPredictions` for ``"none"``."""
    return NoPredictions() if name == NoPredictions.name else make_predictor(name)
