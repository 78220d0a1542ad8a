"""The spline-flow baseline: sampling, determinism, checkpoints and its training script."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mara_env.benchmarks.prediction import train as train_predictors
from mara_env.predictors.base import TaskHistory
from mara_env.predictors.checkpoint import CheckpointError, save_checkpoint
from mara_env.predictors.curve_windows import WINDOW_SIZE
from mara_env.predictors.normalizing_flow import (
    SplineFlow,
    SplineFlowConfig,
    build_flow,
    negative_log_likelihood,
)
from mara_env.predictors.registry import make_predictor
from mara_env.predictors.training import TrainingSettings, fit, make_examples


@pytest.fixture(scope="module")
def constant_rate_flow(one_torch_thread: None) -> SplineFlow:
    """A small flow trained on log-losses falling at one of three constant rates (one thread)."""
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    curves = [
        (-rate * np.arange(100.0), "synthetic") for rate in rng.choice([0.01, 0.02, 0.04], 60)
    ]
    config = SplineFlowConfig(transforms=2, hidden=32)
    flow = build_flow(config)
    log = fit(
        flow,
        negative_log_likelihood,
        TrainingSettings(updates=300, batch_size=256, learning_rate=3e-3),
        make_examples(curves, 3000, rng, config.log_scale, unknown_family_share=0.0),
        make_examples(curves, 300, rng, config.log_scale, unknown_family_share=0.0),
        validate_every=100,
    )
    assert log[-1][2] < log[0][2]
    return SplineFlow(flow, config)


def test_learns_constant_rate_paths(constant_rate_flow: SplineFlow) -> None:
    # a small model after 300 updates: within a factor of two of the truth, 30 steps
    steps = np.arange(0.0, 21.0, 4.0)
    history = TaskHistory(steps, np.exp(-0.02 * steps), target=np.exp(-1.0), family="synthetic")
    samples = constant_rate_flow.predict([history], 64, np.random.default_rng(1)).samples[0]
    assert 15.0 < np.median(samples) < 60.0


def test_a_slower_rate_needs_more_work(constant_rate_flow: SplineFlow) -> None:
    steps = np.arange(0.0, 13.0, 4.0)
    histories = [
        TaskHistory(steps, np.exp(-rate * steps), target=np.exp(-0.8), family="synthetic")
        for rate in (0.01, 0.02, 0.04)
    ]
    samples = constant_rate_flow.predict(histories, 64, np.random.default_rng(1)).samples
    medians = np.median(samples, axis=1)
    assert medians[0] > medians[1] > medians[2]


def test_same_seed_same_samples_without_touching_the_global_generator(
    constant_rate_flow: SplineFlow,
) -> None:
    history = TaskHistory(np.array([0.0, 4.0]), np.array([1.0, 0.9]), target=0.5)
    state = torch.random.get_rng_state()
    first = constant_rate_flow.sample_log_windows([history], 8, np.random.default_rng(3))
    assert torch.equal(state, torch.random.get_rng_state())
    again = constant_rate_flow.sample_log_windows([history], 8, np.random.default_rng(3))
    np.testing.assert_array_equal(first, again)
    assert first.shape == (1, 8, WINDOW_SIZE)


def test_checkpoint_round_trip_and_mismatch(tmp_path, constant_rate_flow: SplineFlow) -> None:
    path = tmp_path / "flow.pt"
    config = {**constant_rate_flow.config.__dict__, **constant_rate_flow.config.layout()}
    save_checkpoint(path, constant_rate_flow.flow.state_dict(), config=config)
    loaded = SplineFlow.load(path)
    history = TaskHistory(np.array([0.0, 4.0]), np.array([1.0, 0.9]), target=0.5)
    np.testing.assert_array_equal(
        loaded.predict([history], 8, np.random.default_rng(0)).samples,
        constant_rate_flow.predict([history], 8, np.random.default_rng(0)).samples,
    )
    config["families"] = ["tabular"]
    save_checkpoint(path, constant_rate_flow.flow.state_dict(), config=config)
    with pytest.raises(CheckpointError, match="families"):
        SplineFlow.load(path)


def test_shipped_checkpoint_is_registered() -> None:
    predictor = make_predictor("spline_flow")
    history = TaskHistory(np.arange(0.0, 30.0, 3.0), np.linspace(1.0, 0.6, 10), target=0.4)
    samples = predictor.predict([history], 16, np.random.default_rng(0)).samples
    assert samples.shape == (1, 16) and np.all(samples >= 0)


@pytest.mark.parametrize("bad", [{"transforms": 0}, {"bins": 1.5}, {"log_scale": 0.0}])
def test_bad_configs_raise(bad: dict) -> None:
    with pytest.raises(ValueError, match="SplineFlowConfig"):
        SplineFlowConfig(**bad)


def test_training_script_quick_run(tmp_path) -> None:
    out = train_predictors.main(
        ["--model", "spline_flow", "--quick", "--output", str(tmp_path / "nsf.pt"), "--no-progress"]
    )
    history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.8]), target=0.4)
    assert SplineFlow.load(out).predict([history], 4, np.random.default_rng(0)).samples.shape == (
        1,
        4,
    )


@pytest.mark.parametrize("model", ["flow_matching", "spline_flow"])
def test_training_defaults_are_the_shipped_checkpoints_settings(model: str) -> None:
    """``python -m mara_env.benchmarks.prediction.train --model M`` retrains the shipped checkpoint."""
    import json

    from mara_env.predictors import flow_matching, normalizing_flow
    from mara_env.predictors.checkpoint import card_path

    module = flow_matching if model == "flow_matching" else normalizing_flow
    card = json.loads(card_path(module.shipped_checkpoint()).read_text())
    args = train_predictors.parse_args(["--model", model])
    assert card["facts"]["updates"] == args.updates
    assert card["facts"]["examples"] == args.examples
    if model == "flow_matching":  # the card is the distilled student's; the teacher is wider
        teacher_card = module.shipped_checkpoint().with_name("flow_matching_teacher.json")
        teacher = json.loads(teacher_card.read_text())
        assert teacher["config"]["hidden"] == args.hidden
        assert card["config"]["hidden"] == args.student_hidden
        assert card["facts"]["distillation"]["updates"] == args.distill_updates
    else:
        assert card["config"]["hidden"] == args.hidden
    blocks = card["config"]["blocks" if model == "flow_matching" else "transforms"]
    assert blocks == args.blocks
    assert f"{args.threads} torch threads" in card["facts"]["machine"]
