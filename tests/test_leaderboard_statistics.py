"""The leaderboard's statistics against SciPy, direct loops and known answers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mara_env.benchmarks.common.statistics import (
    competition_ranks,
    interquartile_mean,
    probability_of_improvement,
    shared_ranks,
    stratified_summary,
)

stats = pytest.importorskip("scipy.stats")

RATES = st.floats(0.0, 1.0, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 40), elements=RATES))
def test_interquartile_mean_is_scipys_trimmed_mean(values: np.ndarray) -> None:
    assert interquartile_mean(values) == pytest.approx(stats.trim_mean(values, 0.25))


def test_interquartile_mean_known_answer_and_axis() -> None:
    # Eight values: two cut from each end, the mean of 3, 4, 5, 6.
    values = np.array([8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0])
    assert interquartile_mean(values) == 4.5
    assert interquartile_mean(np.stack([values, 2 * values]), axis=1).tolist() == [4.5, 9.0]
    with pytest.raises(ValueError, match="no values"):
        interquartile_mean(np.zeros(0))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda strata: st.tuples(
            arrays(np.float64, (strata, 5), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])),
            arrays(np.float64, (strata, 3), elements=st.sampled_from([0.0, 0.25, 0.5, 1.0])),
        )
    )
)
def test_probability_of_improvement_is_mann_whitney_u_over_pairs(
    pair: tuple[np.ndarray, np.ndarray],
) -> None:
    """Per stratum P(X > Y) + P(X = Y) / 2 is U / (n m) (ties are frequent here)."""
    x, y = pair
    expected = np.mean(
        [
            stats.mannwhitneyu(x[s], y[s]).statistic / (x.shape[1] * y.shape[1])
            for s in range(x.shape[0])
        ]
    )
    assert probability_of_improvement(x, y) == pytest.approx(expected)


def test_probability_of_improvement_known_answers() -> None:
    better = np.array([[0.9, 0.8]])
    worse = np.array([[0.1, 0.2, 0.3]])
    assert probability_of_improvement(better, worse) == 1.0
    assert probability_of_improvement(worse, better) == 0.0
    assert probability_of_improvement(better, better) == 0.5
    # Two strata: 1.0 in the first, 0.0 in the second.
    assert probability_of_improvement(np.array([[1.0], [0.0]]), np.array([[0.0], [1.0]])) == 0.5
    with pytest.raises(ValueError, match="shapes"):
        probability_of_improvement(np.zeros((2, 3)), np.zeros((3, 3)))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 12), elements=st.sampled_from([0.1, 0.5, 0.7, 0.9])))
def test_competition_ranks_are_scipys_min_ranks(values: np.ndarray) -> None:
    assert competition_ranks(values).tolist() == stats.rankdata(-values, method="min").tolist()


def slow_reference(
    scores: np.ndarray, workloads: list[str], reference: int, n_resamples: int, seed: int
) -> dict[str, np.ndarray]:
    """Every bootstrap statistic by direct loops over resamples, agents and strata."""
    n_agents, n_strata, n_seeds = scores.shape
    rng = np.random.default_rng(seed)
    names = list(dict.fromkeys(workloads))
    draws: dict[str, list] = {key: [] for key in ("overall", "iqm", "improvement", "workload")}
    chunk = 256  # the implementation draws resamples in chunks of this many
    indices = np.concatenate(
        [
            rng.integers(n_seeds, size=(min(chunk, n_resamples - start), n_strata, n_seeds))
            for start in range(0, n_resamples, chunk)
        ]
    )
    for b in range(n_resamples):
        sample = np.array(
            [[scores[a, s, indices[b, s]] for s in range(n_strata)] for a in range(n_agents)]
        )
        draws["overall"].append([sample[a].mean() for a in range(n_agents)])
        draws["iqm"].append([stats.trim_mean(sample[a].ravel(), 0.25) for a in range(n_agents)])
        draws["workload"].append(
            [
                [
                    np.mean([sample[a, s].mean() for s in range(n_strata) if workloads[s] == w])
                    for w in names
                ]
                for a in range(n_agents)
            ]
        )
        draws["improvement"].append(
            [
                np.mean(
                    [
                        np.mean(
                            [
                                1.0 if xi > yj else 0.5 if xi == yj else 0.0
                                for xi in sample[a, s]
                                for yj in sample[reference, s]
                            ]
                        )
                        for s in range(n_strata)
                    ]
                )
                for a in range(n_agents)
            ]
        )
    return {
        key: np.quantile(np.array(value), [0.025, 0.975], axis=0) for key, value in draws.items()
    }


def test_stratified_bootstrap_matches_a_slow_reference() -> None:
    rng = np.random.default_rng(7)
    scores = rng.choice([0.2, 0.4, 0.5, 0.6, 0.8, 1.0], size=(3, 4, 5))
    workloads = ["a", "a", "b", "b"]
    summary = stratified_summary(
        scores, workloads, reference=1, n_resamples=300, rng=np.random.default_rng(3)
    )
    expected = slow_reference(scores, workloads, reference=1, n_resamples=300, seed=3)
    for key, intervals in [
        ("overall", summary.overall),
        ("iqm", summary.iqm),
        ("improvement", summary.improvement),
    ]:
        for a, interval in enumerate(intervals):
            # The implementation widens an interval to contain its estimate; these do.
            assert interval.low == pytest.approx(expected[key][0, a]), key
            assert interval.high == pytest.approx(expected[key][1, a]), key
    for a in range(3):
        for w in range(2):
            assert summary.workload[a][w].low == pytest.approx(expected["workload"][0, a, w])
            assert summary.workload[a][w].high == pytest.approx(expected["workload"][1, a, w])


def test_point_estimates_and_ranks_are_direct_computations() -> None:
    rng = np.random.default_rng(11)
    scores = rng.random((4, 6, 10))
    workloads = ["x", "x", "y", "y", "z", "z"]
    summary = stratified_summary(scores, workloads, reference=0, n_resamples=50, rng=rng)
    assert summary.workloads == ("x", "y", "z")
    for a in range(4):
        assert summary.overall[a].estimate == pytest.approx(scores[a].mean())
        assert summary.iqm[a].estimate == pytest.approx(stats.trim_mean(scores[a].ravel(), 0.25))
        for w, cols in enumerate([[0, 1], [2, 3], [4, 5]]):
            assert summary.workload[a][w].estimate == pytest.approx(scores[a][cols].mean())
        for s in range(6):
            assert summary.stratum[a][s].estimate == pytest.approx(scores[a, s].mean())
        for interval in (summary.overall[a], summary.iqm[a], summary.improvement[a]):
            assert interval.low <= interval.estimate <= interval.high
    means = scores.mean(axis=(1, 2))
    assert summary.overall_rank.tolist() == stats.rankdata(-means, method="min").tolist()
    workload_means = np.stack(
        [scores[:, :2].mean((1, 2)), scores[:, 2:4].mean((1, 2)), scores[:, 4:].mean((1, 2))],
        axis=1,
    )
    for w in range(3):
        assert (
            summary.workload_rank[:, w].tolist()
            == stats.rankdata(-workload_means[:, w], method="min").tolist()
        )
    assert summary.improvement[0].estimate == 0.5  # the reference against itself


def test_identical_agents_tie_exactly_and_paired_resampling_keeps_them_tied() -> None:
    scores = np.random.default_rng(2).random((1, 3, 8))
    twins = np.concatenate([scores, scores])
    summary = stratified_summary(
        twins, ["w"] * 3, reference=0, n_resamples=200, rng=np.random.default_rng(0)
    )
    assert summary.overall[0] == summary.overall[1]
    assert (summary.improvement[1].low, summary.improvement[1].high) == (0.5, 0.5)
    assert summary.overall_rank.tolist() == [1, 1]
    assert summary.overall_shared_rank.tolist() == [1, 1]


def test_shared_ranks_count_the_agents_whose_paired_lead_is_above_zero() -> None:
    """Against a direct loop over pairs; a clear gap separates, noise does not."""
    rng = np.random.default_rng(5)
    draws = np.array([0.60, 0.598, 0.50, 0.499, 0.2])[:, None] + rng.normal(0, 0.01, (5, 1000))
    expected = [
        1 + sum(np.quantile(draws[b] - draws[a], 0.025) > 0 for b in range(5)) for a in range(5)
    ]
    ranks = shared_ranks(draws)
    assert ranks.tolist() == expected == [1, 1, 3, 3, 5]
    scores = np.stack([np.full((2, 6), 0.6), np.full((2, 6), 0.6), np.full((2, 6), 0.1)])
    scores = scores + np.random.default_rng(1).normal(0, 0.05, scores.shape)
    summary = stratified_summary(scores, ["w", "w"], n_resamples=500, rng=np.random.default_rng(0))
    assert summary.overall_shared_rank.tolist() == [1, 1, 3]


def test_interval_coverage_is_close_to_nominal() -> None:
    """Over many simulated leaderboards, the 95% interval of the mean covers the true mean
    about 95% of the time (the percentile bootstrap runs a little narrow at 3 x 10 draws)."""
    rng = np.random.default_rng(123)
    true_means = np.array([0.3, 0.5, 0.7])
    covered = 0
    trials = 300
    for _ in range(trials):
        scores = np.clip(true_means[None, :, None] + 0.15 * rng.standard_normal((1, 3, 10)), -5, 5)
        interval = stratified_summary(scores, ["a", "b", "c"], n_resamples=400, rng=rng).overall[0]
        covered += interval.low <= true_means.mean() <= interval.high
    assert 0.88 <= covered / trials <= 0.99


def test_bootstrap_is_deterministic_given_the_generator() -> None:
    scores = np.random.default_rng(5).random((2, 2, 4))
    first = stratified_summary(scores, ["a", "b"], n_resamples=100, rng=np.random.default_rng(9))
    second = stratified_summary(scores, ["a", "b"], n_resamples=100, rng=np.random.default_rng(9))
    assert first.overall == second.overall
    assert first.improvement == ()


@pytest.mark.parametrize(
    ("scores", "workloads", "kwargs", "message"),
    [
        (np.zeros((2, 3)), ["a"] * 3, {}, "shape"),
        (np.full((1, 1, 2), np.nan), ["a"], {}, "finite"),
        (np.zeros((1, 2, 2)), ["a"], {}, "one workload per stratum"),
        (np.zeros((1, 1, 2)), ["a"], {"reference": 3}, "not an agent index"),
        (np.zeros((1, 1, 2)), ["a"], {"confidence": 1.0}, "confidence"),
        (np.zeros((1, 1, 2)), ["a"], {"n_resamples": 0}, "n_resamples"),
    ],
)
def test_bad_input_is_reported(
    scores: np.ndarray, workloads: list[str], kwargs: dict, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        stratified_summary(scores, workloads, rng=np.random.default_rng(0), **kwargs)
