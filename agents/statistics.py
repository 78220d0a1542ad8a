"""Summaries of per-episode results: the mean with a bootstrap confidence interval.

Only NumPy is needed. The interval is the percentile bootstrap of the mean, drawn from a
generator with a fixed seed so that tables are reproducible.

Example:
    >>> summary = mean_ci([0.5, 0.6, 0.55, 0.65, 0.45])
    >>> round(summary.mean, 3), summary.n
    (0.55, 5)
    >>> summary.low < summary.mean < summary.high
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    """Mean of ``n`` values and its confidence interval ``[low, high]``."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """Half the interval's width (the interval need not be symmetric)."""
        return (self.high - self.low) / 2.0

    def __format__(self, spec: str) -> str:
        spec = spec or ".3f"
        return f"{self.mean:{spec}} ± {self.half_width:{spec}}"


def mean_ci(
    values: Iterable[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Summary:
    """The mean of ``values`` with a percentile-bootstrap confidence interval.

    Args:
        values: One number per episode (at least one, all finite).
        confidence: Coverage of the interval, in (0, 1).
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator.

    Raises:
        ValueError: For no values, non-finite values or a confidence outside (0, 1).

    Example:
        >>> f"{mean_ci([1.0, 1.0, 1.0])}"
        '1.000 ± 0.000'
    """
    data = np.asarray(list(values), dtype=np.float64)
    if data.size == 0:
        raise ValueError("mean_ci: no values to summarise; run at least one episode.")
    if not np.isfinite(data).all():
        raise ValueError(f"mean_ci: values must be finite, got {data.tolist()}.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"mean_ci: confidence must be in (0, 1), got {confidence!r}.")
    mean = float(data.mean())
    if data.size == 1:
        return Summary(mean, mean, mean, 1)
    rng = np.random.default_rng(seed)
    resampled = data[rng.integers(data.size, size=(n_resamples, data.size))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail])
    return Summary(mean, float(min(low, mean)), float(max(high, mean)), int(data.size))
