"""Predictors that sample future windows: remaining work and trajectories from one method.

A learned predictor here only has to sample future windows (:mod:`mara_env.predictors.curve_windows`): the
lowest log-loss reached within each of :data:`FUTURE_EPOCHS` node-epochs, relative to the last
reported log-loss. :class:`WindowPredictor` turns those samples into remaining work (where a
sampled window first reaches the target, times the task's speed) and into best-so-far loss
trajectories.

Example:
    >>> import numpy as np
    >>> from mara_env.predictors.base import TaskHistory
    >>> from mara_env.predictors.curve_windows import FUTURE_EPOCHS
    >>> class HalvesEveryTenEpochs(WindowPredictor):
    ...     name = "halves"
    ...     def sample_log_windows(self, histories, n_samples, rng):
    ...         window = -np.log(2.0) * FUTURE_EPOCHS / 10.0
    ...         return np.broadcast_to(window, (len(histories), n_samples, len(window)))
    >>> history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.9]), target=0.225, speed=2.0)
    >>> HalvesEveryTenEpochs().predict([history], 2, np.random.default_rng(0)).samples.round(6).tolist()
    [[40.0, 40.0]]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np
from numba import njit

from mara_env.predictors.base import PredictorInputError, RemainingWork, TaskHistory
from mara_env.predictors.curve_windows import WINDOW_OFFSETS, WINDOW_SIZE, epochs_to_level

#: Centres of :func:`spread_samples`: ``"median"``, the row's median sample (the prediction's
#: point, which spreading then never moves); ``"finite_median"``, the median of the row's finite
#: positive samples (the rule of checkpoints calibrated before the centre was recorded).
SPREAD_CENTRES = ("median", "finite_median")


class WindowPredictor(ABC):
    """Base of predictors that sample future windows.

    Attributes:
        spread: Calibration factor of each task's remaining-work samples around their median
            in log-work (:func:`spread_samples`); 1 keeps them as sampled.
        spread_centre: Which median (:data:`SPREAD_CENTRES`).
    """

    name: str
    spread: float = 1.0
    spread_centre: str = "median"

    @abstractmethod
    def sample_log_windows(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``(n_tasks, n_samples, WINDOW_SIZE)`` sampled windows of each task."""

    def _windows(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> np.ndarray:
        if not isinstance(n_samples, int) or isinstance(n_samples, bool) or n_samples < 1:
            raise PredictorInputError(f"n_samples must be an int >= 1, got {n_samples!r}.")
        if len(histories) == 0:
            return np.zeros((0, n_samples, WINDOW_SIZE))
        return self.sample_log_windows(histories, n_samples, rng)

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of remaining work: where each sampled window first reaches the target."""
        windows = np.ascontiguousarray(self._windows(histories, n_samples, rng), np.float64)
        # per task: loss / target (whose log is the gap the window must fall) and speed
        numbers = np.array([(h.loss[-1] / h.target, h.speed) for h in histories]).reshape(-1, 2)
        samples = np.empty((len(histories), n_samples))
        on_median = check_spread_centre(self.spread_centre) == "median"
        _remaining_work_compiled(windows, numbers, float(self.spread), on_median, samples)
        return RemainingWork(samples)

    def sample_trajectories(
        self,
        histories: Sequence[TaskHistory],
        steps: np.ndarray,
        n_samples: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """``(n_tasks, n_samples, len(steps))`` sampled ln-losses ``steps`` curve steps past each
        task's last report: the **best loss so far**, interpolated between window offsets."""
        windows = self._windows(histories, n_samples, rng)
        offsets = WINDOW_OFFSETS
        padded = np.concatenate([np.zeros((*windows.shape[:2], 1)), windows], axis=2)
        speed = np.array([h.speed for h in histories])
        epochs = np.asarray(steps, dtype=np.float64)[None, :] / speed[:, None]
        position = np.interp(epochs, offsets, np.arange(len(offsets)))  # (n_tasks, len(steps))
        low = np.floor(position).astype(np.intp)
        high = np.minimum(low + 1, len(offsets) - 1)
        share = (position - low)[:, None, :]
        at_low = np.take_along_axis(padded, low[:, None, :], axis=2)
        at_high = np.take_along_axis(padded, high[:, None, :], axis=2)
        relative = at_low * (1.0 - share) + at_high * share
        last = np.log([h.loss[-1] for h in histories])
        return relative + last[:, None, None]


def spread_samples(samples: np.ndarray, spread: float, centre: str = "median") -> np.ndarray:
    """Each row's positive finite samples spread around a centre in log-work.

    ``ln r' = ln c + spread * (ln r - ln c)``. With ``centre="median"``, ``c`` is the row's
    median sample (its ``ceil(n / 2)``-th smallest, the point prediction of
    :meth:`mara_env.predictors.base.RemainingWork.quantiles` and of the metrics) if that is finite and
    positive, so spreading widens or narrows the intervals and never moves the point; if the
    median is "never" or 0, which no spread changes, ``c`` is the median of the positive finite
    samples. With ``centre="finite_median"`` it is always the latter (a rule that moves the
    point whenever some samples are "never"). ``inf`` ("never") and 0 (target reached) stay as
    they are, so the share of "never" is unchanged. A unit-free rule: scaling every sample
    scales the result.

    Example:
        >>> spread_samples(np.array([[1.0, 4.0, 16.0, np.inf]]), 0.5).round(9).tolist()
        [[2.0, 4.0, 8.0, inf]]
        >>> row = np.array([[1.0, 4.0, 16.0, np.inf, np.inf]])  # median sample: 16
        >>> spread_samples(row, 0.5).round(9).tolist()
        [[4.0, 8.0, 16.0, inf, inf]]
        >>> spread_samples(row, 0.5, centre="finite_median").round(9).tolist()
        [[2.0, 4.0, 8.0, inf, inf]]
    """
    on_median = check_spread_centre(centre) == "median"
    if spread == 1.0 or samples.size == 0:
        return samples
    spread_out = np.empty(samples.shape)
    _spread_compiled(np.asarray(samples, dtype=np.float64), float(spread), on_median, spread_out)
    return spread_out


def check_spread_centre(centre: str) -> str:
    """``centre`` if it is one of :data:`SPREAD_CENTRES`; otherwise a ``ValueError`` saying so."""
    if centre not in SPREAD_CENTRES:
        raise ValueError(f"spread centre must be one of {SPREAD_CENTRES}, got {centre!r}.")
    return centre


@njit(cache=True)
def _spread_compiled(samples: np.ndarray, spread: float, on_median: bool, out: np.ndarray) -> None:
    """Write :func:`spread_samples` of each row of ``samples`` into ``out``."""
    logs = np.empty(samples.shape[1])
    for row in range(samples.shape[0]):
        _spread_row(samples[row], spread, on_median, logs, out[row])


@njit(cache=True)
def _remaining_work_compiled(
    windows: np.ndarray,
    numbers: np.ndarray,
    spread: float,
    on_median: bool,
    out: np.ndarray,
) -> None:
    """Write each task's remaining-work samples into its row of ``out``: where each of its
    ``(n_tasks, n_samples, WINDOW_SIZE)`` windows reaches its gap to the target (the log of
    ``numbers[task, 0]``, its loss / target), times its speed (``numbers[task, 1]``), spread
    around the row's centre (:func:`spread_samples`; not if ``spread`` is 1)."""
    logs = np.empty(out.shape[1])
    for task in range(out.shape[0]):
        log_gap, speed = np.log(numbers[task, 0]), numbers[task, 1]
        for sample in range(out.shape[1]):
            out[task, sample] = epochs_to_level(windows[task, sample], log_gap) * speed
        if spread != 1.0:
            _spread_row(out[task], spread, on_median, logs, out[task])


@njit(cache=True)
def _spread_row(
    samples: np.ndarray, spread: float, on_median: bool, logs: np.ndarray, out: np.ndarray
) -> None:
    """Write :func:`spread_samples` of one row into ``out`` (which may be ``samples``); ``logs``
    is scratch space of the row's length."""
    count = 0
    for column in range(samples.shape[0]):
        value = samples[column]
        out[column] = value
        if np.isfinite(value) and value > 0.0:
            logs[count] = np.log(value)
            count += 1
    if count == 0:
        return
    ordered = np.sort(logs[:count])
    centre = 0.5 * (ordered[(count - 1) // 2] + ordered[count // 2])
    if on_median:
        # the row's median sample, the ceil(n / 2)-th smallest: below it lie the zeros, then the
        # positive finite samples in order, then the "never"s
        rank = (samples.shape[0] + 1) // 2 - 1
        zeros = 0
        for column in range(samples.shape[0]):
            if samples[column] == 0.0:
                zeros += 1
        if zeros <= rank < zeros + count:
            centre = ordered[rank - zeros]
    for column in range(samples.shape[0]):
        value = samples[column]
        if np.isfinite(value) and value > 0.0:
            out[column] = np.exp(centre + spread * (np.log(value) - centre))
