"""Trace sources the package provides: the shipped real curves, synthetic ones, and their union.

Example:
    >>> source = default_trace_source()
    >>> "synthetic" in source.families
    True
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from mara_env.errors import TraceError
from mara_env.synthetic import SyntheticTraceSource
from mara_env.traces import CurvePool, TraceFileSource, TraceSource

#: The shipped trace file of recorded training runs (see ``mara_env/data/TRACES.md``).
SHIPPED_TRACES = Path(__file__).resolve().parent / "data" / "traces.npz"


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


@lru_cache(maxsize=1)
def default_trace_source() -> TraceSource:
    """The package's default curves: the shipped recorded runs plus the synthetic family.

    Shared and built once per process; the trace file is read lazily, on first use of a family.
    """
    return CompositeTraceSource(TraceFileSource(SHIPPED_TRACES), SyntheticTraceSource())
