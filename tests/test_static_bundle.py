"""Smoke tests of the static-bundle benchmark: the bundle it draws, its table, its resumable CSV."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from agents import known_agents, make_agent
from benchmarks import static_bundle
from mara_env import default_trace_source
from mara_env.families import FAMILY_NAMES
from mara_env.workload import build_workload


def test_the_bundle_has_ten_reachable_mixed_tasks_at_epoch_zero() -> None:
    config = static_bundle.bundle_config()
    workload = build_workload(config, default_trace_source())
    for seed in range(5):
        tasks = static_bundle.draw_bundle(workload, np.random.default_rng(seed))
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
    again = static_bundle.draw_bundle(workload, np.random.default_rng(4))
    np.testing.assert_array_equal(again.curve_row, tasks.curve_row)


def test_play_runs_one_episode_of_the_given_tasks() -> None:
    config = static_bundle.bundle_config()
    source = default_trace_source()
    tasks = static_bundle.draw_bundle(build_workload(config, source), np.random.default_rng(0))
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
    present = [a for a in static_bundle.BUNDLE_AGENTS if a in known_agents()]
    missing = [a for a in static_bundle.BUNDLE_AGENTS if a not in known_agents()]
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
    assert "does not have the columns" in capsys.readouterr().err
    assert (tmp_path / "bundle.csv").read_text() == "a,b\n1,2\n", "left untouched"
