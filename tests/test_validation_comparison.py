"""``python -m mara_env.benchmarks.prediction.validation_comparison``: paired comparison on the train split's
validation cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mara_env.benchmarks.prediction import train as train_predictors
from mara_env.benchmarks.prediction import validation_comparison
from mara_env.predictors.flow_matching import shipped_checkpoint


def test_a_checkpoint_against_itself_differs_by_exactly_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shipped = str(shipped_checkpoint())
    assert validation_comparison.main([shipped, shipped, "--samples", "4"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    scored = [row for row in rows[2:] if "too small" not in row]  # after the header
    assert any(row.startswith("| pooled 40% |") for row in scored)
    assert any(row.startswith("| duration_x2 rl 10% |") for row in scored)
    for row in scored:
        first, second, difference = row.split(" | ")[2:5]
        assert first == second and difference == "+0.000 [+0.000, +0.000] |"


def test_checkpoints_of_different_splits_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    without_rl = str(train_predictors.held_out_checkpoint("rl"))
    with pytest.raises(SystemExit):
        validation_comparison.main([str(shipped_checkpoint()), without_rl])
    assert "trained on different splits" in capsys.readouterr().err


def test_a_card_without_its_training_split_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "fm.pt"
    shutil.copy(shipped_checkpoint(), copy)
    card = json.loads(shipped_checkpoint().with_suffix(".json").read_text())
    del card["facts"]["seed"]
    copy.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(SystemExit):
        validation_comparison.main([str(copy), str(shipped_checkpoint())])
    assert "the card names no training split" in capsys.readouterr().err
