"""Intervals for learned agents that include training-seed variation.

A learned scheduler's result depends on the seed it was trained from as well as on the episodes
it is scored on. :func:`two_level_bootstrap` takes the paired differences of several training
runs (one row per training seed) on the same evaluation episodes (one column per episode) and
resamples both levels: training seeds with replacement, then episodes with replacement (the same
episodes for every drawn seed, since the comparison is paired on them). With one training seed
the interval reflects episode noise only, which is what an interval over a single run claims.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> steady = rng.normal(0.05, 0.02, size=(3, 60))            # three runs that agree
    >>> spread = steady + np.array([[-0.05], [0.0], [0.05]])      # three runs that do not
    >>> narrow, wide = two_level_bootstrap(steady), two_level_bootstrap(spread)
    >>> narrow.low > 0 and wide.low < narrow.low and wide.n == 3
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mara_env.agents.statistics import Summary


def two_level_bootstrap(
    differences: np.ndarray,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Summary:
    """The mean of ``differences`` and its percentile interval over training seeds and episodes.

    Args:
        differences: ``(n_training_seeds, n_episodes)`` paired differences (e.g. a learned
            agent's completion rate minus a baseline's), every row on the same episodes.
        confidence: Coverage of the interval, in (0, 1).
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator (the same input gives the same interval).

    Returns:
        A :class:`~mara_env.agents.statistics.Summary` whose ``n`` is the number of training seeds.

    Raises:
        ValueError: For an input that is not a non-empty finite 2-d array, or a confidence
            outside (0, 1), or fewer than one resample.
    """
    values = np.asarray(differences, dtype=np.float64)
    if values.ndim != 2 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ValueError(
            "two_level_bootstrap needs a non-empty finite (training seeds, episodes) array, got "
            f"shape {values.shape}; give one row per training seed, one column per episode."
        )
    if not 0.0 < confidence < 1.0 or n_resamples < 1:
        raise ValueError(
            f"two_level_bootstrap: confidence must lie in (0, 1) and n_resamples be >= 1, got "
            f"{confidence} and {n_resamples}."
        )
    means = resampled_means([values], n_resamples=n_resamples, seed=seed)[0]
    return percentile_summary(float(values.mean()), means, confidence, len(values))


def resampled_means(
    groups: Sequence[np.ndarray], *, n_resamples: int = 10_000, seed: int = 0
) -> np.ndarray:
    """Bootstrap means of several learned agents (or recipes) scored on the same episodes.

    Each resample draws every group's training seeds with replacement, independently (they
    are different training runs), and one draw of the episodes shared by all groups (the
    comparison is paired on them); it returns each group's mean over its drawn seeds and the
    drawn episodes. Differences and ratios of the rows are then the bootstrap of differences
    and ratios of the agents' means, with both levels of noise in them.

    Args:
        groups: ``(n_training_seeds_g, n_episodes)`` arrays (scores, or paired differences),
            every one on the same episodes in the same order; a baseline without training
            seeds is one row.
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator.

    Returns:
        ``(len(groups), n_resamples)`` resampled means.

    Raises:
        ValueError: For no group, a group that is not a non-empty finite 2-d array, or groups
            on different numbers of episodes.

    Example:
        >>> a, b = np.full((2, 5), 0.6), np.full((3, 5), 0.5)
        >>> means = resampled_means([a, b], n_resamples=4)
        >>> np.round(means[0] - means[1], 3).tolist()
        [0.1, 0.1, 0.1, 0.1]
    """
    arrays = [np.asarray(group, dtype=np.float64) for group in groups]
    if not arrays or any(a.ndim != 2 or a.size == 0 or not np.all(np.isfinite(a)) for a in arrays):
        raise ValueError(
            "resampled_means needs non-empty finite (training seeds, episodes) arrays; give one "
            "row per training seed, one column per episode."
        )
    n_episodes = arrays[0].shape[1]
    if any(a.shape[1] != n_episodes for a in arrays):
        raise ValueError(
            "resampled_means: every group must be scored on the same episodes, got "
            f"{[a.shape[1] for a in arrays]} episodes."
        )
    if n_resamples < 1:
        raise ValueError(f"resampled_means: n_resamples must be >= 1, got {n_resamples}.")
    rng = np.random.default_rng(seed)
    means = np.empty((len(arrays), n_resamples))
    for index in range(n_resamples):
        seeds = [rng.integers(len(a), size=len(a)) for a in arrays]
        episodes = rng.integers(n_episodes, size=n_episodes)
        for group, (values, drawn) in enumerate(zip(arrays, seeds, strict=True)):
            means[group, index] = values[np.ix_(drawn, episodes)].mean()
    return means


def percentile_summary(
    estimate: float, resamples: np.ndarray, confidence: float = 0.95, n: int = 1
) -> Summary:
    """``estimate`` with the central ``confidence`` percentile interval of its ``resamples``
    (NaN resamples, e.g. ratios over a zero, are left out; all NaN gives a NaN interval)."""
    finite = resamples[np.isfinite(resamples)]
    if finite.size == 0:
        return Summary(estimate, float("nan"), float("nan"), n)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return Summary(estimate, float(low), float(high), n)
