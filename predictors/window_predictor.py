"""Predictors that sample future windows: remaining work and trajectories from one method.

A learned predictor here only has to sample future windows (:mod:`predictors.curve_windows`): the
lowest log-loss reached within each of :data:`FUTURE_OFFSETS` curve steps, relative to the last
reported log-loss. :class:`WindowPredictor` turns those samples into remaining work (the first
step at which a sampled window reaches the target) and into best-so-far loss trajectories.

Example:
    >>> import numpy as np
    >>> from predictors.base import TaskHistory
    >>> class HalvesEveryTenSteps(WindowPredictor):
    ...     name = "halves"
    ...     def sample_log_windows(self, histories, n_samples, rng):
    ...         window = -np.log(2.0) * FUTURE_OFFSETS / 10.0
    ...         return np.broadcast_to(window, (len(histories), n_samples, len(window)))
    >>> history = TaskHistory(np.array([0.0, 5.0]), np.array([1.0, 0.9]), target=0.225)
    >>> HalvesEveryTenSteps().predict([history], 2, np.random.default_rng(0)).samples.tolist()
    [[20.0, 20.0]]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from predictors.base import PredictorInputError, RemainingWork, TaskHistory
from predictors.curve_windows import FUTURE_OFFSETS, WINDOW_SIZE, steps_to_cross


class WindowPredictor(ABC):
    """Base of predictors that sample future windows."""

    name: str

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
        windows = self._windows(histories, n_samples, rng)
        log_gap = np.array([np.log(h.loss[-1] / h.target) for h in histories])
        steps = steps_to_cross(windows.reshape(-1, WINDOW_SIZE), np.repeat(log_gap, n_samples))
        return RemainingWork(steps.reshape(len(histories), n_samples))

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
        offsets = np.concatenate([[0.0], FUTURE_OFFSETS])
        padded = np.concatenate([np.zeros((*windows.shape[:2], 1)), windows], axis=2)
        position = np.interp(np.asarray(steps, dtype=np.float64), offsets, np.arange(len(offsets)))
        low = np.floor(position).astype(np.intp)
        high = np.minimum(low + 1, len(offsets) - 1)
        share = position - low
        relative = padded[..., low] * (1.0 - share) + padded[..., high] * share
        last = np.log([h.loss[-1] for h in histories])
        return relative + last[:, None, None]
