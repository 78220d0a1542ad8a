"""MARA's warm start by imitation: DAgger with a teacher, the clairvoyant reference by default.

The teacher (``settings.teacher``: the clairvoyant reference, or the observation-only reach
planner) labels every epoch with its node actions. The first round executes
the teacher's actions, later rounds the student's own sampled actions (at the deployed
temperature); after each round the student is fitted to all labels gathered so far: the
cross-entropy of each node's label at temperature 1 on the logits, earlier nodes conditioned on
the earlier labels (the deployed temperature then sharpens the fitted distribution). The clairvoyant
teacher reads hidden curves, but only its labels are used; the student sees observations only.

Every round ends with a validation (:class:`~mara_env.benchmarks.mara.selection.Selection` keeps the best
round's weights, which PPO then starts from). Rounds stop after ``settings.dagger_rounds``, or
before a round that would overrun ``settings.imitation_minutes`` (a wall-clock budget, which
breaks reproducibility when it binds).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
    >>> from mara_env.benchmarks.mara.trainer import Trainer
    >>> settings = TrainSettings(**{**QUICK, "predictor": "wls", "dagger_epochs": 2})
    >>> trainer = Trainer(settings, Path(tempfile.mkdtemp()) / "log.csv", progress=False)
    >>> imitate(trainer)
    >>> trainer.env_epochs, trainer.selection.best_round, sorted(trainer.phases)
    (6, 0, ['imitation'])
    >>> trainer.close()
"""

from __future__ import annotations

import time

import numpy as np
import torch
from tqdm.auto import tqdm

from mara_env.benchmarks.mara.batches import merge_steps, on_device, select_steps
from mara_env.benchmarks.mara.rollouts import StepBatch
from mara_env.benchmarks.mara.trainer import Trainer


def imitate(trainer: Trainer) -> None:
    """Run the DAgger rounds of ``trainer.settings`` on ``trainer.policy`` (none when
    ``dagger_rounds`` is 0), logging and validating every round."""
    settings = trainer.settings
    if settings.dagger_rounds == 0:
        return
    policy, selection = trainer.policy, trainer.selection
    began, epochs_before = time.perf_counter(), trainer.env_epochs
    deadline = began + 60.0 * settings.imitation_minutes
    optimiser = torch.optim.Adam(policy.parameters(), lr=settings.imitation_lr)
    vector = trainer.vector(
        settings.imitation_clusters, settings.seed + 1, teacher=settings.teacher
    )
    data: list[StepBatch] = []
    bar = tqdm(range(settings.dagger_rounds), desc="imitation", disable=not trainer.progress)
    for round_index in bar:
        round_began = time.perf_counter()
        policy.eval()
        trainer.actor.sync()
        for _ in range(settings.dagger_epochs):
            batch = vector.step(follow_teacher=round_index == 0)
            trainer.env_epochs += len(batch.reward)
            data.append(batch)
        policy.train()
        merged = on_device(merge_steps(data), trainer.device)
        size = len(merged.reward)
        losses = []
        for _ in range(settings.imitation_passes):
            order = torch.randperm(size, generator=trainer.generator).to(trainer.device)
            for start in range(0, size, settings.minibatch):
                part = select_steps(merged, order[start : start + settings.minibatch])
                labels = part.teacher if part.teacher is not None else part.actions
                log_prob, _ = trainer.scores(part, labels, temperature=1.0)
                loss = -log_prob.mean()
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
                optimiser.step()
                losses.append(loss.item())
        train = [row["completion_rate"] for row in vector.finished]
        vector.finished.clear()
        trainer.log(
            validate=True,
            round_index=round_index,
            phase="imitation",
            update=round_index,
            train_completion=round(float(np.mean(train)), 4) if train else "",
            imitation_loss=round(float(np.mean(losses)), 4),
        )
        bar.set_postfix(best=f"{selection.best_validation:.3f}", loss=f"{np.mean(losses):.3f}")
        now = time.perf_counter()
        if now + (now - round_began) > deadline:  # the next round would overrun
            print(
                f"Imitation stops after round {round_index}: the "
                f"{settings.imitation_minutes}-minute budget is spent."
            )
            break
    selection.settle(wait=True)
    trainer.phase_done("imitation", began, epochs_before)
