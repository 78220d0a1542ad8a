"""The value-of-prediction plan: every row on one budget, stages resumable by their cards."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from mara_env.benchmarks.mara import prediction_value
from mara_env.benchmarks.mara import prediction_value_plan as plan
from mara_env.benchmarks.mara.prediction_value_plan import Run, planned_runs, stage_done
from mara_env.benchmarks.mara.settings import ABLATIONS
from mara_env.benchmarks.mara.train import main as train_main
from mara_env.benchmarks.mara.train import parse_args, settings_of
from mara_env.benchmarks.prediction.value_errors import main as value_errors_main
from mara_env.predictors.checkpoint import load_checkpoint, rewrite_card


def test_every_row_trains_on_the_same_budget_and_differs_only_in_its_part() -> None:
    runs = planned_runs()
    assert len({run.name for run in runs}) == len(runs)
    budgets = set()
    for run in runs:
        stages = run.stages()
        assert len(stages) == (3 if run.name in plan.CHECK_RUNS else 2)
        for arguments, _ in stages[:2]:
            settings = settings_of(parse_args(arguments))
            assert settings.world_version == 2 and settings.seed == run.seed
            assert settings.predictor == run.row.predictor
            assert settings.ablation == run.row.ablation in ABLATIONS
            budgets.add((settings.dagger_rounds, settings.updates, settings.lr, settings.clip))
        if len(stages) == 3:  # the budget check: the same PPO, longer, from the same warm start
            common, check = stages[1][0], stages[2][0]
            assert check[check.index("--init") + 1] == common[common.index("--init") + 1]
            longer = settings_of(parse_args(check))
            assert longer.updates == 200
            assert dataclasses.replace(longer, updates=60) == settings_of(parse_args(common))
    assert budgets == {(14, 0, 5e-05, 0.1), (0, 60, 2.5e-4, 0.1)}
    seeds = {row.name: row.seeds for row in plan.ROWS}
    assert seeds["flow_matching_without_target"] == (0, 1, 2)
    assert all(len(s) >= 2 for s in seeds.values())


def test_a_stage_is_done_only_when_its_card_records_the_planned_command(tmp_path: Path) -> None:
    run = Run(plan.ROWS[0], 0)
    (arguments, checkpoint), *_ = run.stages(tmp_path)
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


def test_the_table_evaluates_finished_runs_and_resumes(tmp_path: Path) -> None:
    """Tiny stand-ins for three rows' runs (one quick checkpoint, its card given each stage's
    planned command) make every table; a second call replays nothing."""
    quick = tmp_path / "quick.pt"
    assert train_main(["--quick", "--output", str(quick), "--no-progress"]) == 0
    results = tmp_path / "runs"
    results.mkdir()
    _, card = load_checkpoint(quick)
    for row in ("oracle", "no_predictions", "flow_matching_without_target"):
        run = Run(next(r for r in plan.ROWS if r.name == row), 0)
        for arguments, checkpoint in run.stages(results):
            shutil.copy(quick, checkpoint)
            shutil.copy(quick.with_suffix(".json"), checkpoint.with_suffix(".json"))
            rewrite_card(checkpoint, card["config"], {**card["facts"], "command": arguments})
    errors = results / prediction_value.ERRORS
    assert value_errors_main(["--seeds", "1", "--output", str(errors), "--no-progress"]) == 0
    assert [run.name for run in plan.finished_runs(results)] == [
        "oracle_seed0",
        "flow_matching_without_target_seed0",
        "no_predictions_seed0",
    ]
    text = prediction_value.tables(results, 1, False, ("rl",), (1.4,))
    for heading in ("worth", "told the true", "ablations", "shorter budget"):
        assert heading in text
    assert "| oracle | 1 |" in text and "Kendall's tau" in text and "Brier" in text
    assert (results / prediction_value.PLOT).read_bytes()[:4] == b"\x89PNG"
    evaluation = results / prediction_value.EVALUATION
    rows = evaluation.read_text().count("\n")
    assert prediction_value.tables(results, 1, False, ("rl",), (1.4,)) == text
    assert evaluation.read_text().count("\n") == rows


def test_the_table_waits_for_the_rows_it_needs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="finished 'oracle' and 'no_predictions'"):
        prediction_value.tables(tmp_path, 1, False)
