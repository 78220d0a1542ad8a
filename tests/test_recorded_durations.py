"""Durations from the data: with ``curve_durations="recorded"`` a curve's recorded work sets
how long a node takes to train it; the default stretch is untouched."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env import ConfigError, get_config
from mara_env.benchmarks.leaderboard import main as leaderboard_main
from mara_env.curves.recorded_durations import even_work_curves, run_work
from mara_env.curves.sources import default_trace_source, resolve_trace_source
from mara_env.errors import TraceError
from mara_env.sim.workload import build_workload, draw_tasks

POLLUX = Path(__file__).resolve().parents[1] / "docs/examples/pollux/curves.csv"
OWN = (("speech", 0.8), ("recommendation", 0.6))


def pollux_config(version: int, durations: str) -> mara_env.ClusterConfig:
    return get_config(
        "evaluation",
        world_version=version,
        family_weights=(("vision", 1.0), ("speech", 1.0), ("recommendation", 1.0)),
        own_families=OWN,
        curve_durations=durations,
    )


@pytest.mark.parametrize("version", [1, 2])
def test_a_task_takes_its_curves_recorded_share_of_the_families_median_run(version: int) -> None:
    """Every task's whole curve takes ``mean(epochs_per_curve) * run work / its family's
    median run work`` node-epochs: the Pollux ImageNet run, with 14.8 times the work of the
    vision median, takes 14.8 times as long."""
    config = pollux_config(version, "recorded")
    workload = build_workload(config, resolve_trace_source(POLLUX))
    tasks, _ = draw_tasks(workload, np.zeros(400, dtype=np.int64), np.random.default_rng(3))
    lengths = workload.lengths[tasks.curve_row]
    whole_run = lengths / tasks.speed
    mean = float(np.mean(config.epochs_per_curve))
    np.testing.assert_allclose(whole_run, mean * workload.duration[tasks.curve_row], rtol=1e-12)
    for family in workload.rows_by_family:
        assert np.median(workload.duration[family]) == pytest.approx(1.0)
    source = resolve_trace_source(POLLUX).pool("vision", "test")
    works = run_work(source.lengths, source.work)
    assert max(workload.duration) == pytest.approx(works.max() / np.median(works))
    assert max(workload.duration) > 10


@pytest.mark.parametrize("version", [1, 2])
def test_stretched_durations_ignore_the_work_and_keep_the_uniform_draw(version: int) -> None:
    config = pollux_config(version, "stretched")
    workload = build_workload(config, resolve_trace_source(POLLUX))
    assert np.all(workload.duration == 1.0)
    tasks, _ = draw_tasks(workload, np.zeros(400, dtype=np.int64), np.random.default_rng(3))
    whole_run = workload.lengths[tasks.curve_row] / tasks.speed
    low, high = config.epochs_per_curve
    assert np.all((whole_run >= low - 1e-9) & (whole_run <= high + 1e-9))
    assert np.std(whole_run) > 3.0  # drawn, not set by the curve


def test_recorded_curves_are_resampled_onto_even_work() -> None:
    losses = np.array([[1.0, 0.6, 0.5, 0.2, 0.2]])
    uneven = np.array([[0.0, 1.0, 2.0, 8.0, 9.0]])
    even = even_work_curves(losses, np.array([4]), uneven)
    grid = np.linspace(0.0, 8.0, 4)
    np.testing.assert_array_equal(even[0, :4], np.interp(grid, uneven[0, :4], losses[0, :4]))
    assert even[0, 4] == even[0, 3] == 0.2  # the padding follows the last point
    evenly = np.array([[0.0, 2.0, 4.0, 6.0, 7.0]])
    np.testing.assert_array_equal(even_work_curves(losses, np.array([4]), evenly), losses)


def test_curves_without_work_and_unknown_settings_are_refused() -> None:
    config = get_config("tiny", workload="synthetic", curve_durations="recorded")
    with pytest.raises(TraceError, match=r"have no work axis.*curve_durations='stretched'"):
        build_workload(config, default_trace_source())
    with pytest.raises(ConfigError, match="curve_durations"):
        get_config("tiny", curve_durations="measured")


def test_the_leaderboard_plays_recorded_durations_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "board"
    quiet = ["--no-progress", "--no-plots", "--workers", "1", "--seeds", "1", "--loads", "1"]
    own = ["--own-families", "speech=0.8", "recommendation=0.6"]
    command = ["--traces", str(POLLUX), *own, "--agents", "edf", "--durations", "recorded"]
    assert leaderboard_main([*command, *quiet, "--quick", "--output", str(out)]) == 0
    assert "recorded durations (`--durations`)" in (out / "leaderboard.md").read_text()
    assert leaderboard_main(["--validate", str(out), "--sample", "all", *quiet[:4]]) == 0
    with pytest.raises(SystemExit):
        leaderboard_main(["--workloads", "synthetic", "--durations", "recorded", *quiet])
    assert "have no work axis" in capsys.readouterr().err
