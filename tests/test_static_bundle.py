"""The static-bundle benchmark: the bundles it draws, their calibration, its table, its resumable
CSV."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest

from mara_env import default_trace_source
from mara_env.agents import known_agents, make_agent
from mara_env.agents.clairvoyant import NEVER, epochs_to_target
from mara_env.benchmarks.baselines import static_bundle
from mara_env.benchmarks.baselines.static_bundle import BUNDLES, calibration
from mara_env.curves.families import FAMILY_NAMES
from mara_env.sim.workload import build_workload

TIGHT, PAPER = BUNDLES["tight"], BUNDLES["paper"]
ROOT = Path(__file__).resolve().parents[1]


def test_the_tight_bundle_has_ten_reachable_mixed_tasks_at_epoch_zero() -> None:
    config = static_bundle.bundle_config()
    workload = build_workload(config, default_trace_source())
    for seed in range(5):
        tasks = static_bundle.draw_bundle(workload, np.random.default_rng(seed), TIGHT)
        assert len(tasks) == static_bundle.N_TASKS
        assert np.all(tasks.arrival == 0) and np.all(tasks.deadline >= 1)
        assert np.all(np.isfinite(tasks.demand)) and np.all(tasks.target < tasks.initial_loss)
        families = sorted(FAMILY_NAMES[f] for f in tasks.family.tolist())
        assert {name: families.count(name) for name in set(families)} in (
            {"tabular": 4, "vision": 3, "rl": 3},
            {"tabular": 3, "vision": 4, "rl": 3},
            {"tabular": 3, "vision": 3, "rl": 4},
        )
        for task in range(len(tasks)):  # the demand is where the curve first reaches the target
            curve = workload.curves[tasks.curve_row[task]]
            first = int(np.flatnonzero(curve[1:] <= tasks.target[task])[0]) + 1
            assert tasks.demand[task] == pytest.approx(first / tasks.speed[task])
    again = static_bundle.draw_bundle(workload, np.random.default_rng(4), TIGHT)
    np.testing.assert_array_equal(again.curve_row, tasks.curve_row)


def test_the_paper_bundle_holds_one_unreachable_target_and_one_deadline_too_short() -> None:
    """Exactly two tasks cannot finish even alone on the node (checked with the reference's exact
    epochs to target): one whose target lies below its curve, one whose deadline is too short.
    The others keep the tight bundle's curves and targets, with longer deadlines."""
    config = static_bundle.bundle_config()
    workload = build_workload(config, default_trace_source())
    first_epoch = np.array([1.0 - config.switch_cost])
    for seed in range(6):
        tight = static_bundle.draw_bundle(workload, np.random.default_rng(seed), TIGHT)
        paper = static_bundle.draw_bundle(workload, np.random.default_rng(seed), PAPER)
        np.testing.assert_array_equal(paper.curve_row, tight.curve_row)
        np.testing.assert_array_equal(paper.speed, tight.speed)
        alone = np.array(
            [
                epochs_to_target(
                    workload.curves[paper.curve_row[task]],
                    0.0,
                    float(paper.target[task]),
                    float(paper.speed[task]),
                    float(paper.alpha[task]),
                    first_epoch,
                    np.array([1]),
                    int(paper.deadline[task]),
                )[0]
                for task in range(len(paper))
            ]
        )
        unreachable = np.flatnonzero(np.isinf(paper.demand))
        assert len(unreachable) == 1
        (task,) = unreachable.tolist()
        curve = workload.curves[paper.curve_row[task], : workload.lengths[paper.curve_row[task]]]
        assert paper.target[task] < curve.min()
        hopeless = np.flatnonzero(alone == NEVER)
        assert len(hopeless) == 2 and task in hopeless, (seed, alone)
        (short,) = [other for other in hopeless.tolist() if other != task]
        assert paper.deadline[short] < paper.demand[short]
        rest = np.setdiff1d(np.arange(len(paper)), hopeless)
        np.testing.assert_array_equal(paper.target[rest], tight.target[rest])
        assert np.all(paper.deadline[rest] >= tight.deadline[rest])


def test_play_runs_one_episode_of_the_given_tasks() -> None:
    config = static_bundle.bundle_config()
    source = default_trace_source()
    tasks = static_bundle.draw_bundle(
        build_workload(config, source), np.random.default_rng(0), TIGHT
    )
    first = static_bundle.play(make_agent("clairvoyant"), tasks, config, 0, trace_source=source)
    second = static_bundle.play(make_agent("clairvoyant"), tasks, config, 0, trace_source=source)
    assert first == second
    assert first["arrived"] == 10 and first["illegal_actions"] == 0
    edf = static_bundle.play(make_agent("edf"), tasks, config, 0, trace_source=source)
    assert first["completed"] >= edf["completed"]


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_main_prints_the_table_writes_rows_per_seed_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--output", str(tmp_path), "--no-progress"]
    assert static_bundle.main(argv) == 0
    captured = capsys.readouterr()
    present = [a for a in static_bundle.BUNDLE_AGENTS if a in known_agents(variants=True)]
    missing = [a for a in static_bundle.BUNDLE_AGENTS if a not in known_agents(variants=True)]
    assert "| agent | seeds | completed of 10 (95% CI) |" in captured.out
    for agent in present:
        assert f"| {agent} | 2 |" in captured.out
    for agent in missing:
        assert f"agent {agent!r} is not registered; skipped" in captured.err
    path = tmp_path / "bundle.csv"
    rows = rows_of(path)
    assert len(rows) == 2 * len(present)
    assert {(row["agent"], int(row["seed"])) for row in rows} == {
        (agent, seed) for agent in present for seed in range(2)
    }
    assert all(row["arrived"] == "10.0" for row in rows)

    # An interruption mid-write leaves a cut line: it is dropped and that episode run again.
    text = path.read_text()
    path.write_text(text[: text.rfind("\n", 0, len(text) - 1) + 1] + "abc123,edf,1,2")
    assert static_bundle.main(argv) == 0
    assert "1 episode(s) run" in capsys.readouterr().out
    assert len(rows_of(path)) == 2 * len(present)

    assert static_bundle.main([*argv, "--seeds", "3"]) == 0
    assert f"{len(present)} episode(s) run" in capsys.readouterr().out
    assert len(rows_of(path)) == 3 * len(present)


def test_unregistered_agents_are_skipped_and_none_left_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--output", str(tmp_path), "--no-progress", "--agents", "nope"]
    assert static_bundle.main(argv) == 2
    assert "'nope' is not registered" in capsys.readouterr().err


def test_a_foreign_csv_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bundle.csv").write_text("a,b\n1,2\n")
    assert static_bundle.main(["--quick", "--output", str(tmp_path), "--no-progress"]) == 2
    assert "the columns ['a', 'b'], not" in capsys.readouterr().err
    assert (tmp_path / "bundle.csv").read_text() == "a,b\n1,2\n", "left untouched"


def test_the_two_bundles_rows_are_kept_apart_and_both_reach_results_md(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--output", str(tmp_path), "--no-progress", "--agents", "edf", "clairvoyant"]
    assert static_bundle.main([*argv, "--bundle", "tight"]) == 0
    capsys.readouterr()
    assert static_bundle.main([*argv, "--bundle", "paper"]) == 0
    assert "4 episode(s) run" in capsys.readouterr().out, "nothing reused from the tight bundle"
    rows = rows_of(tmp_path / "bundle.csv")
    assert sorted({row["bundle"] for row in rows}) == ["paper", "tight"]
    assert len({row["setup"] for row in rows}) == 2
    results = (tmp_path / "results.md").read_text()
    assert "## `paper`" in results and "## `tight`" in results
    assert "| edf | 2 |" in results
    assert "| agent | `paper`: completed of 10 | switches | `tight`: completed of 10 |" in results


def test_the_default_agents_include_the_reference_and_the_papers_variants() -> None:
    assert {"clairvoyant", "sta", "lara_proportional", "successive_halving"} <= set(
        static_bundle.BUNDLE_AGENTS
    )
    assert static_bundle.DEFAULT_BUNDLE == "paper"


def test_calibration_refuses_reported_and_evaluation_seeds() -> None:
    for bad in ([0], [500, 9], [1000], []):
        with pytest.raises(ValueError, match="calibration seeds"):
            calibration.check_calibration_seeds(bad)
    assert calibration.check_calibration_seeds(range(500, 502)) == [500, 501]
    assert (
        min(static_bundle.CALIBRATION_SEEDS) >= 10 and max(static_bundle.CALIBRATION_SEEDS) < 1000
    )


def test_calibration_picks_the_scale_closest_to_the_aim() -> None:
    result = static_bundle.calibrate(scales=(1.0, 2.0, 4.0), seeds=range(500, 504))
    assert result.means[0] < result.means[2], "longer deadlines, more completions"
    gaps = [abs(mean - calibration.CLAIRVOYANT_TARGET) for mean in result.means]
    assert result.chosen == result.scales[int(np.argmin(gaps))]
    assert "| 2.00" in result.markdown() and "**(chosen)**" in result.markdown()


def test_the_recorded_scale_is_the_shipped_calibrations_choice() -> None:
    text = (ROOT / "benchmarks/results/static_bundle/calibration.md").read_text()
    chosen = re.search(r"\| ([0-9.]+) \*\*\(chosen\)\*\*", text)
    assert chosen is not None and "seeds 500-549 (50 bundles" in text
    assert float(chosen.group(1)) == static_bundle.PAPER_DEADLINE_SCALE
    assert BUNDLES["paper"].deadline_scale == static_bundle.PAPER_DEADLINE_SCALE


def test_the_calibrate_command_writes_its_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        static_bundle.main(["--calibrate", "--quick", "--output", str(tmp_path), "--no-progress"])
        == 0
    )
    assert "Chosen deadline scale" in capsys.readouterr().out
    assert "| deadline scale |" in (tmp_path / "calibration.md").read_text()
