"""A one-step sampler distilled from a trained flow-matching velocity field.

Sampling a flow-matching model integrates its ODE from noise with several solver steps, each a
pass through the network. A **distilled** sampler learns the whole path in one pass: a student
(by default with the teacher's architecture and, at the start, its weights; or a narrower network
of its own, cheaper to run) is trained so that one Euler step from noise,
``x_0 + v_student(x_0, 0 | c)``, lands where the teacher's solver lands from the same ``x_0`` (a
regression on pairs of noise and teacher samples; the teacher's "flow map").
The student then samples with ``solver="euler"`` and ``solver_steps=1``: one network pass per
sample instead of ``2 * steps`` for the midpoint solver.

Example:
    >>> import torch
    >>> from predictors.flow_matching import FlowMatchingConfig, VelocityField
    >>> teacher = VelocityField(FlowMatchingConfig(hidden=8, blocks=1))
    >>> contexts = torch.zeros((4, teacher.context_net[0].in_features))
    >>> noise, target = teacher_pairs(teacher, contexts, torch.Generator().manual_seed(0))
    >>> noise.shape == target.shape == (4, WINDOW_SIZE)
    True
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from predictors.curve_windows import WINDOW_SIZE
from predictors.flow_matching import VelocityField, integrate
from predictors.training import TrainingSettings, fit

#: The teacher's solver when making targets.
TEACHER_SOLVER = ("midpoint", 4)
#: Contexts per teacher call (bounds memory).
CHUNK = 8192


@torch.no_grad()
def teacher_pairs(
    teacher: VelocityField, contexts: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(noise, where the teacher's solver takes it) for one noise draw per context."""
    width = WINDOW_SIZE
    noise = torch.randn((len(contexts), width), generator=generator)
    targets = []
    solver, steps = TEACHER_SOLVER
    for start in range(0, len(contexts), CHUNK):
        embedding = teacher.embed_context(contexts[start : start + CHUNK])
        chunk = noise[start : start + CHUNK]

        def velocity(x: torch.Tensor, time: float, embedding: torch.Tensor = embedding) -> Any:
            return teacher.velocity_at(x, time, embedding)

        targets.append(integrate(velocity, chunk, solver, steps))
    return noise, torch.cat(targets)


def one_step_loss(
    student: VelocityField, context: torch.Tensor, pairs: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """Squared error of the student's one Euler step from the noise half of ``pairs`` to the
    teacher's sample in the other half (``generator`` is unused: the pairs hold the noise)."""
    width = pairs.shape[1] // 2
    noise, target = pairs[:, :width], pairs[:, width:]
    landed = noise + student.velocity_at(noise, 0.0, student.embed_context(context))
    return torch.mean((landed - target) ** 2)


def distill(
    teacher: VelocityField,
    train_contexts: np.ndarray,
    validation_contexts: np.ndarray,
    settings: TrainingSettings,
    on_update: Callable[[int, float, float | None], None] | None = None,
    student: VelocityField | None = None,
) -> tuple[VelocityField, list[tuple[int, float, float]]]:
    """A student trained to sample in one step (module docstring): ``student`` if given (e.g. a
    narrower untrained network), else a copy of ``teacher``.

    The student keeps its **final** weights (the learning rate has decayed by then). Its
    validation loss, logged as training goes, is a mean over one noise draw per validation
    context, and the teacher takes a few of those draws far from all the others: a handful of
    pairs can carry a large share of that mean, so the weights of its lowest value may come
    from early in training, chosen by those few pairs. The prediction cases on which the
    student is then calibrated (``benchmarks.train_predictors``) score it instead.

    Returns:
        The student (eval mode, final weights) and the ``fit`` log.
    """
    generator = torch.Generator().manual_seed(settings.seed + 7)
    teacher = teacher.eval()
    data = []
    for contexts in (train_contexts, validation_contexts):
        tensor = torch.as_tensor(contexts)
        noise, target = teacher_pairs(teacher, tensor, generator)
        data.append((contexts, torch.cat([noise, target], dim=1).numpy()))
    student = (copy.deepcopy(teacher) if student is None else student).train()
    log = fit(
        student,
        one_step_loss,
        settings,
        data[0],
        data[1],
        on_update,
        validate_every=max(settings.updates // 20, 1),
        keep_best=False,
    )
    return student, log
