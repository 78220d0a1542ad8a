"""The leaderboard's results file: atomic appends, resumption, and refusing foreign files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mara_env.benchmarks.leaderboard.journal import (
    FORMAT,
    EpisodeJournal,
    ResultsFileError,
    read_journal,
)
from mara_env.benchmarks.leaderboard.records import encode


def make_journal(path: Path, rows: list[dict]) -> None:
    with EpisodeJournal.open(path, header={"note": "test"}) as journal:
        for row in rows:
            journal.append(row)


def test_rows_round_trip_with_nan_and_repeats(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    make_journal(path, [{"cell": "a", "x": 1.5, "slack": math.nan}, {"cell": "b", "x": 2.0}])
    with EpisodeJournal.open(path, header={}) as journal:
        assert journal.header["format"] == FORMAT
        assert journal.header["note"] == "test"  # the header of creation, not of reopening
        assert journal.done() == {"a", "b"}
        assert math.isnan(journal.rows[0]["slack"])
        journal.append({"cell": "a", "x": 99.0})  # a repeated cell keeps its first row
        assert [row["x"] for row in journal.rows] == [1.5, 2.0]
    lines = path.read_text().splitlines()
    assert len(lines) == 4 and all(line.startswith("{") for line in lines)


def test_foreign_and_corrupt_files_are_refused_and_left_untouched(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"name": "someone else"}\n{"x": 1}\n')
    with pytest.raises(ResultsFileError, match="not a mara-env leaderboard results file"):
        EpisodeJournal.open(foreign, header={})
    assert foreign.read_text() == '{"name": "someone else"}\n{"x": 1}\n'

    csv_file = tmp_path / "table.jsonl"
    csv_file.write_text("agent,seed\nedf,1\n")
    with pytest.raises(ResultsFileError, match="line 1: not valid JSON"):
        EpisodeJournal.open(csv_file, header={})

    corrupt = tmp_path / "episodes.jsonl"
    make_journal(corrupt, [{"cell": "a"}, {"cell": "b"}])
    lines = corrupt.read_text().splitlines()
    damaged = "\n".join([lines[0], lines[1][:-3], lines[2]]) + "\n"
    corrupt.write_text(damaged)
    with pytest.raises(ResultsFileError, match="line 2: not valid JSON"):
        EpisodeJournal.open(corrupt, header={})
    assert corrupt.read_text() == damaged

    keyless = tmp_path / "keyless.jsonl"
    make_journal(keyless, [])
    keyless.write_bytes(keyless.read_bytes() + encode({"kind": "episode", "agent": "edf"}))
    with pytest.raises(ResultsFileError, match="line 2: episode record without 'cell'"):
        EpisodeJournal.open(keyless, header={})

    newer = tmp_path / "newer.jsonl"
    newer.write_text(json.dumps({"format": FORMAT, "version": 99}) + "\n")
    with pytest.raises(ResultsFileError, match="format version 99"):
        EpisodeJournal.open(newer, header={})


def test_a_cut_short_last_line_is_moved_aside_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "episodes.jsonl"
    make_journal(path, [{"cell": "a"}])
    whole = path.read_text()
    path.write_text(whole + '{"cell": "b", "x": 0.')
    with EpisodeJournal.open(path, header={}) as journal:
        assert journal.done() == {"a"}
        journal.append({"cell": "b", "x": 0.5})
    assert "ended in an interrupted line" in capsys.readouterr().err
    assert (tmp_path / "episodes.jsonl.partial").read_text() == '{"cell": "b", "x": 0.\n'
    with EpisodeJournal.open(path, header={}) as journal:
        assert journal.done() == {"a", "b"}


def test_fresh_start_keeps_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    make_journal(path, [{"cell": "a"}])
    with EpisodeJournal.open(path, header={}, fresh=True) as journal:
        assert journal.done() == set()
    (backup,) = tmp_path.glob("episodes.jsonl.*.bak")
    assert '"cell":"a"' in backup.read_text()


def test_two_runs_cannot_append_at_once(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    with (
        EpisodeJournal.open(path, header={}),
        pytest.raises(ResultsFileError, match="in use by another leaderboard run"),
    ):
        EpisodeJournal.open(path, header={})
    with EpisodeJournal.open(path, header={}) as journal:  # released on exit
        assert journal.done() == set()


def test_append_needs_a_cell_key_and_an_open_journal(tmp_path: Path) -> None:
    journal = EpisodeJournal.open(tmp_path / "episodes.jsonl", header={})
    with pytest.raises(ValueError, match="no 'cell' key"):
        journal.append({"agent": "edf"})
    journal.close()
    with pytest.raises(ResultsFileError, match="closed"):
        journal.append({"cell": "a"})


def test_an_edited_line_no_longer_matches_its_check_hash(tmp_path: Path) -> None:
    """Changing one metric of one line by hand: resuming refuses, reading notes the line."""
    path = tmp_path / "episodes.jsonl"
    make_journal(path, [{"cell": "a", "agent": "edf", "completed": 46.0}, {"cell": "b"}])
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"completed":46.0', '"completed":43.0')
    path.write_text("".join(lines))
    with pytest.raises(ResultsFileError, match=r"line 2: its check hash does not match .*'edf'"):
        EpisodeJournal.open(path, header={})
    contents = read_journal(path)
    assert [row["cell"] for row in contents.rows] == ["b"]
    assert len(contents.problems) == 1 and contents.problems[0].startswith("line 2: its check")
    assert path.read_text() == "".join(lines)  # read, not repaired


def test_code_config_and_run_records_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "episodes.jsonl"
    with EpisodeJournal.open(path, header={}) as journal:
        journal.add_manifest("d1", {"mara_env.agents.lara": "aa"})
        journal.add_manifest("d1", {"mara_env.agents.lara": "aa"})  # once per digest
        journal.add_config("h1", {"n_nodes": 2, "family_weights": [["rl", 1.0]]})
        journal.append({"cell": "a", "agent_code": "d1"})
        journal.add_run({"grid": {"agents": ["lara"]}})
    contents = read_journal(path)
    assert contents.problems == [] and contents.lines == 5
    assert contents.manifests == {"d1": {"mara_env.agents.lara": "aa"}}
    assert contents.configs["h1"]["family_weights"] == [["rl", 1.0]]
    assert contents.runs == [{"grid": {"agents": ["lara"]}}]
    assert contents.rows == [{"cell": "a", "agent_code": "d1"}]
    path.write_bytes(path.read_bytes() + b'{"kind":"episode","cell":"z"')
    assert read_journal(path).problems == [
        'line 6: cut short (no newline): \'{"kind":"episode","cell":"z"\''
    ]
