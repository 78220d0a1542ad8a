"""The readers of the files a user hands the suite, and hostile variants of a valid file: what
the fuzz tests (``tests/test_fuzz_readers.py``) and the longer fuzz run
(:mod:`mara_env.benchmarks.reliability.fuzz`) feed them.

The contract every reader keeps: whatever the bytes, it returns or raises one of the project's
own errors (naming the file, what is wrong and what to do), and reading writes nothing.
:func:`feed` checks one file against it.

Example:
    >>> import random, tempfile
    >>> from pathlib import Path
    >>> reader = READERS["tuned settings"]
    >>> data = hostile(reader.valid(), "cut", random.Random(0))
    >>> feed(reader, data, Path(tempfile.mkdtemp()) / "input0.json") is None  # kept the contract
    True
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from mara_env.agents.mara.agent import Mara, default_checkpoint
from mara_env.agents.reach import load_reach_model, reach_model_path
from mara_env.agents.tuned import TunedSettingsError, tuned_settings, tuned_settings_path
from mara_env.benchmarks.common.store import ResultsFileError
from mara_env.benchmarks.leaderboard.cli import main as leaderboard
from mara_env.benchmarks.leaderboard.journal import JOURNAL, read_journal
from mara_env.curves.arrivals import SHIPPED as SHIPPED_ARRIVALS
from mara_env.curves.arrivals import load_arrivals
from mara_env.curves.curve_tables import CurveTableError, read_curve_table
from mara_env.curves.sources import SHIPPED_TRACES
from mara_env.curves.traces import TraceFileSource
from mara_env.errors import CheckpointError, ConfigError, TraceError


@dataclass(frozen=True)
class Reader:
    """A reader under test.

    Attributes:
        suffix: Its file's suffix.
        valid: Makes a valid file's bytes.
        read: Reads a path.
        errors: The errors it may raise.
        beside: Files it needs beside the input (suffix: bytes), e.g. a checkpoint's card.
    """

    suffix: str
    valid: Callable[[], bytes]
    read: Callable[[Path], Any]
    errors: tuple[type[Exception], ...]
    beside: Callable[[], Mapping[str, bytes]] = field(default=lambda: {})


def _curve_table() -> bytes:
    rows = ["run,step,value,family,split,work,kind"]
    for run in range(3):
        split = "test" if run == 2 else "train"
        rows += [f"r{run},{s},{2.0 / (1 + s + run)},vision,{split},{s + 1},loss" for s in range(6)]
    return ("\n".join(rows) + "\n").encode()


def _submission_times() -> bytes:
    times = ["2017-10-09 07:01:55", "2017-10-09 07:31:00", "2017-10-09 09:02:10", "1507540000"]
    return ("timestamp\n" + "\n".join(times) + "\n").encode()


@cache
def _journal() -> bytes:
    """A small leaderboard's journal, played here (two agents, two episodes each)."""
    with tempfile.TemporaryDirectory() as folder:
        argv = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "2"]
        argv += ["--agents", "edf", "fcfs", "--no-progress", "--no-plots", "--workers", "1"]
        said = io.StringIO()  # its table is not the fuzz run's report
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            leaderboard([*argv, "--output", folder])
        return (Path(folder) / JOURNAL).read_bytes()


def _card() -> Mapping[str, bytes]:
    return {".json": default_checkpoint().with_suffix(".json").read_bytes()}


def _weights() -> Mapping[str, bytes]:
    return {".pt": default_checkpoint().read_bytes()}


#: Every reader of a file a user hands the suite, by name.
READERS: Mapping[str, Reader] = {
    "curve table": Reader(".csv", _curve_table, read_curve_table, (CurveTableError,)),
    "trace file": Reader(
        ".npz",
        SHIPPED_TRACES.read_bytes,
        lambda path: TraceFileSource(path).pool("vision", "train"),
        (TraceError,),
    ),
    "submission times (CSV)": Reader(
        ".csv", _submission_times, lambda path: load_arrivals(str(path)), (ConfigError,)
    ),
    "arrival trace (.npz)": Reader(
        ".npz",
        SHIPPED_ARRIVALS["philly"].read_bytes,
        lambda path: load_arrivals(str(path)),
        (ConfigError,),
    ),
    "tuned settings": Reader(
        ".json",
        tuned_settings_path().read_bytes,
        lambda path: tuned_settings("edf", path),
        (TunedSettingsError,),
    ),
    "MARA checkpoint card": Reader(
        ".json",
        lambda: _card()[".json"],
        lambda path: Mara.load(path.with_suffix(".pt")),
        (CheckpointError,),
        beside=_weights,
    ),
    "MARA checkpoint weights": Reader(
        ".pt", lambda: _weights()[".pt"], Mara.load, (CheckpointError,), beside=_card
    ),
    "results folder": Reader(".jsonl", _journal, read_journal, (ResultsFileError,)),
    "reach model": Reader(
        ".json", reach_model_path().read_bytes, load_reach_model, (CheckpointError,)
    ),
}

#: The hostile variants :func:`hostile` makes.
KINDS = ("random", "cut", "flip", "utf16", "bom", "latin1", "numbers", "empty")

#: Numbers that break a careless reader: huge, non-finite, negative, not numbers at all.
ODD_NUMBERS = ("1e400", "-1e400", "nan", "inf", "-0", "99999999999999999999999", "-7", "1e-400")


def hostile(valid: bytes, kind: str, rng: random.Random) -> bytes:
    """A hostile variant of ``valid`` (one of :data:`KINDS`), drawn from ``rng``: random bytes,
    the file cut short, bytes flipped, re-encoded (UTF-16, a byte-order mark, Latin-1 accents),
    its numbers replaced by odd ones (:data:`ODD_NUMBERS`), or empty."""
    if kind == "random":
        return rng.randbytes(rng.randint(1, 400))
    if kind == "cut":
        return valid[: rng.randint(1, len(valid) - 1)]
    if kind == "flip":
        flipped = bytearray(valid)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped)
    text = valid.decode("latin-1")
    if kind == "utf16":
        return text.encode("utf-16")
    if kind == "bom":
        return b"\xef\xbb\xbf" + valid
    if kind == "latin1":
        return text.replace("a", "\xe4", 3).encode("latin-1")
    if kind == "numbers":
        numbers = list(re.finditer(r"-?\d+(\.\d+)?(e-?\d+)?", text))
        for match in sorted(rng.sample(numbers, min(len(numbers), 3)), key=lambda m: -m.start()):
            text = text[: match.start()] + rng.choice(ODD_NUMBERS) + text[match.end() :]
        return text.encode("latin-1")
    if kind == "empty":
        return b""
    raise ValueError(f"hostile: kind must be one of {KINDS}, got {kind!r}.")


def feed(reader: Reader, data: bytes, path: Path) -> str | None:
    """Write ``data`` at ``path`` (a new file: no reader's cache hides it; the files ``reader``
    needs beside it too), read it, and return ``None`` if the reader kept the contract, else
    what broke it: an error of another type escaped, or the folder changed."""
    path.write_bytes(data)
    for suffix, companion in reader.beside().items():
        path.with_suffix(suffix).write_bytes(companion)
    before = sorted(path.parent.iterdir())
    try:
        reader.read(path)
    except reader.errors:
        pass
    except Exception as error:  # what the contract forbids: report it, do not stop the run
        return f"{type(error).__name__}: {str(error)[:200]}"
    if sorted(path.parent.iterdir()) != before or path.read_bytes() != data:
        return "reading wrote or changed a file"
    return None
