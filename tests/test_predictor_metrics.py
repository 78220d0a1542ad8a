"""Metrics of the prediction benchmark against slow direct computations and known answers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env.predictors.bootstrap import (
    bootstrap_mean_interval,
    bootstrap_median_difference_interval,
    bootstrap_median_interval,
)
from mara_env.predictors.metrics import (
    MetricInputError,
    beyond_cap_as_never,
    brier_score,
    crps_log_work,
    infeasibility_auc,
    interval_coverage,
    interval_covered,
    interval_misses,
    log_ratio_errors,
    log_ratios,
    median_log_ratio,
    median_log_ratio_error,
    median_says_never,
    midranks,
    never_probability,
    never_share,
    reliability_scores,
    sample_quantiles,
    score_cell,
    score_predictions,
    success_calibration_error,
    success_reliability,
)

# Work values with ties and "never": small integers, some large, some inf.
work_values = st.one_of(
    st.integers(0, 6).map(float),
    st.floats(0.0, 500.0, allow_nan=False),
    st.just(math.inf),
)


@st.composite
def sample_matrices(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(samples, truth, cap) for a few cases."""
    n_cases = draw(st.integers(1, 5))
    n_samples = draw(st.integers(1, 12))
    samples = np.array(
        [[draw(work_values) for _ in range(n_samples)] for _ in range(n_cases)], dtype=np.float64
    )
    truth = np.array([draw(work_values) for _ in range(n_cases)], dtype=np.float64)
    cap = np.array([draw(st.floats(1.0, 400.0)) for _ in range(n_cases)], dtype=np.float64)
    return samples, truth, cap


# --- slow references ----------------------------------------------------------------------------


def quantile_reference(values: list[float], level: float) -> float:
    """The ceil(level * n)-th smallest value."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(level * len(ordered) - 1e-12)) - 1]


def crps_reference(samples: list[float], truth: float, cap: float) -> float:
    """Exact integral of (F_n(x) - 1{x >= y})^2 over the real line, piece by piece."""
    xs = [math.log1p(min(value, cap)) for value in samples]
    y = math.log1p(min(truth, cap))
    points = sorted([*xs, y])
    total = 0.0
    for left, right in itertools.pairwise(points):
        # On [left, right) the empirical CDF and the step are constant.
        cdf = sum(x <= left for x in xs) / len(xs)
        step = 1.0 if left >= y else 0.0
        total += (right - left) * (cdf - step) ** 2
    return total


def crps_grid(samples: np.ndarray, truth: float, cap: float) -> float:
    """Numerical integration of the same integral on a fine grid (midpoint rule)."""
    xs = np.log1p(np.minimum(samples, cap))
    y = math.log1p(min(truth, cap))
    low, high = min(xs.min(), y) - 0.1, max(xs.max(), y) + 0.1
    edges = np.linspace(low, high, 200_001)
    mid = (edges[1:] + edges[:-1]) / 2
    cdf = np.searchsorted(np.sort(xs), mid, side="right") / len(xs)
    return float(np.sum((cdf - (mid >= y)) ** 2) * (edges[1] - edges[0]))


def auc_reference(score: list[float], positive: list[bool]) -> float:
    """Mean over (positive, negative) pairs of 1{s+ > s-} + 1/2 1{s+ == s-}."""
    pairs = [
        (1.0 if p > n else 0.5 if p == n else 0.0)
        for p, is_p in zip(score, positive, strict=True)
        if is_p
        for n, is_n in zip(score, positive, strict=True)
        if not is_n
    ]
    return sum(pairs) / len(pairs)


# --- CRPS ---------------------------------------------------------------------------------------


@given(sample_matrices())
@settings(max_examples=150, deadline=None)
def test_crps_equals_the_integral_of_the_squared_cdf_gap(
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    samples, truth, cap = data
    fast = crps_log_work(samples, truth, cap)
    slow = [
        crps_reference(row.tolist(), y, c) for row, y, c in zip(samples, truth, cap, strict=True)
    ]
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-12)


def test_crps_matches_numerical_integration() -> None:
    rng = np.random.default_rng(3)
    samples = np.where(rng.random((3, 40)) < 0.2, np.inf, rng.gamma(2.0, 20.0, size=(3, 40)))
    truth, cap = np.array([30.0, np.inf, 0.0]), np.array([200.0, 200.0, 200.0])
    fast = crps_log_work(samples, truth, cap)
    grid = [crps_grid(samples[i], truth[i], cap[i]) for i in range(3)]
    np.testing.assert_allclose(fast, grid, atol=2e-4)


def test_crps_known_answers() -> None:
    cap = np.array([100.0, 100.0, 100.0])
    # A point forecast scores |x - y|; a perfect one, and a confident "never" when it is, score 0.
    point = crps_log_work(np.array([[9.0], [4.0], [np.inf]]), np.array([4.0, 4.0, np.inf]), cap)
    np.testing.assert_allclose(point, [math.log(10.0) - math.log(5.0), 0.0, 0.0], atol=1e-12)
    # Two samples straddling the truth: E|X - y| - E|X - X'| / 2 = 1 - 1 / 2 in log units.
    x = np.array([[math.e**1 - 1, math.e**3 - 1]])
    assert crps_log_work(x, np.array([math.e**2 - 1]), cap[:1])[0] == pytest.approx(0.5)


def test_crps_of_never_uses_the_cap() -> None:
    cap = np.array([50.0])
    never = crps_log_work(np.array([[np.inf]]), np.array([9.0]), cap)
    assert never[0] == pytest.approx(math.log(51.0) - math.log(10.0))


# --- AUC ------------------------------------------------------------------------------------------


@given(
    st.lists(
        st.tuples(st.integers(0, 4).map(lambda v: v / 4), st.booleans()), min_size=2, max_size=30
    )
)
@settings(max_examples=150, deadline=None)
def test_auc_equals_the_pairwise_definition(pairs: list[tuple[float, bool]]) -> None:
    score = [value for value, _ in pairs]
    positive = [flag for _, flag in pairs]
    fast = infeasibility_auc(np.array(score), np.array(positive))
    if all(positive) or not any(positive):
        assert math.isnan(fast)
    else:
        assert fast == pytest.approx(auc_reference(score, positive), abs=1e-12)


def test_auc_known_answers() -> None:
    infeasible = np.array([True, True, False, False, False])
    assert infeasibility_auc(np.array([1.0, 0.9, 0.0, 0.1, 0.2]), infeasible) == 1.0
    assert infeasibility_auc(np.array([0.0, 0.1, 1.0, 0.9, 0.8]), infeasible) == 0.0
    assert infeasibility_auc(np.full(5, 0.5), infeasible) == 0.5


@given(st.lists(st.integers(0, 5), min_size=1, max_size=25))
def test_midranks_average_the_positions_of_ties(values: list[int]) -> None:
    ranks = midranks(np.array(values, dtype=np.float64))
    ordered = sorted(values)
    for value, rank in zip(values, ranks, strict=True):
        positions = [i + 1 for i, v in enumerate(ordered) if v == value]
        assert rank == pytest.approx(sum(positions) / len(positions))


def test_never_probability_counts_infinite_samples() -> None:
    samples = np.array([[np.inf, 1.0, np.inf, 2.0], [0.0, 0.0, 0.0, 0.0]])
    assert never_probability(samples).tolist() == [0.5, 0.0]


# --- coverage -------------------------------------------------------------------------------------


@given(sample_matrices(), st.sampled_from([0.5, 0.8, 0.9]))
@settings(max_examples=150, deadline=None)
def test_coverage_equals_the_direct_quantile_check(
    data: tuple[np.ndarray, np.ndarray, np.ndarray], level: float
) -> None:
    samples, truth, _ = data
    expected = []
    for row, y in zip(samples.tolist(), truth.tolist(), strict=True):
        low = quantile_reference(row, (1 - level) / 2)
        high = quantile_reference(row, (1 + level) / 2)
        expected.append(math.isinf(high) if math.isinf(y) else low <= y <= high)
    assert interval_covered(samples, truth, level).tolist() == expected


@given(sample_matrices(), st.sampled_from([0.5, 0.8, 0.9]))
@settings(max_examples=150, deadline=None)
def test_each_case_is_covered_or_below_or_above_the_interval(
    data: tuple[np.ndarray, np.ndarray, np.ndarray], level: float
) -> None:
    samples, truth, cap = data
    below, above = interval_misses(samples, truth, level)
    covered = interval_covered(samples, truth, level)
    assert (below.astype(int) + above.astype(int) + covered.astype(int) == 1).all()
    for row, y, is_below in zip(samples.tolist(), truth.tolist(), below.tolist(), strict=True):
        assert is_below == (y < quantile_reference(row, (1 - level) / 2))
    if level == 0.8:
        scores = score_predictions(samples, truth, cap, cap)
        scored = beyond_cap_as_never(samples, cap)
        assert scores["below_80"] == np.mean(interval_misses(scored, truth)[0])
        total = scores["below_80"] + scores["above_80"] + scores["coverage_80"]
        assert total == pytest.approx(1.0)


def test_misses_of_exchangeable_draws_are_as_often_below_as_above() -> None:
    """A truth drawn from the sampled law falls under the 10% sample quantile of 64 samples with
    probability 7 / 65, and over the 90% one with the same."""
    rng = np.random.default_rng(12)
    draws = rng.lognormal(3.0, 1.0, size=(6000, 65))
    below, above = interval_misses(draws[:, :64], draws[:, 64])
    assert below.mean() == pytest.approx(7 / 65, abs=0.02)  # ~5 standard errors
    assert above.mean() == pytest.approx(7 / 65, abs=0.02)


def test_degenerate_samples_at_the_truth_are_covered() -> None:
    truth = np.array([3.0, 17.5, np.inf])
    samples = np.repeat(truth[:, None], 16, axis=1)
    assert interval_coverage(samples, truth) == 1.0


def test_infinite_truth_is_covered_iff_the_upper_quantile_is_never() -> None:
    mostly_finite = np.array([[1.0] * 9 + [np.inf]])
    mostly_never = np.array([[1.0] * 5 + [np.inf] * 5])
    assert not interval_covered(mostly_finite, np.array([np.inf]))[0]
    assert interval_covered(mostly_never, np.array([np.inf]))[0]


def test_coverage_of_exchangeable_draws_matches_the_order_statistic_formula() -> None:
    """When the truth is one more draw from the sampled law, the 80% sample interval covers it
    with probability (ceil(0.9 n) - ceil(0.1 n)) / (n + 1), as the module docstring says."""
    rng = np.random.default_rng(11)
    n_cases, n_samples = 6000, 64
    draws = rng.lognormal(3.0, 1.0, size=(n_cases, n_samples + 1))
    coverage = interval_coverage(draws[:, :n_samples], draws[:, n_samples])
    expected = (math.ceil(0.9 * n_samples) - math.ceil(0.1 * n_samples)) / (n_samples + 1)
    assert expected == pytest.approx(0.785, abs=1e-3)
    assert coverage == pytest.approx(expected, abs=0.025)  # ~5 standard errors


def test_sample_quantiles_are_sample_values() -> None:
    samples = np.array([[5.0, 1.0, 4.0, 2.0, 3.0]])
    assert sample_quantiles(samples, 0.1)[0] == 1.0
    assert sample_quantiles(samples, 0.5)[0] == 3.0
    assert sample_quantiles(samples, 0.9)[0] == 5.0


# --- log-ratio error and Brier --------------------------------------------------------------------


def test_a_perfect_point_predictor_has_zero_error() -> None:
    truth = np.array([0.5, 3.0, 40.0, np.inf])
    samples = np.repeat(truth[:, None], 8, axis=1)
    cap = np.full(4, 400.0)
    assert median_log_ratio_error(samples, truth, cap) == 0.0
    scores = score_predictions(samples, truth, cap, budget=np.array([1.0, 1.0, 100.0, 5.0]))
    assert scores["median_log_error"] == 0.0
    assert scores["infeasibility_auc"] == 1.0
    assert scores["coverage_80"] == 1.0
    assert scores["crps_log"] == 0.0
    assert scores["brier"] == 0.0


@given(sample_matrices())
@settings(max_examples=100, deadline=None)
def test_log_ratio_errors_follow_the_formula(
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    samples, truth, cap = data
    errors = log_ratio_errors(samples, truth, cap)
    for row, y, c, error in zip(
        samples.tolist(), truth.tolist(), cap.tolist(), errors, strict=True
    ):
        if math.isinf(y):
            assert math.isnan(error)
            continue
        median = min(max(quantile_reference(row, 0.5), 1.0), c)
        true = min(max(y, 1.0), c)
        assert error == pytest.approx(abs(math.log(median) - math.log(true)), abs=1e-12)


def test_a_never_median_costs_the_cap_and_the_error_is_symmetric() -> None:
    cap = np.full(3, 100.0)
    errors = log_ratio_errors(
        np.array([[np.inf] * 3, [40.0] * 3, [10.0] * 3]), np.array([10.0, 10.0, 40.0]), cap
    )
    np.testing.assert_allclose(errors, [math.log(10.0), math.log(4.0), math.log(4.0)])


def test_median_error_ignores_infeasible_cases_and_is_nan_without_feasible_ones() -> None:
    cap = np.full(2, 100.0)
    samples = np.array([[20.0], [3.0]])
    assert median_log_ratio_error(samples, np.array([10.0, np.inf]), cap) == pytest.approx(
        math.log(2.0)
    )
    assert math.isnan(median_log_ratio_error(samples, np.array([np.inf, np.inf]), cap))


@given(sample_matrices(), st.lists(st.floats(0.0, 300.0), min_size=5, max_size=5))
@settings(max_examples=100, deadline=None)
def test_brier_score_equals_the_direct_mean(
    data: tuple[np.ndarray, np.ndarray, np.ndarray], budgets: list[float]
) -> None:
    samples, truth, _ = data
    budget = np.array(budgets[: len(truth)])
    terms = []
    for row, y, b in zip(samples.tolist(), truth.tolist(), budget.tolist(), strict=True):
        probability = sum(value <= b for value in row) / len(row)
        terms.append((probability - (1.0 if y <= b else 0.0)) ** 2)
    assert brier_score(samples, truth, budget) == pytest.approx(sum(terms) / len(terms))


@given(
    sample_matrices(),
    st.lists(st.floats(0.0, 300.0), min_size=5, max_size=5),
    st.integers(1, 7),
)
@settings(max_examples=100, deadline=None)
def test_reliability_and_calibration_error_equal_the_direct_bins(
    data: tuple[np.ndarray, np.ndarray, np.ndarray], budgets: list[float], bins: int
) -> None:
    """Each bin holds the cases whose probability lies in it (1 in the last), and the
    calibration error is the case-weighted mean of the bins' gaps."""
    samples, truth, _ = data
    budget = np.array(budgets[: len(truth)])
    members: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for row, y, b in zip(samples.tolist(), truth.tolist(), budget.tolist(), strict=True):
        probability = sum(value <= b for value in row) / len(row)
        index = next(k for k in range(bins) if probability < (k + 1) / bins or k == bins - 1)
        members[index].append((probability, 1.0 if y <= b else 0.0))
    cases, predicted, observed = success_reliability(samples, truth, budget, bins)
    assert cases.tolist() == [float(len(bin_members)) for bin_members in members]
    gaps = 0.0
    for index, bin_members in enumerate(members):
        if not bin_members:
            assert math.isnan(predicted[index]) and math.isnan(observed[index])
            continue
        mean_predicted = sum(p for p, _ in bin_members) / len(bin_members)
        share = sum(o for _, o in bin_members) / len(bin_members)
        assert predicted[index] == pytest.approx(mean_predicted)
        assert observed[index] == pytest.approx(share)
        gaps += len(bin_members) * abs(mean_predicted - share)
    error = success_calibration_error(samples, truth, budget, bins)
    assert error == pytest.approx(gaps / len(truth))
    assert 0.0 <= error <= 1.0


def test_calibration_error_tells_a_calibrated_forecast_from_an_overconfident_one() -> None:
    """Outcomes drawn from the very distribution sampled score near 0; a forecast twice as
    sure of success as the outcomes warrant scores near the gap."""
    rng = np.random.default_rng(0)
    scale = np.exp(rng.normal(size=(4000, 1)))
    samples = scale * np.exp(rng.normal(size=(4000, 64)))
    truth = scale[:, 0] * np.exp(rng.normal(size=4000))
    budget = np.ones(4000)
    assert success_calibration_error(samples, truth, budget) < 0.03
    sure = samples / 1e6  # every sample within the budget: P = 1, about half come true
    assert success_calibration_error(sure, truth, budget) == pytest.approx(0.5, abs=0.03)


def test_score_cell_carries_the_reliability_bins_and_an_interval_around_the_error() -> None:
    rng = np.random.default_rng(1)
    scale = np.exp(2.0 * rng.normal(size=(300, 1)))  # probabilities across [0, 1]
    samples = scale * np.exp(rng.normal(size=(300, 32)))
    truth = scale[:, 0] * np.exp(rng.normal(size=300))
    cap, budget = np.full(300, 1e6), np.ones(300)
    scores = score_cell(
        samples, truth, cap, budget, np.zeros(300, dtype=bool), np.random.default_rng(0),
        groups=np.arange(300) // 3, resamples=500,
    )  # fmt: skip
    error = success_calibration_error(samples, truth, budget)
    assert scores["success_calibration_error"] == error
    assert scores["success_calibration_error_low"] <= scores["success_calibration_error_high"]
    assert scores["success_calibration_error_low"] <= error + 0.02
    cases, predicted, _ = success_reliability(samples, truth, budget)
    assert (cases > 0).all()
    bins = reliability_scores(samples, truth, budget)
    assert {key: scores[key] for key in bins} == bins
    assert [scores[f"success_bin{k}_cases"] for k in range(len(cases))] == cases.tolist()
    assert scores["success_bin4_predicted"] == predicted[4]


def test_reliability_needs_a_whole_number_of_bins() -> None:
    samples, truth, budget = np.ones((2, 3)), np.ones(2), np.ones(2)
    for bins in (0, 2.5, True):
        with pytest.raises(MetricInputError, match=r"^success_reliability: bins must be an int"):
            success_reliability(samples, truth, budget, bins)  # type: ignore[arg-type]


def test_a_paired_difference_interval_is_narrower_than_its_parts_suggest() -> None:
    """Two predictors whose errors share each case's difficulty: the paired interval of the
    difference of medians is far narrower than the two medians' own intervals side by side,
    and it resamples the same cases as bootstrap_median_interval (same generator, same draws)."""
    rng = np.random.default_rng(5)
    hardness = rng.exponential(size=400)
    first = hardness + rng.normal(0.0, 0.05, size=400)
    second = hardness + 0.1 + rng.normal(0.0, 0.05, size=400)
    low, high = bootstrap_median_difference_interval(first, second, np.random.default_rng(1))
    assert low < -0.05 and high < 0.0  # the 0.1 gap is resolved
    first_low, first_high = bootstrap_median_interval(first, np.random.default_rng(1))
    second_low, _ = bootstrap_median_interval(second, np.random.default_rng(1))
    assert first_high > second_low  # the unpaired intervals overlap
    same = bootstrap_median_difference_interval(first, first * 0.0, np.random.default_rng(1))
    assert same == (first_low, first_high)


def test_a_paired_difference_needs_values_of_the_same_cases() -> None:
    with pytest.raises(MetricInputError, match="the same cases, got 3 and 2 values"):
        bootstrap_median_difference_interval(np.ones(3), np.ones(2), np.random.default_rng(0))


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "truth", "message"),
    [
        (np.array([[1.0, np.nan]]), np.array([1.0]), "NaN or negative"),
        (np.array([[1.0, -2.0]]), np.array([1.0]), "NaN or negative"),
        (np.array([1.0, 2.0]), np.array([1.0]), "2-d"),
        (np.array([[1.0], [2.0]]), np.array([1.0]), "one value per case"),
        (np.array([[1.0]]), np.array([np.nan]), "truth contains NaN"),
        (np.array([[1.0]]), np.array([-1.0]), "truth must be >= 0"),
    ],
)
def test_bad_input_raises_a_clear_error(
    samples: np.ndarray, truth: np.ndarray, message: str
) -> None:
    with pytest.raises(MetricInputError, match=message):
        score_predictions(samples, truth, np.ones(len(truth)), np.ones(len(truth)))


def test_bad_cap_and_auc_labels_raise() -> None:
    with pytest.raises(MetricInputError, match="cap must be finite"):
        crps_log_work(np.array([[1.0]]), np.array([1.0]), np.array([np.inf]))
    with pytest.raises(MetricInputError, match="boolean"):
        infeasibility_auc(np.array([0.1, 0.2]), np.array([0, 1]))
    with pytest.raises(MetricInputError, match="no cases"):
        score_predictions(np.zeros((0, 3)), np.zeros(0), np.zeros(0), np.zeros(0))


def test_bad_input_names_the_function_called() -> None:
    samples, truth, cap = np.array([[1.0, np.nan]]), np.array([1.0]), np.ones(1)
    with pytest.raises(MetricInputError, match=r"^log_ratio_errors: "):
        log_ratio_errors(samples, truth, cap)
    with pytest.raises(MetricInputError, match=r"^score_cell: "):
        score_cell(samples, truth, cap, cap, np.zeros(1, bool), np.random.default_rng(0))
    with pytest.raises(MetricInputError, match=r"^score_cell: there are no cases"):
        score_cell(
            np.zeros((0, 3)), *[np.zeros(0)] * 3, np.zeros(0, bool), np.random.default_rng(0)
        )


# --- intervals ------------------------------------------------------------------------------------


def exact_bootstrap_median_cdf(values: list[float]) -> dict[float, float]:
    """P(median of a resample <= v) for each distinct v, an odd number n of distinct values.

    The median of n draws with replacement is <= the k-th smallest value iff at least
    (n + 1) / 2 draws are among the k smallest: a binomial tail with p = k / n.
    """
    n = len(values)
    need = (n + 1) // 2
    return {
        value: sum(
            math.comb(n, j) * (k / n) ** j * (1 - k / n) ** (n - j) for j in range(need, n + 1)
        )
        for k, value in enumerate(sorted(values), start=1)
    }


def test_the_bootstrap_interval_matches_the_exact_bootstrap_distribution() -> None:
    values = [0.3, 1.2, 1.9, 2.5, 3.1, 4.4, 5.0, 7.5, 9.9]
    cdf = exact_bootstrap_median_cdf(values)
    low = min(v for v, p in cdf.items() if p >= 0.025)
    high = min(v for v, p in cdf.items() if p >= 0.975)
    # The interval ends are attained medians, away from the ties of the exact CDF with the levels.
    assert (low, high) == (1.2, 7.5)
    assert all(abs(p - 0.025) > 0.005 and abs(p - 0.975) > 0.005 for p in cdf.values())
    array = np.array(values)[np.random.default_rng(1).permutation(len(values))]
    for seed in range(3):
        interval = bootstrap_median_interval(array, np.random.default_rng(seed), resamples=20_000)
        assert interval == (low, high)


def test_the_bootstrap_is_seeded_chunked_and_checked() -> None:
    values = np.random.default_rng(0).exponential(size=301)
    first = bootstrap_median_interval(values, np.random.default_rng(5))
    assert first == bootstrap_median_interval(values, np.random.default_rng(5))
    low, high = first
    assert low < float(np.median(values)) < high
    with pytest.MonkeyPatch.context() as patch:  # many small chunks draw the same indices
        patch.setattr("mara_env.predictors.bootstrap._BOOTSTRAP_CHUNK_VALUES", 1000)
        assert bootstrap_median_interval(values, np.random.default_rng(5)) == first
    for bad in (np.array([]), np.array([1.0, np.nan])):
        with pytest.raises(MetricInputError, match="non-empty"):
            bootstrap_median_interval(bad, np.random.default_rng(0))
    with pytest.raises(MetricInputError, match="resamples"):
        bootstrap_median_interval(values, np.random.default_rng(0), resamples=0)


def test_the_mean_bootstrap_equals_resampling_the_values_directly() -> None:
    values = np.random.default_rng(2).integers(0, 2, size=57).astype(float)
    draws = np.random.default_rng(9).integers(57, size=(500, 57))
    expected = np.quantile(values[draws].mean(axis=1), [0.025, 0.975], method="inverted_cdf")
    interval = bootstrap_mean_interval(values, np.random.default_rng(9), resamples=500)
    assert interval == pytest.approx(tuple(expected))


@pytest.mark.parametrize("interval", [bootstrap_median_interval, bootstrap_mean_interval])
def test_a_grouped_bootstrap_resamples_whole_groups(interval) -> None:  # type: ignore[no-untyped-def]
    distinct = np.random.default_rng(3).exponential(size=9)
    copies = np.repeat(distinct, 3)  # each curve's three cases agree
    groups = np.repeat([f"curve {i}" for i in range(9)], 3)
    by_curve = interval(copies, np.random.default_rng(4), groups=groups)
    # three copies of a curve carry one curve's evidence: as wide as the curves alone
    assert by_curve == pytest.approx(interval(distinct, np.random.default_rng(4)))
    low, high = by_curve
    case_low, case_high = interval(copies, np.random.default_rng(4))  # as if independent
    assert high - low > case_high - case_low
    with pytest.raises(MetricInputError, match="groups must label each"):
        interval(copies, np.random.default_rng(4), groups=groups[:-1])


def test_samples_beyond_the_cap_say_never_in_every_score() -> None:
    cap = np.full(4, 400.0)
    truth = np.array([10.0, 20.0, np.inf, np.inf])
    far = np.array([[10.0] * 4, [20.0] * 4, [1e6] * 4, [1e6, 1e6, 5.0, 5.0]])
    assert np.isinf(beyond_cap_as_never(far, cap)[2:, :2]).all()
    as_never = np.where(far > 400.0, np.inf, far)
    scores = score_cell(far, truth, cap, np.full(4, 50.0), np.zeros(4, dtype=bool),
                        np.random.default_rng(0))  # fmt: skip
    same = score_cell(as_never, truth, cap, np.full(4, 50.0), np.zeros(4, dtype=bool),
                      np.random.default_rng(0))  # fmt: skip
    np.testing.assert_equal(scores, same)
    assert interval_coverage(far, truth) == 0.5  # read as finite, the infeasible cases miss
    assert scores["coverage_80"] == 1.0 and scores["infeasibility_auc"] == 1.0


def test_never_shares_count_median_nevers_among_the_chosen_cases() -> None:
    samples = np.array([[np.inf, np.inf, 1.0], [1.0, 2.0, np.inf], [np.inf] * 3, [3.0] * 3])
    assert median_says_never(samples).tolist() == [True, False, True, False]
    assert never_share(samples, np.array([True, True, False, True])) == (1 / 3, 3)
    share, count = never_share(samples, np.zeros(4, dtype=bool))
    assert math.isnan(share) and count == 0
    with pytest.raises(MetricInputError, match="boolean mask"):
        never_share(samples, np.ones(4))


def test_a_cell_score_splits_never_by_the_crossing_point_and_adds_intervals() -> None:
    truth = np.array([5.0, 50.0, 60.0, np.inf])
    samples = np.array([[5.0] * 4, [np.inf] * 4, [60.0] * 4, [np.inf] * 4])
    beyond = np.array([False, True, True, False])
    scores = score_cell(samples, truth, np.full(4, 400.0), np.full(4, 10.0), beyond,
                        np.random.default_rng(0))  # fmt: skip
    assert (scores["cases"], scores["feasible_cases"], scores["infeasible_cases"]) == (4, 3, 1)
    assert (scores["never_before"], scores["never_before_cases"]) == (0.0, 1.0)
    assert (scores["never_after"], scores["never_after_cases"]) == (0.5, 2.0)
    assert scores["median_log_error_low"] == 0.0
    assert scores["median_log_error_high"] == pytest.approx(math.log(400.0 / 50.0))
    assert scores["coverage_80_low"] < scores["coverage_80"] == 0.75 < scores["coverage_80_high"]
    with pytest.raises(MetricInputError, match="beyond"):
        score_cell(samples, truth, np.full(4, 400.0), np.full(4, 10.0), beyond[:3],
                   np.random.default_rng(0))  # fmt: skip


def test_the_signed_ratio_says_which_way_predictions_err() -> None:
    rng = np.random.default_rng(3)
    truth = rng.uniform(5.0, 100.0, size=50)
    truth[::7] = np.inf
    cap = np.full(50, 400.0)
    pessimistic = np.repeat(2.0 * truth[:, None], 5, axis=1)
    optimistic = np.repeat(0.5 * truth[:, None], 5, axis=1)
    assert median_log_ratio(pessimistic, truth, cap) == pytest.approx(math.log(2.0))
    assert median_log_ratio(optimistic, truth, cap) == pytest.approx(-math.log(2.0))
    ratios = log_ratios(optimistic, truth, cap)
    np.testing.assert_array_equal(np.abs(ratios), log_ratio_errors(optimistic, truth, cap))
    assert np.isnan(ratios[::7]).all() and not np.isnan(np.delete(ratios, np.s_[::7])).any()
