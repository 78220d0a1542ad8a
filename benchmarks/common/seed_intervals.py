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

import numpy as np

from agents.statistics import Summary


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
        A :class:`~agents.statistics.Summary` whose ``n`` is the number of training seeds.

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
    n_seeds, n_episodes = values.shape
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for index in range(n_resamples):
        seeds = rng.integers(n_seeds, size=n_seeds)
        episodes = rng.integers(n_episodes, size=n_episodes)
        means[index] = values[np.ix_(seeds, episodes)].mean()
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Summary(float(values.mean()), float(low), float(high), n_seeds)
