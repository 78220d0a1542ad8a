"""A one-step sampler distilled from a trained flow-matching velocity field.

Sampling a flow-matching model integrates its ODE from noise with several solver steps, each a
pass through the network. A **distilled** sampler learns the whole path in one pass: a student
(at the start, the teacher itself, or a narrower copy of it that keeps the units through which
most of its weight flows, :func:`narrowed_copy`, cheaper to run) is trained so that one Euler step
from noise,
``x_0 + v_student(x_0, 0 | c)``, lands where the teacher's solver lands from the same ``x_0`` (a
regression on pairs of noise and teacher samples; the teacher's "flow map").
The student then samples with ``solver="euler"`` and ``solver_steps=1``: one network pass per
sample instead of ``2 * steps`` for the midpoint solver.

Example:
    >>> import torch
    >>> from mara_env.predictors.flow_matching import FlowMatchingConfig, VelocityField
    >>> teacher = VelocityField(FlowMatchingConfig(hidden=8, blocks=1))
    >>> contexts = torch.zeros((4, teacher.context_net[0].in_features))
    >>> noise, target = teacher_pairs(teacher, contexts, torch.Generator().manual_seed(0))
    >>> noise.shape == target.shape == (4, WINDOW_SIZE)
    True
    >>> narrowed_copy(teacher, FlowMatchingConfig(hidden=6, blocks=1)).input.out_features
    6
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from mara_env.predictors.curve_windows import WINDOW_SIZE
from mara_env.predictors.flow_matching import FlowMatchingConfig, VelocityField, integrate
from mara_env.predictors.training import TrainingSettings, fit

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


def narrowed_copy(teacher: VelocityField, config: FlowMatchingConfig) -> VelocityField:
    """A copy of ``teacher`` with ``config.hidden`` units per hidden layer instead of its own:
    the units through which most of its weight flows, with their weights, to start a narrower
    student from (``config`` is the teacher's but for ``hidden`` and the sampler).

    The residual stream's units are shared by every layer that writes to it (the input layer,
    the context embedding, each block) and every layer that reads it (each block, the output
    layer), so one set of them is kept throughout: those whose summed absolute weights in times
    out are largest. The context network's inner layer keeps its own set by the same rule.
    At the teacher's own width the copy computes what the teacher does.

    Raises:
        ValueError: If ``config.hidden`` is above the teacher's width.
    """
    hidden, width = config.hidden, teacher.input.out_features
    if hidden > width:
        raise ValueError(
            f"narrowed_copy: a student no wider than its teacher ({width} units), got "
            f"hidden={hidden}."
        )
    weights = {name: tensor.detach() for name, tensor in teacher.state_dict().items()}
    context_in, context_out = weights["context_net.0.weight"], weights["context_net.2.weight"]
    blocks = [weights[f"blocks.{index}.1.weight"] for index in range(len(teacher.blocks))]
    written = [weights["input.weight"], context_out, *blocks]  # (units, inputs) each
    read = [weights["output.1.weight"], *blocks]  # (outputs, units) each
    stream = _strongest(
        sum(w.abs().sum(dim=1) for w in written) * sum(w.abs().sum(dim=0) for w in read), hidden
    )
    inner = _strongest(context_in.abs().sum(dim=1) * context_out.abs().sum(dim=0), hidden)
    kept = {
        "context_net.0.weight": context_in[inner],
        "context_net.0.bias": weights["context_net.0.bias"][inner],
        "context_net.2.weight": context_out[stream][:, inner],
        "context_net.2.bias": weights["context_net.2.bias"][stream],
        "input.weight": weights["input.weight"][stream],
        "input.bias": weights["input.bias"][stream],
        "output.1.weight": weights["output.1.weight"][:, stream],
        "output.1.bias": weights["output.1.bias"],
        "frequencies": weights["frequencies"],
    }
    for index, block in enumerate(blocks):
        kept[f"blocks.{index}.1.weight"] = block[stream][:, stream]
        kept[f"blocks.{index}.1.bias"] = weights[f"blocks.{index}.1.bias"][stream]
    student = VelocityField(config)
    student.load_state_dict({name: tensor.clone() for name, tensor in kept.items()})
    return student


def _strongest(scores: torch.Tensor, count: int) -> torch.Tensor:
    """Indices of the ``count`` largest ``scores``, in increasing order."""
    return torch.sort(torch.argsort(scores, descending=True, stable=True)[:count]).values


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
    :func:`narrowed_copy` of the teacher), else a copy of ``teacher``.

    The student keeps its **final** weights (the learning rate has decayed by then). Its
    validation loss, logged as training goes, is a mean over one noise draw per validation
    context, and the teacher takes a few of those draws far from all the others: a handful of
    pairs can carry a large share of that mean, so the weights of its lowest value may come
    from early in training, chosen by those few pairs. The prediction cases on which the
    student is then calibrated (``mara_env.benchmarks.prediction.train``) score it instead.

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
