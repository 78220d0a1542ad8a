"""How tasks arrive: a Poisson stream, or a real cluster's submissions replayed.

``ClusterConfig.arrivals`` names the process that draws how many tasks arrive in each epoch of
the arrival horizon; either way the expected number per epoch is the workload's arrival rate
(``load * n_nodes / mean demand``), so loads mean the same thing under every process:

* ``"poisson"`` (the default): ``Poisson(rate)`` tasks in every epoch, independently;
* ``"philly"``: the job submissions of Microsoft's Philly cluster (2017), as shipped in
  ``mara_env/data/arrivals_philly.npz`` (:data:`SHIPPED`): bursty and diurnal;
* the path of your own ``.csv`` of submission times (a ``timestamp`` column: seconds, or
  dates such as ``2017-10-09 07:01:55``), or of an ``.npz`` written by :func:`save_arrivals`.

**Replay.** A trace is a series of submission counts per :attr:`ArrivalTrace.bin_seconds`
(15 minutes by default), one bin to an epoch. Each episode replays a window of the trace that
starts at a bin drawn from the episode's generator: the count of epoch ``t`` is
``Poisson(rate * c[start + t] / mean(c))``, so the window's bursts and quiet spells (and, over a
day's worth of epochs, the hours of the day) come through, scaled to the requested load. An
episode whose window holds a burst gets far more tasks than the mean, and one in a quiet spell
fewer: compare schedulers on the same seeds.

Example:
    >>> import numpy as np
    >>> trace = ArrivalTrace(np.array([0, 0, 10, 30, 0, 0, 5, 3]), source="example")
    >>> counts = arrival_counts(trace, rate=2.0, horizon=4, rng=np.random.default_rng(0))
    >>> counts.shape, counts.dtype
    ((4,), dtype('int64'))
    >>> poisson = arrival_counts("poisson", 2.0, 4, np.random.default_rng(0))
    >>> bool((poisson == np.random.default_rng(0).poisson(2.0, 4)).all())
    True
"""

from __future__ import annotations

import csv
import datetime
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mara_env.atomic_files import replace_atomically
from mara_env.curves.file_cache import read_unchanged
from mara_env.curves.text_files import utf8_text
from mara_env.errors import ConfigError

#: The shipped arrival traces by name (their data cards beside them: ``arrivals_philly.md``).
SHIPPED = {"philly": Path(__file__).resolve().parents[1] / "data" / "arrivals_philly.npz"}
#: The processes named without a file.
NAMED = ("poisson", *SHIPPED)
#: Seconds of submissions that make one epoch's bin, unless a trace says otherwise.
BIN_SECONDS = 900
#: The most bins a submission-times file may span (a guard against timestamps in other units).
MAX_BINS = 10_000_000


@dataclass(frozen=True, eq=False)
class ArrivalTrace:
    """Submission counts per bin of a real cluster (module docstring).

    Attributes:
        counts: Submissions in each consecutive bin (>= 0, not all 0).
        bin_seconds: The length of a bin, in seconds.
        source: Where the submissions come from (shown in errors and provenance).

    Raises:
        ConfigError: For counts that are not a 1-d array of whole numbers >= 0 with a positive
            sum, or a bin length <= 0.
    """

    counts: np.ndarray
    bin_seconds: float = BIN_SECONDS
    source: str = ""

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts)
        if (
            counts.ndim != 1
            or counts.size == 0
            or counts.dtype.kind not in "iu"
            or counts.min() < 0
            or counts.sum() == 0
        ):
            raise ConfigError(
                f"ArrivalTrace {self.source!r}: counts must be a 1-d array of whole numbers "
                ">= 0 with at least one submission."
            )
        if not (math.isfinite(self.bin_seconds) and self.bin_seconds > 0):
            raise ConfigError(
                f"ArrivalTrace {self.source!r}: bin_seconds must be > 0, got {self.bin_seconds}."
            )
        object.__setattr__(self, "counts", counts.astype(np.int64))


def arrival_counts(
    process: str | ArrivalTrace, rate: float, horizon: int, rng: np.random.Generator
) -> np.ndarray:
    """Tasks arriving in each of ``horizon`` epochs under ``process``, ``rate`` per epoch on
    average, drawn from ``rng``.

    Raises:
        ConfigError: If ``process`` names no process or file, or the file cannot be used.
    """
    if process == "poisson":
        return rng.poisson(rate, size=horizon)
    trace = process if isinstance(process, ArrivalTrace) else load_arrivals(process)
    counts = trace.counts
    if len(counts) < horizon:  # a short trace repeats
        counts = np.tile(counts, -(-horizon // len(counts)))
    start = int(rng.integers(len(counts) - horizon + 1))
    window = counts[start : start + horizon]
    return rng.poisson(rate * window / trace.counts.mean())


def check_arrivals(process: str) -> None:
    """Raise :class:`ConfigError` unless ``process`` is a named process or a ``.csv`` /
    ``.npz`` path (whether the file exists is checked when it is first used)."""
    if not isinstance(process, str) or not (
        process in NAMED or Path(process).suffix.lower() in (".csv", ".npz")
    ):
        raise ConfigError(
            f"ClusterConfig.arrivals must be one of {NAMED} or the path of a .csv of "
            f"submission times (a timestamp column) or an .npz from save_arrivals, got "
            f"{process!r}."
        )


def load_arrivals(process: str) -> ArrivalTrace:
    """The trace ``process`` names (a shipped name or a file), read once per process.

    Raises:
        ConfigError: For an unknown name, a missing file, or a file without usable timestamps.
    """
    check_arrivals(process)
    path = SHIPPED.get(process, Path(process))
    if not path.is_file():
        raise ConfigError(f"ClusterConfig.arrivals: no such file {path}.")
    return read_unchanged(path, _load)


def _load(path: Path) -> ArrivalTrace:
    if path.suffix.lower() != ".npz":
        return arrivals_from_csv(path)
    advice = "write one with save_arrivals, or give a submission-times CSV"
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as error:  # zip, header and compression errors: not a readable .npz
        raise ConfigError(
            f"{path}: not a readable .npz arrival trace ({error}); {advice}."
        ) from None
    if not hasattr(data, "files"):  # one array (.npy), not an archive of named arrays
        raise ConfigError(f"{path}: one array, not an arrival trace; {advice}.")
    with data:
        missing = [name for name in ("counts", "bin_seconds", "source") if name not in data.files]
        if missing:
            raise ConfigError(f"{path}: not an arrival trace (it lacks {missing}); {advice}.")
        try:
            counts, source = data["counts"], str(data["source"])
            bin_seconds = float(data["bin_seconds"])
        except Exception as error:  # a member cut short or damaged
            raise ConfigError(
                f"{path}: a damaged .npz arrival trace ({error}); {advice}."
            ) from None
    return ArrivalTrace(counts, bin_seconds, source)


def arrivals_from_csv(path: Path, bin_seconds: float = BIN_SECONDS) -> ArrivalTrace:
    """The submission counts per ``bin_seconds`` of a CSV's ``timestamp`` column (seconds, or
    dates ``YYYY-MM-DD HH:MM:SS``), from its first submission's bin to its last.

    Raises:
        ConfigError: Without a ``timestamp`` column, with a value that is neither (or negative,
            or not finite), with no rows, or with a span of more than :data:`MAX_BINS` bins.
    """
    with utf8_text(path, "a submission-times CSV", ConfigError) as handle:
        reader = csv.DictReader(handle)
        if "timestamp" not in (reader.fieldnames or []):
            raise ConfigError(
                f"{path}: a file of submission times needs a 'timestamp' column (seconds, or "
                f"dates such as 2017-10-09 07:01:55); its columns: {reader.fieldnames}."
            )
        times = [_seconds(row["timestamp"], path, line) for line, row in enumerate(reader, 2)]
    if not times:
        raise ConfigError(f"{path}: no submissions.")
    start = min(times)
    if (max(times) - start) / bin_seconds >= MAX_BINS:
        raise ConfigError(
            f"{path}: the submissions span {max(times) - start:.3g} s, more than {MAX_BINS:,} "
            f"bins of {bin_seconds:g} s; are some timestamps in other units (milliseconds)?"
        )
    bins = np.floor((np.array(times) - start) / bin_seconds).astype(np.int64)
    return ArrivalTrace(np.bincount(bins), bin_seconds, str(path))


def _seconds(value: str | None, path: Path, line: int) -> float:
    if value is None:
        raise ConfigError(f"{path}, line {line}: the row has no timestamp (a file cut short?).")
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        if not (math.isfinite(seconds) and seconds >= 0):
            raise ConfigError(
                f"{path}, line {line}: timestamp {value!r} is not a time; seconds are finite "
                "and >= 0 (since the Unix epoch, or since the trace's start)."
            )
        return seconds
    try:
        moment = datetime.datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(
            f"{path}, line {line}: timestamp {value!r} is neither seconds nor a date "
            "(YYYY-MM-DD HH:MM:SS)."
        ) from None
    if moment.tzinfo is None:  # read as UTC on every machine, whatever its time zone
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def save_arrivals(path: Path, trace: ArrivalTrace) -> None:
    """Write ``trace`` as an ``.npz`` that ``ClusterConfig(arrivals=path)`` replays."""
    arrays = {
        "counts": trace.counts,
        "bin_seconds": np.array(trace.bin_seconds),
        "source": np.array(trace.source),
    }
    replace_atomically(Path(path), lambda handle: np.savez_compressed(handle, **arrays))  # type: ignore[arg-type]
