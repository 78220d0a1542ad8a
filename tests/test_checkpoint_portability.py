"""Every shipped checkpoint loads on a machine whose floats differ in the last bits.

A card's float settings (the prediction grid, log scales, temperatures) were computed on the
machine that trained the model; another CPU or NumPy version computes this code's own values a
few ulps apart (``np.geomspace`` among them). Here every float of every shipped card is moved a
few ulps and the checkpoint must still load; a real change of a setting is still refused.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mara_env.agents.mara.agent import Mara
from mara_env.predictors.checkpoint import CONFIG_RELATIVE_TOLERANCE, CheckpointError, card_path
from mara_env.predictors.flow_matching import FlowMatching
from mara_env.predictors.normalizing_flow import SplineFlow

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(
    [
        *(ROOT / "predictors" / "checkpoints").rglob("*.pt"),
        *(ROOT / "agents" / "worlds").rglob("*.pt"),
    ]
)

FLOW_MATCHING = ROOT / "predictors" / "checkpoints" / "flow_matching.pt"


def loader(path: Path) -> Callable[[Path], Any]:
    """How the package loads the checkpoint ``path``."""
    if ROOT / "agents" / "worlds" in path.parents:
        return Mara.load
    return SplineFlow.load if path.stem == "spline_flow" else FlowMatching.load


def shifted(value: Any, ulps: int) -> Any:
    """``value`` with every float moved ``ulps`` units in the last place (ints kept)."""
    if isinstance(value, float):
        for _ in range(abs(ulps)):
            value = float(np.nextafter(value, np.inf if ulps > 0 else -np.inf))
        return value
    if isinstance(value, list):
        return [shifted(item, ulps) for item in value]
    if isinstance(value, dict):
        return {key: shifted(item, ulps) for key, item in value.items()}
    return value


def copy_with_card(path: Path, directory: Path, edit: Callable[[dict], dict]) -> Path:
    """A copy of checkpoint ``path`` in ``directory`` whose card's config is ``edit``-ed."""
    copy = directory / path.name
    shutil.copyfile(path, copy)
    card = json.loads(card_path(path).read_text())
    card["config"] = edit(card["config"])
    card_path(copy).write_text(json.dumps(card))
    return copy


def test_every_shipped_checkpoint_is_found() -> None:
    assert {path.stem for path in SHIPPED} >= {
        "flow_matching",
        "flow_matching_without_target",
        "spline_flow",
        "mara",
        "mara_imitation",
    }


@pytest.mark.parametrize("ulps", [-4, 4])
@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.stem)
def test_a_card_whose_floats_are_a_few_ulps_off_loads(
    path: Path, ulps: int, tmp_path: Path
) -> None:
    card = json.loads(card_path(path).read_text())
    assert shifted(card["config"], ulps) != card["config"]  # some float really moved
    loader(path)(copy_with_card(path, tmp_path, lambda config: shifted(config, ulps)))


def test_a_grid_changed_beyond_the_tolerance_is_refused_in_one_readable_line(
    tmp_path: Path,
) -> None:
    path = FLOW_MATCHING

    def moved(config: dict) -> dict:
        grid = list(config["future_epochs"])
        grid[3] *= 1.0 + 1000 * CONFIG_RELATIVE_TOLERANCE
        return {**config, "future_epochs": grid}

    with pytest.raises(CheckpointError) as error:
        FlowMatching.load(copy_with_card(path, tmp_path, moved))
    message = str(error.value)
    assert "its future_epochs: entry 3 is" in message
    assert "relative difference 1e-06" in message
    assert len(message) < 400  # the difference, not 72 floats


def test_a_grid_of_another_length_is_refused(tmp_path: Path) -> None:
    def longer(config: dict) -> dict:
        return {**config, "future_epochs": [*config["future_epochs"], 200.0]}

    with pytest.raises(CheckpointError, match="its future_epochs: 37 entries, expected 36"):
        FlowMatching.load(copy_with_card(FLOW_MATCHING, tmp_path, longer))
