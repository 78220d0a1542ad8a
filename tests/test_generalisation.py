"""The generalisation track (:mod:`mara_env.benchmarks.leaderboard.generalisation`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mara_env import get_config
from mara_env.benchmarks.leaderboard import generalisation
from mara_env.benchmarks.leaderboard.generalisation import VARIANTS, variant_config


def test_each_variant_changes_only_what_it_names() -> None:
    base = get_config("evaluation")
    assert variant_config("as trained: 8 nodes, 16 slots") == base
    wide = variant_config("16 nodes, 32 slots")
    assert (wide.n_nodes, wide.n_slots) == (16, 32) and wide.replace(n_nodes=8, n_slots=16) == base
    assert variant_config("2x load").load == pytest.approx(2 * base.load)
    assert variant_config("synthetic family").families == ("synthetic",)
    assert variant_config("4 nodes, 8 slots", quick=True).arrival_horizon == 30
    with pytest.raises(KeyError):
        variant_config("a variant nobody defined")


def test_the_quick_track_writes_its_page_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--quick", "--agents", "mara", "edf", "--workers", "1", "--no-progress"]
    argv += ["--output", str(tmp_path)]
    assert generalisation.main(argv) == 0
    page = (tmp_path / "README.md").read_text()
    assert "| variant | mara | edf | mara - edf |" in page
    assert all(f"| {variant} |" in page for variant in VARIANTS)
    lines = (tmp_path / "episodes.csv").read_text().splitlines()
    assert len(lines) == 1 + len(VARIANTS) * 2 * 2
    assert generalisation.main(argv) == 0  # every episode is reused
    assert (tmp_path / "episodes.csv").read_text().splitlines() == lines
    capsys.readouterr()
    with pytest.raises(SystemExit):
        generalisation.main([*argv, "--agents", "edf"])
    assert "including 'mara'" in capsys.readouterr().err
