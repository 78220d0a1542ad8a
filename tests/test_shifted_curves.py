"""Shifted prediction tasks: resampled curves, and the speed and deadline rules of each shift."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from mara_env.predictors.cases import PredictionTask, draw_tasks, make_cases
from mara_env.predictors.shifted_curves import (
    SHIFTS,
    ShiftError,
    resample_curve,
    shift_task,
    shift_tasks,
)


@pytest.fixture(scope="module")
def tasks() -> tuple[PredictionTask, ...]:
    return draw_tasks("in_distribution", seed=2, draws_per_curve=1)


def test_a_resampled_curve_has_twice_the_points_and_the_recorded_values_at_even_ones() -> None:
    curve = np.array([2.0, 1.0, 0.5, 0.5, 0.125])
    resampled = resample_curve(curve)
    assert len(resampled) == 2 * len(curve)
    np.testing.assert_array_equal(resampled[::2], curve)
    # Odd points: the geometric mean of their neighbours (linear in log-loss); the last holds.
    np.testing.assert_allclose(resampled[1:-1:2], np.sqrt(curve[:-1] * curve[1:]), rtol=1e-12)
    assert resampled[-1] == curve[-1]
    np.testing.assert_array_equal(resample_curve(curve, 1), curve)
    assert len(resample_curve(curve, 3)) == 15


@pytest.mark.parametrize(
    ("curve", "factor", "message"),
    [
        (np.array([1.0]), 2, "at least two"),
        (np.array([1.0, 0.0]), 2, "finite losses > 0"),
        (np.array([1.0, np.nan]), 2, "finite losses > 0"),
        (np.array([1.0, 0.5]), 0, "factor"),
        (np.array([1.0, 0.5]), 1.5, "factor"),
    ],
)
def test_bad_curves_and_factors_raise(curve: np.ndarray, factor: int, message: str) -> None:
    with pytest.raises(ShiftError, match=message):
        resample_curve(curve, factor)


def test_resolution_doubles_the_speed_and_keeps_the_deadline_and_target(
    tasks: Sequence[PredictionTask],
) -> None:
    for task in tasks:
        shifted = shift_task(task, SHIFTS["resolution_x2"])
        assert shifted.length == 2 * task.length and shifted.source_length == task.length
        np.testing.assert_array_equal(shifted.curve[::2], task.curve)
        assert shifted.speed == 2 * task.speed
        assert (shifted.deadline, shifted.target, shifted.family) == (
            task.deadline, task.target, task.family)  # fmt: skip
        if task.infeasible:
            assert shifted.infeasible
        else:
            assert shifted.steps_to_target in (
                2 * task.steps_to_target - 1,
                2 * task.steps_to_target,
            )
            assert shifted.crossed_late == (shifted.steps_to_target > task.length - 1)
        assert task.crossed_late == (
            np.isfinite(task.steps_to_target) and task.steps_to_target > (task.length - 1) / 2
        )


def test_duration_keeps_the_speed_and_doubles_the_deadline(
    tasks: Sequence[PredictionTask],
) -> None:
    for task in tasks:
        shifted = shift_task(task, SHIFTS["duration_x2"])
        assert (shifted.speed, shifted.deadline) == (task.speed, 2 * task.deadline)
        assert shifted.target == task.target
        assert shifted.cap == 2 * task.cap  # "never" beyond four (resampled) curve lengths


def test_an_ideal_predictor_sees_twice_the_remaining_work_at_double_resolution(
    tasks: Sequence[PredictionTask],
) -> None:
    resampled = shift_tasks(tasks, SHIFTS["resolution_x2"])  # one for one, in order
    original, shifted = make_cases(tasks, 0.4), make_cases(resampled, 0.4)
    drawn = {id(task): k for k, task in enumerate(tasks)}
    kept = {drawn[id(task)]: i for i, task in enumerate(original.tasks)}
    position = {id(task): k for k, task in enumerate(resampled)}
    pairs = [(kept[position[id(t)]], j) for j, t in enumerate(shifted.tasks)
             if position[id(t)] in kept]  # fmt: skip
    assert len(pairs) > 0.9 * len(original)
    for i, j in pairs:
        before, after = original.histories[i], shifted.histories[j]
        assert len(after.work) == len(before.work)  # the same epochs observed
        assert after.time_left == before.time_left
        truth, doubled = original.truth[i], shifted.truth[j]
        if math.isinf(truth):
            assert math.isinf(doubled)
        else:
            assert abs(doubled - 2 * truth) <= 1.0 + 1e-9


def test_shifting_twice_is_refused(tasks: Sequence[PredictionTask]) -> None:
    once = shift_task(tasks[0], SHIFTS["resolution_x2"])
    with pytest.raises(ShiftError, match="already resampled"):
        shift_task(once, SHIFTS["resolution_x2"])
