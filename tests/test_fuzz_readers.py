"""Hostile bytes into the readers of the files a user hands the suite: only the project's own
errors come out, and reading writes nothing.

Each reader gets random bytes, a valid file cut short, a valid file with bytes flipped, the
valid file in other encodings (UTF-16, a byte-order mark, Latin-1 accents) and an empty file,
from Hypothesis with a fixed seed and a bounded number of examples, so the suite stays fast.

Readers covered: a trace file (:class:`~mara_env.curves.traces.TraceFileSource`) and a
leaderboard's results folder (``read_journal``). Three readers still let faults through, each in
a module every result is keyed by, so each is fixed with the next replay of the stores and joins
this file then: a curve table cut in the middle of a row (a ``TypeError`` in
``read_curve_table``), submission times of ``1e400`` or a corrupted member of an arrivals
``.npz``, and tuned settings that are not UTF-8.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from mara_env.benchmarks.common.store import ResultsFileError
from mara_env.benchmarks.leaderboard.journal import read_journal
from mara_env.curves.traces import TraceFileSource
from mara_env.errors import TraceError

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _trace_pool(path: Path) -> Any:
    return TraceFileSource(path).pool("vision", "train")


#: name: (suffix, a valid file's bytes, the reader, the errors it may raise)
READERS: dict[str, tuple[str, bytes, Callable[[Path], Any], tuple[type[Exception], ...]]] = {
    "trace file": (
        ".npz",
        (ROOT / "mara_env" / "data" / "traces.npz").read_bytes(),
        _trace_pool,
        (TraceError,),
    ),
    "results folder": (
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
    suffix, valid, read, allowed = READERS[name]
    folder = tmp_path_factory.mktemp("fuzz")

    @seed(20261207)
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=hostile(valid))
    def check(data: bytes) -> None:
        path = folder / f"input{suffix}"
        path.write_bytes(data)
        before = sorted(folder.iterdir())
        with contextlib.suppress(allowed):
            read(path)
        assert sorted(folder.iterdir()) == before and path.read_bytes() == data

    check()
