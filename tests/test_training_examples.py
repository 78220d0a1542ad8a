"""Training examples: curves varied for families the model has not seen, and how often."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.curve_windows import CONTEXT_SIZE
from mara_env.predictors.training import (
    NOISE_SCALES,
    UNKNOWN_FAMILY_SHARE,
    curve_trend,
    make_examples,
    vary_curve,
)


def roughness(log_curve: np.ndarray) -> float:
    """Median absolute second difference: the noise of a curve, mostly blind to its trend."""
    return float(np.median(np.abs(np.diff(log_curve, 2))))


def noisy_power_law(rng: np.random.Generator, noise: float, length: int = 100) -> np.ndarray:
    steps = np.arange(length, dtype=np.float64)
    return -0.5 * np.log1p(steps) + noise * rng.standard_normal(length)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 300), st.floats(-5.0, 5.0), st.floats(1.1, 3.0), st.integers(0, 2**32 - 1))
def test_a_constant_is_its_own_trend_and_the_ends_are_kept(
    length: int, level: float, ratio: float, seed: int
) -> None:
    np.testing.assert_allclose(curve_trend(np.full(length, level), ratio), level, atol=1e-9)
    curve = np.random.default_rng(seed).standard_normal(length)
    trend = curve_trend(curve, ratio)
    np.testing.assert_allclose(trend[[0, -1]], curve[[0, -1]], atol=1e-9)


def test_the_trend_averages_the_noise_out_of_a_tail() -> None:
    rng = np.random.default_rng(0)
    clean = noisy_power_law(rng, 0.0)
    noisy = clean + 0.05 * rng.standard_normal(len(clean))
    tail = slice(30, None)
    residual = curve_trend(noisy)[tail] - curve_trend(clean)[tail]
    assert np.std(residual) < 0.25 * 0.05


def test_varied_curves_keep_their_ends_and_span_smooth_to_much_noisier() -> None:
    rng = np.random.default_rng(1)
    curve = noisy_power_law(rng, 0.05)
    varied = [vary_curve(curve, rng) for _ in range(200)]
    assert all(v.shape == curve.shape for v in varied)
    assert all(np.allclose(v[[0, -1]], curve[[0, -1]]) for v in varied)
    ratios = np.array([roughness(v) for v in varied]) / roughness(curve)
    # the noise is scaled by a factor drawn log-uniformly from NOISE_SCALES
    assert ratios.min() < 4 * NOISE_SCALES[0] and ratios.max() > 0.5 * NOISE_SCALES[1]
    assert 0.3 < np.mean(ratios < 1.0) < 0.9


def test_a_share_of_examples_read_as_an_unknown_family() -> None:
    rng = np.random.default_rng(2)
    curves = [(noisy_power_law(rng, 0.05), family) for family in FAMILY_NAMES]

    def unknown_share(share: float = UNKNOWN_FAMILY_SHARE) -> float:
        contexts, _ = make_examples(
            curves, 2000, np.random.default_rng(3), 1.0, unknown_family_share=share
        )
        one_hot = contexts[:, CONTEXT_SIZE - len(FAMILY_NAMES) : CONTEXT_SIZE]
        return float(np.mean(one_hot.sum(axis=1) == 0))

    assert abs(unknown_share() - UNKNOWN_FAMILY_SHARE) < 0.05
    assert unknown_share(0.0) == 0.0
