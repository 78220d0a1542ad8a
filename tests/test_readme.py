"""The README's code runs as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from benchmarks.leaderboard import main as leaderboard

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
SCHEDULER_BLOCK = next(block for block in PYTHON_BLOCKS if "class MostProgressFirst" in block)
USAGE_BLOCKS = [
    block
    for block in PYTHON_BLOCKS
    if block is not SCHEDULER_BLOCK and "my_curves.npz" not in block
]


@pytest.mark.parametrize("block", USAGE_BLOCKS, ids=lambda block: block.splitlines()[0][:40])
def test_usage_examples_run(block: str) -> None:
    """Every usage example executes without error."""
    exec(compile(block, "README.md", "exec"), {})


def test_own_scheduler_example_runs_on_the_leaderboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's example scheduler runs beside a shipped one through its import path."""
    (tmp_path / "my_sched.py").write_text(SCHEDULER_BLOCK)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_sched", raising=False)
    code = leaderboard(
        [
            "--agents",
            "edf",
            "my_sched:MostProgressFirst",
            "--config",
            "tiny",
            "--seeds",
            "2",
            "--workers",
            "1",
            "--no-progress",
            "--output",
            str(tmp_path / "results"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "my_sched:MostProgressFirst" in out or "most_progress" in out


def test_readme_has_exactly_one_test_command_for_ci() -> None:
    """.ci/run finds the test command between its markers."""
    section = re.search(
        r"<!-- ci:test-command -->\n```bash\n(.*?)\n```\n<!-- /ci:test-command -->", README, re.S
    )
    assert section is not None
    assert section.group(1).count("\n") == 0
