"""Scores of predicted remaining work against the truth, where "never" is a possible answer.

Every function takes predictions as samples, ``samples[i, j]`` = the ``j``-th sampled remaining
work of case ``i`` (``inf``: the target is never reached), and the true remaining work
``truth[i]`` (``inf`` for an infeasible case). Work is in curve steps; ``cap[i] >= 1`` bounds
the work that is scored as a finite amount (the prediction benchmark uses four curve lengths, see
:mod:`mara_env.predictors.cases`): :func:`score_predictions` and :func:`score_cell` read every sample
beyond it as "never" (:func:`beyond_cap_as_never`), so that all their scores agree on what a
prediction of "never" is. Quantiles are sample values (the inverted-CDF rule, as in
:meth:`mara_env.predictors.base.RemainingWork.quantiles`): the ``q``-quantile of ``n`` samples is the
``ceil(q * n)``-th smallest, so no interpolation ever meets an ``inf``.

Metrics (all pure NumPy):

* :func:`log_ratio_errors` / :func:`median_log_ratio_error`: ``|ln(c(m) / c(y))|`` with ``m``
  the sample median, ``y`` the truth and ``c(v) = min(max(v, 1), cap)``, on feasible cases. A
  median of "never" scores ``ln(cap / c(y))``: the largest error a finite prediction could have.
  :func:`log_ratios` / :func:`median_log_ratio` keep the sign: above 0 the median predicts more
  work than was needed (pessimistic), below 0 less (optimistic).
* :func:`infeasibility_auc`: ROC AUC of ``P(never)`` (the share of infinite samples) for telling
  infeasible cases from feasible ones; the Mann–Whitney statistic with ties counting one half.
* :func:`interval_covered` / :func:`interval_coverage`: whether the truth lies in the central
  interval between the sample quantiles ``(1 - level) / 2`` and ``(1 + level) / 2``. An infinite
  truth is covered iff the upper quantile is ``inf``. :func:`interval_misses` tells the two ways
  it fails apart (the truth below the interval or above it). With ``n`` exchangeable samples the
  interval ``[X_(ceil(0.1 n)), X_(ceil(0.9 n))]`` covers a new draw with probability
  ``(ceil(0.9 n) - ceil(0.1 n)) / (n + 1)``: 0.785 for 64 samples, 0.758 for 32.
* :func:`crps_log_work`: the continuous ranked probability score of ``x = ln(1 + min(work, cap))``,
  ``CRPS(F, y) = integral (F(x) - 1{x >= y})^2 dx = E|X - y| - E|X - X'| / 2``, computed in
  ``O(n log n)`` from sorted samples.
* :func:`brier_score`, :func:`success_reliability`, :func:`success_calibration_error`: the
  scores of the predicted probability of reaching the target within a work budget, from
  :mod:`mara_env.predictors.success_scores` (imported here too).

* :func:`median_says_never` / :func:`never_share`: whether a case's sample median is "never",
  and the share of such cases among some of them (e.g. the reachable targets past a curve length).

Intervals (:mod:`mara_env.predictors.bootstrap`; 95% by default) resample whole groups of cases (the
prediction benchmark passes each case's curve): cases drawn from one curve are not independent.

:func:`score_predictions` computes all point scores for one batch; :func:`score_cell` adds the
intervals and the "never" shares.

Example:
    >>> import numpy as np
    >>> samples = np.array([[9.0, 10.0, 11.0], [np.inf, np.inf, 50.0]])
    >>> truth = np.array([10.0, np.inf])
    >>> scores = score_predictions(samples, truth, cap=np.array([400.0, 400.0]),
    ...                            budget=np.array([20.0, 20.0]))
    >>> scores["median_log_error"], scores["infeasibility_auc"], scores["coverage_80"]
    (0.0, 1.0, 1.0)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mara_env.predictors.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    CONFIDENCE,
    MetricInputError,
    bootstrap_mean_interval,
    bootstrap_median_interval,
)
from mara_env.predictors.metric_inputs import check_cap, check_samples, check_truth
from mara_env.predictors.success_scores import (
    RELIABILITY_BINS,
    RELIABILITY_COLUMNS,
    brier_score,
    forecast_brier,
    forecast_calibration_error,
    forecast_calibration_error_interval,
    forecast_reliability_scores,
    reliability_scores,
    success_calibration_error,
    success_forecasts,
    success_reliability,
)

__all__ = [
    "INTERVAL_LEVEL",
    "MIN_FEASIBLE_CASES",
    "RELIABILITY_BINS",
    "RELIABILITY_COLUMNS",
    "beyond_cap_as_never",
    "brier_score",
    "crps_log_work",
    "infeasibility_auc",
    "interval_coverage",
    "interval_covered",
    "interval_misses",
    "log_ratio_errors",
    "log_ratios",
    "median_log_ratio",
    "median_log_ratio_error",
    "median_says_never",
    "midranks",
    "never_probability",
    "never_share",
    "reliability_scores",
    "sample_quantiles",
    "score_cell",
    "score_predictions",
    "success_calibration_error",
    "success_reliability",
]

#: The central interval scored by :func:`interval_coverage` by default.
INTERVAL_LEVEL = 0.8
#: Cells with fewer feasible cases than this are too small to score: the prediction benchmark
#: reports them as such, and calibration (:mod:`mara_env.predictors.calibration`) does not fit to them.
MIN_FEASIBLE_CASES = 30


def sample_quantiles(samples: np.ndarray, level: float) -> np.ndarray:
    """The ``level`` quantile of each case's samples: the ``ceil(level * n)``-th smallest.

    Example:
        >>> sample_quantiles(np.array([[4.0, 1.0, 3.0, 2.0], [1.0, np.inf, np.inf, 2.0]]), 0.5)
        array([2., 2.])
    """
    samples = check_samples(samples, "sample_quantiles")
    if not 0.0 < level <= 1.0:
        raise MetricInputError(f"sample_quantiles: level must be in (0, 1], got {level}.")
    return np.quantile(samples, level, axis=1, method="inverted_cdf")


def log_ratios(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Per case ``ln(c(median) / c(truth))``, ``c(v) = min(max(v, 1), cap)``; NaN where the
    truth is infinite (infeasible cases have no remaining work to be wrong about).

    Example:
        >>> log_ratios(np.array([[20.0], [np.inf], [3.0]]), np.array([10.0, 10.0, np.inf]),
        ...            np.array([40.0, 40.0, 40.0])).round(4).tolist()
        [0.6931, 1.3863, nan]
        >>> log_ratios(np.array([[5.0]]), np.array([10.0]), np.array([40.0])).round(4).tolist()
        [-0.6931]
    """
    return _log_ratios(samples, truth, cap, "log_ratios")


def _log_ratios(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray, where: str) -> np.ndarray:
    """:func:`log_ratios`, its bad input reported as coming from ``where``."""
    samples = check_samples(samples, where)
    truth = check_truth(truth, len(samples), where)
    return _checked_log_ratios(samples, truth, check_cap(cap, len(samples), where))


def _checked_log_ratios(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """:func:`log_ratios` of arrays already checked."""
    median = np.minimum(np.maximum(sample_quantiles(samples, 0.5), 1.0), cap)
    true = np.minimum(np.maximum(truth, 1.0), cap)
    with np.errstate(invalid="ignore"):
        ratios = np.log(median) - np.log(true)
    return np.where(np.isfinite(truth), ratios, np.nan)


def log_ratio_errors(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Per case ``|ln(c(median) / c(truth))|`` (:func:`log_ratios` without its sign).

    Example:
        >>> log_ratio_errors(np.array([[20.0], [5.0], [3.0]]), np.array([10.0, 10.0, np.inf]),
        ...                  np.array([40.0, 40.0, 40.0])).round(4).tolist()
        [0.6931, 0.6931, nan]
    """
    return np.abs(_log_ratios(samples, truth, cap, "log_ratio_errors"))


def median_log_ratio(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> float:
    """Median of :func:`log_ratios` over the feasible cases (NaN if there are none): the
    direction in which the predictions err.

    Example:
        >>> ratio = median_log_ratio(np.array([[20.0], [40.0], [5.0]]),
        ...                          np.array([10.0, 10.0, 10.0]), np.array([80.0] * 3))
        >>> round(ratio, 4)  # two of three predict more work than was needed
        0.6931
    """
    return _median_over_feasible(log_ratios(samples, truth, cap), truth)


def median_log_ratio_error(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> float:
    """Median of :func:`log_ratio_errors` over the feasible cases (NaN if there are none).

    Example:
        >>> error = median_log_ratio_error(np.array([[10.0], [40.0], [1.0]]),
        ...                                np.array([10.0, 20.0, np.inf]), np.array([80.0] * 3))
        >>> round(error, 4)  # the median of 0 and ln 2
        0.3466
    """
    return _median_over_feasible(log_ratio_errors(samples, truth, cap), truth)


def _median_over_feasible(values: np.ndarray, truth: np.ndarray) -> float:
    """Median of ``values`` over the cases with a finite ``truth`` (NaN if there are none)."""
    feasible = values[np.isfinite(truth)]
    return float(np.median(feasible)) if feasible.size else float("nan")


def never_probability(samples: np.ndarray) -> np.ndarray:
    """Per case, the share of samples that say "never" (``inf``).

    Example:
        >>> never_probability(np.array([[1.0, np.inf, np.inf, 2.0]])).tolist()
        [0.5]
    """
    samples = check_samples(samples, "never_probability")
    return np.mean(np.isinf(samples), axis=1)


def midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks.

    Example:
        >>> midranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
        [3.5, 1.0, 3.5, 2.0]
    """
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    # Runs of equal values: each gets the mean of the positions it occupies.
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(len(values))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def infeasibility_auc(score: np.ndarray, infeasible: np.ndarray) -> float:
    """ROC AUC of ``score`` (e.g. ``P(never)``) for the infeasible cases.

    ``AUC = (R - n1 (n1 + 1) / 2) / (n1 n0)`` with ``R`` the sum of the infeasible cases'
    midranks, ``n1`` infeasible and ``n0`` feasible cases: the probability that a random
    infeasible case scores higher than a random feasible one, ties counting one half. NaN when
    either class is empty.

    Example:
        >>> infeasibility_auc(np.array([0.9, 0.1, 0.5, 0.5]), np.array([True, False, True, False]))
        0.875
    """
    score = np.asarray(score, dtype=np.float64)
    infeasible = np.asarray(infeasible)
    if score.ndim != 1 or infeasible.shape != score.shape or np.isnan(score).any():
        raise MetricInputError(
            f"infeasibility_auc: score and infeasible must be 1-d of one length without NaN, got "
            f"shapes {score.shape} and {infeasible.shape}."
        )
    if infeasible.dtype != np.bool_:
        raise MetricInputError("infeasibility_auc: infeasible must be a boolean array.")
    n_positive = int(infeasible.sum())
    n_negative = len(score) - n_positive
    if n_positive == 0 or n_negative == 0:
        return float("nan")
    rank_sum = float(midranks(score)[infeasible].sum())
    return (rank_sum - n_positive * (n_positive + 1) / 2.0) / (n_positive * n_negative)


def interval_covered(
    samples: np.ndarray, truth: np.ndarray, level: float = INTERVAL_LEVEL
) -> np.ndarray:
    """Per case, whether ``q_lo <= truth <= q_hi`` for the central ``level`` sample interval.

    ``q_lo``, ``q_hi`` are the ``(1 - level) / 2`` and ``(1 + level) / 2`` sample quantiles; an
    infinite truth is covered iff ``q_hi`` is infinite.

    Example:
        >>> samples = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]] * 3)
        >>> interval_covered(samples, np.array([1.0, 5.0, 6.0])).tolist()
        [True, True, False]
    """
    below, above = _interval_misses(samples, truth, level, "interval_covered")
    return ~(below | above)


def interval_misses(
    samples: np.ndarray, truth: np.ndarray, level: float = INTERVAL_LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """Per case, whether the truth lies below the central ``level`` interval (``truth < q_lo``)
    and whether above it (``truth > q_hi``; an infinite truth iff ``q_hi`` is finite): the two
    ways :func:`interval_covered` fails. Below means more work was predicted than was needed.

    Example:
        >>> samples = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]] * 3)
        >>> below, above = interval_misses(samples, np.array([0.5, 3.0, np.inf]))
        >>> below.tolist(), above.tolist()
        ([True, False, False], [False, False, True])
    """
    return _interval_misses(samples, truth, level, "interval_misses")


def _interval_misses(
    samples: np.ndarray, truth: np.ndarray, level: float, where: str
) -> tuple[np.ndarray, np.ndarray]:
    samples = check_samples(samples, where)
    truth = check_truth(truth, len(samples), where)
    if not 0.0 < level < 1.0:
        raise MetricInputError(f"{where}: level must be in (0, 1), got {level}.")
    low = sample_quantiles(samples, (1.0 - level) / 2.0)
    high = sample_quantiles(samples, (1.0 + level) / 2.0)
    return truth < low, truth > high


def interval_coverage(
    samples: np.ndarray, truth: np.ndarray, level: float = INTERVAL_LEVEL
) -> float:
    """Share of cases whose truth lies in the central ``level`` interval (see
    :func:`interval_covered`).

    Example:
        >>> interval_coverage(np.array([[1.0, 2.0], [5.0, 6.0]]), np.array([1.5, 1.5]))
        0.5
    """
    return float(np.mean(interval_covered(samples, truth, level)))


def crps_log_work(samples: np.ndarray, truth: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Per case, the CRPS of ``x = ln(1 + min(work, cap))`` (lower is better, 0 is perfect).

    With the empirical distribution of the ``n`` transformed samples, sorted as
    ``x_(1) <= ... <= x_(n)``::

        CRPS = mean_i |x_i - y| - (1 / n^2) * sum_i (2 i - n - 1) x_(i)

    since ``sum_{i,j} |x_i - x_j| = 2 sum_i (2 i - n - 1) x_(i)``. This equals
    ``integral (F_n(x) - 1{x >= y})^2 dx`` exactly. "Never" maps to ``ln(1 + cap)``, so a
    confident "never" on an infeasible case scores 0.

    Example:
        >>> crps_log_work(np.array([[np.e - 1.0]]), np.array([0.0]), np.array([100.0])).round(12)
        array([1.])
    """
    samples = check_samples(samples, "crps_log_work")
    truth = check_truth(truth, len(samples), "crps_log_work")
    cap = check_cap(cap, len(samples), "crps_log_work")
    x = np.sort(np.log1p(np.minimum(samples, cap[:, None])), axis=1)
    y = np.log1p(np.minimum(truth, cap))
    n = x.shape[1]
    spread_weights = (2.0 * np.arange(1, n + 1) - n - 1.0) / n**2
    crps = np.mean(np.abs(x - y[:, None]), axis=1) - x @ spread_weights
    return np.maximum(crps, 0.0)  # >= 0 exactly; rounding can leave -1e-17


def beyond_cap_as_never(samples: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """``samples`` with every value beyond its case's ``cap`` replaced by ``inf`` ("never").

    A finite prediction past the cap scores as "never" in the error and the CRPS (they clip at
    the cap); reading it as "never" everywhere lets the "never" probability, the coverage of an
    infeasible case and the "never" shares agree with them.

    Example:
        >>> beyond_cap_as_never(np.array([[5.0, 500.0, np.inf]]), np.array([400.0])).tolist()
        [[5.0, inf, inf]]
    """
    return np.where(samples > cap[:, None], np.inf, samples)


def score_predictions(
    samples: np.ndarray, truth: np.ndarray, cap: np.ndarray, budget: np.ndarray
) -> dict[str, float]:
    """Every metric of this module for one batch of cases, samples beyond ``cap`` read as
    "never" (:func:`beyond_cap_as_never`).

    Keys: ``cases``, ``feasible_cases``, ``infeasible_cases``, ``median_log_error`` and
    ``median_log_ratio`` (feasible cases),
    ``infeasibility_auc``, ``coverage_80``, ``crps_log`` (mean over cases) and ``brier``.

    Raises:
        MetricInputError: If the arrays do not describe the same cases, or hold NaN.
    """
    return _scores(_scored_cases(samples, truth, cap, budget, "score_predictions"))


class _ScoredCases(NamedTuple):
    """A batch of cases, checked, with what every score reads of them computed once."""

    samples: np.ndarray  # samples beyond the cap read as "never"
    truth: np.ndarray
    cap: np.ndarray
    ratios: np.ndarray  # :func:`log_ratios`
    below: np.ndarray  # :func:`interval_misses` at INTERVAL_LEVEL
    above: np.ndarray
    probability: np.ndarray  # P(work <= budget) and whether it happened (:func:`brier_score`)
    outcome: np.ndarray


def _scored_cases(
    samples: np.ndarray, truth: np.ndarray, cap: np.ndarray, budget: np.ndarray, where: str
) -> _ScoredCases:
    """Checked cases (at least one), samples beyond the cap read as "never", with their
    :func:`log_ratios`, interval misses and deadline forecasts."""
    samples = check_samples(samples, where)
    truth = check_truth(truth, len(samples), where)
    if len(samples) == 0:
        raise MetricInputError(f"{where}: there are no cases to score.")
    cap = check_cap(cap, len(samples), where)
    samples = beyond_cap_as_never(samples, cap)
    below, above = _interval_misses(samples, truth, INTERVAL_LEVEL, where)
    return _ScoredCases(
        samples,
        truth,
        cap,
        _checked_log_ratios(samples, truth, cap),
        below,
        above,
        *success_forecasts(samples, truth, budget, where),
    )


def _scores(cases: _ScoredCases) -> dict[str, float]:
    """:func:`score_predictions` of :func:`_scored_cases`."""
    samples, truth, cap, ratios, below, above, probability, outcome = cases
    infeasible = np.isinf(truth)
    return {
        "cases": float(len(samples)),
        "feasible_cases": float(len(samples) - infeasible.sum()),
        "infeasible_cases": float(infeasible.sum()),
        "median_log_error": _median_over_feasible(np.abs(ratios), truth),
        "median_log_ratio": _median_over_feasible(ratios, truth),
        "infeasibility_auc": infeasibility_auc(never_probability(samples), infeasible),
        "coverage_80": float(np.mean(~(below | above))),
        "below_80": float(np.mean(below)),
        "above_80": float(np.mean(above)),
        "crps_log": float(np.mean(crps_log_work(samples, truth, cap))),
        "brier": forecast_brier(probability, outcome),
        "success_calibration_error": forecast_calibration_error(
            probability, outcome, RELIABILITY_BINS
        ),
    }


def median_says_never(samples: np.ndarray) -> np.ndarray:
    """Per case, whether the sample median (inverted-CDF rule) is "never".

    Example:
        >>> median_says_never(np.array([[1.0, np.inf, np.inf], [1.0, 2.0, np.inf]])).tolist()
        [True, False]
    """
    return np.isinf(sample_quantiles(samples, 0.5))


def never_share(samples: np.ndarray, where: np.ndarray) -> tuple[float, int]:
    """The share of the cases selected by the boolean mask ``where`` whose median is "never",
    and how many cases were selected (share NaN when none).

    Example:
        >>> never_share(np.array([[np.inf], [2.0], [np.inf]]), np.array([True, True, False]))
        (0.5, 2)
    """
    says_never = median_says_never(samples)
    where = np.asarray(where)
    if where.dtype != np.bool_ or where.shape != says_never.shape:
        raise MetricInputError(
            f"never_share: where must be a boolean mask of shape {says_never.shape}, got "
            f"{where.dtype} of shape {where.shape}."
        )
    count = int(where.sum())
    return (float(says_never[where].mean()) if count else float("nan")), count


def score_cell(
    samples: np.ndarray,
    truth: np.ndarray,
    cap: np.ndarray,
    budget: np.ndarray,
    beyond: np.ndarray,
    rng: np.random.Generator,
    *,
    groups: np.ndarray | None = None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, float]:
    """:func:`score_predictions` plus intervals and "never" shares for one cell of cases.

    Adds ``median_log_error_low`` / ``_high`` (:func:`bootstrap_median_interval` of the feasible
    cases' errors; NaN without feasible cases), ``coverage_80_low`` / ``_high``
    (:func:`bootstrap_mean_interval` of whether each case is covered) and
    ``success_calibration_error_low`` / ``_high`` (of :func:`success_calibration_error`), all
    resampling whole ``groups`` (e.g. each case's curve; default: each case alone) with draws
    from ``rng``; among feasible cases, the share whose median is "never" and their count,
    before (``never_before``, ``never_before_cases``) and after (``never_after``,
    ``never_after_cases``) a point: ``beyond[i]`` says the target of case ``i`` is first reached
    after it; and the reliability table of the deadline probability
    (:func:`reliability_scores`). Samples beyond ``cap`` read as "never" throughout.

    Raises:
        MetricInputError: As :func:`score_predictions`, or for a bad ``beyond`` mask or
            ``groups``.

    Example:
        >>> samples = np.array([[9.0, 10.0, 11.0], [np.inf] * 3, [5.0, np.inf, np.inf]])
        >>> truth = np.array([10.0, np.inf, 300.0])
        >>> scores = score_cell(samples, truth, np.full(3, 400.0), np.full(3, 20.0),
        ...                     np.array([False, False, True]), np.random.default_rng(0))
        >>> scores["feasible_cases"], scores["never_before"], scores["never_after"]
        (2.0, 0.0, 1.0)
    """
    cases = _scored_cases(samples, truth, cap, budget, "score_cell")
    samples, truth = cases.samples, cases.truth
    scores = _scores(cases)
    beyond = np.asarray(beyond)
    feasible = np.isfinite(truth)
    if beyond.dtype != np.bool_ or beyond.shape != feasible.shape:
        raise MetricInputError(
            f"score_cell: beyond must be a boolean mask of shape {feasible.shape}, got "
            f"{beyond.dtype} of shape {beyond.shape}."
        )
    if groups is not None and np.shape(groups) != feasible.shape:
        raise MetricInputError(
            f"score_cell: groups must label each of the {feasible.size} cases, got shape "
            f"{np.shape(groups)}."
        )
    errors = np.abs(cases.ratios[feasible])
    settings: dict[str, Any] = {"resamples": resamples, "confidence": confidence}
    low, high = (
        bootstrap_median_interval(
            errors, rng, groups=None if groups is None else np.asarray(groups)[feasible], **settings
        )
        if errors.size
        else (float("nan"), float("nan"))
    )
    covered = (~(cases.below | cases.above)).astype(np.float64)
    coverage_low, coverage_high = bootstrap_mean_interval(covered, rng, groups=groups, **settings)
    calibration_low, calibration_high = forecast_calibration_error_interval(
        cases.probability, cases.outcome, rng, groups, resamples, confidence
    )
    before, before_cases = never_share(samples, feasible & ~beyond)
    after, after_cases = never_share(samples, feasible & beyond)
    return {
        **scores,
        "median_log_error_low": low,
        "median_log_error_high": high,
        "coverage_80_low": coverage_low,
        "coverage_80_high": coverage_high,
        "success_calibration_error_low": calibration_low,
        "success_calibration_error_high": calibration_high,
        "never_before": before,
        "never_before_cases": float(before_cases),
        "never_after": after,
        "never_after_cases": float(after_cases),
        **forecast_reliability_scores(cases.probability, cases.outcome),
    }
