"""The one-step sampler distilled from a flow-matching teacher."""

from __future__ import annotations

import numpy as np
import torch

from predictors.distillation import distill, one_step_loss, teacher_pairs
from predictors.flow_matching import FlowMatchingConfig, VelocityField
from predictors.training import TrainingSettings, make_examples


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
