"""Trace sources the package provides: the shipped real curves, synthetic ones, and their union.

Example:
    >>> source = default_trace_source()
    >>> "synthetic" in source.families
    True
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from mara_env.curves.file_cache import read_unchanged
from mara_env.curves.synthetic import SyntheticTraceSource
from mara_env.curves.traces import CurvePool, TraceFileSource, TraceSource, TraceSourceLike
from mara_env.errors import TraceError

#: The shipped trace file of recorded training runs (see ``mara_env/data/TRACES.md``).
SHIPPED_TRACES = Path(__file__).resolve().parents[1] / "data" / "traces.npz"


class CompositeTraceSource:
    """The union of several trace sources; each family comes from the first source that has it.

    Args:
        *sources: Trace sources, in order of precedence.

    Example:
        >>> both = CompositeTraceSource(SyntheticTraceSource(n_curves=20, length=50))
        >>> both.families
        ('synthetic',)
    """

    def __init__(self, *sources: TraceSource) -> None:
        if not sources:
            raise TraceError("CompositeTraceSource needs at least one source.")
        self.sources = sources

    def __repr__(self) -> str:
        return f"CompositeTraceSource{self.sources!r}"

    @property
    def families(self) -> tuple[str, ...]:
        names: list[str] = []
        for source in self.sources:
            names.extend(family for family in source.families if family not in names)
        return tuple(names)

    @property
    def fingerprint(self) -> str:
        joined = "+".join(source.fingerprint for source in self.sources)
        return hashlib.sha256(joined.encode()).hexdigest()[:16]

    def pool(self, family: str, split: str) -> CurvePool:
        for source in self.sources:
            if family in source.families:
                return source.pool(family, split)
        raise TraceError(f"No trace source provides family {family!r}; have {self.families}.")


def resolve_trace_source(source: TraceSourceLike | None) -> TraceSource:
    """The trace source a ``trace_source`` argument names: itself, the file at a path (a
    ``.npz`` trace file written by :func:`mara_env.curves.traces.save_traces`, or a ``.csv`` curve
    table, read and checked by :func:`mara_env.curves.curve_tables.read_curve_table`), or
    :func:`default_trace_source` for ``None``.

    Raises:
        TraceError: For a path that is neither, or a file that does not pass its checks.
        TypeError: For anything else.

    Example:
        >>> resolve_trace_source("curves.txt")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        mara_env.errors.TraceError: trace_source 'curves.txt': expected a .npz trace file ...
    """
    if source is None:
        return default_trace_source()
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix.lower() not in (".csv", ".npz"):
            raise TraceError(
                f"trace_source {str(path)!r}: expected a .npz trace file (save_traces, or "
                "python -m mara_env.benchmarks.collect pack) or a .csv curve table "
                "(mara_env.curves.curve_tables)."
            )
        if not path.is_file():
            return _read_file(path)  # raises, naming the file
        return read_unchanged(path, _read_file)
    if not isinstance(source, TraceSource):
        raise TypeError(
            "trace_source must be a trace source (families, pool(family, split), fingerprint) "
            f"or the path of a .npz trace file, got {type(source).__name__}."
        )
    return source


def _read_file(path: Path) -> TraceSource:
    if path.suffix.lower() == ".csv":
        from mara_env.curves.curve_tables import read_curve_table

        return read_curve_table(path)
    return TraceFileSource(path)


@lru_cache(maxsize=1)
def default_trace_source() -> TraceSource:
    """The package's default curves: the shipped recorded runs plus the synthetic family.

    Shared and built once per process; the trace file is read lazily, on first use of a family.
    """
    return CompositeTraceSource(TraceFileSource(SHIPPED_TRACES), SyntheticTraceSource())
