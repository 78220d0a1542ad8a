"""The reliability scripts run and judge: the crash table kills a command and reruns it, the
fuzz run feeds the readers and names an escape."""

from __future__ import annotations

from pathlib import Path

import pytest

from mara_env.benchmarks.reliability import fuzz, kills, readers


def test_the_crash_table_kills_a_command_and_its_rerun_equals_the_uninterrupted_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "kills.md"
    argv = ["--commands", "curve collection", "--kills", "1", "--seed", "1", "--output", str(page)]
    assert kills.main(argv) == 0
    row = next(line for line in page.read_text().splitlines() if "| curve collection |" in line)
    assert row.endswith("| 1 of 1 | 1 of 1 |")
    assert "0 kills left unreadable files or reruns that differ." in capsys.readouterr().out


def test_the_fuzz_run_counts_the_files_and_names_an_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--readers", "curve table", "tuned settings", "--examples", "16", "--no-progress"]
    assert fuzz.main(argv) == 0
    said = capsys.readouterr().out
    assert "| curve table | 16 | 0 |" in said and "32 files, 0 escaped." in said

    def leaky(path: Path) -> None:
        raise KeyError("a fault the contract forbids")

    table = readers.READERS["curve table"]
    monkeypatch.setitem(readers.READERS, "curve table", readers.Reader(
        table.suffix, table.valid, leaky, table.errors
    ))  # fmt: skip
    assert fuzz.main(["--readers", "curve table", "--examples", "2", "--no-progress"]) == 1
    said = capsys.readouterr().out
    assert "curve table, example 0 (random): KeyError: 'a fault the contract forbids'" in said
