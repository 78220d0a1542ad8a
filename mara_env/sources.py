"""The trace source used when none is given."""

from __future__ import annotations

from functools import lru_cache

from mara_env.synthetic import SyntheticTraceSource
from mara_env.traces import TraceSource


@lru_cache(maxsize=1)
def default_trace_source() -> TraceSource:
    """The package's default curves (shared, built once per process).

    Example:
        >>> default_trace_source().families
        ('synthetic',)
    """
    return SyntheticTraceSource()
