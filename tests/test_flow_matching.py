"""The flow-matching predictor: windows, training, sampling, checkpoints and its script."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
from agreement import assert_agree
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mara_env.benchmarks.prediction import train as train_predictors
from mara_env.predictors.base import UNKNOWN_FAMILY, PredictorInputError, TaskHistory
from mara_env.predictors.checkpoint import (
    CheckpointError,
    card_path,
    load_checkpoint,
    save_checkpoint,
)
from mara_env.predictors.curve_windows import (
    CONTEXT_SIZE,
    FUTURE_EPOCHS,
    WINDOW_SIZE,
    encode_context,
    encode_contexts,
    epochs_to_cross,
    future_window,
)
from mara_env.predictors.flow_matching import (
    FlowMatching,
    FlowMatchingConfig,
    VelocityField,
    shipped_checkpoint,
)
from mara_env.predictors.registry import make_predictor
from mara_env.predictors.training import TrainingSettings, make_examples, train_velocity_field


def test_future_window_is_the_running_minimum_of_the_padded_curve() -> None:
    rng = np.random.default_rng(0)
    log_curve = np.cumsum(rng.normal(-0.01, 0.1, size=90))
    for current, speed in ((0.0, 1.0), (3.7, 2.5), (45.2, 0.7), (89.0, 3.0), (120.5, 1.0)):
        start = min(int(current), 89)
        padded = np.concatenate([log_curve, np.full(1000, log_curve[-1])])
        expected = [
            padded[start : int(current + speed * offset) + 1].min() - log_curve[start]
            for offset in FUTURE_EPOCHS
        ]
        np.testing.assert_allclose(future_window(log_curve, current, speed), expected)


# no subnormal numbers: the reference's own interpolation underflows on them (a slope of 5e-324
# over an offset's width rounds to 0)
@given(
    st.lists(
        st.floats(-3.0, 0.5, allow_subnormal=False), min_size=WINDOW_SIZE, max_size=WINDOW_SIZE
    ),
    st.floats(-0.5, 3.0, allow_subnormal=False),
)
@settings(max_examples=200, deadline=None)
def test_epochs_to_cross_matches_a_dense_linear_interpolation(
    values: list[float], log_gap: float
) -> None:
    window = np.minimum.accumulate(np.array(values))[None, :]
    # a value within rounding of the threshold is a tie the dense reference breaks either way
    assume(bool(np.all(np.abs(window + log_gap) > 1e-9)))
    epochs = float(epochs_to_cross(window, np.array([log_gap]))[0])
    grid = np.linspace(0.0, float(FUTURE_EPOCHS[-1]), 200_001)
    dense = np.interp(
        grid, np.concatenate([[0.0], FUTURE_EPOCHS]), np.concatenate([[0.0], window[0]])
    )
    reached = np.nonzero(dense <= -log_gap)[0]
    if len(reached) == 0:
        assert epochs == np.inf
    else:
        assert epochs == pytest.approx(grid[reached[0]], abs=2e-3 * FUTURE_EPOCHS[-1] / 200)


def test_epochs_to_cross_divides_only_where_the_window_crosses() -> None:
    # a window that never reaches the level, a hair below 0 (a subnormal gap to the present):
    # the share's division there would overflow, and it is not made
    window = np.full((2, len(FUTURE_EPOCHS)), -1e-310)
    window[1] = -np.linspace(0.1, 3.0, len(FUTURE_EPOCHS))  # crosses 1.0 between two offsets
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        epochs = epochs_to_cross(window, np.array([1.0, 1.0]))
    assert epochs[0] == np.inf
    assert FUTURE_EPOCHS[0] < epochs[1] < FUTURE_EPOCHS[-1]


@pytest.mark.parametrize(
    ("window", "log_gap"),
    [
        (np.zeros(WINDOW_SIZE), np.ones(1)),  # one window without its row axis
        (np.zeros((2, WINDOW_SIZE + 1)), np.ones(2)),  # another window size
        (np.zeros((2, WINDOW_SIZE)), np.ones(3)),  # gaps of other rows
    ],
    ids=["1d", "width", "rows"],
)
def test_epochs_to_cross_refuses_other_shapes(window: np.ndarray, log_gap: np.ndarray) -> None:
    with pytest.raises(
        ValueError, match=rf"window must be \(n, {WINDOW_SIZE}\) and log_gap \(n,\)"
    ):
        epochs_to_cross(window, log_gap)


def test_contexts_of_histories_without_points_are_refused() -> None:
    from mara_env.predictors.curve_windows import encode_rows

    with pytest.raises(ValueError, match="at least one point per history"):
        encode_rows([np.zeros(0)], [np.zeros(0)], ["rl"], 1.0, ("rl",), np.array([np.inf]))


def test_context_ignores_the_loss_scale() -> None:
    steps = np.array([0.0, 3.0, 7.5, 12.0])
    log_loss = np.log([2.0, 1.5, 1.1, 0.9])
    original = encode_context(steps, log_loss, "rl", log_scale=1.3)
    shifted = encode_context(steps, log_loss + 4.2, "rl", log_scale=1.3)
    np.testing.assert_allclose(original, shifted, atol=1e-12)
    assert original.shape == (CONTEXT_SIZE,)


def constant_velocity_curves(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, str]]:
    """Log-losses falling at a constant rate, one of three rates per curve, long enough that
    every rate falls below ln(loss) = -1 even on a cropped curve (so the tests' target is
    always reachable, whatever the unknown step budget)."""
    rates = rng.choice([0.01, 0.02, 0.04], size=n)
    return [(-rate * np.arange(300.0), "synthetic") for rate in rates]


@pytest.fixture(scope="module")
def trivial_model(one_torch_thread: None) -> FlowMatching:
    """A small model trained on constant-velocity log-loss paths (on one torch thread)."""
    rng = np.random.default_rng(0)
    curves = constant_velocity_curves(60, rng)
    config = FlowMatchingConfig(hidden=64, blocks=1, solver_steps=8)
    train = make_examples(curves, 20_000, rng, config.log_scale)
    validation = make_examples(curves, 500, rng, config.log_scale)
    model, log = train_velocity_field(
        config,
        TrainingSettings(updates=2000, batch_size=256, learning_rate=3e-3),
        train,
        validation,
        validate_every=200,
    )
    assert log[-1][2] < log[0][2]
    return FlowMatching(model, config)


def test_learns_constant_velocity_paths(trivial_model: FlowMatching) -> None:
    # Rate 0.02: from ln 1 at step 0 to ln(target) = -1 takes 50 steps; observed up to step 20,
    # one report per epoch of 4 steps; the 300-step budget is known. A model this small (20,000
    # examples, 2,000 updates) gets the remaining 30 steps within a factor of two.
    steps = np.arange(0.0, 21.0, 4.0)
    history = TaskHistory(
        steps,
        np.exp(-0.02 * steps),
        target=np.exp(-1.0),
        speed=4.0,
        family="synthetic",
        budget=300.0,
    )
    samples = trivial_model.predict([history], 64, np.random.default_rng(1)).samples[0]
    assert abs(np.log(np.median(samples) / 30.0)) < np.log(2.0)
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
    "bad",
    [
        {"hidden": 0},
        {"solver": "dopri5"},
        {"log_scale": -1.0},
        {"solver_steps": 1.5},
        {"spread_centre": "mean"},
    ],
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
    out = train_predictors.main(["--quick", "--output", str(tmp_path / "fm.pt"), "--no-progress"])
    predictor = FlowMatching.load(out)
    assert predictor.config.reads_target
    history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.8]), target=0.4)
    assert predictor.predict([history], 4, np.random.default_rng(0)).samples.shape == (1, 4)


def test_a_narrower_student_starts_from_the_teachers_strongest_units(tmp_path) -> None:
    args = [
        "--quick",
        "--student-hidden",
        "8",
        "--output",
        str(tmp_path / "fm.pt"),
        "--no-progress",
    ]
    out = train_predictors.main(args)
    card = json.loads(card_path(out).read_text())
    assert card["config"]["hidden"] == 8 and card["facts"]["distillation"]["student_hidden"] == 8
    assert card["facts"]["distillation"]["student_start"] == "the teacher's 8 strongest units"
    assert FlowMatching.load(out).model.context_net[0].out_features == 8


def test_a_student_wider_than_its_teacher_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        train_predictors.parse_args(["--hidden", "64", "--student-hidden", "96"])
    assert "between 1 and the teacher's width (--hidden 64), got 96" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # the shipped default (96) is wider than this teacher
        train_predictors.parse_args(["--hidden", "64"])
    assert "(--hidden 64), the shipped default is 96" in capsys.readouterr().err


def test_recalibration_rewrites_the_card_and_keeps_the_weights(tmp_path) -> None:
    out = train_predictors.main(["--quick", "--output", str(tmp_path / "fm.pt"), "--no-progress"])
    weights = out.read_bytes()
    card = json.loads(card_path(out).read_text())
    card["config"]["spread"] = 3.0
    del card["config"]["spread_centre"]  # calibrated before the centre was recorded
    card_path(out).write_text(json.dumps(card))
    assert FlowMatching.load(out).spread_centre == "finite_median"
    train_predictors.main(["--recalibrate", str(out)])
    rewritten = json.loads(card_path(out).read_text())
    assert out.read_bytes() == weights and rewritten["sha256"] == card["sha256"]
    assert rewritten["config"]["spread"] != 3.0 and "recalibrated_by" in rewritten["facts"]
    recalibrated = FlowMatching.load(out)
    assert recalibrated.spread == rewritten["config"]["spread"]
    assert recalibrated.spread_centre == rewritten["config"]["spread_centre"] == "median"


def test_trajectories_are_the_sampled_windows_at_their_offsets(trivial_model: FlowMatching) -> None:
    steps = np.arange(0.0, 21.0, 4.0)
    history = TaskHistory(steps, np.exp(-0.02 * steps), target=0.3, family="synthetic")
    windows = trivial_model.sample_log_windows([history], 4, np.random.default_rng(2))
    trajectories = trivial_model.sample_trajectories(
        [history], FUTURE_EPOCHS * history.speed, 4, np.random.default_rng(2)
    )
    np.testing.assert_allclose(trajectories, windows + np.log(history.loss[-1]), atol=1e-12)
    halfway = trivial_model.sample_trajectories(
        [history], np.array([FUTURE_EPOCHS[:2].mean()]) * history.speed, 4, np.random.default_rng(2)
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


def test_the_sampling_field_computes_the_trained_velocity_field(
    trivial_model: FlowMatching,
) -> None:
    """The weights laid out for sampling compute the trained torch module's velocity, with
    each task's embedding broadcast over its samples."""
    rng = np.random.default_rng(3)
    n_tasks, n_samples = 3, 4
    context = rng.normal(size=(n_tasks, CONTEXT_SIZE)).astype(np.float32)
    window = rng.normal(size=(n_tasks * n_samples, WINDOW_SIZE)).astype(np.float32)
    model = trivial_model.model
    with torch.no_grad():
        embedding = model.embed_context(torch.as_tensor(context))
        expected = model(
            torch.as_tensor(window),
            torch.full((n_tasks * n_samples, 1), 0.3),
            embedding.repeat_interleave(n_samples, dim=0),
        ).numpy()
    field = trivial_model.field
    got = field.velocity_at(
        window.reshape(n_tasks, n_samples, WINDOW_SIZE), 0.3, field.embed_context(context)
    ).reshape(n_tasks * n_samples, WINDOW_SIZE)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_products_split_into_blocks_of_rows_give_the_same_velocity(
    trivial_model: FlowMatching, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blocks of rows that keep BLAS on one thread do not change the numbers."""
    import mara_env.predictors.flow_matching as module

    rng = np.random.default_rng(5)
    field = trivial_model.field
    window = rng.normal(size=(3, 12, WINDOW_SIZE)).astype(np.float32)
    embedding = field.embed_context(rng.normal(size=(3, CONTEXT_SIZE)).astype(np.float32))
    whole = field.velocity_at(window, 0.0, embedding)
    monkeypatch.setattr(module, "rows_per_product", lambda n_rows, fan_in, fan_out: 4)
    np.testing.assert_allclose(
        field.velocity_at(window, 0.0, embedding), whole, rtol=1e-4, atol=1e-5
    )
    assert module.SINGLE_THREAD_PRODUCT == 262_144


def test_a_family_the_model_was_not_trained_on_reads_as_unknown(
    trivial_model: FlowMatching,
) -> None:
    epochs = np.array([0.0, 1.0, 2.5])
    log_loss = np.log([1.0, 0.8, 0.7])
    without_rl = tuple(f for f in FlowMatchingConfig().known_families if f != "rl")
    assert np.array_equal(
        encode_context(epochs, log_loss, "rl", 1.0, known_families=without_rl),
        encode_context(epochs, log_loss, UNKNOWN_FAMILY, 1.0),
    )
    assert not np.array_equal(
        encode_context(epochs, log_loss, "rl", 1.0),
        encode_context(epochs, log_loss, UNKNOWN_FAMILY, 1.0),
    )
    # a history that names no family (a user's own curve) is one of them
    # (the batch encoder takes the log of the losses itself: floats within the promised ulps)
    unnamed = TaskHistory(epochs, np.exp(log_loss), target=0.5)
    assert_agree(
        encode_contexts([unnamed], 1.0)[0], encode_context(epochs, log_loss, UNKNOWN_FAMILY, 1.0)
    )


def _twice_the_resolution(curve: np.ndarray) -> np.ndarray:
    """The curve at half steps (log-loss interpolated linearly): point 2j is point j."""
    return np.exp(
        np.interp(np.arange(2 * len(curve) - 1) / 2.0, np.arange(len(curve)), np.log(curve))
    )


def _reports(curve: np.ndarray, speed: float, epochs: int, target: float) -> TaskHistory:
    progress = np.concatenate([[0.0], speed * np.arange(1, epochs + 1)])
    loss = curve[np.minimum(progress.astype(np.int64), len(curve) - 1)]
    return TaskHistory(
        progress,
        loss / curve[0],
        target / curve[0],
        speed=speed,
        family="vision",
        budget=float(len(curve)),
    )


def test_the_same_curve_at_twice_the_resolution_predicts_the_same_remaining_fraction() -> None:
    """Resolution invariance of the shipped model: a curve recorded at twice the resolution,
    trained at twice the speed with twice the step budget, gets remaining-work samples twice as
    large (the same remaining share of its budget), sample for sample, within 0.1%."""
    from mara_env.curves.sources import default_trace_source

    pool = default_trace_source().pool("vision", "test")
    predictor = make_predictor("flow_matching")
    compared = 0
    for row in range(0, pool.n_curves, max(1, pool.n_curves // 12)):
        curve = pool.losses[row, : pool.lengths[row]]
        target = curve[int(0.7 * len(curve))]
        doubled = _twice_the_resolution(curve)
        original = _reports(curve, 4.0, 6, target)
        at_twice = _reports(np.append(doubled, doubled[-1]), 8.0, 6, target)
        samples = [
            predictor.predict([h], 64, np.random.default_rng(row)).samples[0]
            for h in (original, at_twice)
        ]
        np.testing.assert_allclose(samples[1], 2.0 * samples[0], rtol=1e-3)
        compared += int(np.isfinite(samples[0]).any())
    assert compared >= 6


def test_contexts_are_in_node_epochs() -> None:
    """Scaling work and speed together leaves the context unchanged."""
    steps = np.array([0.0, 3.0, 7.5, 12.0])
    loss = np.array([1.0, 0.8, 0.6, 0.55])
    histories = [
        TaskHistory(steps * scale, loss, target=0.3, speed=1.5 * scale) for scale in (1.0, 2.0, 7.0)
    ]
    contexts = encode_contexts(histories, 1.0)
    np.testing.assert_allclose(
        contexts[1:], np.broadcast_to(contexts[0], (2, CONTEXT_SIZE)), atol=1e-6
    )


def _reference_context(epochs: np.ndarray, log_loss: np.ndarray, budget: float) -> np.ndarray:
    """The context layout computed one history at a time with ``np.interp``."""
    from mara_env.predictors.curve_windows import LOOKBACK_EPOCHS, MAX_BUDGET_SHARE, MAX_EPOCHS

    current = epochs[-1]
    position = current - LOOKBACK_EPOCHS
    unknown = position < epochs[0]
    lookback = np.interp(position, epochs, log_loss) - log_loss[-1]
    lookback[unknown] = 0.0
    horizon = np.log1p(MAX_EPOCHS)
    known = np.isfinite(budget)
    budget_part = [1.0, np.log1p(budget) / horizon, min(current / budget, MAX_BUDGET_SHARE)]
    return np.concatenate(
        [
            lookback,
            unknown,
            [
                np.log1p(current) / horizon,
                log_loss[-1] - log_loss[0],
                np.log1p(len(epochs)) / horizon,
            ],
            budget_part if known else [0.0, 0.0, 0.0],
        ]
    )


@given(st.lists(st.tuples(st.integers(1, 40), st.booleans()), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_batched_contexts_equal_one_history_at_a_time(specs: list) -> None:
    rng = np.random.default_rng(len(specs))
    histories = []
    for points, known in specs:
        epochs = np.concatenate([[0.0], np.cumsum(rng.uniform(0.2, 3.0, points - 1))])
        loss = np.exp(np.cumsum(rng.normal(-0.05, 0.1, points)))
        speed = float(rng.uniform(0.5, 5.0))
        budget = float(rng.uniform(5.0, 80.0)) * speed if known else np.inf
        histories.append(TaskHistory(epochs * speed, loss, target=0.1, speed=speed, budget=budget))
    contexts = encode_contexts(histories, 1.0)
    for row, h in enumerate(histories):
        expected = _reference_context(h.work / h.speed, np.log(h.loss), h.budget / h.speed)
        np.testing.assert_allclose(contexts[row, : len(expected)], expected, rtol=1e-5, atol=1e-5)


def test_sampling_does_not_call_torch(
    trivial_model: FlowMatching, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Predictions run in NumPy: a torch call while sampling would fail here."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("torch was called while sampling")

    history = TaskHistory(np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.8, 0.7]), target=0.3)
    for name in ("addmm", "matmul", "from_numpy", "as_tensor", "set_num_threads"):
        monkeypatch.setattr(torch, name, refuse)
    samples = trivial_model.predict([history], 4, np.random.default_rng(0)).samples
    assert samples.shape == (1, 4)


def test_a_model_that_reads_the_target_sees_its_gap_last() -> None:
    """The target entry is ln(last loss / target) over the scale, capped; the rest of the context
    is the target-blind one."""
    histories = [
        TaskHistory(np.array([0.0, 2.0, 4.0]), np.array([1.0, 0.5, 0.4]), target=0.1, speed=2.0),
        TaskHistory(np.array([0.0, 1.0]), np.array([1.0, 0.9]), target=1e-9, family="rl"),
    ]
    blind = encode_contexts(histories, 2.0)
    reading = encode_contexts(histories, 2.0, reads_target=True)
    assert blind.shape == (2, CONTEXT_SIZE) and reading.shape == (2, CONTEXT_SIZE + 1)
    np.testing.assert_array_equal(reading[:, :CONTEXT_SIZE], blind)
    np.testing.assert_allclose(reading[:, -1], [np.log(4.0) / 2.0, 8.0], rtol=1e-6)
    single = encode_context(
        np.array([0.0, 1.0, 2.0]),
        np.log([1.0, 0.5, 0.4]),
        UNKNOWN_FAMILY,  # a history names no family unless told
        2.0,
        log_target=np.log(0.1),
    )
    np.testing.assert_allclose(single, reading[0], rtol=1e-6)


def test_examples_that_read_the_target_end_before_it_is_reached() -> None:
    """Each example is a live task: every reported loss is above its drawn target."""
    curve = np.log(np.linspace(1.0, 0.05, 100))
    contexts, windows = make_examples(
        [(curve, "vision")], 300, np.random.default_rng(0), 1.0, reads_target=True
    )
    assert contexts.shape == (300, CONTEXT_SIZE + 1) and windows.shape == (300, WINDOW_SIZE)
    assert np.all(contexts[:, -1] > 0)
    # the target is evidence: on this curve every drawn target is reached or hopeless, and the
    # windows of hopeless targets never fall to them
    reached = windows.min(axis=1) <= -contexts[:, -1]
    assert 0.5 < reached.mean() < 1.0


def test_checkpoints_saved_before_the_target_input_load_as_target_blind(
    tmp_path, trivial_model: FlowMatching
) -> None:
    path = tmp_path / "model.pt"
    config = {**trivial_model.config.__dict__, **trivial_model.config.layout()}
    del config["reads_target"]
    save_checkpoint(path, trivial_model.model.state_dict(), config=config)
    assert FlowMatching.load(path).config.reads_target is False
    config["context_size"] = CONTEXT_SIZE + 1  # a layout the card's config does not produce
    save_checkpoint(path, trivial_model.model.state_dict(), config=config)
    with pytest.raises(CheckpointError, match="context_size"):
        FlowMatching.load(path)


def test_the_shipped_models_say_whether_they_read_the_target() -> None:
    reading, blind = make_predictor("flow_matching"), make_predictor("flow_matching_without_target")
    assert (reading.name, reading.config.reads_target) == ("flow_matching", True)
    assert (blind.name, blind.config.reads_target) == ("flow_matching_without_target", False)


def test_the_shipped_models_spread_around_the_median_they_were_calibrated_on() -> None:
    """``flow_matching`` and its held-out versions keep their point predictions where sampled;
    the target-blind model keeps the rule it was calibrated with (MARA's policy reads it)."""
    assert FlowMatching.load().spread_centre == "median"
    for family in ("rl", "tabular", "vision"):
        held_out = train_predictors.held_out_checkpoint(family)
        assert FlowMatching.load(held_out).spread_centre == "median"
    blind = FlowMatching.load(shipped_checkpoint("flow_matching_without_target"))
    assert blind.spread_centre == "finite_median"
