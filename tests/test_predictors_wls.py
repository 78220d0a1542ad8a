"""LARA's WLS estimator and the predictor interface."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predictors import WLS, DiscountedLeastSquares, PredictorInputError, TaskHistory


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
