"""The per-slot prediction features, from samples of remaining work: one definition for all users.

The observation wrappers (:mod:`mara_env.predictors.wrappers`, reading the simulator's observable state)
and the MARA scheduler (:mod:`mara_env.agents.mara.features`, reading observations) compute the same
features with :func:`slot_features`. Per task, with ``L`` quantile levels:

    0 .. L-1 ``need_q``: quantiles of the remaining curve steps divided by the curve steps one
      node can still do by the deadline (needed / available on one node), capped at
      ``need_cap``; "never" (an infinite sample) reads as the cap.
    L ``success_one_node``: share of samples that fit on one node (needed / available <= 1).
    L+1 ``success_all_nodes``: share that fit on ``m`` nodes with the task's ``alpha``
      (needed / available <= the speed-up of ``m`` nodes, :func:`success_thresholds`). Both
      ignore switch costs.

Example:
    >>> import numpy as np
    >>> samples = np.array([[4.0, 8.0, 12.0, 16.0]])
    >>> positions = quantile_positions(4, QUANTILE_LEVELS)
    >>> slot_features(samples, np.array([8.0]), np.array([[1.0, 2.0]]), positions).tolist()
    [[0.5, 1.0, 2.0, 0.5, 1.0]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from mara_env.sim.rules import progress_gain

#: Default quantile levels of the ``need`` features.
QUANTILE_LEVELS: tuple[float, ...] = (0.1, 0.5, 0.9)
#: Default cap of the ``need`` features.
NEED_CAP = 10.0
#: Prediction features per slot with the default quantile levels.
PREDICTION_FEATURES = len(QUANTILE_LEVELS) + 2


def quantile_positions(n_samples: int, levels: Sequence[float]) -> np.ndarray:
    """Positions of the ``levels`` quantiles among ``n_samples`` sorted samples.

    The positions of NumPy's ``"inverted_cdf"`` quantile method: the smallest sample at or above
    each level of the empirical distribution.

    Example:
        >>> quantile_positions(32, (0.1, 0.5, 0.9)).tolist()
        [3, 15, 28]
    """
    levels_array = np.asarray(levels, dtype=np.float64)
    return np.maximum(np.ceil(n_samples * levels_array - 1), 0).astype(np.intp)


def success_thresholds(alpha: np.ndarray, max_nodes: float) -> np.ndarray:
    """``(n_tasks, 2)`` needed / available ratios that count as a success for tasks with
    parallel-scaling exponents ``alpha``: 1 on one node, and on ``max_nodes`` nodes the work
    they do per epoch in node-epochs of one node, ``progress_gain(1, max_nodes, alpha)``
    (:func:`mara_env.sim.rules.progress_gain`) (the ``thresholds`` of :func:`slot_features`).

    Example:
        >>> success_thresholds(np.array([1.0, 0.5]), 4).round(12).tolist()
        [[1.0, 4.0], [1.0, 2.0]]
    """
    all_nodes = np.asarray(
        progress_gain(1.0, float(max_nodes), np.asarray(alpha, dtype=np.float64))
    )
    return np.column_stack((np.ones_like(all_nodes), all_nodes))


def slot_features(
    sorted_samples: np.ndarray,
    available: np.ndarray,
    thresholds: np.ndarray,
    positions: np.ndarray,
    need_cap: float = NEED_CAP,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The prediction features of tasks from their sorted samples of remaining work.

    Args:
        sorted_samples: ``(n_tasks, n_samples)`` remaining curve steps, ascending along each row
            (``inf`` = never).
        available: ``(n_tasks,)`` curve steps one node can still do by each task's deadline (time
            left times speed, > 0).
        thresholds: ``(n_tasks, 2)`` needed / available ratios that count as a success
            (:func:`success_thresholds`). A row of ``-1`` gives success probabilities 0 (an
            empty slot).
        positions: Sample positions of the quantiles (:func:`quantile_positions`).
        need_cap: Cap of the ``need`` features.
        out: Optional ``(n_tasks, len(positions) + 2)`` array to write into (e.g. float32).

    Returns:
        ``out``, or a new float64 array, holding the ``need`` quantiles then the two success
        probabilities of each task.
    """
    n_tasks = sorted_samples.shape[0]
    if out is None:
        out = np.empty((n_tasks, len(positions) + 2))
    _features_compiled(
        np.asarray(sorted_samples, dtype=np.float64),
        np.asarray(available, dtype=np.float64),
        np.asarray(thresholds, dtype=np.float64),
        np.asarray(positions, dtype=np.intp),
        float(need_cap),
        out,
    )
    return out


@njit(cache=True)
def _features_compiled(
    sorted_samples: np.ndarray,
    available: np.ndarray,
    thresholds: np.ndarray,
    positions: np.ndarray,
    need_cap: float,
    out: np.ndarray,
) -> None:
    """Write :func:`slot_features` of each task into its row of ``out`` (one pass per task, in
    float64, each value rounded once on the way into ``out``)."""
    n_levels = positions.size
    share = 1.0 / sorted_samples.shape[1]
    for task in range(sorted_samples.shape[0]):
        for level in range(n_levels):
            out[task, level] = min(
                sorted_samples[task, positions[level]] / available[task], need_cap
            )
        for which in range(2):
            successes = 0
            for sample in range(sorted_samples.shape[1]):
                if sorted_samples[task, sample] / available[task] <= thresholds[task, which]:
                    successes += 1
            out[task, n_levels + which] = successes * share
