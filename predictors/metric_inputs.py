"""The checks every score of :mod:`mara_env.predictors.metrics` and
:mod:`mara_env.predictors.success_scores` makes of its input, raising :class:`MetricInputError`.

Each names the function that was called (``where``), what was wrong and what was expected.

Example:
    >>> check_samples([[1.0, float("inf")]], "my_score").shape
    (1, 2)
    >>> check_truth([float("nan")], 1, "my_score")
    Traceback (most recent call last):
    ...
    mara_env.predictors.bootstrap.MetricInputError: my_score: truth contains NaN.
"""

from __future__ import annotations

import numpy as np

from mara_env.predictors.bootstrap import MetricInputError


def check_samples(samples: np.ndarray, where: str) -> np.ndarray:
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2 or samples.shape[1] == 0:
        raise MetricInputError(
            f"{where}: samples must be a 2-d (cases, samples) array with at least one sample, "
            f"got shape {samples.shape}."
        )
    if np.isnan(samples).any() or (samples < 0).any():
        raise MetricInputError(
            f"{where}: samples must be >= 0 or inf (never); found NaN or negative work."
        )
    return samples


def check_per_case(values: np.ndarray, n_cases: int, name: str, where: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (n_cases,):
        raise MetricInputError(
            f"{where}: {name} must have one value per case, shape ({n_cases},), got {values.shape}."
        )
    if np.isnan(values).any():
        raise MetricInputError(f"{where}: {name} contains NaN.")
    return values


def check_truth(truth: np.ndarray, n_cases: int, where: str) -> np.ndarray:
    truth = check_per_case(truth, n_cases, "truth", where)
    if (truth < 0).any():
        raise MetricInputError(f"{where}: truth must be >= 0 or inf (infeasible).")
    return truth


def check_cap(cap: np.ndarray, n_cases: int, where: str) -> np.ndarray:
    cap = check_per_case(cap, n_cases, "cap", where)
    if not (np.isfinite(cap).all() and (cap >= 1).all()):
        raise MetricInputError(f"{where}: cap must be finite and >= 1 (e.g. 4 curve lengths).")
    return cap
