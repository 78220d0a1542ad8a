"""The one-step sampler distilled from a flow-matching teacher."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mara_env.predictors.curve_windows import WINDOW_SIZE
from mara_env.predictors.distillation import distill, narrowed_copy, one_step_loss, teacher_pairs
from mara_env.predictors.flow_matching import FlowMatchingConfig, VelocityField
from mara_env.predictors.training import TrainingSettings, fit, make_examples


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


def _velocity(model: VelocityField, contexts: torch.Tensor, windows: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model.velocity_at(windows, 0.3, model.embed_context(contexts))


def test_a_narrowed_copy_drops_the_units_that_carry_nothing() -> None:
    """Units with no weight in and no bias stay at 0 (SiLU(0) = 0), so they add nothing: the
    copy without them, and the copy at full width, compute what the teacher does."""
    torch.manual_seed(0)
    config = FlowMatchingConfig(hidden=16, blocks=2, reads_target=True)
    teacher = VelocityField(config).eval()
    idle_stream, idle_inner = [1, 7, 12], [0, 5, 9]
    with torch.no_grad():
        for layer in (teacher.input, teacher.context_net[2], *(b[1] for b in teacher.blocks)):
            layer.weight[idle_stream] = 0.0  # nothing writes to these units of the stream
            layer.bias[idle_stream] = 0.0
        teacher.context_net[0].weight[idle_inner] = 0.0
        teacher.context_net[0].bias[idle_inner] = 0.0
    contexts = torch.randn(5, teacher.context_net[0].in_features)
    windows = torch.randn(5, WINDOW_SIZE)
    expected = _velocity(teacher, contexts, windows)
    narrow = narrowed_copy(teacher, FlowMatchingConfig(hidden=13, blocks=2, reads_target=True))
    torch.testing.assert_close(_velocity(narrow, contexts, windows), expected)
    same = narrowed_copy(teacher, config)
    torch.testing.assert_close(_velocity(same, contexts, windows), expected, rtol=0.0, atol=0.0)


def test_a_narrowed_copy_is_no_wider_than_its_teacher() -> None:
    teacher = VelocityField(FlowMatchingConfig(hidden=8, blocks=1))
    with pytest.raises(ValueError, match="no wider than its teacher"):
        narrowed_copy(teacher, FlowMatchingConfig(hidden=9, blocks=1))
