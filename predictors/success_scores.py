"""Scores of a predicted probability of success (reaching the target within a work budget):
the Brier score, the reliability table and the calibration error.

Predictions come as samples of remaining work, as in :mod:`mara_env.predictors.metrics`: the
predicted probability of a case is the share of its samples within its ``budget``
(``time_left * speed`` at one node), as in
:meth:`mara_env.predictors.base.RemainingWork.success_probability`, and the outcome whether its
true remaining work was.

* :func:`brier_score`: the mean squared error of that probability against the outcome.
* :func:`success_reliability` / :func:`success_calibration_error`: whether the probability
  means what it says. Cases are binned by predicted probability; in each bin the share that
  reached the target should equal the mean prediction. The calibration error is the mean gap,
  weighted by the cases in each bin (the "expected calibration error"; 0 is calibrated).
* :func:`reliability_scores`: the reliability table as flat scores (:data:`RELIABILITY_COLUMNS`).

Example:
    >>> import numpy as np
    >>> samples = np.array([[1.0, 9.0]] * 4)  # P = 0.5 each; two of four succeed
    >>> brier_score(samples, np.array([1.0, 1.0, 9.0, 9.0]), np.full(4, 2.0))
    0.25
"""

from __future__ import annotations

import numpy as np

from mara_env.predictors.bootstrap import MetricInputError, bootstrap_interval
from mara_env.predictors.metric_inputs import check_per_case, check_samples, check_truth

#: Bins of predicted probability of :func:`success_reliability` (equal widths on [0, 1]).
RELIABILITY_BINS = 5


def brier_score(samples: np.ndarray, truth: np.ndarray, budget: np.ndarray) -> float:
    """Mean of ``(P(work <= budget) - 1{truth <= budget})^2`` over cases.

    ``P`` is the share of samples within the budget, as in
    :meth:`mara_env.predictors.base.RemainingWork.success_probability`.

    Example:
        >>> brier_score(np.array([[1.0, 3.0], [np.inf, np.inf]]), np.array([1.0, np.inf]),
        ...             np.array([2.0, 2.0]))
        0.125
    """
    return forecast_brier(*success_forecasts(samples, truth, budget, "brier_score"))


def forecast_brier(probability: np.ndarray, outcome: np.ndarray) -> float:
    return float(np.mean((probability - outcome) ** 2))


def success_forecasts(
    samples: np.ndarray, truth: np.ndarray, budget: np.ndarray, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per case, the predicted probability of needing at most ``budget`` (the share of samples
    within it) and whether the truth did (1.0 or 0.0); bad input reported as from ``where``."""
    samples = check_samples(samples, where)
    truth = check_truth(truth, len(samples), where)
    budget = check_per_case(budget, len(samples), "budget", where)
    probability = np.mean(samples <= budget[:, None], axis=1)
    return probability, (truth <= budget).astype(np.float64)


def success_reliability(
    samples: np.ndarray, truth: np.ndarray, budget: np.ndarray, bins: int = RELIABILITY_BINS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reliability table of P(work <= budget) (as :func:`brier_score` predicts it).

    Cases are put in ``bins`` bins of equal width by predicted probability (a probability of 1
    in the last bin).

    Returns:
        Per bin: the number of cases, their mean predicted probability and the share of them
        whose truth was within the budget (both NaN for an empty bin).

    Example:
        >>> samples = np.array([[1.0, 1.0], [1.0, 9.0], [9.0, 9.0], [1.0, 9.0]])
        >>> cases, predicted, observed = success_reliability(
        ...     samples, np.array([1.0, 1.0, 1.0, 9.0]), np.full(4, 2.0), bins=2)
        >>> cases.tolist(), predicted.tolist(), observed.tolist()
        ([1.0, 3.0], [0.0, 0.6666666666666666], [1.0, 0.6666666666666666])
    """
    probability, outcome = success_forecasts(samples, truth, budget, "success_reliability")
    return _reliability(probability, outcome, _check_bins(bins, "success_reliability"))


def _reliability(
    probability: np.ndarray, outcome: np.ndarray, bins: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`success_reliability` of forecasts already made."""
    index = _probability_bins(probability, bins)
    cases = np.bincount(index, minlength=bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        predicted = np.bincount(index, weights=probability, minlength=bins) / cases
        observed = np.bincount(index, weights=outcome, minlength=bins) / cases
    return cases, predicted, observed


def success_calibration_error(
    samples: np.ndarray, truth: np.ndarray, budget: np.ndarray, bins: int = RELIABILITY_BINS
) -> float:
    """The mean of ``|mean predicted - observed share|`` over the bins of
    :func:`success_reliability`, weighted by their cases: 0 when every bin's predictions come
    true as often as they say. Even then a finite sample scores above 0 by chance.

    Example:
        >>> samples = np.array([[1.0, 9.0]] * 4)  # P = 0.5 each; two of four succeed
        >>> success_calibration_error(samples, np.array([1.0, 1.0, 9.0, 9.0]), np.full(4, 2.0))
        0.0
        >>> success_calibration_error(samples, np.array([1.0, 1.0, 1.0, 9.0]), np.full(4, 2.0))
        0.25
    """
    probability, outcome = success_forecasts(samples, truth, budget, "success_calibration_error")
    return forecast_calibration_error(
        probability, outcome, _check_bins(bins, "success_calibration_error")
    )


def forecast_calibration_error(probability: np.ndarray, outcome: np.ndarray, bins: int) -> float:
    """:func:`success_calibration_error` of forecasts already made."""
    index = _probability_bins(probability, bins)
    weights = np.ones((1, len(index)))
    return float(_calibration_errors(weights, index, probability - outcome, bins)[0])


def _check_bins(bins: int, where: str) -> int:
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
        raise MetricInputError(f"{where}: bins must be an int >= 1, got {bins!r}.")
    return bins


def _probability_bins(probability: np.ndarray, bins: int) -> np.ndarray:
    """The bin of each probability among ``bins`` of equal width on [0, 1] (1 in the last)."""
    return np.minimum((probability * bins).astype(np.intp), bins - 1)


def _calibration_errors(
    weights: np.ndarray, index: np.ndarray, gap: np.ndarray, bins: int
) -> np.ndarray:
    """The calibration error of each row of ``(count, n_cases)`` case weights: with each case's
    bin ``index`` and ``gap`` (predicted probability minus outcome), the sum over bins of the
    weighted gaps' absolute sum, over the total weight."""
    in_bin = np.zeros((len(index), bins))
    in_bin[np.arange(len(index)), index] = gap
    return np.abs(weights @ in_bin).sum(axis=1) / weights.sum(axis=1)


def forecast_calibration_error_interval(
    probability: np.ndarray,
    outcome: np.ndarray,
    rng: np.random.Generator,
    groups: np.ndarray | None,
    resamples: int,
    confidence: float,
) -> tuple[float, float]:
    """The bootstrap interval of :func:`success_calibration_error`, resampling whole
    ``groups`` as :func:`bootstrap_mean_interval` does (the bins are kept; their cases vary),
    of forecasts already made."""
    index = _probability_bins(probability, RELIABILITY_BINS)
    gap = probability - outcome

    def errors(weights: np.ndarray) -> np.ndarray:
        return _calibration_errors(weights, index, gap, RELIABILITY_BINS)

    return bootstrap_interval(len(gap), groups, rng, errors, resamples, confidence, "score_cell")


#: What :func:`reliability_scores` gives of each bin: its cases, mean prediction, observed share.
RELIABILITY_PARTS = ("cases", "predicted", "observed")


def reliability_column(index: int, part: str) -> str:
    """The key of bin ``index``'s ``part`` (one of :data:`RELIABILITY_PARTS`) in
    :func:`reliability_scores`.

    Example:
        >>> reliability_column(2, "observed")
        'success_bin2_observed'
    """
    return f"success_bin{index}_{part}"


#: The keys of :func:`reliability_scores`, bin by bin.
RELIABILITY_COLUMNS = tuple(
    reliability_column(index, part)
    for index in range(RELIABILITY_BINS)
    for part in RELIABILITY_PARTS
)


def reliability_scores(
    samples: np.ndarray, truth: np.ndarray, budget: np.ndarray
) -> dict[str, float]:
    """:func:`success_reliability` as flat scores, keyed by :data:`RELIABILITY_COLUMNS`
    (``success_bin0_cases``, ``success_bin0_predicted``, ``success_bin0_observed``, then bin 1...).

    Example:
        >>> scores = reliability_scores(np.array([[1.0, 9.0]]), np.array([1.0]), np.array([2.0]))
        >>> scores["success_bin2_cases"], scores["success_bin2_predicted"], scores["success_bin0_cases"]
        (1.0, 0.5, 0.0)
    """
    return forecast_reliability_scores(
        *success_forecasts(samples, truth, budget, "reliability_scores")
    )


def forecast_reliability_scores(probability: np.ndarray, outcome: np.ndarray) -> dict[str, float]:
    """:func:`reliability_scores` of forecasts already made."""
    table = np.stack(_reliability(probability, outcome, RELIABILITY_BINS), axis=1)
    return dict(zip(RELIABILITY_COLUMNS, table.ravel().tolist(), strict=True))
