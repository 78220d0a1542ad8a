"""Hostile bytes into the readers of the files a user hands the suite: only the project's own
errors come out, and reading writes nothing.

Each reader of :data:`~mara_env.benchmarks.reliability.readers.READERS` (curve tables, trace
files, submission times as CSV and ``.npz``, tuned settings, MARA checkpoints' weights and cards,
a leaderboard's results folder) gets random bytes, a valid file cut short, with bytes flipped,
re-encoded (UTF-16, a byte-order mark, Latin-1 accents), with odd numbers (huge, non-finite,
negative) or empty, from Hypothesis with a fixed seed and a bounded number of examples, so the
suite stays fast; ``python -m mara_env.benchmarks.reliability.fuzz`` is the longer run. Every
example is a new file, so no reader's cache of an unchanged file hides it.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mara_env.benchmarks.reliability.readers import KINDS, READERS, feed, hostile

#: Examples per reader (the longer run takes more).
EXAMPLES = 25


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_raises_only_the_project_s_errors_and_writes_nothing(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    reader = READERS[name]
    valid = reader.valid()
    folder = tmp_path_factory.mktemp("fuzz")
    names = itertools.count()

    @seed(20261207)
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(kind=st.sampled_from(KINDS), draw=st.integers(0, 2**32 - 1))
    def check(kind: str, draw: int) -> None:
        data = hostile(valid, kind, random.Random(draw))
        path = folder / f"input{next(names)}{reader.suffix}"
        assert feed(reader, data, path) is None

    check()


def test_the_hostile_variants_are_what_they_say(tmp_path: Path) -> None:
    valid = READERS["curve table"].valid()
    rng = random.Random(0)
    assert hostile(valid, "empty", rng) == b""
    assert valid.startswith(hostile(valid, "cut", rng))
    assert hostile(valid, "utf16", rng).startswith(b"\xff\xfe")
    odd = hostile(valid, "numbers", rng).decode()
    assert odd != valid.decode() and any(n in odd for n in ("1e400", "nan", "inf", "999", "-"))
    with pytest.raises(ValueError, match="kind must be one of"):
        hostile(valid, "shouting", rng)
    broken = READERS["curve table"]
    assert feed(broken, b"", tmp_path / "a.csv") is None  # refused with the project's error


@pytest.mark.parametrize(("setting", "value"), [("temperature", 0), ("width", -7), ("heads", "4")])
def test_a_checkpoint_card_with_settings_no_network_has_is_refused(
    tmp_path: Path, setting: str, value: object
) -> None:
    import json
    import shutil

    from mara_env.agents.mara.agent import Mara, default_checkpoint
    from mara_env.errors import CheckpointError

    weights = tmp_path / "mara.pt"
    shutil.copy(default_checkpoint(), weights)
    card = json.loads(default_checkpoint().with_suffix(".json").read_text())
    card["config"][setting] = value
    weights.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match=f"{weights}: its card does not describe a MARA"):
        Mara.load(weights)
    with pytest.raises(ValueError, match="temperature must be > 0"):  # the caller's own setting
        Mara.load(default_checkpoint(), temperature=0)
