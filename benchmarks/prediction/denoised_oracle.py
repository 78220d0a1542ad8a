"""The denoised oracle as a predictor: each task's remaining work read from its own curve's
trend, its floor and pace known and its noise not (privileged).

The information ladder (:mod:`mara_env.benchmarks.prediction.ladder`) finds that this knowledge ranks
which tasks can still finish almost perfectly. :class:`DenoisedOracle` hands it to a scheduler in
the form every predictor uses (:class:`mara_env.predictors.base.RemainingWork`): for a task in a visible
slot, the curve steps from its current position to the first step at which the trend of its
hidden curve (:func:`mara_env.benchmarks.prediction.ladder_episodes.smoothed_log_curve`) is at or below
its target, ``inf`` if the trend never gets there; every sample the same. Like
:class:`mara_env.predictors.oracle.Oracle` it is bound to the episode's environment
(``privileged = True``), so a scheduler holding it is marked privileged and bound every episode.

Example:
    >>> import mara_env
    >>> from mara_env.predictors.env_histories import slotted_tasks, task_histories
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=3)
    >>> oracle = DenoisedOracle()
    >>> oracle.bind(env)
    >>> simulator = env.unwrapped.simulator
    >>> work = oracle.predict(task_histories(simulator, slotted_tasks(simulator)), 4,
    ...                       np.random.default_rng(0))
    >>> bool(np.all(work.samples[:, :1] == work.samples))  # no noise: every sample alike
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mara_env.benchmarks.prediction.ladder_episodes import smoothed_log_curve, steps_to_target
from mara_env.predictors.base import PredictorInputError, RemainingWork, TaskHistory
from mara_env.predictors.oracle import Oracle


class DenoisedOracle(Oracle):
    """Remaining work to the target along each task's smoothed hidden curve (module docstring).
    It binds as :class:`mara_env.predictors.oracle.Oracle` does."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "denoised_oracle"
        self._trends: dict[int, np.ndarray] = {}

    def bind(self, env: Any) -> None:
        """Read the hidden curves of ``env`` (the episode about to be played) from now on.

        Raises:
            TypeError: If ``env`` is not a mara_env environment or its simulator.
        """
        super().bind(env)
        self._trends = {}

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """``n_samples`` equal samples of each task's remaining work along its trend.

        Raises:
            PredictorInputError: Before :meth:`bind`, or for a history not taken from the bound
                environment's visible slots.
        """
        if self._simulator is None:
            raise PredictorInputError(
                "The denoised oracle reads hidden curves: bind it to the episode's environment "
                "first (oracle.bind(env))."
            )
        state = self._simulator.state
        need = np.empty(len(histories))
        for index, history in enumerate(histories):
            if not 0 <= history.slot < len(state.slots) or state.slots[history.slot] < 0:
                raise PredictorInputError(
                    f"History {index} names slot {history.slot}, which holds no task of the "
                    "bound environment."
                )
            task = int(state.slots[history.slot])
            trend = self._trend(int(state.tasks.curve_row[task]))
            log_target = math.log(float(state.tasks.target[task]))
            need[index] = steps_to_target(trend, float(history.work[-1]), log_target)
        return RemainingWork(np.repeat(need[:, None], n_samples, axis=1))

    def _trend(self, row: int) -> np.ndarray:
        if row not in self._trends:
            workload = self._simulator.workload  # type: ignore[union-attr]
            self._trends[row] = smoothed_log_curve(
                np.log(workload.curves[row]), int(workload.lengths[row])
            )
        return self._trends[row]
