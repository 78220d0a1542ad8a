"""The environment card (``docs/environment.md``) is what the code gives, and says so when the
code's own description stops adding up."""

from __future__ import annotations

import pytest

import mara_env.sim.observation as observation
from mara_env.benchmarks.common.provenance import SOURCE_ROOT
from mara_env.benchmarks.reference import env_card


def test_the_committed_card_is_what_the_code_gives() -> None:
    committed = (SOURCE_ROOT / env_card.CARD).read_text()
    assert committed == env_card.render(), (
        "docs/environment.md differs from the code: run `python -m mara_env.benchmarks.reference.env_card`."
    )
    assert env_card.main(["--check"]) == 0


def test_every_observation_column_is_on_the_card() -> None:
    card = env_card.render()
    for section, count in zip(
        env_card.COLUMN_SECTIONS,
        (observation.GLOBAL_FEATURES, observation.SLOT_FEATURES),
        strict=True,
    ):
        rows = env_card.observation_columns(section)
        assert env_card._width(rows) == count
        assert all(f"| {index} |" in card for index, _, _ in rows)
    assert "| `switch_cost` | `0.1` |" in card and "| `tiny` |" in card


def test_a_column_list_that_no_longer_adds_up_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    shorter = (observation.__doc__ or "").replace("    19 ``budget``", "    xx ``budget``")
    monkeypatch.setattr(observation, "__doc__", shorter)
    with pytest.raises(env_card.CardError, match=r"lists 19 columns .* the code has 20"):
        env_card.render()
    monkeypatch.setattr(observation, "__doc__", "no sections")
    with pytest.raises(env_card.CardError, match="no section"):
        env_card.render()
