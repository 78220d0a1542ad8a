"""Percentile-bootstrap intervals: the one resampling loop of the packages, and the prediction
benchmark's intervals built on it (95% by default).

* :func:`percentile_bootstrap`: the interval of any statistic of resampled indices, drawn in
  chunks from a generator; every bootstrap interval of the packages is computed by it (also
  :func:`mara_env.agents.statistics.mean_ci` and :func:`mara_env.agents.statistics.ratio_ci`);
* :func:`bootstrap_median_interval` / :func:`bootstrap_mean_interval`: intervals of a median
  (errors) and of a mean (a share, e.g. coverage);
  :func:`bootstrap_median_difference_interval`: of the difference of two medians over the same
  cases (two predictors' errors), resampled in pairs;
* :func:`bootstrap_interval`: of any statistic of case weights (how often each case is taken in
  each resample), on which the others are built.

Each draws its ``resamples`` resamples at once (in chunks bounding the memory). Given ``groups``
(the prediction benchmark passes each case's curve), whole groups are resampled: cases drawn
from one curve are not independent, and an interval that resampled them one by one would be too
narrow. The draws depend only on the generator and the number of groups, so scores of several
predictors on the same cases, bootstrapped from equally seeded generators, are resampled alike.

Example:
    >>> low, high = bootstrap_median_interval(np.arange(101.0), np.random.default_rng(0))
    >>> bool(40 < low < 50 < high < 60)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

#: Confidence of the intervals.
CONFIDENCE = 0.95
#: Resamples of each interval.
BOOTSTRAP_RESAMPLES = 2000
#: Values resampled per bootstrap chunk (about 32 MB of float64).
_BOOTSTRAP_CHUNK_VALUES = 4_000_000


class MetricInputError(ValueError):
    """Predictions, truths or values a metric or interval cannot score (wrong shape, NaN,
    negative work...)."""


def _check_confidence(confidence: float, where: str) -> None:
    if not (isinstance(confidence, float) and 0.0 < confidence < 1.0):
        raise MetricInputError(
            f"{where}: confidence must be a float in (0, 1), got {confidence!r}."
        )


def bootstrap_median_interval(
    values: np.ndarray,
    rng: np.random.Generator,
    *,
    groups: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile-bootstrap ``confidence`` interval of the median of ``values``.

    Each of ``resamples`` resamples draws, with replacement, as many groups as there are
    (``groups[i]`` labels value ``i``; by default every value is its own group) and takes every
    value of the groups drawn; the interval is the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles of the resamples' medians (inverted-CDF rule). Values
    that share a group (cases drawn from one curve) are not independent, and resampling them
    together keeps the interval from claiming more confidence than they carry. The draws
    depend only on ``rng`` and the number of groups: scores of several predictors on the same
    cases, bootstrapped from equally seeded generators, are resampled alike.

    Raises:
        MetricInputError: For empty or non-finite values, groups of another length,
            ``resamples < 1`` or a bad confidence.

    Example:
        >>> bootstrap_median_interval(np.array([2.0, 2.0, 2.0]), np.random.default_rng(0))
        (2.0, 2.0)
        >>> low, high = bootstrap_median_interval(np.arange(101.0), np.random.default_rng(0))
        >>> bool(40 < low < 50 < high < 60)
        True
    """
    values = _check_bootstrap_values(values, "bootstrap_median_interval")
    return bootstrap_interval(
        values.size,
        groups,
        rng,
        _resampled_medians(values),
        resamples,
        confidence,
        "bootstrap_median_interval",
    )


def bootstrap_median_difference_interval(
    first: np.ndarray,
    second: np.ndarray,
    rng: np.random.Generator,
    *,
    groups: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Paired percentile-bootstrap ``confidence`` interval of ``median(first) -
    median(second)``, for two sets of values of the same cases (e.g. two predictors' errors):
    each resample takes the same cases (whole ``groups``, as :func:`bootstrap_median_interval`
    draws them) from both, so what the cases share cancels out of the difference.

    Raises:
        MetricInputError: As :func:`bootstrap_median_interval`, or if the two differ in length.

    Example:
        >>> errors = np.arange(1.0, 101.0)
        >>> bootstrap_median_difference_interval(errors + 0.5, errors, np.random.default_rng(0))
        (0.5, 0.5)
        >>> low, high = bootstrap_median_difference_interval(
        ...     errors[::-1], errors, np.random.default_rng(0))
        >>> bool(low < 0.0 < high)
        True
    """
    where = "bootstrap_median_difference_interval"
    first = _check_bootstrap_values(first, where)
    second = _check_bootstrap_values(second, where)
    if first.shape != second.shape:
        raise MetricInputError(
            f"{where}: first and second must hold values of the same cases, got "
            f"{first.size} and {second.size} values."
        )
    first_medians, second_medians = _resampled_medians(first), _resampled_medians(second)

    def differences(weights: np.ndarray) -> np.ndarray:
        return first_medians(weights) - second_medians(weights)

    return bootstrap_interval(first.size, groups, rng, differences, resamples, confidence, where)


def _resampled_medians(values: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The statistic of :func:`bootstrap_interval` that gives each resample's median."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]

    def medians(weights: np.ndarray) -> np.ndarray:
        # the median of each resample, its values taken ``weights[r, i]`` times: the mean of
        # its ``ceil(w / 2)``-th and ``(floor(w / 2) + 1)``-th smallest, as ``np.median`` has it
        counts = np.cumsum(weights[:, order], axis=1)
        total = counts[:, -1:]
        low = np.sum(counts < (total + 1) // 2, axis=1)
        high = np.sum(counts < total // 2 + 1, axis=1)
        result: np.ndarray = 0.5 * (ordered[low] + ordered[high])
        return result

    return medians


def bootstrap_mean_interval(
    values: np.ndarray,
    rng: np.random.Generator,
    *,
    groups: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile-bootstrap ``confidence`` interval of the mean of ``values`` (e.g. a share of
    covered cases), resampled as :func:`bootstrap_median_interval` resamples.

    Raises:
        MetricInputError: As :func:`bootstrap_median_interval`.

    Example:
        >>> covered = np.array([1.0, 1.0, 0.0, 0.0] * 25)
        >>> low, high = bootstrap_mean_interval(covered, np.random.default_rng(0))
        >>> bool(0.35 < low < 0.5 < high < 0.65)
        True
        >>> by_pair = np.arange(100) // 2  # pairs of equal values: half the evidence
        >>> low_pairs, high_pairs = bootstrap_mean_interval(
        ...     covered, np.random.default_rng(0), groups=by_pair)
        >>> bool(high_pairs - low_pairs > high - low)
        True
    """
    values = _check_bootstrap_values(values, "bootstrap_mean_interval")

    def means(weights: np.ndarray) -> np.ndarray:
        return (weights @ values) / weights.sum(axis=1)

    return bootstrap_interval(
        values.size, groups, rng, means, resamples, confidence, "bootstrap_mean_interval"
    )


def _check_bootstrap_values(values: np.ndarray, where: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0 or not np.isfinite(values).all():
        raise MetricInputError(f"{where}: values must be a non-empty 1-d array of finite numbers.")
    return values


def percentile_bootstrap(
    n_draws: int,
    rng: np.random.Generator,
    statistic: Callable[[np.ndarray], np.ndarray],
    resamples: int,
    confidence: float,
    *,
    chunk: int | None = None,
    method: Literal["inverted_cdf", "linear"] = "inverted_cdf",
) -> tuple[float, float]:
    """The percentile-bootstrap ``confidence`` interval of ``statistic``.

    Each of ``resamples`` resamples draws ``n_draws`` indices uniformly, with replacement, from
    ``range(n_draws)``; the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
    quantiles of the resamples' statistics by NumPy's quantile ``method``. Callers check their
    arguments (``resamples >= 1``, ``confidence`` in (0, 1)).

    Args:
        n_draws: Size of the population resampled (values, groups or clusters), >= 1.
        rng: The generator. The draws are ``rng.integers(n_draws, size=(count, n_draws))``, one
            call per chunk of ``count`` resamples, so the same generator state and ``chunk``
            give the same intervals.
        statistic: Maps ``(count, n_draws)`` drawn indices to the ``count`` resamples'
            statistics.
        resamples: Resamples (>= 1).
        confidence: Coverage, in (0, 1).
        chunk: Most resamples drawn per call (``None``: all in one call).
        method: The quantile rule.

    Returns:
        ``(low, high)``.

    Example:
        >>> values = np.arange(10.0)
        >>> low, high = percentile_bootstrap(
        ...     10, np.random.default_rng(0), lambda drawn: values[drawn].mean(axis=1), 1000, 0.9)
        >>> bool(low < 4.5 < high)
        True
    """
    chunk = max(resamples, 1) if chunk is None else chunk
    statistics = np.empty(resamples)
    for start in range(0, resamples, chunk):
        count = min(chunk, resamples - start)
        drawn = rng.integers(n_draws, size=(count, n_draws))
        statistics[start : start + count] = statistic(drawn)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(statistics, [tail, 1.0 - tail], method=method)
    return float(low), float(high)


def bootstrap_interval(
    n_values: int,
    groups: np.ndarray | None,
    rng: np.random.Generator,
    statistic: Callable[[np.ndarray], np.ndarray],
    resamples: int,
    confidence: float,
    where: str,
) -> tuple[float, float]:
    """The percentile interval of ``statistic`` over resamples of whole groups.

    ``statistic`` maps ``(count, n_values)`` weights (how often each value is taken in each
    resample) to the ``count`` resamples' statistics. Groups are drawn by
    :func:`percentile_bootstrap` in chunks bounding the memory; the quantiles are inverted-CDF.
    """
    if groups is None:
        group_of = np.arange(n_values)
    else:
        labels = np.asarray(groups)
        if labels.shape != (n_values,):
            raise MetricInputError(
                f"{where}: groups must label each of the {n_values} values, got shape "
                f"{labels.shape}."
            )
        group_of = np.unique(labels, return_inverse=True)[1].reshape(-1)
    if not (isinstance(resamples, int) and resamples >= 1):
        raise MetricInputError(f"{where}: resamples must be an int >= 1, got {resamples!r}.")
    _check_confidence(confidence, where)
    n_groups = int(group_of.max()) + 1

    def of_groups_drawn(drawn: np.ndarray) -> np.ndarray:
        count = len(drawn)
        offsets = (np.arange(count) * n_groups)[:, None]
        group_counts = np.bincount((drawn + offsets).ravel(), minlength=count * n_groups)
        weights = group_counts.reshape(count, n_groups)[:, group_of].astype(np.float64)
        return statistic(weights)

    chunk = max(1, _BOOTSTRAP_CHUNK_VALUES // max(n_groups, n_values))
    return percentile_bootstrap(
        n_groups, rng, of_groups_drawn, resamples, confidence, chunk=chunk, method="inverted_cdf"
    )
