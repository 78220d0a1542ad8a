"""When does loss prediction pay? The study's episodes, its store and its page."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.prediction import prediction_pays
from mara_env.benchmarks.prediction.prediction_pays import VARIANTS, measure, play, store_of
from mara_env.benchmarks.prediction.prediction_pays_report import BAND, RUNGS, paired, write_page


def test_a_swapped_mara_plays_the_same_episode_with_other_features() -> None:
    cell = ("v3", "mara", "rl", 1.4, 1000)
    shipped = play(cell, arrival_horizon=12)
    none = play(("v3", "mara + no predictions", "rl", 1.4, 1000), arrival_horizon=12)
    assert shipped["arrived"] == none["arrived"] > 0
    assert play(cell, arrival_horizon=12) == shipped  # same seed, same episode


def test_finished_episodes_are_kept_and_not_played_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cells = [("v3-smoothed", "edf", "rl", 1.4, 1000), ("v3-smoothed", "edf", "rl", 1.4, 1001)]
    code, other = Manifest({"code": "a"}), Manifest({"code": "b"})
    first = measure(cells, store_of(tmp_path), code, arrival_horizon=10, progress=False)

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("played again")

    monkeypatch.setattr(prediction_pays, "play", refuse)
    again = measure(cells, store_of(tmp_path), code, arrival_horizon=10, progress=False)
    assert again == first
    with pytest.raises(AssertionError, match="played again"):  # other code: played anew
        measure(cells, store_of(tmp_path), other, arrival_horizon=10, progress=False)


def _rows(worlds: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {
            "world": world,
            "variant": variant,
            "workload": "rl",
            "load": 1.4,
            "seed": seed,
            "completion_rate": 0.4 + 0.05 * index + 0.01 * seed,
        }
        for world in worlds
        for index, variant in enumerate(VARIANTS)
        for seed in range(4)
    ]


def test_differences_are_paired_and_unmatched_episodes_are_refused() -> None:
    rows = _rows(("v3",))
    gap = VARIANTS.index("mara") - VARIANTS.index("edf")
    assert paired(rows, "v3", "mara", "edf").mean == pytest.approx(0.05 * gap)
    with pytest.raises(ValueError, match="did not play the same episodes"):
        paired(rows[:-1], "v3", "clairvoyant", "edf")


def test_the_page_sets_the_ladder_beside_the_differences(tmp_path: Path) -> None:
    ladder = tmp_path / "ladder.csv"
    with ladder.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["world", "band", "rung", "statistic", "value", "low", "high"])
        writer.writerow(["v3", BAND, "observation", "AUC", 0.7, 0.65, 0.75])
        for rung, _ in RUNGS:
            writer.writerow(["v3", BAND, rung, "AUC gain", 0.01, 0.0, 0.02])
    text = write_page(tmp_path, _rows(("v3", "v3-smoothed")), ladder, [1000, 1003], [1.4], "")
    assert "| `v3` | 0.700 [0.650, 0.750] | +0.010 [+0.000, +0.020]" in text
    assert "| `v3-smoothed` | not in the ladder's file" in text
    assert "`v3-smoothed` has no models of its own" in text
    assert (tmp_path / "README.md").read_text() == text
