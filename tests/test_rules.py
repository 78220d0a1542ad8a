"""The world's rules (:mod:`mara_env.sim.rules`) and the task drawing against plain references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env import get_config
from mara_env.curves.families import FAMILY_NAMES
from mara_env.curves.sources import default_trace_source
from mara_env.portability import differences
from mara_env.sim.core import FEATURES, FIELD, ClusterBatch, task_rows
from mara_env.sim.layout import S_FAMILY
from mara_env.sim.observation import slot_columns
from mara_env.sim.rules import (
    HOPELESS_TARGET_RANGE,
    draw_term_numbers,
    first_step_at_or_below,
    loss_after,
    loss_at,
    progress_gain,
)
from mara_env.sim.workload import build_workload, draw_tasks, sample_tasks


@st.composite
def curve_batches(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random curves (any width, including one point), their recorded lengths and targets."""
    seed = draw(st.integers(0, 2**32 - 1))
    n, width = draw(st.integers(0, 12)), draw(st.integers(1, 10))
    rng = np.random.default_rng(seed)
    curves = rng.choice([0.2, 0.4, 0.6, 0.8, 1.0], size=(n, width))  # ties are common
    lengths = rng.integers(1, width + 1, size=n)
    targets = rng.choice([0.1, 0.4, 0.6, 0.9], size=n)
    return curves, lengths, targets


@settings(max_examples=200, deadline=None)
@given(curve_batches())
def test_first_step_at_or_below_is_the_first_recorded_step_from_one(
    batch: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    curves, lengths, targets = batch
    expected = [
        next((float(step) for step in range(1, length) if curve[step] <= target), math.inf)
        for curve, length, target in zip(curves, lengths, targets, strict=True)
    ]
    got = first_step_at_or_below(curves, lengths, targets)
    assert got.dtype == np.float64 and got.tolist() == expected


@settings(max_examples=100, deadline=None)
@given(curve_batches(), st.integers(0, 2**32 - 1))
def test_loss_at_reads_the_floor_of_progress_and_repeats_the_last_point(
    batch: tuple[np.ndarray, np.ndarray, np.ndarray], seed: int
) -> None:
    curves = batch[0]
    if not len(curves):
        return
    rng = np.random.default_rng(seed)
    rows = rng.integers(len(curves), size=(2, 3))
    progress = rng.uniform(0, 2 * curves.shape[1], size=(2, 3))
    expected = [
        [curves[row, min(int(p), curves.shape[1] - 1)] for row, p in zip(r, q, strict=True)]
        for r, q in zip(rows, progress, strict=True)
    ]
    assert loss_at(curves, rows, progress).tolist() == expected


def test_loss_at_broadcasts_rows_against_progress_and_keeps_the_curves_dtype() -> None:
    curves = np.array([[1.0, 0.5, 0.25], [0.9, 0.3, 0.1]], dtype=np.float32)
    losses = loss_at(curves, np.array([[0], [1]]), np.array([0.5, 1.5, 7.0]))
    assert losses.dtype == np.float32 and losses.shape == (2, 3)
    assert losses.tolist() == [[1.0, 0.5, 0.25], [curves[1, 0], curves[1, 1], curves[1, 2]]]
    assert loss_after(curves, 1, 1.999) == curves[1, 1]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_progress_gain_is_speed_times_share_to_the_alpha(seed: int) -> None:
    """The compiled rule (a ufunc, which the compiled epoch calls per task) gives what the NumPy
    expression gives, within the promised ulps (the C library's ``pow`` and NumPy's SIMD
    ``power`` may round differently in the last bit), and exactly 0 for shares of 0."""
    rng = np.random.default_rng(seed)
    speed = rng.uniform(0.0, 40.0, size=50)
    share = np.where(rng.random(50) < 0.2, 0.0, rng.uniform(0.0, 16.0, size=50))
    alpha = rng.uniform(0.05, 1.0, size=50)
    expected = np.multiply(speed, np.power(share, alpha))
    gain = progress_gain(speed, share, alpha)
    assert not differences(gain, expected)
    assert np.array_equal(gain == 0.0, share == 0.0)
    assert float(progress_gain(float(speed[0]), float(share[0]), 1.0)) == speed[0] * share[0]


@pytest.mark.parametrize("seed", range(20))
def test_families_are_drawn_as_numpy_choice_draws_them(seed: int) -> None:
    """Each task's family is what NumPy's ``Generator.choice`` with the configured family
    probabilities draws first from the same generator."""
    config = get_config("evaluation")
    workload = build_workload(config, default_trace_source())
    arrivals = np.zeros(seed * 7, dtype=np.int64)
    tasks, _ = draw_tasks(workload, arrivals, np.random.default_rng(seed))
    slots = np.random.default_rng(seed).choice(
        len(config.families), size=len(arrivals), p=config.family_probabilities()
    )
    assert tasks.family.tolist() == [FAMILY_NAMES.index(config.families[s]) for s in slots]


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 200),
    st.sampled_from(["tiny", "training", "evaluation", "large"]),
)
def test_term_numbers_are_the_draws_of_five_uniform_calls(seed: int, n: int, preset: str) -> None:
    """The one draw of :func:`draw_term_numbers` gives, bit for bit, what five successive
    ``uniform``/``random`` calls give (the order the task drawing documents)."""
    config = get_config(preset)
    drawn = draw_term_numbers(config, np.random.default_rng(seed), n)
    rng = np.random.default_rng(seed)
    expected = (
        rng.uniform(*config.epochs_per_curve, size=n),
        rng.uniform(*config.target_fraction, size=n),
        rng.random(n) < config.infeasible_share,
        rng.uniform(*HOPELESS_TARGET_RANGE, size=n),
        rng.uniform(*config.slack_range, size=n),
    )
    for got, want in zip(drawn[:5], expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_curve_minimum_is_the_lowest_recorded_loss() -> None:
    workload = build_workload(get_config("training"), default_trace_source())
    expected = [
        curve[:length].min()
        for curve, length in zip(workload.curves, workload.lengths, strict=True)
    ]
    assert workload.curve_minimum.tolist() == expected


def test_task_rows_hold_each_task_fields_first() -> None:
    config = get_config("training")
    workload = build_workload(config, default_trace_source())
    tasks = sample_tasks(workload, np.random.default_rng(3))
    rows = task_rows(tasks, workload.lengths[tasks.curve_row])
    assert rows.shape == (len(FIELD), len(tasks))
    assert rows[FIELD["arrival"]].tolist() == tasks.arrival.tolist()
    assert rows[FIELD["target"]].tolist() == tasks.target.tolist()
    one_hot = rows[FEATURES + S_FAMILY : FEATURES + S_FAMILY + int(tasks.family.max()) + 1]
    assert one_hot.argmax(axis=0).tolist() == tasks.family.tolist()
    assert one_hot.sum(axis=0).tolist() == [1.0] * len(tasks)


def test_slot_columns_write_into_a_given_view_as_they_return_a_new_array() -> None:
    config = get_config("training")
    core = ClusterBatch(config, 3)
    core.reset(np.arange(3), [np.random.default_rng(seed) for seed in range(3)])
    rng = np.random.default_rng(0)
    for _ in range(30):
        core.advance(rng.integers(config.n_slots + 1, size=(3, config.n_nodes)))
    fresh = slot_columns(core)
    target = np.full((3, config.n_slots, fresh.shape[0]), np.nan)
    written = slot_columns(core, out=target.transpose(2, 0, 1))
    assert np.array_equal(written, fresh)
    assert np.array_equal(target.transpose(2, 0, 1), fresh)
