"""Verdict diagnostics: the truth they compare with, the rates they count, the script's outputs."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env.agents import make_agent, start_episode
from mara_env.benchmarks.prediction import verdicts
from mara_env.benchmarks.prediction.verdicts import (
    VerdictRecord,
    VerdictSettings,
    record_episode,
    summarise,
)
from mara_env.benchmarks.prediction.verdicts.laira_judge import laira_success
from mara_env.predictors.registry import make_predictor


def test_the_truth_follows_the_hidden_curves() -> None:
    """A task whose target lies below its curve is never feasible; every judged task reported
    at least once; a predictor that is always sure of success never calls anything infeasible."""
    settings = VerdictSettings(seeds=(101,), predictors=("wls",), arrival_horizon=20)
    records = record_episode(settings, 101, {"wls": make_predictor("wls")})
    env = mara_env.raw_env(settings.config)
    env.reset(seed=101)
    demand = env.simulator.state.tasks.demand
    hopeless = [record for record in records if np.isinf(demand[record.task])]
    assert hopeless and not any(record.feasible for record in hopeless)
    assert any(record.feasible for record in records)
    assert all(record.reports >= 1 for record in records)
    judged = [(record.task, record.reports) for record in records]
    assert len(set(judged)) == len(judged), "one judgement per task and report"

    class Certain:
        name = "certain"

        def predict(self, histories, n_samples, rng):  # type: ignore[no-untyped-def]
            from mara_env.predictors.base import RemainingWork

            return RemainingWork(np.zeros((len(histories), n_samples)))

    certain = record_episode(settings, 101, {"wls": Certain()})  # type: ignore[dict-item]
    assert [r.feasible for r in certain] == [r.feasible for r in records]
    rows = summarise(certain, {"wls": 0.5})
    assert all(row.dropped == (0, 0) and row.wrong_drops is None for row in rows)
    assert all(row.false_negative is None or row.false_negative.mean == 0.0 for row in rows)


def test_rates_count_judgements_and_resample_tasks() -> None:
    def record(task: int, reports: int, feasible: bool, success: float) -> VerdictRecord:
        return VerdictRecord(100, task, reports, feasible, {"p": success})

    records = [
        record(0, 3, True, 0.1),  # feasible, dropped: a false negative (and a wrong drop)
        record(0, 4, True, 0.9),
        record(1, 3, True, 0.7),
        record(2, 4, False, 0.8),  # infeasible, kept: a false positive
        record(3, 3, False, 0.2),
        record(3, 20, False, 0.2),
    ]
    rows = {row.bucket: row for row in summarise(records, {"p": 0.5})}
    middle = rows["3-4"]
    assert middle.feasible == (3, 2) and middle.infeasible == (2, 2) and middle.dropped == (2, 2)
    assert middle.false_negative is not None and middle.false_negative.mean == pytest.approx(1 / 3)
    assert middle.false_positive is not None and middle.false_positive.mean == 0.5
    assert middle.wrong_drops is not None and middle.wrong_drops.mean == 0.5
    assert middle.false_negative.n == 2, "clusters are tasks"
    assert rows["9+"].infeasible == (1, 1) and rows["9+"].false_positive is not None
    assert rows["1"].feasible == (0, 0) and rows["1"].false_negative is None
    assert rows["9+"].false_positive.mean == 0.0


def test_settings_refuse_evaluation_seeds_the_test_split_and_bad_values() -> None:
    for bad, match in (
        ({"seeds": (1000,)}, "training seeds"),
        ({"seeds": ()}, "training seeds"),
        ({"preset": "evaluation"}, "train split"),
        ({"predictors": ("oracle",)}, "observation-only"),
        ({"predictors": ("nope",)}, "Unknown predictor"),
        ({"predictors": ()}, "at least one"),
        ({"threshold": 1.5}, "threshold"),
        ({"n_samples": 0}, "n_samples"),
    ):
        with pytest.raises(ValueError, match=match):
            VerdictSettings(**bad)  # type: ignore[arg-type]


def test_the_script_writes_its_table_csv_and_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--predictors", "wls", "--output", str(tmp_path), "--no-progress"]
    assert verdicts.main(argv) == 0
    out = capsys.readouterr().out
    assert "| predictor | reports | feasible (tasks) | false-negative rate |" in out
    assert "episodes played by `round_robin`" in out and "seed 100" in out
    assert "| false-negative / false-positive rate | 1 report | 2 reports |" in out
    with (tmp_path / "verdicts.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["reports"] for row in rows] == ["1", "2", "3-4", "5-8", "9+"] * 2
    assert [row["predictor"] for row in rows] == ["wls"] * 5 + ["laira"] * 5
    assert (
        "Produced by `python -m mara_env.benchmarks.prediction.verdicts --quick"
        in (tmp_path / "verdicts.md").read_text()
    )
    assert (tmp_path / "verdicts.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert verdicts.main([*argv, "--threshold", "2"]) == 2
    assert "threshold" in capsys.readouterr().err


def test_the_laira_judge_is_the_shipped_agents_own_verdict() -> None:
    """Replaying LaiRA's look-ahead on a history gives the probability the agent computed."""
    config = mara_env.get_config("training", arrival_horizon=10)
    env = mara_env.raw_env(config)
    env.reset(seed=5)
    agent = make_agent("laira")
    start_episode(agent, env, 5)
    checked = slices = 0
    for name, node in mara_env.node_turns(env):
        env.step(agent.act(env.observe(name), node))
        started = len(agent.slice_lengths) > slices
        slices = len(agent.slice_lengths)
        if node == 0 and started and agent.histories.view is not None:
            for slot in np.flatnonzero(np.isfinite(agent.last_margin)).tolist():
                history = agent.histories.history(slot)
                assert history is not None
                alpha = np.array([config.alpha_for(history.family)])
                time_left = float(agent.histories.view.time_left[slot])
                history = dataclasses.replace(history, time_left=time_left)
                expected = agent.last_probability[slot]
                got = laira_success(agent.settings, [history], alpha, config.n_nodes)[0]
                checked += 1
                assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert checked > 0
