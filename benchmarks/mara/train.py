"""Train the MARA policy: imitation warm start, then PPO; write a checkpoint and its card.

Two runs make the two shipped checkpoints (see "How the shipped checkpoints were made" below)::

    python -m benchmarks.mara.train --updates 0 --out agents/checkpoints/mara_imitation.pt \
        --log benchmarks/results/mara/mara_imitation_training.csv \
        --plot benchmarks/results/mara/mara_imitation_training.png
    python -m benchmarks.mara.train --init agents/checkpoints/mara_imitation.pt \
        --dagger-rounds 0 --rollout-lag 1 --lr 2.5e-4 --lr-schedule linear --kl-coef 0.02 \
        --minutes 35 --updates 10000 --out benchmarks/results/mara/mara_ppo.pt
    python -m benchmarks.mara.train --quick --out /tmp/mara_quick.pt     # smoke test

Training uses only the ``training`` preset (train split of the curves, load 1.4) with episode
seeds below 1000, cycling the clusters through the in-distribution, RL and vision workloads; the
evaluation seeds (1000 and up, test split) are never played. The policy acts at the temperature
it ships with (``--temperature``, 0.35) everywhere it plays: DAgger rollouts, PPO rollouts (so the
ratio's old log-probabilities are the deployed policy's), the update's log-probabilities,
validation and the saved checkpoint.

1. **Warm start by imitation** (DAgger): the clairvoyant reference labels every epoch with its
   node actions; the first round executes the teacher's actions, later rounds the student's own
   sampled actions, and the student is fitted to all labels gathered so far (cross-entropy of
   each node's label at temperature 1 on the logits, earlier nodes conditioned on the earlier
   labels; the deployed temperature then sharpens the fitted distribution). The teacher reads
   hidden curves, but only its labels are used; the student sees observations only. Rounds stop
   after ``--dagger-rounds`` or ``--imitation-minutes``.
2. **PPO** for the autoregressive joint action: clipped ratio per node with the shared advantage
   of the epoch (normalised per update); a **critic with its own parameters and optimiser** (a
   copy of the warm start's network whose value output alone is trained), so the value loss
   cannot move the policy; value targets normalised by running, debiased statistics
   (:class:`ValueNorm`, MAPPO's); GAE with ``gamma`` 0.99 and ``lambda`` 0.5 (a short lambda
   trades some bias for much less variance); rollouts of ``--clusters``
   x ``--rollout-epochs`` cluster-epochs per update (48 x 64 = 3,072); the reward is completions
   plus the environment's potential-based shaping **at the same gamma** (``gamma * Phi(s') -
   Phi(s)``: the configs' ``shaping_discount`` is ``gamma``); a **KL
   anchor** to the warm start (``--kl-coef`` times the k3 estimate of KL(policy || warm start)
   per node on the rollout's actions) instead of a teacher log-likelihood term; **KL control**:
   an update's epochs stop once the approximate KL from the rollout policy per node exceeds
   ``--target-kl``. The first ``--value-warmup`` updates train only the critic.
3. **Selection and confirmation**: every ``--validate-every`` updates the policy plays a fixed
   validation set (train split, seeds 900-909 x the three workloads = 30 episodes, at the
   deployed temperature); the best validation (the starting weights count as update 0) is kept,
   then confirmed on 30 other training-seed episodes never used for choosing (seeds 950-959 x
   3), paired against the starting weights; the card records both. By default
   (``--validation-workers 1``) a worker process plays the validation episodes of a snapshot
   of the weights on the second core while the next updates train, and the log rows wait for
   their score: the log, the kept weights and the card's scores are the same as when this
   process plays them (``--validation-workers 0``), which the tests check. The shipped
   checkpoints below were trained before the worker existed, validating in the training
   process.
4. **Lagged rollouts** (``--rollout-lag 1``; off by default, and the shipped checkpoints were
   trained without them): a worker process plays each update's rollouts with the weights of
   the update before, while this process trains on the rollouts before those
   (:mod:`benchmarks.mara.rollout_worker`). PPO's ratio divides by the log-probabilities the
   rollout policy had, and the critic recomputes the rollout's values before GAE, so the
   update stays correct for the policy that played; the price is one update of lag.

How the shipped checkpoints were made (2 CPU cores, x86_64, shared with other tests and
benchmarks; one torch thread): the figures of each run are in its card
(``agents/checkpoints/mara*.json``: settings, command, wall minutes, cluster-epochs per second,
validation and confirmation scores) and its log (``benchmarks/results/mara/*_training.csv``);
``benchmarks/results/mara/README.md`` holds the evaluation.

* ``mara_imitation.pt``: the first command above (the defaults, ``--updates 0``), on the
  features of the target-blind flow-matching predictor (``flow_matching_without_target``, the
  default ``--predictor``). The 20-minute imitation budget allowed 9 of
  the 14 DAgger rounds (21,600 cluster-epochs, 18.9 per second, while other jobs held the
  second core); round 7 was best on validation (0.563), and it scored 0.516 on the
  confirmation episodes. 19.8 minutes of wall time.
* ``mara.pt``: the second command (the third PPO recipe): the defaults with lagged rollouts
  (``--rollout-lag 1``), a learning rate five times as high (2.5e-4) falling linearly to 0
  over the 35-minute budget (``--lr-schedule linear``) and a KL anchor a fifth as strong
  (0.02). 191 PPO updates of 3,072 cluster-epochs (586,752 cluster-epochs, 277 per second with
  the rollout and validation workers; 35.6 minutes of wall time).
  Validation rose from 0.563 (update 0) to 0.616 (update 184, kept); on the confirmation
  episodes the kept weights score 0.575 against the warm start's 0.516, a paired +5.9 points
  [+4.0, +7.9]. Before it replaced the second recipe's result, the two played 60 training
  episodes that took part in no choice (``python -m benchmarks.mara.compare
  benchmarks/results/mara/mara_ppo_second_recipe.pt mara``, seeds 960-979 x 3 workloads):
  +1.1 points [+0.2, +1.9]. The same file is ``benchmarks/results/mara/mara_ppo.pt``.
* ``benchmarks/results/mara/mara_ppo_second_recipe.pt``: the second recipe, shipped as ``mara``
  until the run above replaced it: the third recipe's settings with a constant learning rate of
  1.5e-4 and a 25-minute budget. 166 updates (509,952 cluster-epochs, 333 per second; 25.5
  minutes of wall time), validation 0.563 -> 0.607 (update 136), confirmation +5.2 points
  [+3.8, +6.7] over the warm start; against the first recipe's result on seeds 960-979 x 3,
  +1.5 points [+0.6, +2.3]. Continuing it by 58 more updates at 5e-5 (11 minutes) did not
  help: -0.7 points [-1.7, +0.2] on the confirmation episodes
  (``benchmarks/results/mara/ppo_continuation_training.*``).
* ``benchmarks/results/mara/mara_ppo_first_recipe.pt``: the first PPO recipe, the defaults with
  ``--init`` (learning rate 5e-5, KL anchor 0.1, no lag, 30 minutes): 38 updates (116,736
  cluster-epochs, 62.7 per second; 32.2 minutes of wall time), validation 0.563 -> 0.593,
  confirmation +3.9 points [+2.5, +5.5] over the warm start. It shipped as ``mara`` until the
  second recipe replaced it. The same recipe with ``--rollout-lag 1`` for 30 minutes (174 updates) scored the
  same on the confirmation episodes: more updates alone did not help; the larger steps with the
  weaker anchor did (the two were changed together, so which one matters is not known).
* Throughput: the first recipe's run made about 60 cluster-epochs per second on one core,
  about 220k per hour; the second recipe's run, with lagged rollouts, 333 (1.2 million per
  hour), the shipped run 277 (0.997 million per hour, just under 1 million, on a slower day). With
  the validation worker on the second core and no lag, 6 PPO updates from
  ``mara_imitation.pt`` (``--updates 6 --validate-every 2``, nothing else running, on a slower
  day) took 203 s at 90.8 cluster-epochs per second, against 268 s at 68.9 per second with
  ``--validation-workers 0``, the same log and weights. An earlier cProfile of 3 updates: the
  rollouts 47% of the time (the prediction features 30%, of which the flow-matching predictor,
  called once per cluster and epoch, 15%), the critic's update 19%, the policy's 19%, the
  simulator 3%.

Outputs: the checkpoint, a CSV log (``--log``) and a plot of validation completion rate against
updates (``--plot``). ``--ablation`` trains a variant: ``no_predictions`` (prediction features
constant), ``independent`` (nodes do not see earlier nodes' choices), ``no_shaping`` (completion
reward only). The same seed and budget give the same result (``--minutes`` and
``--imitation-minutes`` stop early by wall clock and then break that).
"""

from __future__ import annotations

import argparse
import copy
import csv
import platform
import sys
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from agents.mara.agent import Mara
from agents.mara.policy import MaraPolicy, PolicyConfig
from agents.statistics import mean_ci
from benchmarks.common.arguments import attribute_help
from benchmarks.common.machine import platform_line
from benchmarks.common.seeds import training_seeds
from benchmarks.mara.rollout_worker import Rollout, RolloutPlan, RolloutWorker
from benchmarks.mara.rollouts import ClusterVector, StepBatch, feature_predictor
from benchmarks.mara.validation import (
    Episodes,
    ValidationPlayer,
    agent_episodes,
    play_episodes,
    weights_snapshot,
)
from mara_env import ClusterConfig, get_config
from predictors.checkpoint import CheckpointError

WORKLOADS = ("in_distribution", "rl", "vision")
ABLATIONS = ("none", "no_predictions", "independent", "no_shaping")
LR_SCHEDULES = ("constant", "linear")
#: Validation episodes (train split), per workload: the checkpoint is chosen on these.
VALIDATION_SEEDS = training_seeds(900, 10, where="mara.train validation")
#: Confirmation episodes (train split), per workload: never used for choosing.
CONFIRMATION_SEEDS = training_seeds(950, 10, where="mara.train confirmation")
LOG_FIELDS = (
    "phase",
    "update",
    "wall_seconds",
    "env_epochs",
    "epochs_per_second",
    "train_completion",
    "validation_completion",
    "imitation_loss",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "anchor_kl",
    "policy_epochs",
    "policy_lr",
)


@dataclass(frozen=True)
class TrainSettings:
    """Everything that defines a training run (defaults: the first PPO recipe; the shipped PPO
    run changed ``rollout_lag``, ``lr``, ``kl_coef`` and ``minutes``, see the module docstring).

    Attributes:
        seed: Seeds the network, the episode draws and the minibatch orders.
        preset: ``"training"`` (train split, load 1.4) or ``"tiny"`` (smoke tests).
        clusters: Clusters stepped together in PPO rollouts.
        imitation_clusters: Clusters stepped together in DAgger rollouts.
        width, layers, heads: Network sizes (:class:`agents.mara.policy.PolicyConfig`): embedding
            width, transformer encoder layers, attention heads.
        predictor: Predictor behind the prediction features (the target-blind flow matching
            the shipped policy was trained with; ``flow_matching`` reads the target too).
        n_samples: Prediction samples per task.
        ablation: A part taken away (:data:`ABLATIONS`): ``none`` (the full recipe),
            ``no_predictions`` (prediction features held constant), ``independent`` (nodes do not
            see earlier nodes' choices), ``no_shaping`` (completion reward only).
        dagger_rounds: DAgger rounds (0: no imitation, e.g. with ``--init``).
        dagger_epochs: Epochs every imitation cluster plays per round.
        imitation_passes: Passes over the gathered labels per round.
        imitation_lr: Adam learning rate of imitation.
        imitation_minutes: Wall-clock budget of the imitation phase.
        updates: PPO updates at most (0: imitation only).
        rollout_epochs: Epochs every cluster plays per update.
        ppo_epochs: Passes over each rollout (policy and critic).
        minibatch: Cluster-epochs per minibatch.
        lr: Adam learning rate of the policy (at the first PPO update).
        lr_schedule: ``constant``, or ``linear``: the policy's learning rate falls linearly to 0
            over the PPO budget, whichever of ``updates`` and ``minutes`` is nearer its end.
        critic_lr: Adam learning rate of the critic.
        clip: PPO ratio clip.
        gamma: Discount of the returns and of the shaping.
        gae_lambda: GAE lambda.
        entropy_coef: Entropy bonus per node.
        kl_coef: Weight of the KL anchor to the starting weights (per node).
        target_kl: An update stops its epochs once the approximate KL per node from the
            rollout policy exceeds this (0: no early stop).
        value_warmup: First updates that train only the critic.
        validate_every: Updates between validations.
        validation_seeds: Validation seeds per workload (from 900).
        temperature: Sampling temperature of every rollout, ratio, validation and of the
            saved checkpoint.
        shaping: Weight of the progress shaping (0 for the ``no_shaping`` ablation).
        minutes: Wall-clock budget of the PPO phase.
        rollout_lag: 0: every update's rollouts are played with the current weights, in this
            process, before the update (on-policy). 1: a worker process plays them with the
            weights of one update before, while this process trains on the previous rollouts
            (:mod:`benchmarks.mara.rollout_worker`): both cores busy, the ratio's old
            log-probabilities are the rollout policy's, and the critic's values are
            recomputed by the current critic.
    """

    seed: int = 0
    preset: str = "training"
    clusters: int = 48
    imitation_clusters: int = 12
    width: int = 64
    layers: int = 2
    heads: int = 4
    predictor: str = "flow_matching_without_target"
    n_samples: int = 16
    ablation: str = "none"
    dagger_rounds: int = 14
    dagger_epochs: int = 200
    imitation_passes: int = 6
    imitation_lr: float = 1e-3
    imitation_minutes: float = 20.0
    updates: int = 500
    rollout_epochs: int = 64
    ppo_epochs: int = 4
    minibatch: int = 512
    lr: float = 5e-5
    lr_schedule: str = "constant"
    critic_lr: float = 5e-4
    clip: float = 0.1
    gamma: float = 0.99
    gae_lambda: float = 0.5
    entropy_coef: float = 0.0
    kl_coef: float = 0.1
    target_kl: float = 0.02
    value_warmup: int = 2
    validate_every: int = 4
    validation_seeds: int = 10
    temperature: float = 0.35
    shaping: float = 1.0
    minutes: float = 30.0
    rollout_lag: int = 0

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise ValueError(
                f"TrainSettings.ablation must be one of {ABLATIONS}, got {self.ablation!r}."
            )
        for name in (
            "clusters",
            "imitation_clusters",
            "rollout_epochs",
            "ppo_epochs",
            "minibatch",
            "n_samples",
            "validate_every",
            "validation_seeds",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainSettings.{name} must be >= 1, got {getattr(self, name)!r}.")
        for name in ("dagger_rounds", "updates", "value_warmup", "imitation_passes"):
            if getattr(self, name) < 0:
                raise ValueError(f"TrainSettings.{name} must be >= 0, got {getattr(self, name)!r}.")
        for name in ("entropy_coef", "kl_coef", "target_kl", "shaping"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"TrainSettings.{name} must be >= 0, got {getattr(self, name)!r}.")
        for name in ("lr", "critic_lr", "imitation_lr", "clip", "temperature"):
            if not getattr(self, name) > 0:
                raise ValueError(f"TrainSettings.{name} must be > 0, got {getattr(self, name)!r}.")
        for name in ("minutes", "imitation_minutes"):
            if not getattr(self, name) > 0:
                raise ValueError(f"TrainSettings.{name} must be > 0, got {getattr(self, name)!r}.")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(
                f"TrainSettings.lr_schedule must be one of {LR_SCHEDULES}, got "
                f"{self.lr_schedule!r}."
            )
        if self.preset not in ("training", "tiny"):
            raise ValueError(
                f"TrainSettings.preset must be 'training' (train split, load 1.4) or 'tiny' "
                f"(smoke tests), got {self.preset!r}."
            )
        if self.validation_seeds > len(VALIDATION_SEEDS):
            raise ValueError(
                f"TrainSettings.validation_seeds must be <= {len(VALIDATION_SEEDS)} (the "
                f"validation episodes {VALIDATION_SEEDS}), got {self.validation_seeds}."
            )
        if self.rollout_lag not in (0, 1):
            raise ValueError(
                f"TrainSettings.rollout_lag must be 0 (on-policy rollouts in this process) or 1 "
                f"(a worker plays them one update behind), got {self.rollout_lag!r}."
            )
        if not (0.0 < self.gamma <= 1.0 and 0.0 <= self.gae_lambda <= 1.0):
            raise ValueError("TrainSettings.gamma must lie in (0, 1] and gae_lambda in [0, 1].")

    @property
    def policy_config(self) -> PolicyConfig:
        """The network config (the ``independent`` ablation switches autoregression off)."""
        return PolicyConfig(
            width=self.width,
            layers=self.layers,
            heads=self.heads,
            autoregressive=self.ablation != "independent",
        )

    @property
    def predictor_name(self) -> str:
        """The predictor behind the features (``"none"`` for the ``no_predictions`` ablation)."""
        return "none" if self.ablation == "no_predictions" else self.predictor

    @property
    def shaping_weight(self) -> float:
        """The shaping weight the rollouts pay (0 for the ``no_shaping`` ablation)."""
        return 0.0 if self.ablation == "no_shaping" else self.shaping

    @property
    def update_size(self) -> int:
        """Cluster-epochs per PPO update."""
        return self.clusters * self.rollout_epochs

    def configs(self, count: int) -> list[ClusterConfig]:
        """``count`` training configs cycling through the workloads, paying the shaping at the
        returns' discount ``gamma``."""
        return [
            get_config(
                self.preset,
                workload=WORKLOADS[i % len(WORKLOADS)],
                shaping_weight=self.shaping_weight,
                shaping_discount=self.gamma,
            )
            for i in range(count)
        ]


QUICK = {
    "preset": "tiny",
    "clusters": 3,
    "imitation_clusters": 3,
    "width": 16,
    "layers": 1,
    "heads": 2,
    "n_samples": 4,
    "dagger_rounds": 1,
    "dagger_epochs": 8,
    "imitation_passes": 1,
    "updates": 2,
    "rollout_epochs": 8,
    "ppo_epochs": 1,
    "minibatch": 16,
    "value_warmup": 1,
    "validate_every": 2,
    "validation_seeds": 1,
}


class ValueNorm:
    """Running mean and variance of value targets (MAPPO's ValueNorm: debiased moving averages).

    The critic predicts ``normalise(returns)``; its outputs map back with :meth:`denormalise`.

    Args:
        beta: Weight of the past in the moving averages (per :meth:`update`).
        epsilon: Floor of the variance.

    Example:
        >>> norm = ValueNorm()
        >>> norm.update(torch.tensor([1.0, 3.0]))
        >>> float(norm.mean), round(float(norm.normalise(torch.tensor(3.0))), 3)
        (2.0, 1.0)
    """

    def __init__(self, beta: float = 0.99, epsilon: float = 1e-5) -> None:
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"ValueNorm: beta must lie in [0, 1), got {beta!r}.")
        if not epsilon > 0:
            raise ValueError(f"ValueNorm: epsilon must be > 0, got {epsilon!r}.")
        self.beta, self.epsilon = beta, epsilon
        self._mean = torch.zeros((), dtype=torch.float64)
        self._square = torch.zeros((), dtype=torch.float64)
        self._debias = torch.zeros((), dtype=torch.float64)

    @property
    def mean(self) -> torch.Tensor:
        """The running mean (0 before any update)."""
        return self._mean / self._debias.clamp(min=self.epsilon)

    @property
    def std(self) -> torch.Tensor:
        """The running standard deviation (1 before any update)."""
        if float(self._debias) == 0.0:
            return torch.ones((), dtype=torch.float64)
        variance = self._square / self._debias - self.mean**2
        return variance.clamp(min=self.epsilon).sqrt()

    def update(self, values: torch.Tensor) -> None:
        """Fold a batch of targets into the statistics."""
        values = values.detach().to(torch.float64)
        weight = 1.0 - self.beta
        self._mean = self.beta * self._mean + weight * values.mean()
        self._square = self.beta * self._square + weight * (values**2).mean()
        self._debias = self.beta * self._debias + weight

    def normalise(self, values: torch.Tensor) -> torch.Tensor:
        """Targets in the critic's units."""
        return ((values - self.mean) / self.std).to(values.dtype)

    def denormalise(self, values: torch.Tensor) -> torch.Tensor:
        """Critic outputs in return units."""
        return (values * self.std + self.mean).to(values.dtype)


@dataclass
class _WaitingRow:
    """A log row, waiting for its ``validation`` (if any): the future score of a snapshot of
    the weights, and that snapshot."""

    row: dict[str, Any]
    validation: tuple[Future[list[float]], dict[str, torch.Tensor]] | None
    round_index: int | None


class Trainer:
    """Runs imitation and PPO for :class:`TrainSettings`, logging to a CSV file.

    Args:
        settings: The run's settings.
        log_path: The CSV log (rewritten).
        progress: Show progress bars.
        init: Starting weights (a MARA checkpoint of the same network and predictor) instead of
            a fresh network.
        validation_workers: 1 plays the validation episodes in a worker process while the
            training goes on (the scores, the kept weights and the log are the same as with
            0, which plays them in this process before going on).
        rollout_workers: With ``settings.rollout_lag == 1``: 1 plays the rollouts in a worker
            process beside the updates, 0 in this process before each update (the same
            rollouts and weights, one after the other).

    Raises:
        ValueError: If ``init`` was made for another network, predictor or temperature.
    """

    def __init__(
        self,
        settings: TrainSettings,
        log_path: Path,
        progress: bool = True,
        init: Path | None = None,
        validation_workers: int = 0,
        rollout_workers: int = 1,
    ) -> None:
        self.settings = settings
        self.rollout_workers = rollout_workers
        torch.manual_seed(settings.seed)
        self.policy = MaraPolicy(settings.policy_config)
        self.init_sha256: str | None = None
        if init is not None:
            self._load_init(init)
        #: A separate value network, built at the start of PPO (:meth:`ppo`).
        self.critic: MaraPolicy | None = None
        self._critic_optimiser: torch.optim.Optimizer | None = None
        self.value_norm = ValueNorm()
        self.generator = torch.Generator().manual_seed(settings.seed)
        self.max_nodes_per_task = settings.configs(1)[0].max_nodes_per_task
        self.log_path = log_path
        self.progress = progress
        self.start = time.perf_counter()
        self.env_epochs = 0
        self.best_validation = -1.0
        self.best_state: dict[str, torch.Tensor] = {}
        self.best_update = -1
        self.best_round = -1
        self.phases: dict[str, dict[str, float]] = {}
        self.confirmation: dict[str, Any] = {}
        self.episodes = Episodes(
            tuple(settings.configs(len(WORKLOADS))),
            settings.policy_config,
            settings.predictor_name,
            settings.n_samples,
            settings.temperature,
        )
        self.validation = ValidationPlayer(self.episodes, validation_workers)
        #: Log rows not written yet, in order: each waits for its validation score, if any.
        self._waiting: deque[_WaitingRow] = deque()
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writeheader()

    def _load_init(self, path: Path) -> None:
        agent = Mara.load(path)
        settings = self.settings
        if agent.policy.config != settings.policy_config:
            raise ValueError(
                f"--init {path}: network {agent.policy.config} differs from the settings' "
                f"{settings.policy_config}."
            )
        if agent.predictor_name != settings.predictor_name:
            raise ValueError(
                f"--init {path}: trained with predictor {agent.predictor_name!r}, the settings "
                f"use {settings.predictor_name!r}."
            )
        if agent.temperature != settings.temperature:
            raise ValueError(
                f"--init {path}: ships at temperature {agent.temperature}, the settings train at "
                f"{settings.temperature}."
            )
        self.policy.load_state_dict(agent.policy.state_dict())
        self.init_sha256 = agent.checkpoint_sha256

    # ------------------------------------------------------------------ helpers
    def _log(self, validate: bool = False, round_index: int | None = None, **row: Any) -> None:
        """Log a row stamped now; with ``validate``, score the current weights on the
        validation episodes first (in the worker, if any: the row, and the rows after it, are
        written once the score is in, keeping the best weights as if it had been played
        here). ``round_index``: the imitation round the validated weights end."""
        wall = time.perf_counter() - self.start
        row.setdefault("wall_seconds", round(wall, 1))
        row.setdefault("env_epochs", self.env_epochs)
        row.setdefault("epochs_per_second", round(self.env_epochs / max(wall, 1e-9), 1))
        validation = None
        if validate:
            state = weights_snapshot(self.policy.state_dict())
            validation = (self.validation.submit(state, self._validation_seeds), state)
        self._waiting.append(_WaitingRow(row, validation, round_index))
        self.settle()

    @property
    def _validation_seeds(self) -> Sequence[int]:
        return VALIDATION_SEEDS[: self.settings.validation_seeds]

    def settle(self, wait: bool = False) -> None:
        """Write the waiting log rows whose validation score is in (``wait``: all of them),
        in order, keeping the best validated weights."""
        while self._waiting:
            waiting = self._waiting[0]
            if waiting.validation is not None:
                future, state = waiting.validation
                if not (wait or future.done()):
                    return
                score = float(np.mean(future.result()))
                before = self.best_validation
                round_index = waiting.round_index
                update = int(waiting.row["update"]) if round_index is None else 0
                self._keep_if_best(score, update, state)
                if round_index is not None and self.best_validation > before:
                    self.best_round = round_index
                waiting.row["validation_completion"] = round(score, 4)
            self._waiting.popleft()
            self._write(waiting.row)

    def _write(self, row: dict[str, Any]) -> None:
        with self.log_path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writerow(row)

    def _vector(self, count: int, seed: int, **options: Any) -> ClusterVector:
        settings = self.settings
        return ClusterVector(
            settings.configs(count),
            self.policy,
            seed,
            predictor=settings.predictor_name,
            n_samples=settings.n_samples,
            temperature=settings.temperature,
            **options,
        )

    def _scores(
        self,
        batch: StepBatch,
        actions: torch.Tensor,
        *,
        policy: MaraPolicy | None = None,
        temperature: float | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-node log-probabilities and entropies of ``actions`` (default: at the deployed
        temperature, with the same masks and ``max_nodes_per_task`` as the rollouts)."""
        network = self.policy if policy is None else policy
        encoded = network.encode(batch.slots, batch.globals)
        decoded = network.decode(
            encoded,
            batch.mask,
            batch.previous,
            actions=actions,
            max_nodes_per_task=self.max_nodes_per_task,
            temperature=self.settings.temperature if temperature is None else temperature,
        )
        return decoded.log_prob, decoded.entropy

    def play(
        self, seeds: Sequence[int], state: dict[str, torch.Tensor] | None = None
    ) -> list[float]:
        """Completion rates of the policy (``state``: other weights) on fixed episodes: every
        workload with each of ``seeds``, at the deployed temperature (workload-major order)."""
        policy = self.policy
        if state is not None:
            policy = copy.deepcopy(self.policy)
            policy.load_state_dict(state)
        return play_episodes(self.episodes, policy, seeds)

    def validate(self) -> float:
        """Mean completion rate on the validation episodes (at the deployed temperature)."""
        return float(np.mean(self.play(self._validation_seeds)))

    def _keep_if_best(self, score: float, update: int, state: dict[str, torch.Tensor]) -> None:
        """Keep the weights ``state`` if ``score`` beats the best so far."""
        if score > self.best_validation:
            self.best_validation = score
            self.best_update = update
            self.best_state = state

    def confirm(self, baseline: dict[str, torch.Tensor] | None = None) -> dict[str, Any]:
        """Score the kept weights on the confirmation episodes (never used for choosing),
        paired against ``baseline`` weights when given."""
        seeds = CONFIRMATION_SEEDS[: self.settings.validation_seeds]
        started = None if baseline is None else self.validation.submit(baseline, seeds)
        chosen = self.play(seeds, self.best_state or None)
        facts: dict[str, Any] = {
            "seeds": f"{seeds[0]}-{seeds[-1]} x {len(WORKLOADS)} workloads (train split)",
            "episodes": len(chosen),
            "chosen": round(float(np.mean(chosen)), 4),
        }
        if started is not None:
            start = started.result()
            summary = mean_ci([a - b for a, b in zip(chosen, start, strict=True)])
            facts["start"] = round(float(np.mean(start)), 4)
            facts["chosen_minus_start"] = {
                "mean": round(summary.mean, 4),
                "ci95": [round(summary.low, 4), round(summary.high, 4)],
            }
        return facts

    def _phase_done(self, name: str, began: float, epochs_before: int) -> None:
        seconds = time.perf_counter() - began
        epochs = self.env_epochs - epochs_before
        self.phases[name] = {
            "minutes": round(seconds / 60.0, 2),
            "cluster_epochs": epochs,
            "cluster_epochs_per_second": round(epochs / max(seconds, 1e-9), 1),
        }

    # ------------------------------------------------------------------ imitation
    def imitate(self) -> None:
        """DAgger rounds with the clairvoyant reference as the teacher."""
        settings = self.settings
        if settings.dagger_rounds == 0:
            return
        began, epochs_before = time.perf_counter(), self.env_epochs
        deadline = began + 60.0 * settings.imitation_minutes
        optimiser = torch.optim.Adam(self.policy.parameters(), lr=settings.imitation_lr)
        vector = self._vector(settings.imitation_clusters, settings.seed + 1, teacher=True)
        data: list[StepBatch] = []
        bar = tqdm(range(settings.dagger_rounds), desc="imitation", disable=not self.progress)
        for round_index in bar:
            round_began = time.perf_counter()
            self.policy.eval()
            for _ in range(settings.dagger_epochs):
                batch = vector.step(follow_teacher=round_index == 0)
                self.env_epochs += len(batch.reward)
                data.append(batch)
            self.policy.train()
            merged = _merge(data)
            size = len(merged.reward)
            losses = []
            for _ in range(settings.imitation_passes):
                order = torch.randperm(size, generator=self.generator)
                for start in range(0, size, settings.minibatch):
                    part = _select(merged, order[start : start + settings.minibatch])
                    labels = part.teacher if part.teacher is not None else part.actions
                    log_prob, _ = self._scores(part, labels, temperature=1.0)
                    loss = -log_prob.mean()
                    optimiser.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 1.0)
                    optimiser.step()
                    losses.append(loss.item())
            train = [row["completion_rate"] for row in vector.finished]
            vector.finished.clear()
            self._log(
                validate=True,
                round_index=round_index,
                phase="imitation",
                update=round_index,
                train_completion=round(float(np.mean(train)), 4) if train else "",
                imitation_loss=round(float(np.mean(losses)), 4),
            )
            bar.set_postfix(best=f"{self.best_validation:.3f}", loss=f"{np.mean(losses):.3f}")
            now = time.perf_counter()
            if now + (now - round_began) > deadline:  # the next round would overrun
                print(
                    f"Imitation stops after round {round_index}: the "
                    f"{settings.imitation_minutes}-minute budget is spent."
                )
                break
        self.settle(wait=True)
        self._phase_done("imitation", began, epochs_before)

    # ------------------------------------------------------------------ PPO
    def ppo(self) -> None:
        """PPO updates from the current (best) weights; see the module docstring."""
        settings = self.settings
        if settings.updates == 0:
            return
        began, epochs_before = time.perf_counter(), self.env_epochs
        if self.best_state:
            self.policy.load_state_dict(self.best_state)
        start_state = weights_snapshot(self.policy.state_dict())
        anchor = copy.deepcopy(self.policy).eval().requires_grad_(False)
        critic = self.build_critic()
        optimiser = torch.optim.Adam(self.policy.parameters(), lr=settings.lr)
        # The starting weights compete as update 0, scored on the same validation set.
        self.best_validation, self.best_state = -1.0, {}
        self._log(validate=True, phase="ppo", update=0)
        rollouts = _Rollouts(self, critic)
        try:
            self._ppo_updates(rollouts, critic, anchor, optimiser, began)
        finally:
            rollouts.close()
        self.settle(wait=True)
        self._phase_done("ppo", began, epochs_before)
        self.confirmation = self.confirm(start_state)

    def _ppo_updates(
        self,
        rollouts: _Rollouts,
        critic: MaraPolicy,
        anchor: MaraPolicy,
        optimiser: torch.optim.Optimizer,
        began: float,
    ) -> None:
        settings = self.settings
        bar = tqdm(range(1, settings.updates + 1), desc="ppo", disable=not self.progress)
        deadline = began + 60.0 * settings.minutes
        for update in bar:
            self.policy.eval()
            critic.eval()
            steps, batch, raw_values, last_value, finished = rollouts.next(
                more=update < settings.updates
            )
            self.policy.train()
            critic.train()
            self.env_epochs += len(batch.reward)
            values = [self.value_norm.denormalise(value) for value in raw_values]
            advantages, returns = _gae(
                steps,
                values,
                self.value_norm.denormalise(last_value),
                settings.gamma,
                settings.gae_lambda,
            )
            self.value_norm.update(returns)
            stats: dict[str, Any] = {
                "value_loss": self._critic_update(batch, self.value_norm.normalise(returns))
            }
            warmup = update <= settings.value_warmup
            if not warmup:
                stats["policy_lr"] = self._set_policy_lr(optimiser, update, began)
                with torch.no_grad():
                    anchor_log_prob, _ = self._scores(batch, batch.actions, policy=anchor)
                stats.update(self._policy_update(batch, advantages, anchor_log_prob, optimiser))
            train = [row["completion_rate"] for row in finished]
            validated = not warmup and (
                update % settings.validate_every == 0 or update == settings.updates
            )
            self._log(
                validate=validated,
                phase="ppo",
                update=update,
                train_completion=round(float(np.mean(train)), 4) if train else "",
                **stats,
            )
            bar.set_postfix(best=f"{self.best_validation:.3f}")
            if time.perf_counter() > deadline:
                if not (validated or warmup):
                    self._log(validate=True, phase="ppo", update=update)
                print(
                    f"Stopping after update {update}: the {settings.minutes}-minute budget is spent."
                )
                break

    def _set_policy_lr(self, optimiser: torch.optim.Optimizer, update: int, began: float) -> float:
        """The policy's learning rate for ``update`` (1-based) under ``lr_schedule``, written
        into ``optimiser``: ``linear`` scales ``lr`` by the share of the budget left, the
        larger of the shares of updates and of minutes already spent."""
        settings = self.settings
        scale = 1.0
        if settings.lr_schedule == "linear":
            spent_updates = (update - 1) / settings.updates
            spent_minutes = (time.perf_counter() - began) / (60.0 * settings.minutes)
            scale = max(0.0, 1.0 - max(spent_updates, spent_minutes))
        lr = settings.lr * scale
        for group in optimiser.param_groups:
            group["lr"] = lr
        return float(f"{lr:.3g}")

    def build_critic(self) -> MaraPolicy:
        """The critic: a copy of the current network (own parameters, own Adam optimiser),
        of which only the value output is trained; the policy never reads it."""
        self.critic = copy.deepcopy(self.policy)
        self._critic_optimiser = torch.optim.Adam(
            self.critic.parameters(), lr=self.settings.critic_lr
        )
        return self.critic

    def _critic_update(self, batch: StepBatch, targets: torch.Tensor) -> float:
        """Fit the critic (its own parameters and optimiser) to normalised returns; the
        policy's parameters take no part."""
        settings = self.settings
        critic, optimiser = self.critic, self._critic_optimiser
        if critic is None or optimiser is None:
            raise RuntimeError("Trainer._critic_update before build_critic().")
        size = len(targets)
        losses = []
        for _ in range(settings.ppo_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, settings.minibatch):
                index = order[start : start + settings.minibatch]
                value = critic.encode(batch.slots[index], batch.globals[index]).value
                loss = (value - targets[index]).pow(2).mean()
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(critic.parameters(), 1.0)
                optimiser.step()
                losses.append(loss.item())
        return round(float(np.mean(losses)), 5)

    def _policy_update(
        self,
        batch: StepBatch,
        advantages: torch.Tensor,
        anchor_log_prob: torch.Tensor,
        optimiser: torch.optim.Optimizer,
    ) -> dict[str, Any]:
        """Clipped PPO epochs on the policy alone, with the KL anchor and KL early stop."""
        settings = self.settings
        size = len(advantages)
        normalised = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        totals = {"policy_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "anchor_kl": 0.0}
        count, epochs_run, stopped = 0, 0, False
        for _ in range(settings.ppo_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, settings.minibatch):
                index = order[start : start + settings.minibatch]
                part = _select(batch, index)
                log_prob, entropy = self._scores(part, part.actions)
                log_ratio = log_prob - part.log_prob
                approx_kl = float(((log_ratio.exp() - 1.0) - log_ratio).mean().detach())
                if settings.target_kl > 0 and approx_kl > settings.target_kl:
                    stopped = True
                    break
                ratio = log_ratio.exp()
                advantage = normalised[index][:, None]
                clipped = ratio.clamp(1.0 - settings.clip, 1.0 + settings.clip)
                policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                to_anchor = anchor_log_prob[index] - log_prob
                anchor_kl = ((to_anchor.exp() - 1.0) - to_anchor).mean()
                loss = (
                    policy_loss
                    + settings.kl_coef * anchor_kl
                    - settings.entropy_coef * entropy.mean()
                )
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 0.5)
                optimiser.step()
                totals["policy_loss"] += policy_loss.item()
                totals["entropy"] += entropy.mean().item()
                totals["approx_kl"] += approx_kl
                totals["anchor_kl"] += anchor_kl.item()
                count += 1
            if stopped:
                break
            epochs_run += 1
        stats: dict[str, Any] = {
            key: round(value / max(count, 1), 5) for key, value in totals.items()
        }
        stats["policy_epochs"] = epochs_run if not stopped else f"{epochs_run}+stop"
        return stats


class _Rollouts:
    """Where PPO's rollouts come from: the trainer's own vector, played before each update
    (``rollout_lag`` 0), or a :class:`RolloutWorker` one update behind (``rollout_lag`` 1)."""

    def __init__(self, trainer: Trainer, critic: MaraPolicy) -> None:
        settings = trainer.settings
        self.policy, self.critic = trainer.policy, critic
        self.epochs = settings.rollout_epochs
        seed = settings.seed + 2
        self.vector: ClusterVector | None = None
        self.worker: RolloutWorker | None = None
        self.pending: Future[Rollout] | None = None
        if settings.rollout_lag:
            plan = RolloutPlan(
                tuple(settings.configs(settings.clusters)),
                settings.policy_config,
                settings.predictor_name,
                settings.n_samples,
                settings.temperature,
                seed,
                self.epochs,
            )
            self.worker = RolloutWorker(plan, trainer.rollout_workers)
            self.pending = self.worker.submit(self.policy.state_dict())
        else:
            self.vector = trainer._vector(settings.clusters, seed, critic=critic)

    def next(
        self, *, more: bool
    ) -> tuple[list[StepBatch], StepBatch, list[torch.Tensor], torch.Tensor, list[dict[str, Any]]]:
        """The next update's steps and their merged batch, the critic's raw value of each step
        and of the state after them, and the episodes that ended (``more``: another update will
        follow)."""
        if self.vector is not None:
            steps = [self.vector.step() for _ in range(self.epochs)]
            finished = list(self.vector.finished)
            self.vector.finished.clear()
            own = [step.value for step in steps]
            return steps, _merge(steps), own, self.vector.values(), finished
        if self.worker is None or self.pending is None:
            raise RuntimeError("_Rollouts.next() after the last update or close().")
        rollout = self.pending.result()
        # the rollout after this one plays with the weights this update starts from
        self.pending = self.worker.submit(self.policy.state_dict()) if more else None
        batch = _merge(rollout.steps)
        with torch.no_grad():
            values = self.critic.encode(batch.slots, batch.globals).value
            last = self.critic.encode(rollout.last_slots, rollout.last_globals).value
        sizes = [len(step.reward) for step in rollout.steps]
        return rollout.steps, batch, list(values.split(sizes)), last, rollout.finished

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


def _merge(steps: Sequence[StepBatch]) -> StepBatch:
    """Concatenate step batches along the batch axis."""
    fields: dict[str, Any] = {}
    for name in StepBatch.__dataclass_fields__:
        parts = [getattr(step, name) for step in steps]
        fields[name] = None if parts[0] is None else torch.cat(parts)
    return StepBatch(**fields)


def _select(batch: StepBatch, index: torch.Tensor) -> StepBatch:
    fields: dict[str, Any] = {
        name: (None if getattr(batch, name) is None else getattr(batch, name)[index])
        for name in StepBatch.__dataclass_fields__
    }
    return StepBatch(**fields)


def _gae(
    steps: Sequence[StepBatch],
    values: Sequence[torch.Tensor],
    last_value: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns, flattened like :func:`_merge`.

    ``values`` are each step's value estimates in return units (``last_value`` the state after
    the last step); an episode's end (``done``) cuts the bootstrap.
    """
    advantages = []
    running = torch.zeros_like(last_value)
    next_value = last_value
    for step, value in zip(reversed(steps), reversed(values), strict=True):
        alive = 1.0 - step.done
        delta = step.reward + gamma * next_value * alive - value
        running = delta + gamma * lam * alive * running
        advantages.append(running)
        next_value = value
    advantages.reverse()
    flat = torch.cat(advantages)
    return flat, flat + torch.cat(list(values))


def train(
    settings: TrainSettings,
    out: Path,
    log: Path,
    plot: Path | None,
    progress: bool,
    *,
    init: Path | None = None,
    command: Sequence[str] = (),
    validation_workers: int = 0,
    rollout_workers: int = 1,
) -> dict[str, Any]:
    """Run imitation then PPO, save the kept weights to ``out``; returns the run's facts.

    Args:
        settings: The run's settings.
        out: The checkpoint to write (its card beside it).
        log: The CSV log.
        plot: The plot of the log (``None``: no plot).
        progress: Show progress bars.
        init: Start from this checkpoint's weights instead of a fresh network.
        command: The command line, recorded in the card.
        validation_workers: 1 plays validation episodes in a worker process beside the
            training (same results, less wall time on 2 cores); 0 in this process.
        rollout_workers: With ``settings.rollout_lag == 1``: 1 plays the rollouts in a worker
            process beside the updates; 0 in this process (same results, more wall time).
    """
    trainer = Trainer(
        settings,
        log,
        progress,
        init=init,
        validation_workers=validation_workers,
        rollout_workers=rollout_workers,
    )
    try:
        return _run(trainer, settings, out, plot, init, command)
    finally:
        trainer.validation.close()


def _run(
    trainer: Trainer,
    settings: TrainSettings,
    out: Path,
    plot: Path | None,
    init: Path | None,
    command: Sequence[str],
) -> dict[str, Any]:
    log = trainer.log_path
    trainer.imitate()
    facts: dict[str, Any] = {
        "settings": asdict(settings),
        "command": ["python", "-m", "benchmarks.mara.train", *command],
        "init": None if init is None else {"path": str(init), "sha256": trainer.init_sha256},
        "training": f"preset {settings.preset!r} (train split), workloads "
        + ", ".join(WORKLOADS)
        + ", episode seeds < 1000",
        "validation_episodes": f"seeds {VALIDATION_SEEDS[0]}-"
        f"{VALIDATION_SEEDS[settings.validation_seeds - 1]} x {len(WORKLOADS)} workloads "
        f"at temperature {settings.temperature}",
        "torch_threads": torch.get_num_threads(),
        "validation_workers": trainer.validation.workers,
        "rollout_workers": trainer.rollout_workers if settings.rollout_lag else 0,
        "machine": f"{platform.machine()}, 2 CPU cores (shared)",
        "platform": platform_line(),
        "torch": torch.__version__,
        "log": str(log),
    }
    if settings.dagger_rounds:
        facts["imitation"] = {
            "rounds_run": sum(1 for _ in _rows(log, "imitation")),
            "best_round": trainer.best_round,
            "best_validation_completion": round(trainer.best_validation, 4),
        }
        _save(trainer, out, {**facts, "stage": "after imitation"})
    trainer.ppo()
    if trainer.best_state:
        trainer.policy.load_state_dict(trainer.best_state)
    if settings.updates:
        facts["ppo"] = {
            "updates_run": max(int(row["update"]) for row in _rows(log, "ppo")),
            "update_size_cluster_epochs": settings.update_size,
            "best_update": trainer.best_update,
            "best_validation_completion": round(trainer.best_validation, 4),
        }
    else:
        trainer.confirmation = trainer.confirm()
    wall = time.perf_counter() - trainer.start
    facts.update(
        wall_minutes=round(wall / 60.0, 2),
        env_epochs=trainer.env_epochs,
        cluster_epochs_per_second=round(trainer.env_epochs / max(wall, 1e-9), 1),
        phases=trainer.phases,
        confirmation=trainer.confirmation,
        stage="after PPO" if settings.updates else "after imitation",
    )
    _save(trainer, out, facts)
    if plot is not None:
        plot_log(log, plot)
    return facts


def _rows(log: Path, phase: str) -> list[dict[str, str]]:
    with log.open() as handle:
        return [row for row in csv.DictReader(handle) if row["phase"] == phase]


TEMPERATURES = (1.0, 0.7, 0.5, 0.35)
TEMPERATURE_SEEDS = tuple(range(910, 915))


def tune_temperature(
    checkpoint: Path,
    temperatures: Sequence[float] = TEMPERATURES,
    seeds: Sequence[int] = TEMPERATURE_SEEDS,
    preset: str = "training",
) -> dict[str, float]:
    """Validation completion of a checkpoint at each sampling temperature (a diagnostic).

    Every temperature plays the same episodes (train split, ``seeds`` below 1000, each
    workload). The card is left as it is: the temperature is a training setting
    (``--temperature``), used in rollouts, ratios and validation, so changing it after training
    would ship a policy that was not the one trained.
    """
    agent = Mara.load(checkpoint)
    configs = tuple(get_config(preset, workload=workload) for workload in WORKLOADS)
    scores: dict[str, float] = {}
    for temperature in temperatures:
        rates = play_episodes(agent_episodes(agent, configs, temperature), agent.policy, seeds)
        scores[str(temperature)] = round(float(np.mean(rates)), 4)
    return scores


def _save(trainer: Trainer, out: Path, facts: dict[str, Any]) -> None:
    settings = trainer.settings
    agent = Mara(
        trainer.policy,
        feature_predictor(settings.predictor_name),
        settings.n_samples,
        predictor_name=settings.predictor_name,
        temperature=settings.temperature,
    )
    agent.save(out, facts=facts)


def plot_log(log: Path, plot: Path) -> None:
    """Validation completion rate against updates (imitation rounds before update 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs, ys, imitation = [], [], []
    with log.open() as handle:
        for row in csv.DictReader(handle):
            if row["validation_completion"] == "":
                continue
            if row["phase"] == "imitation":
                imitation.append(float(row["validation_completion"]))
            else:
                xs.append(int(row["update"]))
                ys.append(float(row["validation_completion"]))
    figure, axis = plt.subplots(figsize=(6, 3.5))
    if imitation:
        axis.plot(range(-len(imitation), 0), imitation, "o-", label="imitation rounds")
    axis.plot(xs, ys, "o-", label="PPO")
    axis.set_xlabel("PPO update (imitation rounds at negative x)")
    axis.set_ylabel("validation completion rate")
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(plot, dpi=120)
    plt.close(figure)


RESULTS = Path("benchmarks/results/mara")


def output_paths(out: Path | None, stem: str, quick: bool) -> tuple[Path, Path, Path | None]:
    """Checkpoint, log and plot paths of a run (``stem``: ``mara`` or ``ablation_<name>``).

    Without ``out``, the shipped checkpoint or the ablation's file in the results folder, logs
    beside them in the results folder; a ``--quick`` run never touches those and writes
    ``mara_quick.pt`` in the working directory instead. With ``out``, logs go beside it, so a
    side run never overwrites the shipped run's log.

    Example:
        >>> [str(path) for path in output_paths(Path("/tmp/x.pt"), "mara", quick=False)]
        ['/tmp/x.pt', '/tmp/x_training.csv', '/tmp/x_training.png']
        >>> str(output_paths(None, "mara", quick=True)[0])
        'mara_quick.pt'
    """
    if quick:
        out = Path("mara_quick.pt") if out is None else out
        return out, out.with_suffix(".csv"), None
    if out is None:
        out = Path("agents/checkpoints/mara.pt") if stem == "mara" else RESULTS / f"{stem}.pt"
        return out, RESULTS / f"{stem}_training.csv", RESULTS / f"{stem}_training.png"
    return out, out.with_name(f"{out.stem}_training.csv"), out.with_name(f"{out.stem}_training.png")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mara.train", description=__doc__.split("\n\n")[0]
    )
    defaults = TrainSettings()
    described = attribute_help(TrainSettings)
    choices = {"ablation": ABLATIONS, "lr_schedule": LR_SCHEDULES}
    for name, value in asdict(defaults).items():
        flag = "--" + name.replace("_", "-")
        text = described[name].replace("%", "%%") + " (default: %(default)s)"
        if name in choices:
            parser.add_argument(flag, choices=choices[name], default=value, help=text)
        else:
            parser.add_argument(flag, type=type(value), default=value, help=text)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument(
        "--validation-workers",
        type=int,
        choices=(0, 1),
        default=1,
        help="1 (default): play validation episodes in a worker process while training goes "
        "on, on the second core; 0: in this process (same results, more wall time)",
    )
    parser.add_argument(
        "--rollout-workers",
        type=int,
        choices=(0, 1),
        default=1,
        help="with --rollout-lag 1: 1 (default) plays the rollouts in a worker process beside "
        "the updates; 0 in this process (same results, more wall time)",
    )
    parser.add_argument("--out", type=Path, default=None, help="checkpoint path (.pt)")
    parser.add_argument(
        "--log", type=Path, default=None, help="CSV log path (default: beside the checkpoint)"
    )
    parser.add_argument(
        "--plot", type=Path, default=None, help="plot path (default: beside the checkpoint)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny model and budget (smoke test; explicit flags override its values)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="start from this MARA checkpoint's weights (same network, predictor, temperature)",
    )
    parser.add_argument(
        "--tune-temperature",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="only report an existing checkpoint's validation completion at several sampling "
        "temperatures (its card is not changed)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    if parser.parse_known_args(argv)[0].quick:  # tiny defaults; explicit flags still win
        parser.set_defaults(**QUICK)
    return parser.parse_args(argv)


def settings_of(args: argparse.Namespace) -> TrainSettings:
    """The settings a parsed command line asks for (with ``--quick``, :data:`QUICK` replaces the
    defaults of the flags not given).

    Raises:
        ValueError: If a setting is invalid.
    """
    return TrainSettings(**{name: getattr(args, name) for name in asdict(TrainSettings())})


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.tune_temperature is not None:
        torch.set_num_threads(args.threads)
        scores = tune_temperature(args.tune_temperature)
        print(f"Validation completion of {args.tune_temperature} by temperature: {scores}.")
        return 0
    try:
        settings = settings_of(args)
    except ValueError as error:
        raise SystemExit(f"mara.train: {error}") from None
    torch.set_num_threads(args.threads)
    stem = "mara" if settings.ablation == "none" else f"ablation_{settings.ablation}"
    out, log, plot = output_paths(args.out, stem, args.quick)
    log, plot = args.log or log, args.plot or plot
    command = list(sys.argv[1:] if argv is None else argv)
    try:
        facts = train(
            settings,
            out,
            log,
            plot,
            not args.no_progress,
            init=args.init,
            command=command,
            validation_workers=args.validation_workers,
            rollout_workers=args.rollout_workers,
        )
    except (ValueError, CheckpointError) as error:
        raise SystemExit(f"mara.train: {error}") from None
    print(
        f"Saved {out} ({facts['stage']}): confirmation {facts['confirmation']}, "
        f"{facts['wall_minutes']} min wall, {facts['env_epochs']} cluster-epochs "
        f"({facts['cluster_epochs_per_second']} per second)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
