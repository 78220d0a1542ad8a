"""Summaries of per-episode results: the mean with a bootstrap confidence interval.

The interval is the percentile bootstrap of the mean (linear quantiles), resampled by
:func:`mara_env.predictors.bootstrap.percentile_bootstrap` from a generator with a fixed seed, so that
tables are reproducible.

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

from mara_env.predictors.bootstrap import percentile_bootstrap


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

    def bracketed(self, spec: str = ".3f") -> str:
        """``"mean [low, high]"`` with each number formatted by ``spec``.

        Example:
            >>> Summary(0.1, -0.02, 0.2, 30).bracketed("+.2f")
            '+0.10 [-0.02, +0.20]'
        """
        return f"{self.mean:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


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
    return _bootstrap_ratio(data, np.ones_like(data), confidence, n_resamples, seed, "mean_ci")


def ratio_ci(
    numerators: Iterable[float],
    denominators: Iterable[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Summary:
    """``sum(numerators) / sum(denominators)`` with a percentile-bootstrap interval over clusters.

    Each (numerator, denominator) pair is one cluster, resampled as a whole: e.g. per task, the
    wrong verdicts among its verdicts and the number of its verdicts, so that a task judged many
    times counts as one draw, not as many independent ones. With all denominators 1 this is
    :func:`mean_ci`. ``n`` of the result is the number of clusters.

    Raises:
        ValueError: For no clusters, mismatched lengths, non-finite values, a negative or zero
            denominator, or a confidence outside (0, 1).

    Example:
        >>> summary = ratio_ci([1, 0, 2], [1, 1, 4])
        >>> summary.mean, summary.n
        (0.5, 3)
    """
    num = np.asarray(list(numerators), dtype=np.float64)
    den = np.asarray(list(denominators), dtype=np.float64)
    if num.size == 0 or num.shape != den.shape:
        raise ValueError(
            f"ratio_ci: need one denominator per numerator and at least one cluster, got "
            f"{num.size} and {den.size}."
        )
    if not (np.isfinite(num).all() and np.isfinite(den).all() and (den > 0).all()):
        raise ValueError("ratio_ci: values must be finite and denominators > 0.")
    return _bootstrap_ratio(num, den, confidence, n_resamples, seed, "ratio_ci")


def _bootstrap_ratio(
    num: np.ndarray, den: np.ndarray, confidence: float, n_resamples: int, seed: int, caller: str
) -> Summary:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"{caller}: confidence must be in (0, 1), got {confidence!r}.")
    estimate = float(num.sum() / den.sum())
    if num.size == 1:
        return Summary(estimate, estimate, estimate, 1)

    def ratios(draws: np.ndarray) -> np.ndarray:
        result: np.ndarray = num[draws].sum(axis=1) / den[draws].sum(axis=1)
        return result

    low, high = percentile_bootstrap(
        num.size, np.random.default_rng(seed), ratios, n_resamples, confidence, method="linear"
    )
    return Summary(estimate, min(low, estimate), max(high, estimate), int(num.size))
