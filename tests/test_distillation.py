"""The one-step sampler distilled from a flow-matching teacher."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from predictors.distillation import distill, one_step_loss, teacher_pairs
from predictors.flow_matching import FlowMatchingConfig, VelocityField
from predictors.training import TrainingSettings, fit, make_examples


def test_distillation_brings_one_step_close_to_the_teachers_solver(one_torch_thread: None) -> None:
    rng = np.random.default_rng(0)
    curves = [(-rate * np.arange(200.0), "synthetic") for rate in rng.choice([0.01, 0.03], 30)]
    contexts = make_examples(curves, 3000, rng, 1.0)[0]
    torch.manual_seed(0)
    teacher = VelocityField(FlowMatchingConfig(hidden=32, blocks=1)).eval()
    held = torch.as_tensor(contexts[:300])
    noise, target = teacher_pairs(teacher, held, torch.Generator().manual_seed(1))
    pairs = torch.cat([noise, target], dim=1)
    with torch.no_grad():
        before = float(one_step_loss(teacher, held, pairs, torch.Generator()))
    student, log = distill(
        teacher, contexts[300:], contexts[:300], TrainingSettings(updates=300, batch_size=128)
    )
    with torch.no_grad():
        after = float(one_step_loss(student, held, pairs, torch.Generator()))
    assert after < 0.5 * before
    assert log[-1][0] == 300


def _squared_error(
    model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor, _: object
) -> torch.Tensor:
    return torch.mean((model(inputs) - targets) ** 2)


@pytest.mark.parametrize("keep_best", [True, False])
def test_fit_keeps_the_best_or_the_final_weights(keep_best: bool) -> None:
    """On a validation set whose loss only grows as training goes (targets 0 where training
    asks for 2x), ``fit`` hands back the weights of the lowest logged validation loss, or with
    ``keep_best=False`` (the distilled student's rule) those after the last update."""
    x = torch.linspace(0.1, 1.0, 64).reshape(-1, 1)
    train = (x.numpy(), (2.0 * x).numpy())
    validation = (x.numpy(), torch.zeros_like(x).numpy())
    model = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.zeros_(model.weight)
    settings = TrainingSettings(updates=60, batch_size=16, learning_rate=0.05)
    log = fit(
        model, _squared_error, settings, train, validation, validate_every=10, keep_best=keep_best
    )
    inputs, targets = (torch.as_tensor(array) for array in validation)
    with torch.no_grad():
        kept = float(_squared_error(model, inputs, targets, None))
    losses = [row[2] for row in log]
    assert losses == sorted(losses) and losses[0] < losses[-1]
    assert kept == pytest.approx(losses[0] if keep_best else losses[-1], rel=1e-6)
