"""Leaderboard statistics: stratified bootstrap intervals, IQM, ranks, probability of improvement.

Scores are completion rates in a rectangular array ``scores[agent, stratum, seed]``: one
stratum per (workload, load) pair, the same evaluation seeds in every stratum and for every
agent. Seeds are the unit of resampling. The **stratified bootstrap** draws, for each stratum
independently, ``n_seeds`` seed indices with replacement; the same draw is applied to every
agent, so agents stay paired on their episodes (they ran on the same seeds) and all statistics
of one resample are computed from one common set of episodes.

From each resample come:

- the **mean** completion rate per stratum, per workload (the mean of its strata) and overall;
- the **interquartile mean** (IQM, as in Agarwal et al. 2021, "Deep RL at the edge of the
  statistical precipice"): the mean of the middle 50% of all episodes' completion rates,
  ``int(0.25 * n)`` values cut from each end after sorting (``scipy.stats.trim_mean(x, 0.25)``);
- the **probability of improvement** of agent X over a reference Y, per stratum
  ``P(X > Y) + P(X = Y) / 2`` over all pairs of X's and Y's episodes (the Mann-Whitney U
  statistic divided by ``n * m``), averaged over strata.

Intervals are percentile-bootstrap intervals of those statistics. Ranks order agents by mean
completion rate, best first; equal means share the best rank of their group ("1, 2, 2, 4").
**Shared ranks** tell apart only what the intervals tell apart: an agent's shared rank is 1 plus
the number of agents whose lead over it, paired on the same resamples, has an interval above 0
(:func:`shared_ranks`), so agents within noise of each other share a rank.
Only NumPy is used; the tests cross-check every statistic against SciPy and direct loops.

Example:
    >>> import numpy as np
    >>> scores = np.array([[[0.6, 0.8], [0.4, 0.6]], [[0.5, 0.5], [0.3, 0.3]]])
    >>> result = stratified_summary(
    ...     scores, ["a", "a"], reference=1, n_resamples=200, rng=np.random.default_rng(0)
    ... )
    >>> round(result.overall[0].estimate, 3), round(result.overall[1].estimate, 3)
    (0.6, 0.4)
    >>> result.overall_rank.tolist()
    [1, 2]
    >>> float(result.improvement[0].estimate)  # agent 0 beats the reference in every pair
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

#: The key of a statistic in :func:`episode_bootstrap`.
K = TypeVar("K", bound=Hashable)
#: Resamples per chunk: bounds the memory of the bootstrap to a few tens of MB.
_CHUNK = 256


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval ``[low, high]``."""

    estimate: float
    low: float
    high: float

    def __format__(self, spec: str) -> str:
        spec = spec or ".3f"
        return f"{self.estimate:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


@dataclass(frozen=True)
class StratifiedSummary:
    """Every leaderboard statistic of a score array, with 95% (or other) intervals.

    Attributes:
        workloads: The distinct workloads, in order of first appearance among the strata.
        stratum: ``stratum[a][s]``: agent ``a``'s mean on stratum ``s``.
        workload: ``workload[a][w]``: agent ``a``'s mean over the strata of workload ``w``.
        overall: ``overall[a]``: agent ``a``'s mean over every episode.
        iqm: ``iqm[a]``: agent ``a``'s interquartile mean over every episode.
        improvement: ``improvement[a]``: probability that agent ``a`` improves on the
            reference agent (empty tuple without a reference).
        workload_rank: ``(n_agents, n_workloads)`` ranks by workload mean, 1 = best.
        overall_rank: ``(n_agents,)`` ranks by overall mean, 1 = best.
        workload_shared_rank: ``(n_agents, n_workloads)`` :func:`shared_ranks` of the workload
            means.
        overall_shared_rank: ``(n_agents,)`` :func:`shared_ranks` of the overall means.
    """

    workloads: tuple[str, ...]
    stratum: tuple[tuple[Interval, ...], ...]
    workload: tuple[tuple[Interval, ...], ...]
    overall: tuple[Interval, ...]
    iqm: tuple[Interval, ...]
    improvement: tuple[Interval, ...]
    workload_rank: np.ndarray
    overall_rank: np.ndarray
    workload_shared_rank: np.ndarray
    overall_shared_rank: np.ndarray


def interquartile_mean(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """The mean of the middle 50% of ``values`` along ``axis`` (25% cut from each end).

    ``int(0.25 * n)`` values are cut from each end, as ``scipy.stats.trim_mean(values, 0.25)``.

    Raises:
        ValueError: If ``axis`` is empty.

    Example:
        >>> float(interquartile_mean(np.array([0.0, 1.0, 2.0, 3.0, 100.0])))  # cuts 0 and 100
        2.0
    """
    data = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    n = data.shape[-1]
    if n == 0:
        raise ValueError("interquartile_mean: no values along the axis; pass at least one.")
    cut = int(0.25 * n)
    return np.sort(data, axis=-1)[..., cut : n - cut].mean(axis=-1)


def probability_of_improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``P(X > Y) + P(X = Y) / 2`` per stratum, averaged over strata (the last axis but one).

    Args:
        x: Scores of X, shape ``(..., n_strata, n)``.
        y: Scores of Y, shape ``(..., n_strata, m)`` (leading axes broadcast with ``x``'s).

    Returns:
        The probability over all ``n * m`` pairs of episodes in each stratum, averaged over
        strata; shape: the broadcast leading axes.

    Raises:
        ValueError: For shapes that do not fit.

    Example:
        >>> float(probability_of_improvement(np.array([[1.0, 0.5]]), np.array([[0.5]])))
        0.75
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    try:
        ok = min(x.ndim, y.ndim) >= 2 and x.shape[-2] == y.shape[-2]
        ok = ok and min(x.shape[-1], y.shape[-1]) >= 1
        ok = ok and bool(np.broadcast_shapes(x.shape[:-2], y.shape[:-2]) is not None)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            "probability_of_improvement: x and y must have shapes (..., n_strata, n) and "
            f"(..., n_strata, m) with n, m >= 1 and broadcastable leading axes; got {x.shape} "
            f"and {y.shape}."
        )
    signs = np.sign(x[..., :, None] - y[..., None, :])
    return (0.5 + 0.5 * signs.mean(axis=(-2, -1))).mean(axis=-1)


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks of ``values`` along the first axis, largest = 1; ties share the best rank.

    Example:
        >>> competition_ranks(np.array([0.5, 0.9, 0.5, 0.1])).tolist()
        [2, 1, 2, 4]
    """
    data = np.asarray(values, dtype=np.float64)
    return (data[None, ...] > data[:, None, ...]).sum(axis=1) + 1


def shared_ranks(draws: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """Ranks that tell agents apart only where the bootstrap does: agent ``a``'s is 1 plus the
    number of agents ``b`` whose lead ``draws[b] - draws[a]``, over the same resamples, has its
    ``confidence`` percentile interval above 0.

    Args:
        draws: ``(n_agents, n_resamples, ...)`` one statistic of every agent in each resample
            (the resamples paired: the same episodes for every agent); ranks come per trailing
            index.
        confidence: Coverage of the intervals of the leads.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> noise = rng.normal(0.0, 0.01, size=(3, 400))
        >>> draws = np.array([[0.60], [0.59], [0.40]]) + noise  # a and b within noise, c behind
        >>> shared_ranks(draws).tolist()
        [1, 1, 3]
    """
    data = np.asarray(draws, dtype=np.float64)
    lead = data[None, :] - data[:, None]  # lead[a, b] = draws[b] - draws[a]
    low = np.quantile(lead, (1.0 - confidence) / 2.0, axis=2)
    return (low > 0).sum(axis=1) + 1


def stratified_bootstrap_indices(
    n_strata: int, n_seeds: int, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Seed indices of ``n_resamples`` stratified resamples, shape ``(n_resamples, n_strata,
    n_seeds)``: each stratum's seeds drawn with replacement, independently of other strata.

    Example:
        >>> stratified_bootstrap_indices(2, 3, 4, np.random.default_rng(0)).shape
        (4, 2, 3)
    """
    return rng.integers(n_seeds, size=(n_resamples, n_strata, n_seeds))


def stratified_summary(
    scores: np.ndarray,
    stratum_workloads: Sequence[str],
    *,
    reference: int | None = None,
    confidence: float = 0.95,
    n_resamples: int = 5000,
    rng: np.random.Generator,
) -> StratifiedSummary:
    """All leaderboard statistics of ``scores`` with stratified-bootstrap intervals.

    Args:
        scores: Completion rates, shape ``(n_agents, n_strata, n_seeds)``, all finite.
        stratum_workloads: The workload of each stratum (strata of one workload differ in load).
        reference: Index of the agent that probabilities of improvement compare against
            (LARA on the leaderboard); ``None`` skips them.
        confidence: Coverage of the percentile intervals, in (0, 1).
        n_resamples: Bootstrap resamples (>= 1).
        rng: The generator the resamples are drawn from.

    Raises:
        ValueError: For a misshapen or non-finite score array, a stratum count that does not
            match ``stratum_workloads``, a reference out of range, or bad ``confidence`` /
            ``n_resamples``.
    """
    data = _check_scores(scores, stratum_workloads, reference, confidence, n_resamples)
    _, n_strata, n_seeds = data.shape
    workloads = tuple(dict.fromkeys(stratum_workloads))
    membership = np.array(
        [[workload == name for workload in stratum_workloads] for name in workloads], dtype=float
    )
    membership /= membership.sum(axis=1, keepdims=True)  # (n_workloads, n_strata) averaging

    def statistics(sample: np.ndarray) -> dict[str, np.ndarray]:
        """Statistics of samples ``(n_agents, batch, n_strata, n_seeds)``."""
        stratum_mean = sample.mean(axis=-1)
        result = {
            "stratum": stratum_mean,
            "workload": stratum_mean @ membership.T,
            "overall": stratum_mean.mean(axis=-1),
            "iqm": interquartile_mean(sample.reshape(*sample.shape[:2], -1)),
        }
        if reference is not None:
            result["improvement"] = probability_of_improvement(sample, sample[reference][None])
        return result

    point = {key: value[:, 0] for key, value in statistics(data[:, None]).items()}
    draws: dict[str, list[np.ndarray]] = {key: [] for key in point}
    strata = np.arange(n_strata)[None, :, None]
    for start in range(0, n_resamples, _CHUNK):
        batch = min(_CHUNK, n_resamples - start)
        indices = stratified_bootstrap_indices(n_strata, n_seeds, batch, rng)
        for key, value in statistics(data[:, strata, indices]).items():
            draws[key].append(value)
    tail = (1.0 - confidence) / 2.0
    intervals = {}
    resampled = {key: np.concatenate(value, axis=1) for key, value in draws.items()}
    for key, estimate in point.items():
        low, high = np.quantile(resampled[key], [tail, 1.0 - tail], axis=1)
        intervals[key] = _intervals(estimate, low, high)
    return StratifiedSummary(
        workloads=workloads,
        stratum=intervals["stratum"],
        workload=intervals["workload"],
        overall=intervals["overall"],
        iqm=intervals["iqm"],
        improvement=intervals.get("improvement", ()),
        workload_rank=competition_ranks(point["workload"]),
        overall_rank=competition_ranks(point["overall"]),
        workload_shared_rank=shared_ranks(resampled["workload"], confidence),
        overall_shared_rank=shared_ranks(resampled["overall"], confidence),
    )


def _intervals(estimate: np.ndarray, low: np.ndarray, high: np.ndarray) -> Any:
    """Nested tuples of :class:`Interval` mirroring ``estimate``'s shape; the interval always
    contains the estimate (percentiles can miss it by rounding)."""
    if estimate.ndim == 0:
        value = float(estimate)
        return Interval(value, min(float(low), value), max(float(high), value))
    return tuple(_intervals(e, lo, hi) for e, lo, hi in zip(estimate, low, high, strict=True))


def _check_scores(
    scores: np.ndarray,
    stratum_workloads: Sequence[str],
    reference: int | None,
    confidence: float,
    n_resamples: int,
) -> np.ndarray:
    data = np.asarray(scores, dtype=np.float64)
    if data.ndim != 3 or 0 in data.shape:
        raise ValueError(
            "stratified_summary: scores must have shape (n_agents, n_strata, n_seeds) with "
            f"every size >= 1, got {data.shape}."
        )
    if not np.isfinite(data).all():
        raise ValueError("stratified_summary: scores must be finite; drop incomplete agents.")
    if len(stratum_workloads) != data.shape[1]:
        raise ValueError(
            f"stratified_summary: {data.shape[1]} strata in scores but "
            f"{len(stratum_workloads)} stratum workloads; give one workload per stratum."
        )
    if reference is not None and not 0 <= reference < data.shape[0]:
        raise ValueError(
            f"stratified_summary: reference {reference} is not an agent index "
            f"(0..{data.shape[0] - 1})."
        )
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"stratified_summary: confidence must be in (0, 1), got {confidence!r}.")
    if not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(
            f"stratified_summary: n_resamples must be an int >= 1, got {n_resamples!r}."
        )
    return data


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``values`` (``inf`` ranks above every finite value), ties given the mean
    of the ranks they span.

    Example:
        >>> average_ranks(np.array([3.0, 1.0, np.inf, 1.0])).tolist()
        [3.0, 1.5, 4.0, 1.5]
    """
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2.0
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (ties averaged; ``nan`` if either is
    constant).

    Example:
        >>> spearman(np.array([1.0, 2.0, 3.0]), np.array([10.0, 30.0, np.inf]))
        1.0
    """
    a, b = average_ranks(x), average_ranks(y)
    a, b = a - a.mean(), b - b.mean()
    spread = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / spread) if spread > 0 else math.nan


def auc(score: np.ndarray, label: np.ndarray) -> float:
    """The area under the ROC curve of ``score`` for the positive ``label``s: the probability
    that a positive outscores a negative, ties counting half (``nan`` without both classes).

    Example:
        >>> auc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([False, False, True, True]))
        0.75
    """
    label = np.asarray(label, dtype=bool)
    positives, negatives = int(label.sum()), int((~label).sum())
    if not positives or not negatives:
        return math.nan
    ranks = average_ranks(np.asarray(score, dtype=np.float64))
    return float((ranks[label].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def episode_bootstrap(
    records: Sequence[Mapping[str, Any]],
    statistic: Callable[[np.ndarray], Mapping[K, float]],
    resamples: int,
    rng: np.random.Generator,
) -> dict[K, tuple[float, float, float]]:
    """``{statistic: (value, low, high)}``: each statistic of all ``records`` and its 95%
    percentile interval over resamples of whole episodes (seeds drawn with replacement; the
    records of an episode are not independent). ``statistic`` maps record indices to values."""
    seeds = np.array([record["seed"] for record in records])
    episodes = np.unique(seeds)
    members = [np.flatnonzero(seeds == seed) for seed in episodes]
    whole = statistic(np.arange(len(records)))
    draws: dict[K, list[float]] = {key: [] for key in whole}
    for _ in range(resamples):
        picked = np.concatenate(
            [members[i] for i in rng.integers(len(episodes), size=len(episodes))]
        )
        for key, value in statistic(picked).items():
            draws[key].append(value)
    found = {}
    for key, value in whole.items():
        finite = np.array([v for v in draws[key] if math.isfinite(v)])
        low, high = np.quantile(finite, [0.025, 0.975]) if len(finite) else (math.nan, math.nan)
        found[key] = (value, float(low), float(high))
    return found
