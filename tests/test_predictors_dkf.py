"""LaiRA's Dynamic Kalman Filter: tracking, recovery, look-ahead, invariances and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env.predictors import DKF, WLS, PredictorInputError, TaskHistory
from mara_env.predictors.registry import make_predictor


def power_law_history(
    scale: float, exponent: float, points: int, spacing: float = 1.0, target: float = 1e-3
) -> TaskHistory:
    """``l(s) = scale (s + 1)^-exponent`` reported every ``spacing`` curve steps from s = 0."""
    work = np.arange(points) * spacing
    return TaskHistory(work, scale * (work + 1.0) ** -exponent, target=target)


def drifting_curve(start_exponent: float, change: float, points: int) -> tuple[np.ndarray, ...]:
    """A curve whose local exponent moves linearly in log-work: ``-b(x) = -start - change x``.

    ``ln l(x) = -start x - change x^2 / 2`` with ``x = ln(s + 1)``, so its log-log slope at x
    is exactly ``-start - change x``.
    """
    work = np.arange(points, dtype=np.float64)
    feature = np.log(work + 1.0)
    loss = np.exp(-start_exponent * feature - 0.5 * change * feature**2)
    return work, loss, -start_exponent - change * feature


def reference_filter(dkf: DKF, work: np.ndarray, loss: np.ndarray) -> tuple[np.ndarray, ...]:
    """The textbook Kalman filter with full matrices, written independently of the module."""
    feature = np.log(work + dkf.offset)
    observation = np.log(loss)
    mean = np.array([dkf.prior_slope, observation[0] - dkf.prior_slope * feature[0], 0, 0, 0, 0])
    stds = [dkf.prior_slope_std, dkf.prior_intercept_std] + [dkf.prior_drift_std] * 2
    covariance = np.diag(np.array(stds + [dkf.prior_acceleration_std] * 2) ** 2)
    rates = (
        np.array([dkf.theta_noise] * 2 + [dkf.drift_noise] * 2 + [dkf.acceleration_noise] * 2) ** 2
    )
    excess, innovations = 0.0, 0
    for n in range(len(work)):
        if n > 0:
            dt = dkf.step * (feature[n] - feature[n - 1])
            block = np.array([[1.0, dt, dt * dt / 2], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
            transition = np.kron(block, np.eye(2))
            mean = transition @ mean
            covariance = transition @ covariance @ transition.T + dt * np.diag(rates)
        row = np.array([feature[n], 1.0, 0.0, 0.0, 0.0, 0.0])
        prior_weight = dkf.noise_prior_points * dkf.observation_noise**2
        noise = max(
            (prior_weight + excess) / (dkf.noise_prior_points + innovations),
            dkf.min_observation_noise**2,
        )
        spread = row @ covariance @ row
        gain = covariance @ row / (spread + noise)
        innovation = observation[n] - row @ mean
        mean = mean + gain * innovation
        covariance = (np.eye(6) - np.outer(gain, row)) @ covariance
        if n > 0:
            excess += max(innovation**2 - spread, 0.0)
            innovations += 1
    return mean, covariance


def test_the_filter_equals_a_textbook_kalman_filter() -> None:
    """The constant-cost update is the standard predict/update (with the learnt noise)."""
    rng = np.random.default_rng(3)
    work = np.cumsum(rng.uniform(0.5, 6.0, size=40)) - 0.5
    work[0] = 0.0
    loss = 3.0 * (work + 1.0) ** -0.6 * np.exp(rng.normal(0.0, 0.2, size=40))
    dkf = DKF(step=0.7, theta_noise=0.05, drift_noise=0.02, acceleration_noise=0.01)
    state = dkf.filter(TaskHistory(work, loss, target=0.01))
    mean, covariance = reference_filter(dkf, work, loss)
    np.testing.assert_allclose(state.mean, mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(state.covariance, covariance, rtol=1e-7, atol=1e-12)
    assert state.points == 40


def test_incremental_updates_equal_filtering_the_whole_history() -> None:
    """A scheduler's per-epoch updates give the same state as one pass over the history."""
    work, loss, _ = drifting_curve(0.3, 0.05, 30)
    dkf = DKF()
    state = dkf.start(work[0], loss[0])
    for point_work, point_loss in zip(work[1:], loss[1:], strict=True):
        state = dkf.update(state, point_work, point_loss)
    batch = dkf.filter(TaskHistory(work, loss, target=0.1))
    np.testing.assert_array_equal(state.mean, batch.mean)
    np.testing.assert_array_equal(state.covariance, batch.covariance)


@pytest.mark.parametrize(("start_exponent", "change"), [(0.2, 0.1), (0.8, -0.1)])
def test_tracks_a_drifting_exponent_where_undiscounted_wls_lags(
    start_exponent: float, change: float
) -> None:
    """On a steepening and a flattening curve the filter's local exponent follows the truth;
    an undiscounted least-squares fit averages over the past and lags far behind."""
    work, loss, exponent = drifting_curve(start_exponent, change, 200)
    dkf = DKF()
    state = dkf.start(work[0], loss[0])
    for n in range(1, 200):
        state = dkf.update(state, work[n], loss[n])
        if n in (50, 100, 199):
            history = TaskHistory(work[: n + 1], loss[: n + 1], target=1e-6)
            wls_slope = WLS(gamma=1.0).fit(history).theta[0]
            dkf_error = abs(dkf.local_exponent(state) - exponent[n])
            assert dkf_error < 0.03
            assert abs(wls_slope - exponent[n]) > 4 * dkf_error


def test_predicts_a_drifting_curve_better_than_undiscounted_wls() -> None:
    """Remaining work to a target ahead on a flattening curve: closer than the lagging fit."""
    work, loss, _ = drifting_curve(0.8, -0.1, 400)
    seen = 100
    target = float(loss[300])
    truth = float(np.argmax(loss <= target)) - work[seen - 1]
    history = TaskHistory(work[:seen], loss[:seen], target=target, time_left=1000.0)
    rng = np.random.default_rng(0)
    dkf = DKF().predict([history], 1, rng).samples[0, 0]
    wls = WLS(gamma=1.0).predict([history], 1, rng).samples[0, 0]
    assert abs(math.log(dkf / truth)) < 0.5 * abs(math.log(wls / truth))


@given(
    scale=st.floats(0.1, 10.0),
    exponent=st.floats(0.3, 2.0),
    points=st.integers(10, 60),
    spacing=st.floats(0.5, 10.0),
)
@settings(max_examples=40, deadline=None)
def test_recovers_an_exact_power_law(
    scale: float, exponent: float, points: int, spacing: float
) -> None:
    """Noise-free power law: the exponent, and the remaining work to half the last loss (within
    a few percent: the slope prior still weighs a little after ten points)."""
    history = power_law_history(scale, exponent, points, spacing)
    dkf = DKF()
    state = dkf.filter(history)
    assert dkf.local_exponent(state) == pytest.approx(-exponent, rel=0.08)
    last = float(history.loss[-1])
    target_history = power_law_history(scale, exponent, points, spacing, target=0.5 * last)
    truth = (scale / (0.5 * last)) ** (1.0 / exponent) - 1.0 - history.work[-1]
    point = dkf.predict([target_history], 1, np.random.default_rng(0)).samples[0, 0]
    assert point == pytest.approx(truth, rel=0.15)


def test_exact_power_laws_are_rarely_called_never() -> None:
    """Sampling the posterior with the bounded drift gives few "never" on exact power laws."""
    rng = np.random.default_rng(7)
    histories = []
    for _ in range(40):
        scale, exponent = rng.uniform(0.5, 3.0), rng.uniform(0.2, 1.5)
        history = power_law_history(scale, exponent, int(rng.integers(5, 40)), 3.0)
        histories.append(
            TaskHistory(
                history.work,
                history.loss,
                target=0.3 * float(history.loss[-1]),
                time_left=float(rng.choice([np.inf, 30.0])),
                speed=3.0,
            )
        )
    samples = DKF().predict(histories, 100, rng).samples
    assert np.isinf(samples).mean() < 0.05


def test_lookahead_separates_clearly_feasible_from_clearly_infeasible() -> None:
    """With ample work left the target is in reach; far below the curve, or with no work
    left, it is not, and the probabilities agree."""
    history = power_law_history(2.0, 0.5, 40)
    dkf = DKF()
    state = dkf.filter(history)
    last = float(history.loss[-1])
    reachable = dkf.lookahead(state, target=0.7 * last, extra_work=1000.0)
    assert reachable.feasible
    assert reachable.probability > 0.9
    assert 0.0 < reachable.best_work <= 1000.0
    truth = (2.0 / (0.7 * last)) ** 2 - 1.0 - 39.0
    assert reachable.work_to_target == pytest.approx(truth, rel=0.05)
    far_below = dkf.lookahead(state, target=1e-4 * last, extra_work=50.0)
    assert not far_below.feasible
    assert far_below.probability < 0.1
    assert far_below.work_to_target == math.inf
    no_time = dkf.lookahead(state, target=0.7 * last, extra_work=0.0)
    assert not no_time.feasible
    assert no_time.best_work == 0.0


def test_lookahead_on_a_flat_curve_is_infeasible() -> None:
    """A curve that stopped improving cannot reach a target below its plateau."""
    work = np.arange(60.0)
    loss = np.concatenate([np.linspace(1.0, 0.5, 10), np.full(50, 0.5)])
    dkf = DKF()
    verdict = dkf.lookahead(dkf.filter(TaskHistory(work, loss, target=0.1)), 0.1, 500.0)
    assert not verdict.feasible
    assert verdict.probability < 0.1


def test_lookahead_mean_matches_a_projected_state() -> None:
    """Within the drift horizon the predicted log-loss is the observation row of F(dt) mean."""
    work, loss, _ = drifting_curve(0.3, 0.08, 50)
    dkf = DKF(max_log_horizon=5.0)
    state = dkf.filter(TaskHistory(work, loss, target=0.01))
    verdict = dkf.lookahead(state, target=1e-6, extra_work=30.0)
    feature = math.log(work[-1] + 30.0 + 1.0)
    dt = feature - math.log(work[-1] + 1.0)
    block = np.array([[1.0, dt, dt * dt / 2], [0.0, 1.0, dt], [0.0, 0.0, 1.0]])
    projected = np.kron(block, np.eye(2)) @ state.mean
    # The curve keeps falling, so its lowest point is the end of the look-ahead.
    assert verdict.best_work == pytest.approx(30.0)
    assert verdict.best_log_loss == pytest.approx(projected[0] * feature + projected[1])


def test_same_seed_same_samples() -> None:
    rng = np.random.default_rng(1)
    work = np.arange(30.0)
    loss = 2.0 * (work + 1.0) ** -0.5 * np.exp(rng.normal(0.0, 0.1, 30))
    history = TaskHistory(work, loss, target=0.2, time_left=40.0, speed=2.0)
    first = DKF().predict([history], 64, np.random.default_rng(9)).samples
    second = DKF().predict([history], 64, np.random.default_rng(9)).samples
    other = DKF().predict([history], 64, np.random.default_rng(10)).samples
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)
    low, high = np.quantile(first, [0.1, 0.9])
    assert low < high


@given(factor=st.floats(1e-3, 1e3))
@settings(max_examples=25, deadline=None)
def test_invariant_to_scaling_losses_and_target(factor: float) -> None:
    """Only loss ratios are observable: scaling every loss and the target changes nothing."""
    rng = np.random.default_rng(4)
    work = np.arange(0.0, 60.0, 3.0)
    loss = 1.5 * (work + 1.0) ** -0.4 * np.exp(rng.normal(0.0, 0.15, len(work)))
    dkf = DKF()
    results = []
    for scale in (1.0, factor):
        history = TaskHistory(work, scale * loss, target=scale * 0.3, time_left=25.0, speed=3.0)
        samples = dkf.predict([history], 32, np.random.default_rng(2)).samples
        verdict = dkf.lookahead(dkf.filter(history), scale * 0.3, extra_work=40.0)
        results.append((samples, verdict))
    (base, base_verdict), (scaled, scaled_verdict) = results
    np.testing.assert_allclose(scaled, base, rtol=1e-6)
    assert scaled_verdict.feasible == base_verdict.feasible
    assert scaled_verdict.probability == pytest.approx(base_verdict.probability, abs=1e-9)


def test_never_when_rising_and_zero_when_done() -> None:
    """A rising curve: "never" (point estimate, and nearly all samples); a reached target: 0."""
    work = np.arange(12.0)
    rising = TaskHistory(work, 1.0 + 0.1 * work, target=0.5, time_left=20.0)
    done = TaskHistory(work, np.linspace(1.0, 0.4, 12), target=0.5)
    dkf = DKF()
    assert np.isinf(dkf.predict([rising], 1, np.random.default_rng(0)).samples).all()
    samples = dkf.predict([rising, done], 200, np.random.default_rng(0)).samples
    assert np.isinf(samples[0]).mean() > 0.9
    assert (samples[1] == 0).all()


def test_drift_horizon_is_bounded_and_tied_to_the_deadline() -> None:
    dkf = DKF(max_log_horizon=1.0)
    assert dkf.drift_horizon(work=9.0, extra_work=0.0) == 0.0
    assert dkf.drift_horizon(work=9.0, extra_work=5.0) == pytest.approx(math.log(1.5))
    assert dkf.drift_horizon(work=9.0, extra_work=1e6) == 1.0
    assert dkf.drift_horizon(work=9.0, extra_work=math.inf) == 1.0


def test_registered_by_name() -> None:
    assert make_predictor("dkf").name == "dkf"
    assert make_predictor("dkf", observation_noise=0.5) == DKF(observation_noise=0.5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"step": 0.0}, "step must be a finite number > 0"),
        ({"observation_noise": -0.1}, "observation_noise"),
        ({"min_observation_noise": math.nan}, "min_observation_noise"),
        ({"noise_prior_points": 0}, "noise_prior_points"),
        ({"theta_noise": -1.0}, "theta_noise must be a finite number >= 0"),
        ({"drift_noise": math.inf}, "drift_noise"),
        ({"acceleration_noise": "0.1"}, "acceleration_noise"),
        ({"prior_slope": 0.5}, "prior_slope must be a finite number <= 0"),
        ({"prior_slope_std": 0.0}, "prior_slope_std"),
        ({"prior_intercept_std": -2.0}, "prior_intercept_std"),
        ({"prior_drift_std": -0.1}, "prior_drift_std"),
        ({"prior_acceleration_std": True}, "prior_acceleration_std"),
        ({"max_log_horizon": -1.0}, "max_log_horizon"),
        ({"offset": 0.0}, "offset"),
    ],
)
def test_bad_hyperparameters_raise(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PredictorInputError, match=message):
        DKF(**kwargs)  # type: ignore[arg-type]


def test_bad_filter_and_lookahead_input_raise() -> None:
    dkf = DKF()
    state = dkf.start(0.0, 1.0)
    with pytest.raises(PredictorInputError, match="work must increase"):
        dkf.update(dkf.update(state, 2.0, 0.9), 2.0, 0.8)
    with pytest.raises(PredictorInputError, match="loss must be finite and > 0"):
        dkf.update(state, 1.0, 0.0)
    with pytest.raises(PredictorInputError, match="work must be finite and >= 0"):
        dkf.start(-1.0, 1.0)
    with pytest.raises(PredictorInputError, match="target must be > 0"):
        dkf.lookahead(state, target=0.0, extra_work=10.0)
    with pytest.raises(PredictorInputError, match="extra_work must be finite and >= 0"):
        dkf.lookahead(state, target=0.5, extra_work=-1.0)
    with pytest.raises(PredictorInputError, match="n_samples"):
        dkf.predict([], 0, np.random.default_rng(0))
