"""Validation curves and the conformal spread of sampled remaining work."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mara_env.predictors
from mara_env import get_config
from mara_env.curves.sources import default_trace_source
from mara_env.predictors.base import TaskHistory
from mara_env.predictors.calibration import (
    VALIDATION_SETS,
    VALIDATION_WORLD_VERSION,
    CurveSubset,
    calibration_cells,
    fit_spread,
    fit_spread_in_every_cell,
    split_train_curves,
    validation_cases,
)
from mara_env.predictors.cases import draw_tasks
from mara_env.predictors.curve_windows import FUTURE_EPOCHS
from mara_env.predictors.metrics import interval_coverage, sample_quantiles
from mara_env.predictors.shifted_curves import SHIFTS, shift_task
from mara_env.predictors.window_predictor import WindowPredictor, spread_samples


class SteadySlopes(WindowPredictor):
    """Windows falling at a random steady rate per sample (a rate of 0 never gets there)."""

    name = "steady_slopes"

    def sample_log_windows(self, histories, n_samples, rng):
        rates = rng.choice([0.0, 0.01, 0.03, 0.1, 0.3], size=(len(histories), n_samples, 1))
        return -rates * FUTURE_EPOCHS


def test_validation_curves_are_a_disjoint_share_of_the_train_split() -> None:
    source = default_trace_source()
    fitting, validation = split_train_curves(source, ("rl", "vision"), seed=0)
    for family in ("rl", "vision"):
        n = source.pool(family, "train").n_curves
        kept = set(fitting.rows[family].tolist())
        held = set(validation.rows[family].tolist())
        assert not kept & held and kept | held == set(range(n))
        assert len(held) == max(1, int(0.1 * n))
    again = split_train_curves(source, ("rl", "vision"), seed=0)[1]
    assert np.array_equal(again.rows["rl"], validation.rows["rl"])


def test_a_subset_serves_only_its_train_split_rows() -> None:
    source = default_trace_source()
    subset = CurveSubset(source, {"rl": np.array([0, 2])})
    pool = subset.pool("rl", "train")
    assert pool.n_curves == 2
    np.testing.assert_array_equal(pool.losses[1], source.pool("rl", "train").losses[2])
    with pytest.raises(ValueError, match="train-split curves"):
        subset.pool("rl", "test")
    with pytest.raises(ValueError, match="train-split curves"):
        subset.pool("vision", "train")


def test_validation_cases_come_from_the_validation_curves_only() -> None:
    source = default_trace_source()
    _, validation = split_train_curves(source, ("tabular",), seed=3)
    groups = validation_cases(
        validation, seed=0, fractions=(0.2,), draws_per_curve=1, task_sets=("drawn",)
    )
    assert [group.task_set for group in groups] == ["drawn"]
    curves = {tuple(source.pool("tabular", "train").losses[r]) for r in validation.rows["tabular"]}
    for task in groups[0].cases.tasks:
        assert task.family == "tabular"
        padded = np.concatenate(
            [
                task.curve,
                np.full(
                    source.pool("tabular", "train").losses.shape[1] - task.length, task.curve[-1]
                ),
            ]
        )
        assert tuple(padded) in curves


def test_validation_cases_under_a_shift_are_the_drawn_tasks_shifted() -> None:
    _, validation = split_train_curves(default_trace_source(), ("rl",), seed=3)
    groups = validation_cases(validation, seed=0, fractions=(0.2, 0.4), draws_per_curve=1)
    assert [(g.task_set, g.cases.fraction) for g in groups] == [
        (task_set, fraction) for task_set in VALIDATION_SETS for fraction in (0.2, 0.4)
    ]
    config = get_config("training", workload="rl", world_version=VALIDATION_WORLD_VERSION)
    drawn = draw_tasks("rl", seed=0, draws_per_curve=1, config=config, source=validation)
    by_curve = {task.curve_id: task for task in drawn}
    for group in groups:
        shift = SHIFTS.get(group.task_set)
        for task in group.cases.tasks:
            original = by_curve[task.curve_id]
            expected = original if shift is None else shift_task(original, shift)
            assert np.array_equal(task.curve, expected.curve)
            assert (task.speed, task.deadline, task.steps_to_target, task.source_length) == (
                expected.speed,
                expected.deadline,
                expected.steps_to_target,
                expected.source_length,
            )
    with pytest.raises(ValueError, match="unknown task set"):
        validation_cases(validation, seed=0, task_sets=("length_x3",))


def test_spreading_keeps_medians_never_and_zero() -> None:
    samples = np.array([[0.0, 2.0, 8.0, 32.0, np.inf], [np.inf] * 5])
    spread = spread_samples(samples, 1.5)
    assert spread[0, 0] == 0.0 and np.isinf(spread[0, 4]) and np.isinf(spread[1]).all()
    assert spread[0, 2] == pytest.approx(8.0)
    assert spread[0, 1] == pytest.approx(8.0 * 4.0**-1.5)


@given(
    st.lists(
        st.one_of(st.just(0.0), st.just(np.inf), st.floats(1e-3, 1e6)), min_size=1, max_size=40
    ),
    st.floats(0.2, 4.0),
)
@settings(max_examples=300, deadline=None)
def test_spreading_around_the_median_sample_never_moves_it(values: list, factor: float) -> None:
    samples = np.array([values])
    spread = spread_samples(samples, factor)
    np.testing.assert_allclose(sample_quantiles(spread, 0.5), sample_quantiles(samples, 0.5))
    ordered = spread[0][np.argsort(samples[0], kind="stable")]
    assert np.all(ordered[1:] >= ordered[:-1])  # the samples keep their order
    untouched = (samples == 0.0) | np.isinf(samples)
    assert np.array_equal(spread[untouched], samples[untouched])


def test_the_finite_median_centre_moves_the_point_when_samples_say_never() -> None:
    samples = np.array([[1.0, 4.0, 16.0, np.inf, np.inf]])  # the median sample is 16
    assert sample_quantiles(spread_samples(samples, 2.0), 0.5) == pytest.approx([16.0])
    moved = spread_samples(samples, 2.0, centre="finite_median")  # around 4, the finite median
    assert sample_quantiles(moved, 0.5) == pytest.approx([64.0])
    with pytest.raises(ValueError, match="spread centre must be one of"):
        spread_samples(samples, 2.0, centre="mean")
    with pytest.raises(ValueError, match="spread centre must be one of"):
        fit_spread(samples, np.ones(1), centre="mean")


@pytest.mark.parametrize("centre", ["median", "finite_median"])
def test_predictions_are_spread_as_spread_samples_spreads_them(centre: str) -> None:
    histories = [
        TaskHistory(np.array([0.0, 2.0]), np.array([1.0, 0.9]), target=target)
        for target in (0.8, 0.5, 0.2)
    ]
    predictor = SteadySlopes()
    raw = predictor.predict(histories, 33, np.random.default_rng(0)).samples
    assert np.isinf(raw).any() and np.isfinite(raw).any()
    predictor.spread, predictor.spread_centre = 2.0, centre
    spread = predictor.predict(histories, 33, np.random.default_rng(0)).samples
    np.testing.assert_allclose(spread, spread_samples(raw, 2.0, centre))


def test_the_fitted_spread_reaches_the_target_coverage() -> None:
    rng = np.random.default_rng(4)
    centres = rng.uniform(1.0, 4.0, size=(2000, 1))
    samples = np.exp(centres + 0.5 * rng.normal(size=(2000, 64)))
    truth = np.exp(centres[:, 0] + 0.8 * rng.normal(size=2000))
    spread = fit_spread(samples, truth)
    assert spread == pytest.approx(1.6, abs=0.1)
    assert interval_coverage(spread_samples(samples, spread), truth) == pytest.approx(0.8, abs=0.02)


def test_calibration_cells_are_the_benchmarks_cells_with_enough_feasible_cases() -> None:
    families = np.array(["rl"] * 40 + ["vision"] * 40)
    fractions = np.tile([0.1, 0.4], 40)
    truth = np.ones(80)
    truth[:35] = np.inf  # rl: 5 feasible cases
    cells = calibration_cells(families, np.full(80, 0.2), truth)
    assert sorted(cells) == ["pooled 20%", "vision 20%"]
    assert cells["pooled 20%"].sum() == 80  # the small rl cell's cases count in the pooled one
    split = calibration_cells(families, fractions, np.ones(80))
    assert sorted(split) == ["pooled 10%", "pooled 40%"]  # 20 cases per family and fraction
    task_sets = np.repeat(["drawn", "duration_x2"], 40)  # rl drawn, vision shifted
    by_set = calibration_cells(families, np.full(80, 0.2), np.ones(80), task_sets)
    assert sorted(by_set) == [
        "duration_x2 pooled 20%",
        "duration_x2 vision 20%",
        "pooled 20%",
        "rl 20%",
    ]
    assert not (by_set["pooled 20%"] & by_set["duration_x2 pooled 20%"]).any()


def test_the_spread_covers_the_hardest_cell() -> None:
    rng = np.random.default_rng(5)
    samples = np.exp(rng.normal(size=(600, 64)))
    width = np.repeat([1.0, 1.0, 2.0], 200)  # the last cell is twice as wide
    truth = np.exp(width * rng.normal(size=600))
    cells = {"easy": np.arange(600) < 400, "hard": np.arange(600) >= 400}
    spread, by_cell = fit_spread_in_every_cell(samples, truth, cells)
    assert spread == by_cell["hard"] > by_cell["easy"]
    hard = cells["hard"]
    covered = interval_coverage(spread_samples(samples[hard], spread), truth[hard])
    assert covered == pytest.approx(0.8, abs=0.05)
    with pytest.raises(ValueError, match="no cell to fit"):
        fit_spread_in_every_cell(samples, truth, {})


#: Cards of the shipped flow-matching checkpoints calibrated by the current rule (the
#: target-blind one keeps the rule MARA's policy was trained with).
CALIBRATED_CARDS = (
    "flow_matching.json",
    "flow_matching_teacher.json",
    "held_out/flow_matching_without_rl.json",
    "held_out/flow_matching_without_tabular.json",
    "held_out/flow_matching_without_vision.json",
)


@pytest.mark.parametrize("name", CALIBRATED_CARDS)
def test_shipped_checkpoints_are_calibrated_on_every_validation_set(name: str) -> None:
    card = json.loads(
        (Path(mara_env.predictors.__file__).parent / "checkpoints" / name).read_text()
    )
    facts = card["facts"]
    scores = facts.get("distillation", facts)["validation"]
    assert scores["task_sets"] == list(VALIDATION_SETS)
    by_cell = scores["spread_by_cell"]
    assert {cell.split()[0] for cell in by_cell} >= {"resolution_x2", "duration_x2"}
    assert card["config"]["spread"] == scores["spread"] == max(by_cell.values())
