"""Hostile bytes into the readers of the files a user hands the suite: only the project's own
errors come out, and reading writes nothing.

Each reader gets random bytes, a valid file cut short, a valid file with bytes flipped, the
valid file in other encodings (UTF-16, a byte-order mark, Latin-1 accents) and an empty file,
from Hypothesis with a fixed seed and a bounded number of examples, so the suite stays fast.
Every example is a new file, so no reader's cache of an unchanged file hides it.

Readers covered: a curve table (``read_curve_table``), a trace file
(:class:`~mara_env.curves.traces.TraceFileSource`), submission times as a CSV and as an ``.npz``
(``load_arrivals``), tuned settings (``tuned_settings``), a MARA checkpoint's weights and its
card (``Mara.load``) and a leaderboard's results folder (``read_journal``).
"""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mara_env.agents.mara.agent import Mara
from mara_env.agents.tuned import TunedSettingsError, tuned_settings
from mara_env.benchmarks.common.store import ResultsFileError
from mara_env.benchmarks.leaderboard.journal import read_journal
from mara_env.curves.arrivals import load_arrivals
from mara_env.curves.curve_tables import CurveTableError, read_curve_table
from mara_env.curves.traces import TraceFileSource
from mara_env.errors import ConfigError, TraceError
from mara_env.predictors.checkpoint import CheckpointError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SHIPPED_MARA = ROOT / "agents" / "worlds" / "v3" / "mara.pt"


@dataclass(frozen=True)
class Reader:
    """A reader under test: its file's suffix, a valid file's bytes, how to read a path, the
    errors it may raise, and files it needs beside the input (suffix: bytes)."""

    suffix: str
    valid: bytes
    read: Callable[[Path], Any]
    errors: tuple[type[Exception], ...]
    beside: dict[str, bytes] = field(default_factory=dict)


def _curve_table() -> bytes:
    rows = ["run,step,value,family,split,work,kind"]
    for run in range(3):
        split = "test" if run == 2 else "train"
        rows += [f"r{run},{s},{2.0 / (1 + s + run)},vision,{split},{s + 1},loss" for s in range(6)]
    return ("\n".join(rows) + "\n").encode()


def _submission_times() -> bytes:
    times = ["2017-10-09 07:01:55", "2017-10-09 07:31:00", "2017-10-09 09:02:10"]
    return ("timestamp\n" + "\n".join([*times, "1507540000", "1507550000.5"]) + "\n").encode()


READERS: dict[str, Reader] = {
    "curve table": Reader(".csv", _curve_table(), read_curve_table, (CurveTableError,)),
    "trace file": Reader(
        ".npz",
        (ROOT / "mara_env" / "data" / "traces.npz").read_bytes(),
        lambda path: TraceFileSource(path).pool("vision", "train"),
        (TraceError,),
    ),
    "submission times (CSV)": Reader(
        ".csv", _submission_times(), lambda path: load_arrivals(str(path)), (ConfigError,)
    ),
    "arrival trace (.npz)": Reader(
        ".npz",
        (ROOT / "mara_env" / "data" / "arrivals_philly.npz").read_bytes(),
        lambda path: load_arrivals(str(path)),
        (ConfigError,),
    ),
    "tuned settings": Reader(
        ".json",
        (ROOT / "agents" / "worlds" / "v3" / "tuned_settings.json").read_bytes(),
        lambda path: tuned_settings("edf", path),
        (TunedSettingsError,),
    ),
    "MARA checkpoint card": Reader(
        ".json",
        SHIPPED_MARA.with_suffix(".json").read_bytes(),
        lambda path: Mara.load(path.with_suffix(".pt")),
        (CheckpointError,),
        beside={".pt": SHIPPED_MARA.read_bytes()},
    ),
    "MARA checkpoint weights": Reader(
        ".pt",
        SHIPPED_MARA.read_bytes(),
        Mara.load,
        (CheckpointError,),
        beside={".json": SHIPPED_MARA.with_suffix(".json").read_bytes()},
    ),
    "results folder": Reader(
        ".jsonl",
        (RESULTS / "v3" / "leaderboard_quick" / "episodes.jsonl").read_bytes()[:20_000],
        read_journal,
        (ResultsFileError,),
    ),
}


@st.composite
def hostile(draw: st.DrawFn, valid: bytes) -> bytes:
    """Random bytes, or the valid file cut, flipped, re-encoded or emptied."""
    kind = draw(st.sampled_from(["random", "cut", "flip", "utf16", "bom", "latin1", "empty"]))
    if kind == "random":
        return draw(st.binary(min_size=1, max_size=400))
    if kind == "cut":
        return valid[: draw(st.integers(1, len(valid) - 1))]
    if kind == "flip":
        flipped = bytearray(valid)
        rng = random.Random(draw(st.integers(0, 2**32 - 1)))
        for _ in range(draw(st.integers(1, 8))):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped)
    text = valid.decode("latin-1")
    if kind == "utf16":
        return text.encode("utf-16")
    if kind == "bom":
        return b"\xef\xbb\xbf" + valid
    if kind == "latin1":
        return text.replace("a", "\xe4", 3).encode("latin-1")
    return b""


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_raises_only_the_project_s_errors_and_writes_nothing(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    reader = READERS[name]
    folder = tmp_path_factory.mktemp("fuzz")
    names = itertools.count()

    @seed(20261207)
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=hostile(reader.valid))
    def check(data: bytes) -> None:
        path = folder / f"input{next(names)}{reader.suffix}"
        path.write_bytes(data)
        for suffix, companion in reader.beside.items():
            path.with_suffix(suffix).write_bytes(companion)
        before = sorted(folder.iterdir())
        with contextlib.suppress(*reader.errors):
            reader.read(path)
        assert sorted(folder.iterdir()) == before and path.read_bytes() == data

    check()
