"""The leak audit (:mod:`mara_env.benchmarks.prediction.leak_audit`) and the rank statistics it uses."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mara_env.benchmarks.common import probes
from mara_env.benchmarks.common.statistics import auc, average_ranks, spearman
from mara_env.benchmarks.prediction import audit_statistics, leak_audit
from mara_env.benchmarks.prediction.audit_episodes import (
    WORLD_DESCRIPTIONS,
    AuditSettings,
    play_episode,
)
from mara_env.benchmarks.prediction.audit_worlds import WORLDS
from mara_env.worlds.config import WORLD_VERSIONS

scipy_stats = pytest.importorskip("scipy.stats")


def test_rank_statistics_agree_with_scipy() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, 200).astype(float)  # many ties
    y = x + rng.normal(0, 2, 200)
    assert np.allclose(average_ranks(x), scipy_stats.rankdata(x))
    assert spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic, abs=1e-12)
    label = y > 2
    u = scipy_stats.mannwhitneyu(x[label], x[~label]).statistic
    assert auc(x, label) == pytest.approx(u / (label.sum() * (~label).sum()), abs=1e-12)
    assert math.isnan(spearman(np.ones(5), np.arange(5.0)))
    assert math.isnan(auc(np.arange(3.0), np.ones(3, dtype=bool)))


def test_unreachable_needs_rank_last() -> None:
    need = np.array([5.0, np.inf, 1.0, np.inf])
    assert average_ranks(need).tolist() == [2.0, 3.5, 1.0, 3.5]
    assert spearman(np.array([2.0, 9.0, 1.0, 8.0]), need) > 0.9


def test_the_probe_separates_what_its_inputs_separate() -> None:
    rng = np.random.default_rng(1)
    inputs = rng.normal(size=(400, 3))
    label = inputs[:, 0] - 0.5 * inputs[:, 2] > 0
    weights = probes.logistic_probe(inputs[:300], label[:300])
    assert auc(probes.probe_scores(weights, inputs[300:]), label[300:]) > 0.97
    noise = probes.logistic_probe(inputs[:300, 1:2], label[:300])
    assert abs(auc(probes.probe_scores(noise, inputs[300:, 1:2]), label[300:]) - 0.5) < 0.15


def test_within_family_spearman_ignores_the_families_own_levels() -> None:
    records: list[dict[str, Any]] = [
        {"family": family, "x": float(i), "need": float(i) + offset}
        for family, offset in (("rl", 0.0), ("vision", 100.0))
        for i in range(5)
    ]
    assert audit_statistics.within_family_spearman(records, "x") == pytest.approx(1.0)
    flipped = [{**r, "x": -r["x"]} if r["family"] == "rl" else r for r in records]
    assert audit_statistics.within_family_spearman(flipped, "x") == pytest.approx(0.0)


def test_bad_settings_are_refused_with_what_to_do() -> None:
    with pytest.raises(ValueError, match="evaluation seeds"):
        AuditSettings(eval_seeds=(5,))
    with pytest.raises(ValueError, match="not training seeds"):
        AuditSettings(train_seeds=(1000,))
    with pytest.raises(ValueError, match="Unknown predictor"):
        AuditSettings(predictors=("nope",))
    with pytest.raises(ValueError, match="worlds"):
        AuditSettings(worlds=("v9",))


def test_the_quick_audit_writes_its_page(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert leak_audit.main(["--quick", "--no-progress", "--output", str(tmp_path)]) == 0
    page = (tmp_path / "README.md").read_text()
    assert "| within-family Spearman with need | deadline_window |" in page
    assert "| probe AUC for feasible | + oracle (true need) |" in page
    rows = (tmp_path / "audit.csv").read_text().splitlines()
    assert rows[0] == "world,moment,statistic,column,value,low,high" and len(rows) > 15
    assert "| AUC gain over the observation alone (paired) | + wls |" in page
    assert "Wrote" in capsys.readouterr().out


@pytest.mark.parametrize("world", ["v1", "v2", "v3"])
def test_the_oracle_reads_the_true_need_as_a_perfect_predictor(world: str) -> None:
    settings = AuditSettings(
        train_seeds=(100,), eval_seeds=(1000,), predictors=(), arrival_horizon=12
    )
    sights, judged = play_episode(settings, "evaluation", 1000, {}, world)
    assert sights and judged
    for record in judged:
        assert record["oracle_need"] == pytest.approx(record["need"])
        assert record["oracle_success"] in (0.0, 1.0)
        if record["unreachable"]:
            assert record["oracle_success"] == 0.0 and not record["feasible"]
        if record["feasible"]:  # the truth, exact stepping: the steady-rate oracle agrees
            assert record["oracle_success"] == 1.0


def test_every_audited_world_is_described_on_the_page() -> None:
    registered = {f"v{v}" for v in WORLD_VERSIONS}
    assert set(WORLD_DESCRIPTIONS) == set(WORLDS) == registered | {"v3-smoothed"}
    assert WORLDS["v3"].config("evaluation").effective_hopeless_curve_share < 1.0
    assert "moving average" in WORLD_DESCRIPTIONS["v3-smoothed"]
