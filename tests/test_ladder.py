"""The information ladder (:mod:`mara_env.benchmarks.prediction.ladder`): the posterior over curves, the
denoised oracle, the bands, the verdict and the command."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env import get_config
from mara_env.benchmarks.prediction import feature_swaps, ladder
from mara_env.benchmarks.prediction.curve_posterior import CurvePosterior
from mara_env.benchmarks.prediction.denoised_oracle import DenoisedOracle
from mara_env.benchmarks.prediction.ladder_episodes import (
    band_of,
    denoised_margin,
    smoothed_log_curve,
)
from mara_env.predictors.base import PredictorInputError
from mara_env.predictors.env_histories import slotted_tasks, task_histories


@pytest.fixture(scope="module")
def posterior() -> CurvePosterior:
    return CurvePosterior.for_world(get_config("training", world_version=3), bank=2000)


def a_curve_that_falls(posterior: CurvePosterior) -> tuple[int, int]:
    """A train-split curve and the first step at which it falls below its loss at step 10."""
    for row in range(len(posterior.workload.curves)):
        curve = posterior.workload.curves[row]
        later = np.flatnonzero(curve[11:] < curve[10] * 0.9)
        if later.size and int(posterior.workload.lengths[row]) > 40:
            return row, 11 + int(later[0])
    raise AssertionError("no train-split curve falls by 10% after step 10")


def test_a_task_on_a_known_curve_reaches_its_target_exactly_when_its_budget_allows(
    posterior: CurvePosterior,
) -> None:
    """With a tight likelihood the posterior finds the task's own curve (it is in the pool
    here): success iff the budget covers the steps to the first loss at or below the target."""
    sharp = posterior.with_bandwidths(1e-3, 10.0)
    row, first = a_curve_that_falls(sharp)
    curve = sharp.workload.curves[row]
    steps = np.arange(0.0, 10.0 + 1)
    family = int(sharp.workload.curve_family[row])
    target = float(curve[first])
    needed = first - 10.0
    assert sharp.success_probability(family, steps, curve[:11], target, needed) > 0.99
    assert sharp.success_probability(family, steps, curve[:11], target, needed - 1.0) < 0.01
    assert sharp.success_probability(family, steps, curve[:11], target, 0.0) == 0.0


def without_row(posterior: CurvePosterior, family: int, row: int) -> CurvePosterior:
    """The posterior with curve ``row`` taken out of its family and of the bank."""
    rows, log_curves = posterior.log_curves[family]
    index = int(np.flatnonzero(rows == row)[0])
    positions, log_targets = posterior.bank[family]
    kept = positions != index
    return dataclasses.replace(
        posterior,
        log_curves={
            **posterior.log_curves,
            family: (np.delete(rows, index), np.delete(log_curves, index, axis=0)),
        },
        bank={
            **posterior.bank,
            family: (positions[kept] - (positions[kept] > index), log_targets[kept]),
        },
    )


def test_leaving_the_own_curve_out_is_the_posterior_without_it(posterior: CurvePosterior) -> None:
    row, first = a_curve_that_falls(posterior)
    family = int(posterior.workload.curve_family[row])
    curve = posterior.workload.curves[row]
    steps = np.arange(0.0, 10.0 + 1)
    reduced = without_row(posterior, family, row)
    for budget in (5.0, first - 10.0, 3.0 * first):
        left_out = posterior.success_probability(
            family, steps, curve[:11], float(curve[first]), budget, exclude_row=row
        )
        assert left_out == pytest.approx(
            reduced.success_probability(family, steps, curve[:11], float(curve[first]), budget)
        )


def test_the_posterior_may_know_the_train_split_only() -> None:
    with pytest.raises(ValueError, match="train split only"):
        CurvePosterior.for_world(get_config("evaluation", world_version=3), bank=10)
    with pytest.raises(ValueError, match="Bandwidths must be > 0"):
        CurvePosterior.for_world(get_config("training"), bank=10).with_bandwidths(0.0, 1.0)


def test_the_denoised_trend_knows_the_pace_not_the_noise() -> None:
    length = 200
    trend_truth = -0.01 * np.arange(length)
    noise = 0.05 * np.where(np.arange(length) % 2 == 0, 1.0, -1.0)
    log_curve = np.concatenate([trend_truth + noise, np.full(20, trend_truth[-1])])
    trend = smoothed_log_curve(log_curve, length)
    assert np.all(np.diff(trend) <= 0)
    assert np.abs(trend[20:180] - trend_truth[20:180]).max() < 0.01
    margin, need = denoised_margin(log_curve, length, 50.0, 20.0, log_target=-1.0)
    assert margin > 5 and 45 <= need <= 55  # the trend crosses -1.0 near step 100
    margin, _ = denoised_margin(log_curve, length, 50.0, 100.0, log_target=-1.0)
    assert margin < 0


def test_each_share_of_the_window_falls_in_one_band_or_none() -> None:
    assert [band_of(x) for x in (0.05, 0.1, 0.19, 0.2, 0.3, 0.49, 0.5, 0.6, 0.79, 0.8)] == [
        None, "10-20%", "10-20%", None, "30-50%", "30-50%", None, "60-80%", "60-80%", None,
    ]  # fmt: skip


def test_the_headroom_verdict_follows_the_threshold() -> None:
    def rows(gain: float) -> list[dict[str, object]]:
        return [
            {"world": "v3", "band": "30-50%", "rung": "+ denoised oracle", "statistic": "AUC gain",
             "value": gain, "low": gain - 0.01, "high": gain + 0.01},
        ]  # fmt: skip

    assert ladder.headroom_verdict(rows(0.06), "v3").startswith("headroom: ")
    assert ladder.headroom_verdict(rows(0.04), "v3").startswith("no headroom: ")
    assert ladder.headroom_verdict(rows(0.06), "v1") == "not measured"


def test_the_quick_ladder_writes_its_results(tmp_path: Path) -> None:
    assert (
        ladder.main(["--quick", "--worlds", "v3", "--no-progress", "--output", str(tmp_path)]) == 0
    )
    page = (tmp_path / "README.md").read_text()
    assert page.startswith("# The information ladder")
    assert "`v3`: " in page and "+ loss history (posterior)" in page
    header = (tmp_path / "ladder.csv").read_text().splitlines()[0]
    assert header == "world,band,rung,statistic,value,low,high"
    assert (tmp_path / "bandwidths.csv").read_text().count("True") == 1


def test_the_denoised_oracle_reads_each_tasks_own_trend() -> None:
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=3)
    simulator = env.unwrapped.simulator
    oracle = DenoisedOracle()
    with pytest.raises(PredictorInputError, match="bind it"):
        oracle.predict([], 2, np.random.default_rng(0))
    oracle.bind(env)
    histories = task_histories(simulator, slotted_tasks(simulator))
    work = oracle.predict(histories, 3, np.random.default_rng(0)).samples
    state, workload = simulator.state, simulator.workload
    for history, need in zip(histories, work[:, 0], strict=True):
        task = int(state.slots[history.slot])
        row = int(state.tasks.curve_row[task])
        trend = smoothed_log_curve(np.log(workload.curves[row]), int(workload.lengths[row]))
        below = np.flatnonzero(trend <= np.log(state.tasks.target[task]))
        assert need == (below[0] - history.work[-1] if below.size else np.inf)


def test_the_quick_feature_swaps_write_their_page(tmp_path: Path) -> None:
    argv = ["--quick", "--workers", "1", "--no-progress", "--output", str(tmp_path)]
    assert feature_swaps.main(argv) == 0
    page = (tmp_path / "feature_swaps.md").read_text()
    for variant in feature_swaps.VARIANTS:
        assert f"| {variant} |" in page
    rows = (tmp_path / "feature_swaps.csv").read_text().splitlines()
    assert (
        len(rows) == 1 + len(feature_swaps.VARIANTS) * 3
    )  # a header, 3 workloads x 1 load x 1 seed
