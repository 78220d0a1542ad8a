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

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from predictors.base import RemainingWork, TaskHistory


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


@dataclass(frozen=True)
class WLS:
    """The LARA estimator as a :class:`predictors.base.Predictor`.

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
            log_needed = (np.log(history.target) - intercept) / slope
            needed = np.exp(np.minimum(log_needed, 700.0)) - self.offset
        remaining = np.maximum(needed - history.work[-1], 0.0)
        return np.where(slope < 0, remaining, np.inf)

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of remaining work; ``n_samples == 1`` gives the point estimate."""
        rows = []
        for history in histories:
            fit = self.fit(history)
            theta = fit.theta
            if n_samples == 1 or len(history.loss) < 3:
                draws = np.repeat(theta[None, :], n_samples, axis=0)
            else:
                covariance = fit.residual_variance * np.linalg.inv(fit.precision)
                draws = rng.multivariate_normal(theta, covariance, size=n_samples)
            rows.append(self.remaining_work(history, draws))
        return RemainingWork(np.array(rows).reshape(len(histories), n_samples))
