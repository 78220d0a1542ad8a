"""LARA's progress estimator: a discounted ridge least-squares fit of a power law in log space.

The loss is modelled as ``l(s) = a * (s + s0) ** (-b)``, i.e. ``ln l = -b ln(s + s0) + ln a``:
linear in the features ``x = [ln(s + s0), 1]``. The fit minimises
``sum_i gamma**(n-i) (ln l_i - <x_i, theta>)**2 + ridge * |theta|**2``, so recent points weigh
more; its solution ``theta = V^-1 r`` with ``V = ridge I + sum gamma**(n-i) x_i x_i^T`` and
``r = sum gamma**(n-i) x_i ln l_i`` is updated recursively at constant cost per new point
(:class:`DiscountedLeastSquares`). ``s0`` (one work unit) keeps the logarithm finite at s = 0.

The work still needed follows by extrapolation: ``s* = (a / target) ** (1 / b) - s0`` and
remaining ``max(0, s* - s)``, infinite when ``b <= 0`` (the fit does not decrease). For a
distribution, parameters are drawn from ``N(theta, sigma^2 V^-1)`` with ``sigma^2`` the weighted
residual variance: the usual least-squares uncertainty, not part of LARA itself.

Example:
    >>> import numpy as np
    >>> work = np.arange(0.0, 50.0)
    >>> history = TaskHistory(work, 2.0 * (work + 1.0) ** -0.5, target=0.2)
    >>> remaining = WLS().predict([history], 1, np.random.default_rng(0))
    >>> round(float(remaining.samples[0, 0]), 3)  # (2 / 0.2) ** 2 - 1 - 49
    50.0
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from mara_env.predictors.base import PredictorInputError, RemainingWork, TaskHistory


@dataclass
class DiscountedLeastSquares:
    """Recursive discounted ridge least squares on two features, at constant cost per point.

    Attributes:
        gamma: Forgetting factor in (0, 1]: a point's weight shrinks by ``gamma`` per newer point.
        ridge: Ridge penalty ``lambda`` (not discounted).
    """

    gamma: float = 0.95
    ridge: float = 1e-6
    gram: np.ndarray = field(default_factory=lambda: np.zeros((2, 2)))
    moment: np.ndarray = field(default_factory=lambda: np.zeros(2))
    squares: float = 0.0
    weight: float = 0.0

    def update(self, features: np.ndarray, target: float) -> None:
        """Add one point: discount everything so far by ``gamma``, then add the point."""
        self.gram = self.gamma * self.gram + np.outer(features, features)
        self.moment = self.gamma * self.moment + features * target
        self.squares = self.gamma * self.squares + target * target
        self.weight = self.gamma * self.weight + 1.0

    @property
    def precision(self) -> np.ndarray:
        """``V = ridge I + sum gamma**(n-i) x_i x_i^T``."""
        return self.gram + self.ridge * np.eye(2)

    @property
    def theta(self) -> np.ndarray:
        """The fitted parameters ``V^-1 r``."""
        return np.linalg.solve(self.precision, self.moment)

    @property
    def residual_variance(self) -> float:
        """Weighted mean squared residual, with two degrees of freedom used by the fit."""
        theta = self.theta
        residual = self.squares - 2.0 * theta @ self.moment + theta @ self.gram @ theta
        return max(float(residual), 0.0) / max(self.weight - 2.0, 1.0)


def _discounts(gamma: float, longest: int) -> np.ndarray:
    """Weights ``gamma**(size-1), ..., gamma, 1`` of the last ``size >= longest`` points, oldest
    first (a task of ``n`` points uses the last ``n``)."""
    size = max(64, 1 << (longest - 1).bit_length())  # few distinct sizes, so the cache stays small
    return _discount_table(float(gamma), size)


@lru_cache(maxsize=16)
def _discount_table(gamma: float, size: int) -> np.ndarray:
    table = gamma ** np.arange(size - 1, -1, -1, dtype=np.float64)
    table.flags.writeable = False
    return table


@dataclass(frozen=True)
class BatchFit:
    """The discounted ridge fits of a batch of tasks, one row per task.

    Equal (up to rounding) to running :class:`DiscountedLeastSquares` over each task's history,
    but computed for all tasks at once: after ``n`` points the recursion weighs point ``i`` by
    ``gamma**(n-1-i)``, so the weighted sums of all tasks are taken directly, in one segmented
    sum over the concatenated histories.

    Attributes:
        theta: ``(n_tasks, 2)`` fitted ``[slope, intercept]``.
        inverse_precision: ``(n_tasks, 3)`` entries ``(p11, p12, p22)`` of the symmetric ``V^-1``.
        residual_variance: ``(n_tasks,)`` weighted residual variance ``sigma^2``.
    """

    theta: np.ndarray
    inverse_precision: np.ndarray
    residual_variance: np.ndarray

    @property
    def covariance(self) -> np.ndarray:
        """``(n_tasks, 2, 2)`` parameter covariances ``sigma^2 V^-1``."""
        p11, p12, p22 = self.inverse_precision.T
        matrices = np.stack((p11, p12, p12, p22), axis=-1).reshape(-1, 2, 2)
        return self.residual_variance[:, None, None] * matrices


@dataclass(frozen=True)
class WLS:
    """The LARA estimator as a :class:`mara_env.predictors.base.Predictor`.

    :meth:`predict` takes the weighted sums of every task of the batch at once (as
    :meth:`fit_batch` does), solves each task's 2x2 system in plain floats and draws all
    parameter samples with one call of the generator: a few NumPy calls per batch, whatever its
    size. :meth:`fit` and :meth:`remaining_work` are the per-task reference it is tested against.

    Attributes:
        gamma: Forgetting factor of the discounted fit.
        ridge: Ridge penalty.
        offset: ``s0``, added to the work before taking logarithms.
    """

    gamma: float = 0.95
    ridge: float = 1e-6
    offset: float = 1.0
    name: str = "wls"

    def fit(self, history: TaskHistory) -> DiscountedLeastSquares:
        """The recursive fit of one task's whole history."""
        fit = DiscountedLeastSquares(gamma=self.gamma, ridge=self.ridge)
        for work, loss in zip(history.work.tolist(), history.loss.tolist(), strict=True):
            fit.update(np.array([np.log(work + self.offset), 1.0]), float(np.log(loss)))
        return fit

    def remaining_work(self, history: TaskHistory, theta: np.ndarray) -> np.ndarray:
        """Remaining work for parameter rows ``theta = [[slope, intercept], ...]``."""
        if history.loss[-1] <= history.target:
            return np.zeros(len(theta))
        slope, intercept = theta[:, 0], theta[:, 1]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            needed = np.exp((np.log(history.target) - intercept) / slope) - self.offset
        remaining = np.maximum(needed - history.work[-1], 0.0)
        return np.where(slope < 0, remaining, np.inf)

    def _weighted_sums(self, histories: Sequence[TaskHistory]) -> list[tuple[float, ...]]:
        """Per task, with ``x = ln(s + s0)``, ``y = ln l`` and ``w = gamma**age`` (age 0: the
        newest point): ``(sum w x^2, sum w x, sum w, sum w x y, sum w y, sum w y^2)``."""
        lengths = [h.loss.size for h in histories]
        n_points = sum(lengths)
        discounts = _discounts(self.gamma, max(lengths))
        size = discounts.size
        weights = np.concatenate([discounts[size - n :] for n in lengths])
        logs = np.concatenate([h.work for h in histories] + [h.loss for h in histories])
        logs[:n_points] += self.offset
        np.log(logs, out=logs)
        features = logs.reshape(2, n_points)  # rows x and y
        weighted = weights * features  # rows w x and w y
        products = weighted[:, None, :] * features  # w x x, w x y, w y x, w y y
        # Rows: w, w x, w y, w x x, w x y, w y x, w y y; summed over each task's points at once.
        terms = np.concatenate((weights[None, :], weighted, products.reshape(4, n_points)))
        starts = list(itertools.accumulate(lengths[:-1], initial=0))
        sums = np.add.reduceat(terms, starts, axis=1).tolist()
        return list(zip(sums[3], sums[1], sums[0], sums[4], sums[2], sums[6], strict=True))

    def _solve(
        self,
        gram_11: float,
        gram_12: float,
        gram_22: float,
        moment_1: float,
        moment_2: float,
        squares: float,
    ) -> tuple[float, float, float, float, float, float]:
        """``slope, intercept, v11, v22, det V, sigma^2`` of one task from its weighted sums."""
        ridge = self.ridge
        v_11, v_22 = gram_11 + ridge, gram_22 + ridge
        determinant = v_11 * v_22 - gram_12 * gram_12
        slope = (v_22 * moment_1 - gram_12 * moment_2) / determinant
        intercept = (v_11 * moment_2 - gram_12 * moment_1) / determinant
        # With theta = V^-1 r: theta^T G theta = theta^T r - ridge |theta|^2.
        residual = (
            squares - slope * moment_1 - intercept * moment_2 - ridge * (slope**2 + intercept**2)
        )
        variance = max(residual, 0.0) / max(gram_22 - 2.0, 1.0)
        return slope, intercept, v_11, v_22, determinant, variance

    def fit_batch(self, histories: Sequence[TaskHistory]) -> BatchFit:
        """The fits of every history at once (see :class:`BatchFit`).

        Example:
            >>> work = np.arange(0.0, 30.0)
            >>> history = TaskHistory(work, 3.0 * (work + 1.0) ** -0.7, target=0.1)
            >>> slope, intercept = WLS(ridge=1e-12).fit_batch([history]).theta[0]
            >>> round(float(slope), 6), round(float(np.exp(intercept)), 6)
            (-0.7, 3.0)
        """
        if not histories:
            return BatchFit(np.zeros((0, 2)), np.zeros((0, 3)), np.zeros(0))
        rows = []
        for sums in self._weighted_sums(histories):
            slope, intercept, v_11, v_22, determinant, variance = self._solve(*sums)
            gram_12 = sums[1]
            inverse = (v_22 / determinant, -gram_12 / determinant, v_11 / determinant)
            rows.append((slope, intercept, *inverse, variance))
        table = np.array(rows)
        return BatchFit(table[:, :2], table[:, 2:5], table[:, 5])

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of remaining work; ``n_samples == 1`` gives the point estimate.

        Parameters are drawn from ``N(theta, sigma^2 V^-1)`` (through the Cholesky factor of
        the 2x2 ``V^-1``, one ``standard_normal`` call for the whole batch); histories of fewer
        than three points use the point estimate.

        Raises:
            PredictorInputError: If ``n_samples`` is not an int >= 1.
        """
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
            raise PredictorInputError(f"WLS.predict: n_samples must be an int, got {n_samples!r}.")
        if n_samples < 1:
            raise PredictorInputError(f"WLS.predict: n_samples must be >= 1, got {n_samples}.")
        if not histories:
            return RemainingWork(np.zeros((0, n_samples)))
        rows, reached = [], []
        sample, offset, ridge = n_samples > 1, self.offset, self.ridge
        log, sqrt = math.log, math.sqrt
        for row, (history, (g_11, g_12, g_22, m_1, m_2, squares)) in enumerate(
            zip(histories, self._weighted_sums(histories), strict=True)
        ):
            # The normal equations of _solve, inlined: this loop runs for every task.
            v_11, v_22 = g_11 + ridge, g_22 + ridge
            determinant = v_11 * v_22 - g_12 * g_12
            slope = (v_22 * m_1 - g_12 * m_2) / determinant
            intercept = (v_11 * m_2 - g_12 * m_1) / determinant
            loss, target = history.loss, history.target
            # Cholesky factor [[c11, 0], [c21, c22]] of sigma^2 V^-1, V^-1 = [[v22, -g12],
            # [-g12, v11]] / det: c11 = sigma sqrt(v22 / det), c21 = -c11 g12 / v22,
            # c22 = sigma / sqrt(v22).
            c_11 = c_21 = c_22 = 0.0
            if sample and loss.size >= 3:
                residual = (
                    squares - slope * m_1 - intercept * m_2 - ridge * (slope**2 + intercept**2)
                )
                variance = max(residual, 0.0) / max(g_22 - 2.0, 1.0)
                c_22 = sqrt(variance / v_22)
                c_11 = c_22 * v_22 / sqrt(determinant)
                c_21 = -c_11 * g_12 / v_22
            # Per task: the slope and ln(target) - intercept, the factor that draws them (signs
            # flipped in the second row), and s + s0.
            rows.append(
                (
                    slope,
                    log(target) - intercept,
                    c_11,
                    0.0,
                    -c_21,
                    -c_22,
                    history.work.item(-1) + offset,
                )
            )
            if loss.item(-1) <= target:
                reached.append(row)
        table = np.array(rows)
        if n_samples > 1:
            noise = rng.standard_normal((len(histories), 2, n_samples))
            parameters = table[:, 2:6].reshape(-1, 2, 2) @ noise
            parameters += table[:, 0:2, None]
            slopes, gaps = parameters[:, 0], parameters[:, 1]
        else:
            slopes, gaps = table[:, 0:1], table[:, 1:2]
        # ln(s* + s0) = (ln target - intercept) / slope where the slope is negative, and
        # infinite (never) elsewhere; s* beyond exp(709) overflows to inf, "never" too.
        log_needed = np.divide(gaps, slopes, out=np.full(slopes.shape, np.inf), where=slopes < 0)
        with np.errstate(over="ignore"):
            remaining = np.exp(log_needed)
        remaining -= table[:, 6:7]
        np.maximum(remaining, 0.0, out=remaining)
        if reached:
            remaining[reached] = 0.0
        return RemainingWork(remaining)
