"""Smoke tests of the benchmark scripts with tiny budgets."""

from __future__ import annotations

import csv
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from benchmarks import calibrate_load, leaderboard

TINY = ["--config", "tiny", "--quick", "--seeds", "2", "--no-progress"]


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_leaderboard_quick_run_writes_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [*TINY, "--workers", "1", "--output", str(tmp_path), "--agents", "edf", "random"]
    assert leaderboard.main(args) == 0
    table = capsys.readouterr().out
    assert "completion rate" in table
    assert "edf" in table
    assert "random" in table
    rows = read_rows(tmp_path / "episodes.csv")
    assert sorted((row["agent"], row["seed"]) for row in rows) == [
        ("edf", "1000"),
        ("edf", "1001"),
        ("random", "1000"),
        ("random", "1001"),
    ]
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "| edf |" in markdown
    assert "| random |" in markdown

    # A second run reuses every finished cell and adds only the new agent's.
    assert leaderboard.main([*args, "fcfs"]) == 0
    output = capsys.readouterr().out
    assert "2 episodes run" in output
    assert "4 reused" in output
    assert len(read_rows(tmp_path / "episodes.csv")) == 6
    assert "| fcfs |" in (tmp_path / "leaderboard.md").read_text()

    # --no-resume starts afresh.
    assert leaderboard.main([*args, "--no-resume"]) == 0
    capsys.readouterr()
    assert len(read_rows(tmp_path / "episodes.csv")) == 4


def test_leaderboard_in_worker_processes(capsys: pytest.CaptureFixture[str]) -> None:
    assert leaderboard.main([*TINY, "--agents", "edf", "uniform", "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "4 episodes run" in out
    assert "2 worker(s)" in out


def test_leaderboard_accepts_import_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "leaderboard_user_agent.py").write_text(
        textwrap.dedent(
            """
            from agents import EarliestDeadlineFirst

            class MyEdf(EarliestDeadlineFirst):
                name = "my_edf"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    path = "leaderboard_user_agent:MyEdf"
    assert leaderboard.main([*TINY, "--agents", path, "--workers", "1"]) == 0
    assert path in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agents", "nope"], "Unknown agent 'nope'. Known agents: random"),
        (["--agents", "no_such_module_q:X"], "Cannot import module 'no_such_module_q'"),
        (["--config", "huge"], "Unknown config preset 'huge'. Known presets"),
        (["--seeds", "0"], "expected a whole number >= 1"),
    ],
)
def test_leaderboard_errors_are_clear(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        leaderboard.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_leaderboard_refuses_foreign_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "episodes.csv").write_text("name,score\nx,1\n")
    with pytest.raises(SystemExit):
        leaderboard.main([*TINY, "--agents", "edf", "--workers", "1", "--output", str(tmp_path)])
    assert "--no-resume" in capsys.readouterr().err


def test_summary_is_sorted_by_completion_rate() -> None:
    rows = [
        {
            "agent": agent,
            "completion_rate": rate,
            **{m: 1.0 for _, m, _ in leaderboard.TABLE_COLUMNS},
        }
        for agent, rate in [("a", 0.2), ("b", 0.9), ("a", 0.4), ("b", 0.7)]
    ]
    table = leaderboard.summary_rows(rows, ["a", "b"])
    assert [summary["agent"] for summary in table] == ["b", "a"]
    assert table[0]["completion_rate"].mean == pytest.approx(0.8)
    assert "0.800 ± " in leaderboard.format_table(table)
    assert leaderboard.format_table(table, markdown=True).startswith("| agent |")


def test_calibrate_load_tiny_budget(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--config", "tiny", "--loads", "0.5", "3.0", "--seeds", "2", "--workers", "1"]
    assert calibrate_load.main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "edf (95% CI)" in out
    assert "random (95% CI)" in out
    assert "TRAINING_LOAD" in out or "never crosses" in out


def test_calibrate_load_rejects_bad_sweeps(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        calibrate_load.main(["--loads", "2.0", "1.0"])
    assert "increasing order" in capsys.readouterr().err


def test_interpolate_load() -> None:
    assert calibrate_load.interpolate_load([1.0, 2.0, 3.0], [0.9, 0.7, 0.3], 0.5) == 2.5
    assert calibrate_load.interpolate_load([1.0, 2.0], [0.55, 0.4], 0.55) == 1.0
    assert calibrate_load.interpolate_load([1.0, 2.0], [0.9, 0.8], 0.55) is None


def test_leaderboard_interrupt_keeps_finished_episodes(tmp_path: Path) -> None:
    """Ctrl-C stops the run promptly with exit code 130; finished episodes stay on disk."""
    command = [sys.executable, "-m", "benchmarks.leaderboard", *TINY[:-3], "--seeds", "500"]
    command += ["--no-progress", "--workers", "2", "--output", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    episodes = tmp_path / "episodes.csv"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (
            not episodes.exists() or len(episodes.read_text().splitlines()) < 3
        ):
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "run again to resume" in err
    rows = read_rows(episodes)
    assert 2 <= len(rows) < 1000
    assert len({(row["agent"], row["seed"]) for row in rows}) == len(rows)


def test_leaderboard_runs_a_named_workload(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--workload switches the task families and labels the results with it."""
    argv = ["--agents", "edf", "--config", "tiny", "--workload", "vision", "--seeds", "2"]
    argv += ["--workers", "1", "--no-progress", "--output", str(tmp_path)]
    assert leaderboard.main(argv) == 0
    assert "config 'tiny/vision'" in capsys.readouterr().out
    with open(tmp_path / "episodes.csv", newline="") as handle:
        assert {row["config"] for row in csv.DictReader(handle)} == {"tiny/vision"}
    assert "Config `tiny/vision`" in (tmp_path / "leaderboard.md").read_text()
