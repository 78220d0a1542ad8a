"""The Ray backend gives the same numbers as the local one (on a local Ray instance)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from mara_env.benchmarks.leaderboard import main
from mara_env.benchmarks.leaderboard.cells import TIMING_COLUMNS
from mara_env.benchmarks.leaderboard.journal import read_journal

pytest.importorskip("ray")


def episodes(directory: Path) -> list[dict]:
    rows = read_journal(directory / "episodes.jsonl").rows
    return sorted(
        ({k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows),
        key=lambda row: row["cell"],
    )


def test_ray_and_local_backends_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An import-path agent too: the Ray workers must find it like local workers do.
    (tmp_path / "leaderboard_ray_agent.py").write_text(
        textwrap.dedent(
            """
            from mara_env.agents import LeastSlack

            class MySlack(LeastSlack):
                name = "my_slack"
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "leaderboard_ray_agent", raising=False)
    grid = ["--config", "tiny", "--workloads", "rl", "vision", "--loads", "1", "2", "--seeds", "3"]
    grid += ["--agents", "edf", "lara", "--agent", "leaderboard_ray_agent:MySlack"]
    grid += ["--no-progress", "--no-plots", "--workers", "2"]
    assert main([*grid, "--backend", "ray", "--output", str(tmp_path / "ray")]) == 0
    assert "on ray (local instance, 2 CPUs)" in capsys.readouterr().out
    assert main([*grid, "--output", str(tmp_path / "local")]) == 0
    capsys.readouterr()

    assert len(episodes(tmp_path / "ray")) == 3 * 2 * 2 * 3
    assert episodes(tmp_path / "ray") == episodes(tmp_path / "local")
    boards = [
        json.loads((tmp_path / name / "leaderboard.json").read_text())["leaderboard"]
        for name in ("ray", "local")
    ]
    for board in boards:
        for entry in board:
            del entry["episode_means"]["decision_ms_per_epoch"]
    assert boards[0] == boards[1]
