"""PPO for MARA's autoregressive joint action, from the warm start's (best) weights.

Each update plays ``settings.clusters`` x ``settings.rollout_epochs`` cluster-epochs
(:class:`~mara_env.benchmarks.mara.rollout_worker.PPORollouts`: on-policy, or one update behind with
``rollout_lag`` 1), then:

* the **critic**, a copy of the starting network with its own parameters and Adam optimiser, of
  which only the value output is trained (the value loss cannot move the policy), fits the
  returns normalised by running, debiased statistics (:class:`~mara_env.benchmarks.mara.returns.ValueNorm`,
  MAPPO's); advantages and returns come from GAE (:func:`~mara_env.benchmarks.mara.returns.gae`) at
  ``gamma`` and ``gae_lambda``. The reward is completions plus the environment's
  potential-based shaping at the same ``gamma`` (``gamma * Phi(s') - Phi(s)``);
* the **policy** takes clipped-ratio steps with the epoch's shared advantage (normalised per
  update), clipping each node's ratio (``trust_region="per_node"``, as MAPPO and MAT do) or the
  joint ratio of the epoch's decisions, the product of its nodes' ratios (``"joint"``), plus a
  **KL anchor** to the starting weights (``kl_coef`` times the k3 estimate of
  KL(policy || start) per node on the rollout's actions) and an entropy bonus; **KL control**
  stops an update's passes once the approximate KL per node from the rollout policy exceeds
  ``target_kl``. After its passes every update measures the **joint** policy's move on its
  whole rollout (:func:`joint_move`: the k3 estimate of the joint KL from the rollout policy,
  and the largest joint ratio), so the trust region the per-node clip gives the joint policy
  is logged, not assumed. The critic trains alone first: until an update's value loss is at
  most ``value_warmup_loss``, for at most ``value_warmup`` updates.

Every log-probability (rollout, ratio, anchor) is taken at the deployed temperature. Every
``validate_every`` updates, and at the last, the weights are validated; the starting weights
compete as update 0, and the best are confirmed on fresh episodes against the starting weights
(:class:`~mara_env.benchmarks.mara.selection.Selection`). Updates stop after ``updates`` or once
``minutes`` of wall clock are spent (which breaks reproducibility when it binds).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
    >>> from mara_env.benchmarks.mara.trainer import Trainer
    >>> settings = TrainSettings(**{**QUICK, "predictor": "wls", "rollout_epochs": 4})
    >>> trainer = Trainer(settings, Path(tempfile.mkdtemp()) / "log.csv", progress=False)
    >>> ppo(trainer)
    >>> trainer.env_epochs, trainer.confirmation["episodes"]
    (24, 3)
    >>> trainer.close()
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from mara_env.agents.mara.policy import MaraPolicy
from mara_env.benchmarks.common.stopwatch import Stopwatch, breakdown
from mara_env.benchmarks.mara.batches import on_device, select_steps
from mara_env.benchmarks.mara.returns import ValueNorm, gae
from mara_env.benchmarks.mara.rollout_worker import PPORollouts, RolloutPlan
from mara_env.benchmarks.mara.rollouts import StepBatch
from mara_env.benchmarks.mara.settings import TrainSettings
from mara_env.benchmarks.mara.trainer import ActingCopy, Trainer
from mara_env.benchmarks.mara.validation import weights_snapshot


class Critic:
    """The value network: a copy of ``policy`` with its own parameters and Adam optimiser, of
    which only the value output is trained; the policy never reads it.

    Args:
        policy: The network to copy (the policy PPO starts from).
        lr: The critic's Adam learning rate.

    Attributes:
        network: The copy (its ``encode(...).value`` is the raw, normalised value).
        optimiser: Its Adam optimiser.
        value_norm: The running statistics of the value targets.
    """

    def __init__(self, policy: MaraPolicy, lr: float) -> None:
        self.network = copy.deepcopy(policy)
        self.optimiser = torch.optim.Adam(self.network.parameters(), lr=lr)
        self.value_norm = ValueNorm()

    def fit(
        self,
        batch: StepBatch,
        targets: torch.Tensor,
        settings: TrainSettings,
        generator: torch.Generator,
    ) -> float:
        """Fit the value output to normalised returns ``targets`` (``settings.ppo_epochs``
        passes of minibatches ordered by ``generator``; ``batch`` and ``targets`` on the
        network's device); returns the mean loss."""
        network, optimiser = self.network, self.optimiser
        size = len(targets)
        losses = []
        for _ in range(settings.ppo_epochs):
            order = torch.randperm(size, generator=generator).to(targets.device)
            for start in range(0, size, settings.minibatch):
                index = order[start : start + settings.minibatch]
                value = network.encode(batch.slots[index], batch.globals[index]).value
                loss = (value - targets[index]).pow(2).mean()
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(network.parameters(), 1.0)
                optimiser.step()
                losses.append(loss.item())
        return round(float(np.mean(losses)), 5)


def ppo(trainer: Trainer) -> None:
    """PPO updates of ``trainer.policy`` from its best weights so far, then the confirmation
    of the kept weights (``trainer.confirmation``); nothing when ``settings.updates`` is 0."""
    settings = trainer.settings
    if settings.updates == 0:
        return
    selection = trainer.selection
    began, epochs_before = time.perf_counter(), trainer.env_epochs
    if selection.best_state:
        trainer.policy.load_state_dict(selection.best_state)
    start_state = weights_snapshot(trainer.policy.state_dict())
    anchor = copy.deepcopy(trainer.policy).eval().requires_grad_(False)
    critic = Critic(trainer.policy, settings.critic_lr)
    critic_actor = ActingCopy(critic.network)
    optimiser = torch.optim.Adam(trainer.policy.parameters(), lr=settings.lr)
    # The starting weights compete as update 0, scored on the same validation set.
    selection.restart()
    trainer.log(validate=True, phase="ppo", update=0)
    placement = trainer.placement
    rollouts = PPORollouts(
        rollout_plan(settings),
        trainer.actor.sync(),
        critic_actor.sync(),
        lag=settings.rollout_lag,
        workers=placement.rollout_workers,
        backend=placement.rollout_backend,
        ray_address=placement.ray_address,
    )
    learner, played = Stopwatch(), Stopwatch()
    try:
        _updates(trainer, rollouts, critic, critic_actor, anchor, optimiser, began, learner, played)
    finally:
        rollouts.close()
    with learner.part("validation and log"):
        selection.settle(wait=True)
    trainer.phase_done("ppo", began, epochs_before)
    trainer.ppo_seconds = {"learner": learner.totals, "rollouts": played.totals}
    trainer.confirmation = selection.confirm(trainer.actor.sync(), start_state)


def rollout_plan(settings: TrainSettings) -> RolloutPlan:
    """The rollouts PPO plays under ``settings``: its clusters, network, predictor, samples,
    temperature, episode seeds (from ``seed + 2``) and epochs per update."""
    return RolloutPlan(
        tuple(settings.configs(settings.clusters)),
        settings.policy_config,
        settings.predictor_name,
        settings.n_samples,
        settings.temperature,
        settings.seed + 2,
        settings.rollout_epochs,
    )


def _updates(
    trainer: Trainer,
    rollouts: PPORollouts,
    critic: Critic,
    critic_actor: ActingCopy,
    anchor: MaraPolicy,
    optimiser: torch.optim.Optimizer,
    began: float,
    learner: Stopwatch,
    played: Stopwatch,
) -> None:
    """The PPO updates; ``learner`` times the learner's parts, ``played`` sums where the
    rollouts' time went (in whichever process played them). Rollouts and returns are computed
    on the CPU (by the acting copies of the policy and ``critic_actor``), the updates on the
    learner's device."""
    settings, policy, value_norm = trainer.settings, trainer.policy, critic.value_norm
    device = trainer.device
    bar = tqdm(range(1, settings.updates + 1), desc="ppo", disable=not trainer.progress)
    deadline = began + 60.0 * settings.minutes
    warming = settings.value_warmup > 0
    for update in bar:
        policy.eval()
        critic.network.eval()
        with learner.part("rollouts"):
            trainer.actor.sync()
            critic_actor.sync()
            steps, played_batch, raw_values, last_value, finished = rollouts.next(
                more=update < settings.updates
            )
        batch = on_device(played_batch, device)
        played.add(rollouts.seconds)
        policy.train()
        critic.network.train()
        trainer.env_epochs += len(batch.reward)
        values = [value_norm.denormalise(value) for value in raw_values]
        advantages, returns = gae(
            [step.reward for step in steps],
            [step.done for step in steps],
            values,
            value_norm.denormalise(last_value),
            settings.gamma,
            settings.gae_lambda,
        )
        value_norm.update(returns)
        advantages = advantages.to(device)
        with learner.part("critic"):
            value_loss = critic.fit(
                batch, value_norm.normalise(returns).to(device), settings, trainer.generator
            )
        stats: dict[str, Any] = {"value_loss": value_loss}
        warmup, warming = warming, warming and not critic_ready(settings, update, stats)
        stats["warmup"] = int(warmup)
        if not warmup:
            stats["policy_lr"] = set_policy_lr(settings, optimiser, update, began)
            with learner.part("policy update"):
                with torch.no_grad():
                    anchor_log_prob, _ = trainer.scores(batch, batch.actions, policy=anchor)
                stats.update(policy_update(trainer, batch, advantages, anchor_log_prob, optimiser))
        train = [row["completion_rate"] for row in finished]
        validated = not warmup and (
            update % settings.validate_every == 0 or update == settings.updates
        )
        with learner.part("validation and log"):
            trainer.log(
                validate=validated,
                phase="ppo",
                update=update,
                train_completion=round(float(np.mean(train)), 4) if train else "",
                **stats,
            )
        bar.set_postfix(best=f"{trainer.selection.best_validation:.3f}")
        if time.perf_counter() > deadline:
            if not (validated or warmup):
                trainer.log(validate=True, phase="ppo", update=update)
            print(f"Stopping after update {update}: the {settings.minutes}-minute budget is spent.")
            break


def print_ppo_time(seconds: dict[str, dict[str, float]], total: float) -> None:
    """Print where PPO's ``total`` seconds went (:attr:`Trainer.ppo_seconds`)."""
    print(f"Where PPO's {total:.0f} s went, in the learner (rollouts: playing or awaiting them):")
    print(breakdown(seconds["learner"], total))
    print("inside the rollouts (summed over the processes that played them):")
    print(breakdown(seconds["rollouts"], total))


def critic_ready(settings: TrainSettings, update: int, stats: dict[str, Any]) -> bool:
    """Whether the critic's warm-up ends with ``update``: its value loss reached
    ``value_warmup_loss`` (when that is set), or ``value_warmup`` updates are done."""
    target = settings.value_warmup_loss
    return (target > 0.0 and stats["value_loss"] <= target) or update >= settings.value_warmup


def set_policy_lr(
    settings: TrainSettings, optimiser: torch.optim.Optimizer, update: int, began: float
) -> float:
    """The policy's learning rate for ``update`` (1-based) under ``settings.lr_schedule``,
    written into ``optimiser`` and returned to 3 significant digits: ``linear`` scales ``lr``
    by the share of the budget left, the larger of the shares of updates and of minutes
    (since ``began``) already spent."""
    scale = 1.0
    if settings.lr_schedule == "linear":
        spent_updates = (update - 1) / settings.updates
        spent_minutes = (time.perf_counter() - began) / (60.0 * settings.minutes)
        scale = max(0.0, 1.0 - max(spent_updates, spent_minutes))
    lr = settings.lr * scale
    for group in optimiser.param_groups:
        group["lr"] = lr
    return float(f"{lr:.3g}")


def policy_update(
    trainer: Trainer,
    batch: StepBatch,
    advantages: torch.Tensor,
    anchor_log_prob: torch.Tensor,
    optimiser: torch.optim.Optimizer,
) -> dict[str, Any]:
    """Clipped PPO passes over ``batch`` on ``trainer.policy`` alone, with the KL anchor
    (``anchor_log_prob``: the anchor's log-probabilities of the batch's actions) and the KL
    early stop; returns the log's mean losses and ``policy_epochs`` (passes completed,
    ``"<n>+stop"`` when KL control stopped one)."""
    settings, policy = trainer.settings, trainer.policy
    size = len(advantages)
    normalised = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    totals = {"policy_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "anchor_kl": 0.0}
    count, epochs_run, stopped = 0, 0, False
    for _ in range(settings.ppo_epochs):
        order = torch.randperm(size, generator=trainer.generator).to(advantages.device)
        for start in range(0, size, settings.minibatch):
            index = order[start : start + settings.minibatch]
            part = select_steps(batch, index)
            log_prob, entropy = trainer.scores(part, part.actions)
            log_ratio = log_prob - part.log_prob
            approx_kl = float(((log_ratio.exp() - 1.0) - log_ratio).mean().detach())
            if settings.target_kl > 0 and approx_kl > settings.target_kl:
                stopped = True
                break
            if settings.trust_region == "joint":
                ratio, advantage = log_ratio.sum(dim=1).exp(), normalised[index]
            else:
                ratio, advantage = log_ratio.exp(), normalised[index][:, None]
            clipped = ratio.clamp(1.0 - settings.clip, 1.0 + settings.clip)
            policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
            to_anchor = anchor_log_prob[index] - log_prob
            anchor_kl = ((to_anchor.exp() - 1.0) - to_anchor).mean()
            loss = (
                policy_loss + settings.kl_coef * anchor_kl - settings.entropy_coef * entropy.mean()
            )
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimiser.step()
            totals["policy_loss"] += policy_loss.item()
            totals["entropy"] += entropy.mean().item()
            totals["approx_kl"] += approx_kl
            totals["anchor_kl"] += anchor_kl.item()
            count += 1
        if stopped:
            break
        epochs_run += 1
    stats: dict[str, Any] = {key: round(value / max(count, 1), 5) for key, value in totals.items()}
    stats["policy_epochs"] = epochs_run if not stopped else f"{epochs_run}+stop"
    stats.update(joint_move(trainer, batch))
    return stats


def joint_move(trainer: Trainer, batch: StepBatch) -> dict[str, float]:
    """How far the policy's joint action moved from the rollout policy's on ``batch``: the k3
    estimate of KL(rollout || policy) of the joint action of each epoch (its nodes' log-ratios
    summed), and the largest joint ratio, over the whole rollout."""
    with torch.no_grad():
        log_prob, _ = trainer.scores(batch, batch.actions)
        joint = (log_prob - batch.log_prob).sum(dim=1)
        kl = ((joint.exp() - 1.0) - joint).mean()
    return {
        "joint_kl": round(float(kl), 5),
        "joint_ratio_max": round(float(joint.max().exp()), 4),
    }
