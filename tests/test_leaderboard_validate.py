"""``mara-leaderboard --validate DIR``: clean results pass; any edit, or changed code, fails."""

from __future__ import annotations

import dataclasses
import re
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mara_env.benchmarks.leaderboard import main
from mara_env.benchmarks.leaderboard import validate as validate_module
from mara_env.benchmarks.leaderboard.cells import CellOutcome
from mara_env.benchmarks.leaderboard.records import decode, encode
from mara_env.portability import MAX_ULPS

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "benchmarks" / "results" / "v3" / "leaderboard"
TINY = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "2", "--seeds", "2"]
QUIET = ["--no-progress", "--workers", "1"]


@pytest.fixture
def results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "results"
    assert (
        main([*TINY, *QUIET, "--no-plots", "--agents", "edf", "random", "--output", str(out)]) == 0
    )
    capsys.readouterr()
    return out


def validate(directory: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = main(["--validate", str(directory), *QUIET, *extra])
    return code, capsys.readouterr().out


def edit_episode(journal: Path, *, rehash: bool) -> tuple[int, float]:
    """Add 1 to ``completed`` in the journal's first edf episode; its line number and value."""
    lines = journal.read_text().splitlines(keepends=True)
    for index, line in enumerate(lines):
        record = decode(line)
        if record.get("kind") == "episode" and record["agent"] == "edf":
            value = record["completed"]
            if rehash:
                record.pop("check")
                record["completed"] = value + 1
                lines[index] = encode(record).decode()
            else:
                lines[index] = line.replace(f'"completed":{value}', f'"completed":{value + 1}')
            journal.write_text("".join(lines))
            return index + 1, value
    raise AssertionError("no edf episode")


def test_a_clean_run_validates(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, printed = validate(results, capsys, "--sample", "all")
    assert code == 0, printed
    assert "integrity: every one of the" in printed
    assert "tables: episodes.csv, episodes.json, leaderboard.json, leaderboard.md equal" in printed
    assert "fingerprints: the shared code and the code and weights of 2 agents equal" in printed
    assert (
        "replay: 8 of 8 episodes (all) replayed from scratch: every count equal, every float "
        f"within {MAX_ULPS} ulps; 8 of them equal bit for bit." in printed
    )
    assert printed.rstrip().endswith("Valid: every check passed.")


def replayed_elsewhere(monkeypatch: pytest.MonkeyPatch, column: str, ulps: int) -> None:
    """Replays as on another machine: ``column`` of every replayed episode ``ulps`` off."""
    original = validate_module.execute_cells

    def execute_cells(cells: list, backend: object, callback: Callable, **options: object) -> None:
        def shifted(outcome: CellOutcome) -> None:
            if outcome.row:
                value = outcome.row[column]
                away = value + ulps * np.spacing(value)
                outcome = dataclasses.replace(outcome, row={**outcome.row, column: away})
            callback(outcome)

        original(cells, backend, shifted, **options)

    monkeypatch.setattr(validate_module, "execute_cells", execute_cells)


def test_floats_a_few_ulps_off_validate_and_are_counted(
    results: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Results made on another CPU or NumPy version: the last bits of a float metric differ."""
    replayed_elsewhere(monkeypatch, "mean_slack_at_completion", 3)
    code, printed = validate(results, capsys, "--sample", "all")
    assert code == 0, printed
    assert "0 of them equal bit for bit." in printed


@pytest.mark.parametrize(
    ("column", "ulps"), [("completed", 1), ("mean_slack_at_completion", 10**6)]
)
def test_a_count_one_ulp_off_or_a_float_far_off_fails(
    results: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    column: str,
    ulps: int,
) -> None:
    replayed_elsewhere(monkeypatch, column, ulps)
    code, printed = validate(results, capsys, "--sample", "all")
    assert code == 1
    assert re.search(rf"DIFFERS: edf .* seed \d+: {column} recorded", printed)


def test_one_changed_metric_of_one_line_fails(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    number, value = edit_episode(results / "episodes.jsonl", rehash=False)
    code, printed = validate(results, capsys)  # the default sample
    assert code == 1
    assert f"DIFFERS: episodes.jsonl line {number}: its check hash does not match" in printed
    assert f"completed recorded {value + 1}, replayed {value}" in printed  # replayed anyway
    assert "Not valid:" in printed


def test_a_rehashed_edit_is_caught_by_the_tables_and_the_replay(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, value = edit_episode(results / "episodes.jsonl", rehash=True)
    code, printed = validate(results, capsys, "--sample", "all")
    assert code == 1
    assert "integrity: every one of the" in printed  # the hash was recomputed: it matches
    assert re.search(r"DIFFERS: episodes\.csv line \d+ differs from its recomputation", printed)
    assert f"completed recorded {value + 1}, replayed {value}" in printed


def test_an_edited_table_is_named(results: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = results / "leaderboard.md"
    edited, count = re.subn(r"\| 1 \| \w+ \|", "| 1 | nobody |", table.read_text(), count=1)
    assert count == 1
    table.write_text(edited)
    code, printed = validate(results, capsys, "--sample", "1")
    assert code == 1
    assert re.search(r"DIFFERS: leaderboard\.md line \d+ differs .*'\| 1 \| nobody \|", printed)


def test_changed_code_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = "validate_user_agent_q"
    source = textwrap.dedent(
        """
        from mara_env.agents import EarliestDeadlineFirst

        class Mine(EarliestDeadlineFirst):
            name = "mine"
        """
    )
    (tmp_path / f"{module}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    out = tmp_path / "results"
    argv = [*TINY, *QUIET, "--no-plots", "--agents", f"{module}:Mine", "--output", str(out)]
    assert main(argv) == 0
    (tmp_path / f"{module}.py").write_text(source + "\n# a comment changes no behaviour\n")
    monkeypatch.delitem(sys.modules, module)
    assert validate(out, capsys, "--sample", "1")[0] == 0
    (tmp_path / f"{module}.py").write_text(source + "\nCHANGED = 1\n")
    monkeypatch.delitem(sys.modules, module)
    code, printed = validate(out, capsys, "--sample", "1")
    assert code == 1
    assert f"DIFFERS: mine: its code or weights changed since the run: {module} changed" in printed


def test_a_folder_without_results_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--validate", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "episodes.jsonl does not exist" in capsys.readouterr().err


def test_the_committed_leaderboard_follows_from_the_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The shipped results: every line, table and fingerprint, and a few replayed episodes
    (a fresh sample each time). Fails when code changes without the results being regenerated
    (``mara-leaderboard --output benchmarks/results/v3/leaderboard``)."""
    code, printed = validate(COMMITTED, capsys, "--sample", "3")
    assert code == 0, printed
    assert "+dirty" not in (COMMITTED / "leaderboard.md").read_text()


def test_a_users_scheduler_that_cannot_be_imported_here_is_not_checked_not_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    module = "validate_user_agent_gone_q"
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / f"{module}.py").write_text(
        "from mara_env.agents import EarliestDeadlineFirst\n\n\nclass Mine(EarliestDeadlineFirst):\n"
        "    name = 'mine'\n"
    )
    with monkeypatch.context() as inside:
        inside.syspath_prepend(str(folder))
        out = tmp_path / "results"
        argv = [*TINY, *QUIET, "--no-plots", "--agents", "edf", f"{module}:Mine"]
        assert main([*argv, "--output", str(out)]) == 0
    sys.modules.pop(module, None)  # validated elsewhere: the module is not importable
    code, printed = validate(out, capsys, "--sample", "all")
    assert code == 3, printed
    assert f"cannot check: mine: cannot import {module}" in printed
    assert "Not valid" not in printed and "DIFFERS" not in printed
    assert "replay: 4 of 4 episodes" in printed  # edf's episodes are still replayed
