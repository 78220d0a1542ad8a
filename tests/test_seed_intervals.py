"""The two-level bootstrap over training seeds and episodes (mara_env.benchmarks.common.seed_intervals)."""

from __future__ import annotations

import numpy as np
import pytest

from mara_env.agents.statistics import mean_ci
from mara_env.benchmarks.common.seed_intervals import two_level_bootstrap


def test_one_training_seed_gives_the_episode_interval() -> None:
    rng = np.random.default_rng(1)
    row = rng.normal(0.03, 0.05, size=80)
    two = two_level_bootstrap(row[None, :], n_resamples=4000)
    one = mean_ci(row, n_resamples=4000)
    assert two.mean == pytest.approx(one.mean)
    assert two.low == pytest.approx(one.low, abs=0.004)
    assert two.high == pytest.approx(one.high, abs=0.004)


def test_disagreeing_training_seeds_widen_the_interval() -> None:
    rng = np.random.default_rng(2)
    episodes = rng.normal(0.04, 0.03, size=(1, 60))
    agree = np.repeat(episodes, 4, axis=0)
    disagree = agree + np.array([[-0.06], [-0.02], [0.02], [0.06]])
    narrow, wide = two_level_bootstrap(agree), two_level_bootstrap(disagree)
    assert narrow.mean == pytest.approx(wide.mean)
    assert wide.high - wide.low > 2 * (narrow.high - narrow.low)
    assert narrow.low > 0 > wide.low


def test_bad_input_is_refused_with_what_to_give() -> None:
    with pytest.raises(ValueError, match="one row per training seed"):
        two_level_bootstrap(np.ones(5))
    with pytest.raises(ValueError, match="one row per training seed"):
        two_level_bootstrap(np.array([[0.1, np.nan]]))
    with pytest.raises(ValueError, match="confidence"):
        two_level_bootstrap(np.ones((2, 3)), confidence=1.5)
