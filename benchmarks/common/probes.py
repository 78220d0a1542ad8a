"""A linear probe: how well do some columns predict a yes/no truth?

:func:`logistic_probe` fits a ridge-regularised logistic regression (inputs standardised, a
bias) by Newton's method; :func:`probe_scores` scores new rows with it. NumPy only. Judge a
probe by the AUC of its scores on rows it was not fitted on
(:func:`mara_env.benchmarks.common.statistics.auc`).

Example:
    >>> import numpy as np
    >>> rows = np.random.default_rng(0).normal(size=(200, 2))
    >>> truth = rows[:, 0] > 0
    >>> scores = probe_scores(logistic_probe(rows, truth), rows)
    >>> bool((scores[truth] > 0).mean() > 0.9)
    True
"""

from __future__ import annotations

import numpy as np


def logistic_probe(train: np.ndarray, label: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """Weights of a ridge-regularised logistic regression (standardised inputs and a bias),
    fitted by Newton's method; score rows with :func:`probe_scores`."""
    mean, scale = train.mean(axis=0), train.std(axis=0) + 1e-9
    inputs = np.column_stack([(train - mean) / scale, np.ones(len(train))])
    weights = np.zeros(inputs.shape[1])
    target = label.astype(np.float64)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(inputs @ weights, -30, 30)))
        gradient = inputs.T @ (p - target) + ridge * weights
        hessian = (inputs * (p * (1 - p))[:, None]).T @ inputs + ridge * np.eye(len(weights))
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-8:
            break
    return np.concatenate([weights, mean, scale])


def probe_scores(weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The probe's linear scores of ``rows`` (higher: more likely feasible)."""
    width = rows.shape[1]
    coefficients, mean, scale = (
        weights[: width + 1],
        weights[width + 1 : 2 * width + 1],
        weights[2 * width + 1 :],
    )
    return np.column_stack([(rows - mean) / scale, np.ones(len(rows))]) @ coefficients
