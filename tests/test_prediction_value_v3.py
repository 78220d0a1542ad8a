"""The value of prediction on Cluster-v3: rows from committed checkpoints, resumable tables."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mara_env.benchmarks.mara import prediction_value_v3 as study
from mara_env.benchmarks.mara.train import main as train_main


def _place(quick: Path, results: Path, stem: str) -> None:
    shutil.copy(quick, results / f"{stem}.pt")
    shutil.copy(quick.with_suffix(".json"), results / f"{stem}.json")


def test_a_row_holds_the_seeds_with_both_stages_committed(tmp_path: Path) -> None:
    oracle = study.ROWS[0]
    for stem in ("value_oracle", "value_oracle_imitation", "value_oracle_seed2"):
        (tmp_path / f"{stem}.pt").write_bytes(b"weights")
    assert oracle.labels(tmp_path) == ["value_oracle"]  # seed 2 lacks its warm start
    (tmp_path / "value_oracle_imitation_seed2.pt").write_bytes(b"weights")
    assert oracle.labels(tmp_path) == ["value_oracle", "value_oracle_seed2"]
    assert oracle.labels(tmp_path, imitation=True) == [
        "value_oracle_imitation",
        "value_oracle_imitation_seed2",
    ]


def test_the_tables_evaluate_committed_runs_and_resume(tmp_path: Path) -> None:
    """One quick checkpoint stands in for every run: the oracle row with two training seeds,
    two others with one, the rest without runs (left out of the tables)."""
    quick = tmp_path / "quick.pt"
    assert train_main(["--quick", "--output", str(quick), "--no-progress"]) == 0
    results = tmp_path / "v3"
    results.mkdir()
    present = [row for row in study.ROWS if row.prefix in ("value_oracle", "mara_ppo")]
    present.append(study.ROWS[-1])  # no_predictions
    for row in present:
        for imitation in (False, True):
            _place(quick, results, row.checkpoint_name(0, imitation=imitation))
    for imitation in (False, True):
        _place(quick, results, study.ROWS[0].checkpoint_name(1, imitation=imitation))
    text = study.tables(results, 1, False, ("rl",), (1.4,))
    for heading in ("worth, after PPO", "imitation alone", "rank the rows", "baselines", "LARA"):
        assert heading in text
    assert "| oracle | 2 |" in text and "| no_predictions | 1 |" in text
    assert "denoised_oracle" not in text
    assert "| features from | minus lara | minus lara_oracle |" in text
    assert (results / study.PLOT).read_bytes()[:4] == b"\x89PNG"
    journal = results / study.EVALUATION
    rows = journal.read_text().count("\n")
    assert rows == 1 + 8 + len(study.BASELINES)  # header, 8 checkpoints, baselines: 1 episode each
    assert study.tables(results, 1, False, ("rl",), (1.4,)) == text
    assert journal.read_text().count("\n") == rows


def test_the_tables_wait_for_the_rows_they_need(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="committed 'oracle' and 'no_predictions' runs"):
        study.tables(tmp_path, 1, False)
    with pytest.raises(SystemExit, match="prediction_value_v3: The tables need"):
        study.main(["--results", str(tmp_path), "--no-progress"])


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        study.main(["--seeds", "0"])
    assert "--seeds must be >= 1" in capsys.readouterr().err


def test_the_committed_rows_hold_three_training_seeds_each() -> None:
    """The shipped folder's oracle, recipe and no-predictions rows: every run found under the
    names the study reads."""
    rows = {row.name: row for row in study.ROWS}
    for name in ("oracle", "flow_matching_without_target", "no_predictions"):
        assert len(rows[name].labels(study.RESULTS)) == 3, name
