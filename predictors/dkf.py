"""LaiRA's Dynamic Kalman Filter (DKF): a power law whose parameters drift, tracked online.

Model (Wang, Liu, Zhou, AAAI 2026, "LaiRA", §3.1 of the project's PAPERS.md). The loss follows
``ln l = -b ln(s + s0) + ln a`` (the features ``[ln(s + s0), 1]`` and ``s0`` of
:mod:`mara_env.predictors.wls`), but ``theta = [-b, ln a]`` drifts. The filter's state is the 6-d
``Theta = [theta, theta', theta'']`` (ordered ``[-b, ln a, -b', (ln a)', -b'', (ln a)'']``) with
the second-order transition ``F = [[I, dt I, dt^2/2 I], [0, I, dt I], [0, 0, I]]`` and the
observation ``ln l(s_n) = [ln(s_n + s0), 1, 0, 0, 0, 0] . Theta + noise``. Each reported point
costs one Kalman predict and one scalar update (constant cost per point), so a scheduler keeps a
:class:`FilterState` per task and calls :meth:`DKF.update` once per new report.

Faithful to the paper: the state, the transition blocks, the observation row, the standard
predict/update, and the look-ahead feasibility test (:meth:`DKF.lookahead`): project the state
to the deadline assuming the task gets all the remaining compute and call it infeasible if even
then the predicted loss stays above the target.

Deviations, each with its reason:

* **The filter's clock is log-work.** The paper steps the filter once per report with a fixed
  ``Delta``. Here reports come once per epoch but the work between them depends on how many
  nodes the task got, and a look-ahead must be expressed in work (the caller gives extra curve
  steps). So the time between two points is ``dt = step * (ln(s_n + s0) - ln(s_{n-1} + s0))``:
  ``step`` plays the paper's ``Delta`` per unit of log-work. Power laws are straight lines in
  log-work, so drift per unit of log-work is scale-free: doubling the work always means the
  same elapsed filter time, whatever the curve's length or the task's speed.
* **Process noise** is diagonal and proportional to ``dt``
  (``Q = dt * diag(q_theta^2 I, q_drift^2 I, q_acceleration^2 I)``), so it does not depend on
  how finely the work is cut into reports. The paper leaves ``Q`` as a hyperparameter.
* **Prior.** The slope starts at ``prior_slope`` with ``prior_slope_std``; the intercept is
  anchored on the first report (``ln a = ln l_0 - prior_slope ln(s_0 + s0)``) so that scaling
  every loss and the target by a constant shifts ``ln a`` and nothing else: predictions depend
  only on loss ratios, which is all a scheduler observes. The drift starts at zero with small
  standard deviations (a warm start near zero, as the paper's small-drift assumption implies).
* **Observation noise is learnt online.** The recorded curves range from smooth (tabular) to
  very noisy (rl), and one fixed noise level either chases the noise of the latter or ignores
  the signal of the former. ``R`` starts at ``observation_noise^2`` (worth
  ``noise_prior_points`` innovations) and is refined by each innovation's squared size beyond
  what the state's own uncertainty explains (:meth:`DKF.noise_variance`), never below
  ``min_observation_noise^2``: an innovation-based adaptive Kalman filter. It is a function of
  the innovations only, so it keeps the constant cost per point and the scale invariance.
* **Bounded drift extrapolation.** Extrapolating a sampled second-order drift far ahead turns
  small posterior noise into huge swings and many spurious "never" answers, even on exact
  power laws. The drift is therefore extrapolated only over the task's own deadline horizon
  (``time_left * speed`` curve steps at one node, or the ``extra_work`` of the look-ahead), and
  never more than ``max_log_horizon`` of log-work (also the horizon when ``time_left`` is
  infinite); beyond it the parameters are frozen at their value there, i.e. the curve continues
  as a plain power law. The drift is taken at its posterior mean in samples and only ``theta``
  is sampled (from its marginal covariance), which keeps the drift's contribution smooth.
* **Remaining work distribution.** The paper uses the DKF only for the feasibility test. As a
  :class:`mara_env.predictors.base.Predictor` it also returns samples of the remaining work: ``theta``
  is drawn from the filtered posterior, the drifting curve is followed on a grid of log-work up
  to the drift horizon (first crossing of the target, linearly interpolated), then the frozen
  power law is solved in closed form; ``inf`` when the target is never crossed.

Example:
    >>> import numpy as np
    >>> work = np.arange(0.0, 30.0)
    >>> history = TaskHistory(work, 2.0 * (work + 1.0) ** -0.5, target=0.2)
    >>> dkf = DKF()
    >>> state = dkf.filter(history)
    >>> [round(float(v), 2) for v in state.mean[:2]]  # -b and ln a
    [-0.5, 0.69]
    >>> remaining = dkf.predict([history], 1, np.random.default_rng(0)).samples[0, 0]
    >>> round(float(remaining), 1)  # (2 / 0.2) ** 2 - 1 - 29
    70.0
    >>> dkf.lookahead(state, target=0.2, extra_work=100.0).feasible
    True
    >>> dkf.lookahead(state, target=0.2, extra_work=20.0).feasible
    False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from mara_env.predictors.base import PredictorInputError, RemainingWork, TaskHistory

#: Dimension of the filter state ``[theta, theta', theta'']``.
STATE_SIZE = 6
#: Points of the log-work grid on which a drifting curve is searched for the target.
_GRID_POINTS = 48
_UNIT_GRID = np.linspace(0.0, 1.0, _GRID_POINTS)
_DIAGONAL = np.diag_indices(STATE_SIZE)
#: Largest log-work the closed-form extrapolation returns before calling it "never".
_LOG_WORK_LIMIT = 700.0


@dataclass(frozen=True)
class FilterState:
    """The DKF's belief about one task after its latest report.

    Attributes:
        mean: ``(6,)`` posterior mean of ``[-b, ln a, -b', (ln a)', -b'', (ln a)'']``.
        covariance: ``(6, 6)`` posterior covariance.
        work: Work of the latest report (curve steps).
        points: Number of reports filtered so far.
        noise_excess: Sum over the innovations so far of ``max(innovation^2 - h P h^T, 0)``:
            the part of each squared innovation that the state's own uncertainty does not
            explain (the evidence for the observation noise, see :meth:`DKF.noise_variance`).
    """

    mean: np.ndarray
    covariance: np.ndarray
    work: float
    points: int
    noise_excess: float = 0.0


@dataclass(frozen=True)
class Feasibility:
    """Outcome of the look-ahead test of one task.

    Attributes:
        feasible: Whether the predicted (mean) loss reaches the target within the look-ahead.
        probability: Probability that the loss is at or below the target at the look-ahead's
            most promising point (where the predicted loss is lowest), from the projected
            covariance plus observation noise.
        best_log_loss: The lowest predicted log-loss over the look-ahead.
        best_work: Extra work at which it is reached.
        work_to_target: Extra work at which the predicted loss first reaches the target
            (interpolated between grid points; ``inf`` when it does not within the look-ahead).
        margin: ``(ln target - best_log_loss) / sd`` at that point, in predicted standard
            deviations (``probability`` is its normal CDF); a caller may recalibrate it.
    """

    feasible: bool
    probability: float
    best_log_loss: float
    best_work: float
    work_to_target: float
    margin: float


def _transition(dt: float) -> np.ndarray:
    """``F(dt)``: blocks ``I, dt I, dt^2/2 I`` acting on ``[theta, theta', theta'']``."""
    half_square = 0.5 * dt * dt
    return np.array(
        [
            [1.0, 0.0, dt, 0.0, half_square, 0.0],
            [0.0, 1.0, 0.0, dt, 0.0, half_square],
            [0.0, 0.0, 1.0, 0.0, dt, 0.0],
            [0.0, 0.0, 0.0, 1.0, 0.0, dt],
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        ]
    )


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _check_positive(name: str, value: object, *, allow_zero: bool = False) -> None:
    number = float(value) if _is_number(value) else math.nan  # type: ignore[arg-type]
    ok = math.isfinite(number) and (number >= 0 if allow_zero else number > 0)
    if not ok:
        rule = ">= 0" if allow_zero else "> 0"
        raise PredictorInputError(
            f"DKF: {name} must be a finite number {rule}, got {value!r}. See the DKF "
            "docstring for what it controls and its default."
        )


@dataclass(frozen=True)
class DKF:
    """LaiRA's Dynamic Kalman Filter as a :class:`mara_env.predictors.base.Predictor`.

    Defaults were chosen on the train split of the shipped curves (see the module docstring
    for the model and its deviations from the paper).

    Attributes:
        step: ``Delta``: filter time per unit of log-work.
        observation_noise: Prior guess of the standard deviation of the noise on a reported
            log-loss (refined online, see :meth:`noise_variance`).
        min_observation_noise: Floor of the learnt noise standard deviation.
        noise_prior_points: How many innovations the prior guess of the noise is worth.
        theta_noise: Process noise (std per unit of filter time) of ``theta``.
        drift_noise: Process noise of ``theta'``.
        acceleration_noise: Process noise of ``theta''``.
        prior_slope: Prior mean of ``-b`` (the log-log slope) before any training.
        prior_slope_std: Prior standard deviation of ``-b``.
        prior_intercept_std: Prior standard deviation of ``ln a`` around its anchor.
        prior_drift_std: Prior standard deviation of ``theta'`` (mean 0).
        prior_acceleration_std: Prior standard deviation of ``theta''`` (mean 0).
        max_log_horizon: Longest log-work over which the drift is extrapolated.
        offset: ``s0``, added to the work before taking logarithms.
        name: Short identifier shown in result tables.

    Raises:
        PredictorInputError: If a hyperparameter is not a finite number in its range (> 0;
            >= 0 for the process noises, the drift priors and ``max_log_horizon``).

    Example:
        >>> DKF(observation_noise=0.0)
        Traceback (most recent call last):
        ...
        mara_env.predictors.base.PredictorInputError: DKF: observation_noise must be a finite number > 0, got 0.0. See the DKF docstring for what it controls and its default.
    """

    step: float = 1.0
    observation_noise: float = 0.2
    min_observation_noise: float = 0.01
    noise_prior_points: float = 5.0
    theta_noise: float = 0.02
    drift_noise: float = 0.01
    acceleration_noise: float = 0.005
    prior_slope: float = -0.5
    prior_slope_std: float = 1.0
    prior_intercept_std: float = 1.0
    prior_drift_std: float = 0.2
    prior_acceleration_std: float = 0.05
    max_log_horizon: float = 1.0
    offset: float = 1.0
    name: str = "dkf"

    def __post_init__(self) -> None:
        for field_name in (
            "step",
            "observation_noise",
            "min_observation_noise",
            "noise_prior_points",
            "prior_slope_std",
            "prior_intercept_std",
            "offset",
        ):
            _check_positive(field_name, getattr(self, field_name))
        for field_name in (
            "theta_noise",
            "drift_noise",
            "acceleration_noise",
            "prior_drift_std",
            "prior_acceleration_std",
            "max_log_horizon",
        ):
            _check_positive(field_name, getattr(self, field_name), allow_zero=True)
        slope = self.prior_slope
        if not (_is_number(slope) and math.isfinite(slope) and slope <= 0):
            raise PredictorInputError(
                f"DKF: prior_slope must be a finite number <= 0 (the log-log slope -b of a "
                f"loss that does not rise), got {slope!r}."
            )

    # ------------------------------------------------------------------ the filter
    def _log_work(self, work: float) -> float:
        return math.log(work + self.offset)

    def start(self, work: float, loss: float) -> FilterState:
        """The filter after its first report ``(work, loss)`` (the prior, then one update).

        Example:
            >>> state = DKF().start(0.0, 1.0)
            >>> state.points, state.mean.shape, state.covariance.shape
            (1, (6,), (6, 6))
        """
        _check_point(work, loss)
        feature = self._log_work(work)
        mean = np.zeros(STATE_SIZE)
        mean[0] = self.prior_slope
        mean[1] = math.log(loss) - self.prior_slope * feature
        deviations = np.array(
            [
                self.prior_slope_std,
                self.prior_intercept_std,
                self.prior_drift_std,
                self.prior_drift_std,
                self.prior_acceleration_std,
                self.prior_acceleration_std,
            ]
        )
        prior = FilterState(mean, np.diag(deviations**2), float(work), 0)
        return self._correct(prior, feature, math.log(loss), learn_noise=False)

    def update(self, state: FilterState, work: float, loss: float) -> FilterState:
        """Add one report: predict from ``state.work`` to ``work``, then correct with ``loss``.

        Raises:
            PredictorInputError: If ``work`` does not exceed ``state.work`` or ``loss`` is not
                a finite positive number.

        Example:
            >>> dkf = DKF()
            >>> state = dkf.update(dkf.start(0.0, 1.0), 1.0, 0.7)
            >>> state.points, state.work
            (2, 1.0)
        """
        _check_point(work, loss)
        if not work > state.work:
            raise PredictorInputError(
                f"DKF.update: work must increase from report to report, got {work} after "
                f"{state.work}; pass each new report once, in order."
            )
        feature = self._log_work(work)
        mean, covariance = self._predict(state, feature - self._log_work(state.work))
        moved = FilterState(mean, covariance, float(work), state.points, state.noise_excess)
        return self._correct(moved, feature, math.log(loss), learn_noise=True)

    def filter(self, history: TaskHistory) -> FilterState:
        """The filter after every report of ``history``, in order."""
        work, loss = history.work.tolist(), history.loss.tolist()
        state = self.start(work[0], loss[0])
        for point_work, point_loss in zip(work[1:], loss[1:], strict=True):
            state = self.update(state, point_work, point_loss)
        return state

    @cached_property
    def _noise_rates(self) -> np.ndarray:
        """Diagonal of the process noise per unit of filter time."""
        deviations = [self.theta_noise] * 2 + [self.drift_noise] * 2
        return np.array(deviations + [self.acceleration_noise] * 2) ** 2

    def _predict(self, state: FilterState, log_work_step: float) -> tuple[np.ndarray, np.ndarray]:
        """Kalman predict over ``log_work_step`` of log-work (filter time ``step`` times it)."""
        dt = self.step * log_work_step
        transition = _transition(dt)
        mean = transition @ state.mean
        covariance = transition @ state.covariance @ transition.T
        covariance[_DIAGONAL] += dt * self._noise_rates
        return mean, covariance

    def noise_variance(self, state: FilterState) -> float:
        """The observation noise variance ``R`` the filter uses after ``state``.

        ``R = max(min_observation_noise^2, (noise_prior_points * observation_noise^2 +
        noise_excess) / (noise_prior_points + innovations))``: the prior guess, refined by each
        innovation's squared size beyond what the state's uncertainty explains (clipped at 0
        per innovation: early on, a vague prior makes ``h P h^T`` exceed the squared
        innovation, and those negative terms would otherwise drive the estimate to its floor).

        Example:
            >>> dkf = DKF(observation_noise=0.1)
            >>> round(dkf.noise_variance(dkf.start(0.0, 1.0)), 6)  # no innovation yet: the prior
            0.01
        """
        innovations = max(state.points - 1, 0)
        prior = self.noise_prior_points * self.observation_noise**2
        estimate = (prior + state.noise_excess) / (self.noise_prior_points + innovations)
        return max(estimate, self.min_observation_noise**2)

    def _correct(
        self, state: FilterState, feature: float, log_loss: float, *, learn_noise: bool
    ) -> FilterState:
        """Kalman update with the scalar observation ``log_loss`` of row ``[feature, 1, 0...]``."""
        covariance = state.covariance
        gain_numerator = feature * covariance[:, 0] + covariance[:, 1]
        state_variance = feature * gain_numerator[0] + gain_numerator[1]
        gain = gain_numerator / (state_variance + self.noise_variance(state))
        innovation = log_loss - (feature * state.mean[0] + state.mean[1])
        mean = state.mean + gain * innovation
        covariance = covariance - np.outer(gain, gain_numerator)
        covariance = 0.5 * (covariance + covariance.T)
        excess = state.noise_excess
        if learn_noise:
            excess += max(innovation * innovation - state_variance, 0.0)
        return FilterState(mean, covariance, state.work, state.points + 1, excess)

    # ------------------------------------------------------------------ looking ahead
    def local_exponent(self, state: FilterState) -> float:
        """The current log-log slope ``d ln l / d ln(s + s0)`` of the drifting law (``-b`` now).

        With drift, ``theta[0]`` alone is not the curve's slope: moving along the curve also
        moves the parameters, so the slope is ``-b + step * (x (-b)' + (ln a)')`` at
        ``x = ln(s + s0)``. On a plain power law the drift is 0 and both agree.

        Example:
            >>> import numpy as np
            >>> work = np.arange(0.0, 40.0)
            >>> history = TaskHistory(work, (work + 1.0) ** -0.8, target=0.01)
            >>> round(DKF().local_exponent(DKF().filter(history)), 2)
            -0.8
        """
        feature = self._log_work(state.work)
        mean = state.mean
        return float(mean[0] + self.step * (feature * mean[2] + mean[3]))

    def drift_horizon(self, work: float, extra_work: float) -> float:
        """Log-work over which the drift is extrapolated for ``extra_work`` more curve steps.

        Example:
            >>> round(DKF().drift_horizon(work=9.0, extra_work=10.0), 4)  # ln(20 / 10)
            0.6931
        """
        if not extra_work >= 0:
            raise PredictorInputError(
                f"DKF: extra_work must be >= 0 (curve steps still to come), got {extra_work}."
            )
        if math.isinf(extra_work):
            return self.max_log_horizon
        span = math.log1p(extra_work / (work + self.offset))
        return min(span, self.max_log_horizon)

    def lookahead(self, state: FilterState, target: float, extra_work: float) -> Feasibility:
        """LaiRA's look-ahead test: can the target be reached within ``extra_work`` steps?

        The state is projected along the look-ahead (``extra_work`` = the curve steps the task
        would do by its deadline with all the remaining compute); the task is feasible when the
        predicted mean log-loss reaches ``ln(target)`` somewhere on the way (a task completes the
        first time its loss reaches the target).

        Args:
            state: The task's filter state.
            target: The target loss (same scale as the reported losses).
            extra_work: Curve steps the task could still do (>= 0, finite).

        Raises:
            PredictorInputError: For a non-positive target or a negative / infinite
                ``extra_work``.
        """
        if not (math.isfinite(target) and target > 0):
            raise PredictorInputError(f"DKF.lookahead: target must be > 0, got {target}.")
        if not (math.isfinite(extra_work) and extra_work >= 0):
            raise PredictorInputError(
                f"DKF.lookahead: extra_work must be finite and >= 0, got {extra_work}."
            )
        work = state.work
        span = math.log1p(extra_work / (work + self.offset))
        horizon = self.drift_horizon(work, extra_work)
        start = self._log_work(work)
        features = start + span * _UNIT_GRID
        rows, elapsed = self._path(start, features, horizon)
        log_loss = rows @ state.mean
        best = int(np.argmin(log_loss))
        best_log_loss = float(log_loss[best])
        # Projected covariance F P F^T + dt Q seen through [x, 1, 0, 0, 0, 0], plus the noise.
        feature = float(features[best])
        variance = (
            float(rows[best] @ state.covariance @ rows[best])
            + float(elapsed[best]) * self.theta_noise**2 * (feature * feature + 1.0)
            + self.noise_variance(state)
        )
        log_target = math.log(target)
        z = (log_target - best_log_loss) / math.sqrt(variance)
        probability = 0.5 * math.erfc(-z / math.sqrt(2.0))
        best_work = math.exp(feature) - self.offset - work
        feasible = best_log_loss <= log_target
        work_to_target = math.inf
        if feasible:
            first = int(np.argmax(log_loss <= log_target))
            crossing = float(features[0])
            if first > 0:
                high, low = float(log_loss[first - 1]), float(log_loss[first])
                fraction = (high - log_target) / (high - low)
                step = float(features[first] - features[first - 1])
                crossing = float(features[first - 1]) + fraction * step
            work_to_target = min(max(math.exp(crossing) - self.offset - work, 0.0), extra_work)
        return Feasibility(feasible, probability, best_log_loss, best_work, work_to_target, z)

    def _path(
        self, start: float, features: np.ndarray, horizon: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Linear maps from today's state to the predicted log-loss at log-work ``features``.

        The state drifts (``F(dt)`` with ``dt = step * (x - start)``) up to ``start + horizon``
        and stays there: past the horizon the parameters are frozen and the curve is the plain
        power law they define. The log-loss at ``x`` is ``[x, 1, 0, 0, 0, 0] . Theta(dt)``.

        Returns:
            ``rows`` (``(n, 6)``: log-loss = ``rows @ Theta`` for today's ``Theta``) and the
            filter time ``dt`` of each point's projection.
        """
        elapsed = self.step * np.minimum(features - start, horizon)
        half_square = 0.5 * elapsed * elapsed
        rows = np.empty((len(features), STATE_SIZE))
        # rows = F(dt)^T [x, 1, 0, 0, 0, 0], written out for the block structure of F.
        rows[:, 0], rows[:, 1] = features, 1.0
        rows[:, 2], rows[:, 3] = elapsed * features, elapsed
        rows[:, 4], rows[:, 5] = half_square * features, half_square
        return rows, elapsed

    # ------------------------------------------------------------------ remaining work
    def remaining_work(
        self, state: FilterState, target: float, draws: np.ndarray, horizon: float
    ) -> np.ndarray:
        """Remaining curve steps to ``target`` for each row of ``draws`` (``inf``: never).

        The predicted curve of each draw is followed on a grid of log-work up to the drift
        horizon (the first crossing of the target, linearly interpolated), then as the power
        law of the parameters reached there (closed form).

        Args:
            state: The filter state (its ``work`` is where the extrapolation starts).
            target: The target loss.
            draws: ``(n, 6)`` state vectors ``Theta``.
            horizon: Log-work over which the drift is followed.
        """
        work = state.work
        start = self._log_work(work)
        log_target = math.log(target)
        times = horizon * _UNIT_GRID
        rows, _ = self._path(start, np.append(start + times, start + horizon + 1.0), horizon)
        values = draws @ rows.T
        log_loss = values[:, :_GRID_POINTS]
        below = log_loss <= log_target
        crossed = below.any(axis=1)
        first = np.argmax(below, axis=1)
        index = np.arange(len(draws))
        # Within the drift horizon: interpolate between the grid points around the crossing.
        after = np.maximum(first, 1)
        before = after - 1
        high, low = log_loss[index, before], log_loss[index, after]
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.clip((high - log_target) / (high - low), 0.0, 1.0)
        crossing = times[before] + fraction * (times[after] - times[before])
        crossing = np.where(first == 0, 0.0, crossing)
        # Past it: the frozen power law (its slope is the change over one unit of log-work).
        level, slope = values[:, -2], values[:, -1] - values[:, -2]
        with np.errstate(divide="ignore", invalid="ignore"):
            past = np.where(slope < 0, (log_target - level) / slope, np.inf)
        log_work = np.where(crossed, start + crossing, start + horizon + np.maximum(past, 0.0))
        with np.errstate(over="ignore"):
            needed = np.where(
                log_work < _LOG_WORK_LIMIT, np.exp(np.minimum(log_work, _LOG_WORK_LIMIT)), np.inf
            )
        return np.maximum(needed - self.offset - work, 0.0)

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of remaining work; ``n_samples == 1`` gives the point (mean) estimate.

        The drift is followed over each task's deadline horizon (``time_left * speed`` curve
        steps, capped at ``max_log_horizon`` of log-work, also used when ``time_left`` is
        infinite); ``theta`` is sampled from the filtered posterior, the drift kept at its mean.
        """
        if not (isinstance(n_samples, (int, np.integer)) and n_samples >= 1):
            raise PredictorInputError(
                f"DKF.predict: n_samples must be an int >= 1, got {n_samples!r}."
            )
        rows = []
        for history in histories:
            if history.loss[-1] <= history.target:
                rows.append(np.zeros(n_samples))
                continue
            state = self.filter(history)
            horizon = self.drift_horizon(state.work, history.time_left * history.speed)
            draws = np.repeat(state.mean[None, :], n_samples, axis=0)
            if n_samples > 1:
                draws[:, :2] = rng.multivariate_normal(
                    state.mean[:2], state.covariance[:2, :2], size=n_samples, method="cholesky"
                )
            rows.append(self.remaining_work(state, history.target, draws, horizon))
        return RemainingWork(np.array(rows).reshape(len(histories), n_samples))


def _check_point(work: float, loss: float) -> None:
    if not (math.isfinite(work) and work >= 0):
        raise PredictorInputError(f"DKF: work must be finite and >= 0, got {work}.")
    if not (math.isfinite(loss) and loss > 0):
        raise PredictorInputError(f"DKF: loss must be finite and > 0, got {loss}.")
