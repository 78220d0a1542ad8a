"""The smoothed-loss world option: every curve an EMA of the recorded one, judged and reported."""

from __future__ import annotations

import numpy as np
import pytest

from mara_env import TraceError, default_trace_source, get_config
from mara_env.agents import evaluate, make_agent
from mara_env.curves.smoothed import SmoothedTraceSource, smoothed_losses
from mara_env.curves.synthetic import SyntheticTraceSource


def test_the_smoothing_is_the_ema_over_recorded_points_then_the_last_value() -> None:
    rng = np.random.default_rng(0)
    losses = rng.uniform(0.5, 2.0, size=(5, 12))
    lengths = np.array([12, 7, 2, 9, 1])
    smoothed = smoothed_losses(losses, lengths, 0.8)
    for row, length in enumerate(lengths):
        expected = [losses[row, 0]]
        for step in range(1, length):
            expected.append(0.8 * expected[-1] + 0.2 * losses[row, step])
        assert smoothed[row, :length] == pytest.approx(expected)
        assert np.all(smoothed[row, length:] == smoothed[row, length - 1])
    assert np.array_equal(smoothed_losses(losses, np.full(5, 12), 0.0), losses)


def test_smoothed_curves_vary_less_and_keep_their_shape_and_provenance() -> None:
    raw = default_trace_source()
    smooth = SmoothedTraceSource(raw, 0.9)
    for family in raw.families:
        before, after = raw.pool(family, "train"), smooth.pool(family, "train")
        assert np.array_equal(before.lengths, after.lengths)
        assert np.array_equal(before.curve_ids, after.curve_ids)
        assert np.array_equal(before.losses[:, 0], after.losses[:, 0])
        step = np.abs(np.diff(np.log(before.losses), axis=1)).sum()
        assert np.abs(np.diff(np.log(after.losses), axis=1)).sum() < step
    assert smooth.fingerprint not in (raw.fingerprint, SmoothedTraceSource(raw, 0.5).fingerprint)


def test_weight_zero_plays_the_same_episodes_and_a_positive_weight_other_ones() -> None:
    config = get_config("training", world_version=3, arrival_horizon=20)
    plain = evaluate(make_agent("edf"), config, [3, 4])
    unsmoothed = evaluate(
        make_agent("edf"),
        config,
        [3, 4],
        trace_source=SmoothedTraceSource(default_trace_source(), 0),
    )
    smoothed = evaluate(
        make_agent("edf"),
        config,
        [3, 4],
        trace_source=SmoothedTraceSource(default_trace_source(), 0.9),
    )
    keys = ("completed", "arrived", "switches")
    assert [[row[k] for k in keys] for row in plain] == [
        [row[k] for k in keys] for row in unsmoothed
    ]
    assert [row["completed"] for row in plain] != [row["completed"] for row in smoothed]


@pytest.mark.parametrize("weight", [1.0, -0.1, float("nan"), True, "0.9", None])
def test_a_bad_weight_is_refused_with_what_to_pass(weight: object) -> None:
    with pytest.raises(TraceError, match=r"weight must be a number in \[0, 1\)"):
        SmoothedTraceSource(SyntheticTraceSource(n_curves=4, length=10), weight)  # type: ignore[arg-type]


def test_a_source_that_is_not_one_is_refused() -> None:
    with pytest.raises(TraceError, match="must be a trace source"):
        SmoothedTraceSource("curves.csv", 0.9)  # type: ignore[arg-type]
