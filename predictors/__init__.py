"""Loss-trajectory predictors: from a task's reported losses to its remaining work.

:mod:`mara_env.predictors.base` defines the interface (:class:`TaskHistory` in, :class:`RemainingWork`
samples out, "never" as ``inf``). Shipped, by registered name (:func:`make_predictor`):

* ``wls`` (:mod:`mara_env.predictors.wls`): LARA's discounted weighted least-squares power law;
* ``dkf`` (:mod:`mara_env.predictors.dkf`): LaiRA's dynamic Kalman filter with drifting parameters;
* ``flow_matching`` (:mod:`mara_env.predictors.flow_matching`): MARA's conditional flow-matching model of
  future loss windows, which also reads the target (torch; shipped checkpoint trained on the
  train split);
* ``flow_matching_without_target``: the same model blind to the target, the predictor MARA's
  shipped policy was trained with;
* ``spline_flow`` (:mod:`mara_env.predictors.normalizing_flow`): a conditional neural spline flow on the
  same inputs, an extra baseline (torch, zuko).

:mod:`mara_env.predictors.wrappers` appends predictions to the environments' observations, and
``python -m mara_env.benchmarks.prediction.benchmark`` scores predictors on held-out curves.

Example:
    >>> import numpy as np
    >>> from mara_env.predictors import WLS, TaskHistory
    >>> history = TaskHistory(np.arange(10.0), np.linspace(1.0, 0.5, 10), target=0.1)
    >>> WLS().predict([history], 4, np.random.default_rng(0)).samples.shape
    (1, 4)
"""

from __future__ import annotations

from mara_env.predictors.base import Predictor, PredictorInputError, RemainingWork, TaskHistory
from mara_env.predictors.dkf import DKF
from mara_env.predictors.registry import known_predictors, make_predictor
from mara_env.predictors.wls import WLS, DiscountedLeastSquares
from mara_env.predictors.wrappers import (
    PredictionAECWrapper,
    PredictionGymWrapper,
    PredictionParallelWrapper,
    add_predictions,
)

__all__ = [
    "DKF",
    "WLS",
    "DiscountedLeastSquares",
    "PredictionAECWrapper",
    "PredictionGymWrapper",
    "PredictionParallelWrapper",
    "Predictor",
    "PredictorInputError",
    "RemainingWork",
    "TaskHistory",
    "add_predictions",
    "known_predictors",
    "make_predictor",
]
