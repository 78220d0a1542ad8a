"""LARA's WLS estimator and the predictor interface."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env.predictors import WLS, DiscountedLeastSquares, PredictorInputError, TaskHistory
from mara_env.predictors.registry import known_predictors, make_predictor


@given(
    scale=st.floats(0.1, 10.0),
    exponent=st.floats(0.05, 2.0),
    points=st.integers(3, 60),
)
@settings(max_examples=60, deadline=None)
def test_recovers_an_exact_power_law(scale: float, exponent: float, points: int) -> None:
    """On l(s) = a (s + 1)^-b the fit returns slope -b and intercept ln a."""
    work = np.arange(points, dtype=np.float64)
    history = TaskHistory(work, scale * (work + 1.0) ** -exponent, target=1e-3)
    slope, intercept = WLS(ridge=1e-12).fit(history).theta
    assert slope == pytest.approx(-exponent, rel=1e-6, abs=1e-6)
    assert intercept == pytest.approx(np.log(scale), rel=1e-6, abs=1e-6)


def test_remaining_work_matches_the_closed_form() -> None:
    """s* = (a / target)^(1/b) - s0, minus the work done."""
    work = np.arange(20.0)
    history = TaskHistory(work, 3.0 * (work + 1.0) ** -0.8, target=0.05)
    remaining = WLS(ridge=1e-12).predict([history], 1, np.random.default_rng(0)).samples[0, 0]
    assert remaining == pytest.approx((3.0 / 0.05) ** (1 / 0.8) - 1.0 - 19.0, rel=1e-6)


def test_recursive_update_equals_the_batch_weighted_ridge_solution() -> None:
    """The constant-cost recursion solves the discounted ridge problem exactly."""
    rng = np.random.default_rng(1)
    features = np.column_stack([np.log(np.arange(1.0, 31.0)), np.ones(30)])
    targets = rng.normal(size=30)
    fit = DiscountedLeastSquares(gamma=0.9, ridge=0.3)
    for x, y in zip(features, targets, strict=True):
        fit.update(x, float(y))
    weights = 0.9 ** np.arange(29, -1, -1)
    gram = features.T @ (weights[:, None] * features) + 0.3 * np.eye(2)
    expected = np.linalg.solve(gram, features.T @ (weights * targets))
    np.testing.assert_allclose(fit.theta, expected, rtol=1e-10)


def test_never_when_the_loss_does_not_decrease() -> None:
    """A rising curve gives infinite remaining work; a reached target gives zero."""
    work = np.arange(10.0)
    rising = TaskHistory(work, 1.0 + 0.1 * work, target=0.5)
    done = TaskHistory(work, np.linspace(1.0, 0.4, 10), target=0.5)
    samples = WLS().predict([rising, done], 8, np.random.default_rng(0)).samples
    assert np.isinf(samples[0]).all()
    assert (samples[1] == 0).all()


def test_noisy_samples_are_spread_and_reproducible() -> None:
    """Noise widens the distribution; the same generator seed gives the same samples."""
    rng = np.random.default_rng(2)
    work = np.arange(40.0)
    loss = 2.0 * (work + 1.0) ** -0.5 * np.exp(rng.normal(0, 0.05, 40))
    history = TaskHistory(work, loss, target=0.1)
    first = WLS().predict([history], 200, np.random.default_rng(5))
    second = WLS().predict([history], 200, np.random.default_rng(5))
    np.testing.assert_array_equal(first.samples, second.samples)
    low, median, high = first.quantiles([0.1, 0.5, 0.9])[0]
    assert low < median < high
    probability = first.success_probability(time_left=[median], speed=[1.0])[0]
    assert 0.3 < probability < 0.7


@pytest.mark.parametrize(
    ("work", "loss", "message"),
    [
        ([], [], "empty"),
        ([0.0, 1.0], [1.0, np.nan], "NaN"),
        ([0.0, 1.0, 2.0], [1.0, 0.5], "one length"),
        ([1.0, 1.0], [1.0, 0.5], "increasing"),
        ([0.0, 1.0], [1.0, -0.5], "> 0"),
    ],
)
def test_bad_histories_raise_clear_errors(work: list[float], loss: list[float], message: str):
    with pytest.raises(PredictorInputError, match=message):
        TaskHistory(np.array(work), np.array(loss), target=0.1)


# ---------------------------------------------------------------------------- batched predict
def noisy_histories(seed: int, n_tasks: int) -> list[TaskHistory]:
    """Histories of mixed lengths (1 to 60 points) on noisy power laws, with fractional work."""
    rng = np.random.default_rng(seed)
    histories = []
    for _ in range(n_tasks):
        length = int(rng.integers(1, 61))
        work = np.cumsum(rng.uniform(0.3, 3.0, length)) - 0.3
        work[0] = 0.0
        loss = rng.uniform(0.5, 5.0) * (work + 1.0) ** -rng.uniform(-0.2, 1.5)
        loss *= np.exp(rng.normal(0.0, rng.uniform(0.0, 0.2), length))
        histories.append(TaskHistory(work, loss, target=float(loss.min() * rng.uniform(0.2, 1.1))))
    return histories


@given(seed=st.integers(0, 10_000), n_tasks=st.integers(1, 12))
@settings(max_examples=40, deadline=None)
def test_batch_fit_equals_the_recursive_fit_of_each_task(seed: int, n_tasks: int) -> None:
    """fit_batch's parameters, V^-1 and residual variance equal DiscountedLeastSquares's."""
    predictor = WLS(gamma=0.9, ridge=1e-4)
    histories = noisy_histories(seed, n_tasks)
    batch = predictor.fit_batch(histories)
    for row, history in enumerate(histories):
        fit = predictor.fit(history)
        np.testing.assert_allclose(batch.theta[row], fit.theta, rtol=1e-9, atol=1e-9)
        inverse = np.linalg.inv(fit.precision)
        np.testing.assert_allclose(
            batch.inverse_precision[row], inverse.ravel()[[0, 1, 3]], rtol=1e-9, atol=1e-9
        )
        # sigma^2 is a small difference of large sums (ln l)^2 - theta . r, so it keeps fewer
        # digits than theta when the fit is close: near a perfect fit (sigma^2 ~ 1e-8, seed 1811)
        # the two orders of summation differ by ~1e-12 absolute
        assert batch.residual_variance[row] == pytest.approx(
            fit.residual_variance, rel=1e-5, abs=1e-10
        )
        # ... and the covariance sigma^2 V^-1 inherits that absolute error, scaled by V^-1
        # (seed 8694: sigma^2 ~ 7e-9, so its relative error reaches 2e-4)
        np.testing.assert_allclose(
            batch.covariance[row],
            fit.residual_variance * inverse,
            rtol=1e-5,
            atol=1e-10 * np.abs(inverse).max(),
        )


@given(seed=st.integers(0, 10_000), n_tasks=st.integers(1, 12))
@settings(max_examples=40, deadline=None)
def test_point_estimates_equal_the_per_task_reference(seed: int, n_tasks: int) -> None:
    """With one sample, predict equals remaining_work at each task's own recursive fit."""
    predictor = WLS()
    histories = noisy_histories(seed, n_tasks)
    samples = predictor.predict(histories, 1, np.random.default_rng(0)).samples
    for row, history in enumerate(histories):
        expected = predictor.remaining_work(history, predictor.fit(history).theta[None, :])
        np.testing.assert_allclose(samples[row], expected, rtol=1e-7)


def test_sampled_remaining_work_matches_the_per_task_gaussian_reference() -> None:
    """The batched Cholesky sampler draws from N(theta, sigma^2 V^-1): its quantiles of remaining
    work match those of the same tasks sampled one by one with multivariate_normal."""
    predictor = WLS()
    histories = [h for h in noisy_histories(7, 8) if h.loss.size >= 10][:4]
    n_samples = 40_000
    batched = predictor.predict(histories, n_samples, np.random.default_rng(1))
    levels = [0.1, 0.3, 0.5, 0.7, 0.9]
    reference_rng = np.random.default_rng(2)
    for row, history in enumerate(histories):
        fit = predictor.fit(history)
        covariance = fit.residual_variance * np.linalg.inv(fit.precision)
        draws = reference_rng.multivariate_normal(fit.theta, covariance, size=n_samples)
        reference = predictor.remaining_work(history, draws)
        got = np.quantile(batched.samples[row], levels)
        want = np.quantile(reference, levels)
        finite = np.isfinite(want)
        assert np.array_equal(np.isfinite(got), finite)
        np.testing.assert_allclose(got[finite], want[finite], rtol=0.05, atol=0.05)


def test_batch_handles_empty_and_single_point_histories() -> None:
    """No histories give an empty batch; a lone point (no slope yet) predicts "never"."""
    predictor = WLS()
    empty = predictor.predict([], 5, np.random.default_rng(0))
    assert empty.samples.shape == (0, 5)
    lone = TaskHistory(np.array([0.0]), np.array([1.0]), target=0.5)
    samples = predictor.predict([lone, lone], 3, np.random.default_rng(0)).samples
    assert samples.shape == (2, 3) and np.isinf(samples).all()


@pytest.mark.parametrize("n_samples", [0, -2, 1.5, True, "8"])
def test_bad_sample_counts_raise(n_samples: object) -> None:
    history = TaskHistory(np.arange(4.0), np.linspace(1.0, 0.5, 4), target=0.1)
    with pytest.raises(PredictorInputError, match="n_samples"):
        WLS().predict([history], n_samples, np.random.default_rng(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", known_predictors())
def test_every_registered_predictor_predicts_an_empty_batch(name: str) -> None:
    """An epoch in which no task reported asks for nothing, and gets nothing."""
    samples = make_predictor(name).predict([], 8, np.random.default_rng(0)).samples
    assert samples.shape == (0, 8)
