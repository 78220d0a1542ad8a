"""The oracle: a **privileged** predictor that knows each task's true remaining work.

It answers what a perfect predictor would, so that the worth of prediction can be measured: a
scheduler fed the oracle shows how far better predictions could take it, and one fed a noisy
oracle how that worth falls as predictions get worse. No real predictor can do this: it reads
the environment's hidden curves through the simulator's privileged view
(:meth:`mara_env.sim.simulator.ClusterSimulator.privileged_remaining_work`), like the clairvoyant
reference, and is marked ``privileged`` so harnesses bind it and result tables say so.

**What it predicts.** For a task in a visible slot, the curve steps still needed to report a
loss at or below its target (``inf``: never), read from the task's own hidden curve. Every
predictor's success probabilities follow from its samples by the same rule
(:meth:`mara_env.predictors.base.RemainingWork.success_probability`), so the oracle's say whether the
true need fits in the time left.

**Noise** (``noise = sigma > 0``). A predictor whose point estimate is off by a log-normal
factor, and knows how far off it may be: for each task it draws one error ``e ~ N(0, 1)`` when
it first predicts that task in an episode, and its samples are
``need * exp(sigma * (e + z))`` with fresh ``z ~ N(0, 1)`` per sample. Its median is off from
the truth by ``exp(sigma * e)`` (a log-space error of standard deviation ``sigma``, kept for
the task's whole stay, as a real predictor's error for one task persists), and its quantiles
are calibrated: the truth lies below its ``q`` quantile with probability ``q``. ``noise = 0``
is the exact oracle, whose samples all equal the truth.

**Binding.** Call :meth:`Oracle.bind` with the environment of the episode about to be played
(every episode: it also forgets the errors of the previous one). Schedulers holding an oracle
do this in their own ``bind(env)``, which :func:`mara_env.agents.evaluation.evaluate` and the training
rollouts call; the prediction wrappers bind it to the environment they wrap. It predicts only
histories taken from that environment (their ``slot`` names where the task is shown).

Example:
    >>> import mara_env
    >>> from mara_env.predictors.env_histories import slotted_tasks, task_histories
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=3)
    >>> simulator = env.unwrapped.simulator
    >>> oracle = Oracle()
    >>> oracle.bind(simulator)
    >>> histories = task_histories(simulator, slotted_tasks(simulator))
    >>> samples = oracle.predict(histories, 4, np.random.default_rng(0)).samples
    >>> truth = simulator.privileged_remaining_work()[[h.slot for h in histories]]
    >>> bool(np.all(samples == (truth * [h.speed for h in histories])[:, None]))
    True
    >>> Oracle(noise=0.5).name
    'oracle_noise_0.5'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mara_env.predictors.base import PredictorInputError, RemainingWork, TaskHistory
from mara_env.sim.simulator import ClusterSimulator

#: A noisy oracle's name is this prefix and its sigma (``oracle_noise_0.5``).
NOISY_PREFIX = "oracle_noise_"


class UnboundOracleError(RuntimeError):
    """The oracle was asked to predict before it was bound to an environment."""


class Oracle:
    """The true remaining work of each visible task, optionally with calibrated log-normal noise
    (module docstring).

    Args:
        noise: ``sigma``, the log-space standard deviation of the median's error (0: exact).

    Raises:
        ValueError: If ``noise`` is negative, NaN or infinite.
    """

    privileged = True

    def __init__(self, noise: float = 0.0) -> None:
        if isinstance(noise, bool) or not isinstance(noise, int | float):
            raise ValueError(f"Oracle: noise must be a number >= 0, got {noise!r}.")
        if not (math.isfinite(noise) and noise >= 0):
            raise ValueError(f"Oracle: noise must be finite and >= 0, got {noise!r}.")
        self.noise = float(noise)
        self.name = "oracle" if self.noise == 0 else f"{NOISY_PREFIX}{self.noise:g}"
        self._simulator: ClusterSimulator | None = None
        self._errors: dict[int, float] = {}

    @classmethod
    def from_name(cls, name: str) -> Oracle | None:
        """The oracle a result table's name stands for (``oracle``, ``oracle_noise_0.5``), or
        ``None`` for another name; checkpoints record predictors by these names.

        Raises:
            ValueError: For ``oracle_noise_`` followed by anything but a number >= 0.

        Example:
            >>> Oracle.from_name("oracle_noise_0.5").noise, Oracle.from_name("wls")
            (0.5, None)
        """
        if name == "oracle":
            return cls()
        if not name.startswith(NOISY_PREFIX):
            return None
        try:
            noise = float(name[len(NOISY_PREFIX) :])
        except ValueError:
            raise ValueError(
                f"{name!r}: a noisy oracle's name is {NOISY_PREFIX}<sigma>, e.g. "
                f"'{NOISY_PREFIX}0.5'."
            ) from None
        return cls(noise)

    def bind(self, env: Any) -> None:
        """Read the truth from ``env`` (the episode about to be played) from now on.

        Args:
            env: A mara_env environment (any form, wrapped or not) or its
                :class:`mara_env.sim.simulator.ClusterSimulator`.

        Raises:
            TypeError: If ``env`` is neither.
        """
        simulator = env
        if not isinstance(env, ClusterSimulator):
            simulator = getattr(getattr(env, "unwrapped", env), "simulator", None)
        if not isinstance(simulator, ClusterSimulator):
            raise TypeError(
                "Oracle.bind takes a mara_env environment or its simulator "
                f"(env.unwrapped.simulator), got {type(env).__name__}."
            )
        self._simulator = simulator
        self._errors = {}

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of each task's true remaining work, in curve steps (noisy if ``noise > 0``).

        Raises:
            UnboundOracleError: Before :meth:`bind`.
            PredictorInputError: For a history not taken from the bound environment's visible
                slots (its ``slot`` is -1, out of range, or empty there).
        """
        if self._simulator is None:
            raise UnboundOracleError(
                "The oracle reads the hidden truth of a live environment: bind it first "
                "(oracle.bind(env)), or use it inside a scheduler that "
                "declares privileged = True, which the harnesses bind every episode."
            )
        truth = self._simulator.privileged_remaining_work()
        slots = np.array([history.slot for history in histories], dtype=np.int64)
        outside = (slots < 0) | (slots >= len(truth))
        if outside.any() or np.isnan(truth[slots]).any():
            raise PredictorInputError(
                "Oracle.predict: every history must come from a visible slot of the bound "
                "environment (TaskHistory.slot), got slots "
                f"{slots.tolist()}; the oracle cannot predict a task it cannot see."
            )
        speed = np.array([history.speed for history in histories])
        need = truth[slots] * speed
        samples = np.repeat(need[:, None], n_samples, axis=1)
        if self.noise:
            spread = rng.standard_normal((len(histories), n_samples))
            tasks = self._simulator.state.slots[slots].tolist()
            error = np.array([self._error(task, rng) for task in tasks])
            with np.errstate(invalid="ignore"):  # inf stays inf
                samples = samples * np.exp(self.noise * (error[:, None] + spread))
        return RemainingWork(samples)

    def _error(self, task: int, rng: np.random.Generator) -> float:
        """The persistent error of ``task`` (drawn at its first prediction this episode)."""
        error = self._errors.get(task)
        if error is None:
            error = self._errors[task] = float(rng.standard_normal())
        return error
