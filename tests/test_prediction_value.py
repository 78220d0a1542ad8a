"""The value-of-prediction plan: every row on one budget, stages resumable by their cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.mara import prediction_value
from benchmarks.mara.prediction_value import Run, planned_runs, stage_done
from benchmarks.mara.settings import ABLATIONS
from benchmarks.mara.train import parse_args, settings_of


def test_every_row_trains_on_the_same_budget_and_differs_only_in_its_part() -> None:
    runs = planned_runs()
    assert len({run.name for run in runs}) == len(runs)
    budgets = set()
    for run in runs:
        for arguments, _ in run.stages():
            settings = settings_of(parse_args(arguments))
            assert settings.world_version == 2 and settings.seed == run.seed
            assert settings.predictor == run.row.predictor
            assert settings.ablation == run.row.ablation in ABLATIONS
            budgets.add((settings.dagger_rounds, settings.updates, settings.lr, settings.clip))
    assert budgets == {(14, 0, 5e-05, 0.1), (0, 60, 2.5e-4, 0.1)}
    seeds = {row.name: row.seeds for row in prediction_value.ROWS}
    assert seeds["flow_matching_without_target"] == (0, 1, 2)
    assert all(len(s) >= 2 for s in seeds.values())


def test_a_stage_is_done_only_when_its_card_records_the_planned_command(tmp_path: Path) -> None:
    run = Run(prediction_value.ROWS[0], 0)
    (arguments, checkpoint), _ = run.stages(tmp_path)
    assert not stage_done(arguments, checkpoint)
    checkpoint.write_bytes(b"weights")
    card = checkpoint.with_suffix(".json")
    card.write_text(json.dumps({"facts": {"command": [*arguments[:-1], "elsewhere.pt"]}}))
    assert not stage_done(arguments, checkpoint)
    card.write_text(json.dumps({"facts": {"command": arguments}}))
    assert stage_done(arguments, checkpoint)
    card.write_text("{not json")
    assert not stage_done(arguments, checkpoint)


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        prediction_value.main(["run", "--only", "nope_seed0"])
    assert "unknown run" in capsys.readouterr().err
    assert prediction_value.main(["plan", "--only", "oracle_seed0"]) == 0
    assert "oracle_seed0" in capsys.readouterr().out
