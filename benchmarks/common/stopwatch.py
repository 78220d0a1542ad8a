"""Where a loop's time goes: wall-clock seconds summed per named part.

Example:
    >>> watch = Stopwatch()
    >>> with watch.part("update"):
    ...     pass
    >>> watch.add({"rollouts": 3.0, "update": 1.0})
    >>> sorted(watch.totals), watch.totals["rollouts"]
    (['rollouts', 'update'], 3.0)
    >>> print(breakdown({"rollouts": 3.0, "update": 1.0}, 4.0))
      rollouts                    3.0 s   75%
      update                      1.0 s   25%
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping


class Stopwatch:
    """Seconds per part, summed over every ``with part(name)`` block and :meth:`add` call."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        """Time the block and add it to ``name``."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.add({name: time.perf_counter() - began})

    def add(self, seconds: Mapping[str, float]) -> None:
        """Add seconds measured elsewhere (e.g. in a worker process)."""
        for name, value in seconds.items():
            self.totals[name] = self.totals.get(name, 0.0) + value

    def take(self) -> dict[str, float]:
        """The totals so far, starting afresh."""
        totals, self.totals = self.totals, {}
        return totals


def breakdown(seconds: Mapping[str, float], total: float) -> str:
    """One line per part: its seconds and its share of ``total``, in the given order."""
    return "\n".join(
        f"  {name:<24}{value:>7.1f} s  {value / max(total, 1e-9):>4.0%}"
        for name, value in seconds.items()
    )
