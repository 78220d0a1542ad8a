"""The flow-matching predictor: windows, training, sampling, checkpoints and its script."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import train_predictors
from predictors.base import PredictorInputError, TaskHistory
from predictors.checkpoint import CheckpointError, card_path, load_checkpoint, save_checkpoint
from predictors.curve_windows import (
    CONTEXT_SIZE,
    FUTURE_OFFSETS,
    WINDOW_SIZE,
    encode_context,
    future_window,
    steps_to_cross,
)
from predictors.flow_matching import (
    FlowMatching,
    FlowMatchingConfig,
    VelocityField,
    shipped_checkpoint,
)
from predictors.registry import make_predictor
from predictors.training import TrainingSettings, make_examples, train_velocity_field


def test_future_window_is_the_running_minimum_of_the_padded_curve() -> None:
    rng = np.random.default_rng(0)
    log_curve = np.cumsum(rng.normal(-0.01, 0.1, size=90))
    for current in (0.0, 3.7, 45.2, 89.0, 120.5):
        start = min(int(current), 89)
        padded = np.concatenate([log_curve, np.full(400, log_curve[-1])])
        expected = [
            padded[start : int(current + offset) + 1].min() - log_curve[start]
            for offset in FUTURE_OFFSETS
        ]
        np.testing.assert_allclose(future_window(log_curve, current), expected)


@given(
    st.lists(st.floats(-3.0, 0.5), min_size=WINDOW_SIZE, max_size=WINDOW_SIZE),
    st.floats(-0.5, 3.0),
)
@settings(max_examples=200, deadline=None)
def test_steps_to_cross_matches_a_dense_linear_interpolation(
    values: list[float], log_gap: float
) -> None:
    window = np.minimum.accumulate(np.array(values))[None, :]
    steps = float(steps_to_cross(window, np.array([log_gap]))[0])
    grid = np.linspace(0.0, float(FUTURE_OFFSETS[-1]), 200_001)
    dense = np.interp(
        grid, np.concatenate([[0.0], FUTURE_OFFSETS]), np.concatenate([[0.0], window[0]])
    )
    reached = np.nonzero(dense <= -log_gap)[0]
    if len(reached) == 0:
        assert steps == np.inf
    else:
        assert steps == pytest.approx(grid[reached[0]], abs=2e-3 * FUTURE_OFFSETS[-1] / 200)


def test_context_ignores_the_loss_scale() -> None:
    steps = np.array([0.0, 3.0, 7.5, 12.0])
    log_loss = np.log([2.0, 1.5, 1.1, 0.9])
    original = encode_context(steps, log_loss, "rl", log_scale=1.3)
    shifted = encode_context(steps, log_loss + 4.2, "rl", log_scale=1.3)
    np.testing.assert_allclose(original, shifted, atol=1e-12)
    assert original.shape == (CONTEXT_SIZE,)


def constant_velocity_curves(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, str]]:
    """Log-losses falling at a constant rate, one of three rates per curve."""
    rates = rng.choice([0.01, 0.02, 0.04], size=n)
    return [(-rate * np.arange(100.0), "synthetic") for rate in rates]


@pytest.fixture(scope="module")
def trivial_model(one_torch_thread: None) -> FlowMatching:
    """A small model trained on constant-velocity log-loss paths (on one torch thread)."""
    rng = np.random.default_rng(0)
    curves = constant_velocity_curves(60, rng)
    config = FlowMatchingConfig(hidden=64, blocks=1, solver_steps=8)
    train = make_examples(curves, 4000, rng, config.log_scale)
    validation = make_examples(curves, 500, rng, config.log_scale)
    model, log = train_velocity_field(
        config,
        TrainingSettings(updates=600, batch_size=256, learning_rate=3e-3),
        train,
        validation,
        validate_every=200,
    )
    assert log[-1][2] < log[0][2]
    return FlowMatching(model, config)


def test_learns_constant_velocity_paths(trivial_model: FlowMatching) -> None:
    # Rate 0.02: from ln 1 at step 0 to ln(target) = -1 takes 50 steps; observed up to step 20.
    steps = np.arange(0.0, 21.0, 4.0)
    history = TaskHistory(steps, np.exp(-0.02 * steps), target=np.exp(-1.0), family="synthetic")
    samples = trivial_model.predict([history], 64, np.random.default_rng(1)).samples[0]
    assert np.median(samples) == pytest.approx(30.0, rel=0.2)
    assert np.isfinite(samples).mean() > 0.9


def test_same_seed_same_samples_and_batching_is_per_task(trivial_model: FlowMatching) -> None:
    steps = np.arange(0.0, 21.0, 4.0)
    histories = [
        TaskHistory(steps, np.exp(-rate * steps), target=0.3, family="synthetic")
        for rate in (0.01, 0.04)
    ]
    first = trivial_model.predict(histories, 16, np.random.default_rng(5)).samples
    again = trivial_model.predict(histories, 16, np.random.default_rng(5)).samples
    other = trivial_model.predict(histories, 16, np.random.default_rng(6)).samples
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.median(first[0]) > np.median(first[1])  # the slower task needs more work


def test_bad_sample_counts_raise(trivial_model: FlowMatching) -> None:
    history = TaskHistory(np.array([0.0, 1.0]), np.array([1.0, 0.9]), target=0.5)
    with pytest.raises(PredictorInputError, match="n_samples"):
        trivial_model.predict([history], 0, np.random.default_rng(0))


def test_checkpoint_round_trip_and_corruption(tmp_path, trivial_model: FlowMatching) -> None:
    path = tmp_path / "model.pt"
    config = {**trivial_model.config.__dict__, **trivial_model.config.layout()}
    save_checkpoint(path, trivial_model.model.state_dict(), config=config)
    loaded = FlowMatching.load(path)
    history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.8]), target=0.4)
    np.testing.assert_array_equal(
        loaded.predict([history], 8, np.random.default_rng(0)).samples,
        trivial_model.predict([history], 8, np.random.default_rng(0)).samples,
    )
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt"):
        FlowMatching.load(path)


def test_checkpoint_with_another_layout_is_refused(tmp_path, trivial_model: FlowMatching) -> None:
    path = tmp_path / "model.pt"
    config = {**trivial_model.config.__dict__, **trivial_model.config.layout()}
    config["window_size"] = WINDOW_SIZE + 1
    save_checkpoint(path, trivial_model.model.state_dict(), config=config)
    with pytest.raises(CheckpointError, match="window_size"):
        FlowMatching.load(path)


def test_missing_or_unreadable_checkpoints_are_refused(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nothing.pt")
    path = tmp_path / "model.pt"
    save_checkpoint(path, {"w": torch.zeros(1)}, config={})
    card_path(path).write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        load_checkpoint(path)


def test_shipped_checkpoint_loads_and_predicts() -> None:
    card = json.loads(card_path(shipped_checkpoint()).read_text())
    assert "train split" in card["facts"]["trained_on"]
    predictor = make_predictor("flow_matching")
    steps = np.arange(0.0, 30.0, 3.0)
    history = TaskHistory(steps, (steps + 1.0) ** -0.4, target=0.2, family="vision")
    samples = predictor.predict([history], 32, np.random.default_rng(0)).samples
    assert samples.shape == (1, 32)
    assert np.all(samples >= 0)


@pytest.mark.parametrize(
    "bad", [{"hidden": 0}, {"solver": "dopri5"}, {"log_scale": -1.0}, {"solver_steps": 1.5}]
)
def test_bad_configs_raise(bad: dict) -> None:
    with pytest.raises(ValueError, match="FlowMatchingConfig"):
        FlowMatchingConfig(**bad)


def test_velocity_field_shapes() -> None:
    model = VelocityField(FlowMatchingConfig(hidden=8, blocks=1))
    embedding = model.embed_context(torch.zeros(3, CONTEXT_SIZE))
    velocity = model(torch.zeros(3, WINDOW_SIZE), torch.zeros(3, 1), embedding)
    assert velocity.shape == (3, WINDOW_SIZE)


def test_training_script_quick_run_writes_a_loadable_checkpoint(tmp_path) -> None:
    out = train_predictors.main(["--quick", "--out", str(tmp_path / "fm.pt"), "--no-progress"])
    predictor = FlowMatching.load(out)
    history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.8]), target=0.4)
    assert predictor.predict([history], 4, np.random.default_rng(0)).samples.shape == (1, 4)


def test_trajectories_are_the_sampled_windows_at_their_offsets(trivial_model: FlowMatching) -> None:
    steps = np.arange(0.0, 21.0, 4.0)
    history = TaskHistory(steps, np.exp(-0.02 * steps), target=0.3, family="synthetic")
    windows = trivial_model.sample_log_windows([history], 4, np.random.default_rng(2))
    trajectories = trivial_model.sample_trajectories(
        [history], FUTURE_OFFSETS.astype(float), 4, np.random.default_rng(2)
    )
    np.testing.assert_allclose(trajectories, windows + np.log(history.loss[-1]), atol=1e-12)
    halfway = trivial_model.sample_trajectories(
        [history], np.array([1.5]), 4, np.random.default_rng(2)
    )
    np.testing.assert_allclose(
        halfway[..., 0], np.log(history.loss[-1]) + windows[..., :2].mean(axis=-1), atol=1e-12
    )


def test_weights_of_another_architecture_are_refused(tmp_path, trivial_model: FlowMatching) -> None:
    path = tmp_path / "model.pt"
    config = {**trivial_model.config.__dict__, **trivial_model.config.layout(), "hidden": 32}
    save_checkpoint(path, trivial_model.model.state_dict(), config=config)
    with pytest.raises(CheckpointError, match="another architecture"):
        FlowMatching.load(path)


def test_bad_thread_counts_raise(trivial_model: FlowMatching) -> None:
    with pytest.raises(ValueError, match="threads"):
        FlowMatching(trivial_model.model, trivial_model.config, threads=0)
