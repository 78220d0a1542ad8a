"""A full disk (or a denied permission) at each writer of a long command: one line on stderr that
says what could not be written, what was kept and what a rerun does, exit code 2, no file left
half-written; and the rerun, with space again, finishes from what was kept.

Each test injects the error at the write itself (``monkeypatch`` of the writing call), after
some work has been written where the command keeps work as it goes.
"""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mara_env.benchmarks.baselines import tuning
from mara_env.benchmarks.baselines.trials import TrialJournal
from mara_env.benchmarks.collect.__main__ import main as collect
from mara_env.benchmarks.collect.store import CurveStore
from mara_env.benchmarks.leaderboard.cli import main as leaderboard
from mara_env.benchmarks.leaderboard.journal import EpisodeJournal
from mara_env.benchmarks.mara import train
from mara_env.benchmarks.mara.training_log import TrainingLog

TINY_BOARD = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "2"]
QUIET = ["--no-progress", "--no-plots", "--workers", "1"]


def failing_after(
    writes: int, real: Callable[..., Any], code: int = errno.ENOSPC
) -> Callable[..., Any]:
    """``real``, which raises ``OSError(code)`` from its ``writes + 1``-th call on."""
    calls = [0]

    def write(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > writes:
            raise OSError(
                code, "No space left on device" if code == errno.ENOSPC else "denied", "f"
            )
        return real(*args, **kwargs)

    return write


def refused(run: Callable[[], Any], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``run``, which must exit 2; return its one line on stderr."""
    with pytest.raises(SystemExit) as ended:
        run()
    assert ended.value.code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if ": error: " in line]
    assert len(lines) == 1, lines
    assert "Free space (or allow writing) and run the same command again; " in lines[0]
    return lines[0]


def no_temporaries(folder: Path) -> bool:
    return not [path for path in folder.rglob(".*.tmp")]


def test_the_leaderboard_s_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "board"
    argv = [*TINY_BOARD, *QUIET, "--agents", "edf", "lara", "--output", str(out)]
    monkeypatch.setattr(EpisodeJournal, "append", failing_after(2, EpisodeJournal.append))
    line = refused(lambda: leaderboard(argv), capsys)
    assert line.startswith("mara-leaderboard: error: could not write f: No space left on device.")
    assert "Every finished episode is kept: 2 in" in line and "reuses them" in line
    monkeypatch.undo()
    assert leaderboard(argv) == 0
    assert "2 reused from" in capsys.readouterr().out


def test_the_leaderboard_s_output_folder_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(EpisodeJournal, "open", failing_after(0, EpisodeJournal.open, errno.EACCES))
    argv = [*TINY_BOARD, *QUIET, "--agents", "edf", "--output", str(tmp_path / "board")]
    line = refused(lambda: leaderboard(argv), capsys)
    assert "could not write f: denied. No episode was played." in line
    assert "or give another --output" in line


def test_the_tuning_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--workers", "1", "--no-progress", "--agents", "least_slack"]
    argv += ["--output", str(tmp_path), "--settings-file", str(tmp_path / "tuned.json")]
    monkeypatch.setattr(TrialJournal, "append", failing_after(1, TrialJournal.append))
    line = refused(lambda: tuning.main(argv), capsys)
    assert line.startswith("tuning: error: could not write f: No space left on device.")
    assert "Every finished trial is kept: 1 in" in line and "it reuses that work" in line
    assert not (tmp_path / "tuned.json").exists()
    monkeypatch.undo()
    assert tuning.main(argv) == 0
    assert (tmp_path / "tuned.json").is_file()


@pytest.mark.parametrize("writer", ["log", "checkpoint"])
def test_mara_s_training(
    writer: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    one_torch_thread: None,
) -> None:
    from mara_env.predictors import checkpoint

    out = tmp_path / "quick.pt"
    if writer == "log":
        monkeypatch.setattr(TrainingLog, "write", failing_after(0, TrainingLog.write))
    else:
        monkeypatch.setattr(checkpoint, "replace_atomically", failing_after(0, lambda *a: None))
    argv = ["--quick", "--updates", "0", "--output", str(out), "--no-progress"]
    line = refused(lambda: train.main(argv), capsys)
    assert line.startswith("mara.train: error: could not write f: No space left on device.")
    assert f"The training log so far is in {out.with_suffix('.csv')}" in line
    assert "training starts over" in line
    assert not out.exists() and no_temporaries(tmp_path)


def test_packing_a_curve_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mara_env.atomic_files import replace_atomically
    from mara_env.curves import traces

    table = tmp_path / "curves.csv"
    rows = ["run,step,value,family,split"]
    for run, split in enumerate(["train", "train", "test"]):
        rows += [f"r{run},{step},{2.0 / (1 + step + run)},vision,{split}" for step in range(8)]
    table.write_text("\n".join(rows) + "\n")
    out = tmp_path / "mine.npz"
    real = replace_atomically

    def full_after_the_temporary(path: Path, write: Callable[..., Any], **options: Any) -> None:
        def write_then_fail(handle: Any) -> None:
            write(handle)  # the bytes reach the temporary file, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(path))

        real(path, write_then_fail, **options)

    monkeypatch.setattr(traces, "replace_atomically", full_after_the_temporary)
    argv = ["pack", "--from", str(table), "--output", str(out)]
    line = refused(lambda: collect(argv), capsys)
    page = (Path(__file__).resolve().parents[1] / "docs" / "reliability.md").read_text()
    assert line.replace(str(out), "mine.npz") in page  # the page's example is this line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["curves.csv"]
    monkeypatch.undo()
    assert collect(argv) == 0 and out.is_file() and out.with_suffix(".md").is_file()


def test_binning_submission_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mara_env.curves import arrivals

    times = tmp_path / "jobs.csv"
    times.write_text("timestamp\n0\n60\n7200\n")
    out = tmp_path / "jobs.npz"
    monkeypatch.setattr(arrivals, "replace_atomically", failing_after(0, lambda *a, **k: None))
    argv = ["arrivals", "--from", str(times), "--output", str(out)]
    line = refused(lambda: collect(argv), capsys)
    assert line.startswith("arrivals: error: could not write f: No space left on device.")
    assert not out.exists() and not out.with_suffix(".md").exists()


def test_collecting_curves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--families", "tabular", "--smoke", "--workers", "0", "--no-progress"]
    argv += ["--store", str(tmp_path)]
    monkeypatch.setattr(CurveStore, "save", failing_after(1, CurveStore.save))
    line = refused(lambda: collect(argv), capsys)
    assert line.startswith("collect run: error: could not write f: No space left on device.")
    assert f"Every finished run is kept in {tmp_path}" in line
    assert len(list(tmp_path.rglob("*.npz"))) == 1
    monkeypatch.undo()
    assert collect(argv) == 0
    assert "skipped 1 already stored" in capsys.readouterr().out
