"""Where the work goes: node-epochs by the kind of task they were spent on."""

from __future__ import annotations

import pytest

from mara_env import get_config
from mara_env.benchmarks.mara.train import main as train_main
from mara_env.benchmarks.prediction.work_split import episode_split, main

SHORT = get_config("training", arrival_horizon=25)


@pytest.mark.parametrize("agent", ["edf", "reach_planner", "random"])
def test_the_parts_add_up(agent: str) -> None:
    split = episode_split(agent, SHORT, 4)
    assert 0 <= split["on_never"] + split["on_expired_could_finish"] <= split["busy"]
    assert split["could_finish_completed"] <= min(split["could_finish"], split["completed"])


def test_the_clairvoyant_spends_nothing_on_tasks_that_could_never_finish() -> None:
    for seed in (0, 1):
        split = episode_split("clairvoyant", SHORT, seed)
        assert split["on_never"] == 0 and split["busy"] > 0


def test_the_command_writes_a_page_with_the_ratio_to_edf(tmp_path, capsys) -> None:
    page = tmp_path / "split.md"
    argv = ["--agents", "edf", "clairvoyant", "--seeds", "1", "--load", "2.8"]
    assert main([*argv, "--output", str(page), "--no-progress"]) == 0
    text = page.read_text(encoding="utf-8")
    assert "| clairvoyant | 0.000 [0.000, 0.000] |" in text
    assert "- `clairvoyant`: 0.00 [0.00, 0.00] times EDF's" in text
    assert text in capsys.readouterr().out


def test_a_mara_checkpoint_plays_under_its_file_stem(tmp_path) -> None:
    """A checkpoint trained on the oracle's features (privileged: bound every episode) plays
    as an agent named by its file's stem."""
    weights = tmp_path / "oracle_fed.pt"
    argv = ["--quick", "--predictor", "oracle", "--output", str(weights), "--no-progress"]
    assert train_main(argv) == 0
    split = episode_split(str(weights), SHORT, 4)
    assert split["busy"] > 0
    page = tmp_path / "split.md"
    argv = ["--agents", "edf", str(weights), "--seeds", "1", "--output", str(page)]
    assert main([*argv, "--no-progress"]) == 0
    assert "- `oracle_fed`: " in page.read_text(encoding="utf-8")
