"""The predictor interface: from a task's observed losses to its remaining work.

A predictor looks at what a scheduler may see of a task (the losses reported so far and the work
at which each was seen, its target, its time left, its speed) and returns a distribution of the
**remaining work** to reach the target, as samples in which ``inf`` means "never". From the
samples follow quantiles and the probability of reaching the target by the deadline with a
given number of nodes.

Work is in the task's own units (the simulator's curve steps); ``speed`` converts it to
node-epochs: one node advances ``speed`` units per epoch, ``k`` nodes
``progress_gain(speed, k, alpha)`` (:func:`mara_env.sim.rules.progress_gain`).

Example:
    >>> import numpy as np
    >>> remaining = RemainingWork(np.array([[1.0, 2.0, 3.0, np.inf]]))
    >>> remaining.quantiles([0.5]).tolist()
    [[2.0]]
    >>> remaining.success_probability(time_left=[2.0], speed=[1.0]).tolist()
    [0.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mara_env.sim.rules import progress_gain

#: The family of a history that names none: no model reads it as one it was trained on, so the
#: learned predictors predict from the curve alone.
UNKNOWN_FAMILY = "unknown"


class PredictorInputError(ValueError):
    """A task history a predictor cannot use (empty, NaN, mismatched shapes...)."""


@dataclass(frozen=True)
class TaskHistory:
    """What a scheduler knows about one task.

    Attributes:
        work: Work done when each loss was reported (strictly increasing, >= 0).
        loss: The reported losses (> 0, finite).
        target: The target loss.
        time_left: Epochs until the deadline.
        speed: Work units one node advances per epoch.
        family: The task's family name; by default :data:`UNKNOWN_FAMILY`, which (like any
            name a model was not trained on) the learned predictors read as unknown. Name a
            shipped family (``mara_env.curves.families.FAMILY_NAMES``) only for curves of that kind.
        budget: The job's step budget, in work units: the work after which its loss no longer
            changes (a training run configured for that many steps; in the simulator, the
            curve's length, after which its last loss repeats). ``inf`` if unknown.
        slot: The environment slot the task was shown in when this history was taken (-1: not
            taken from an environment). Only privileged predictors read it, to ask the
            environment's privileged view about the same task (:mod:`mara_env.predictors.oracle`).
    """

    work: np.ndarray
    loss: np.ndarray
    target: float
    time_left: float = np.inf
    speed: float = 1.0
    family: str = UNKNOWN_FAMILY
    budget: float = np.inf
    slot: int = -1

    def __post_init__(self) -> None:
        work = np.asarray(self.work, dtype=np.float64)
        loss = np.asarray(self.loss, dtype=np.float64)
        if work.ndim != 1 or loss.ndim != 1 or work.shape != loss.shape:
            raise PredictorInputError(
                f"TaskHistory: work and loss must be 1-d arrays of one length, got shapes "
                f"{work.shape} and {loss.shape}."
            )
        if work.size == 0:
            raise PredictorInputError("TaskHistory: the history is empty; report a loss first.")
        if not (np.isfinite(loss).all() and loss.min() > 0):
            raise PredictorInputError("TaskHistory: losses must be finite and > 0 (no NaN).")
        # increasing from a start >= 0: every value is >= 0 (a NaN fails the differences)
        if not (np.isfinite(work).all() and work[0] >= 0 and (np.diff(work) > 0).all()):
            raise PredictorInputError("TaskHistory: work must be finite, >= 0 and increasing.")
        if not (np.isfinite(self.target) and self.target > 0):
            raise PredictorInputError(f"TaskHistory: target must be > 0, got {self.target}.")
        if not self.speed > 0:
            raise PredictorInputError(f"TaskHistory: speed must be > 0, got {self.speed}.")
        if not self.budget > 0:
            raise PredictorInputError(
                f"TaskHistory: budget must be > 0 (inf if unknown), got {self.budget}."
            )
        object.__setattr__(self, "work", work)
        object.__setattr__(self, "loss", loss)

    @classmethod
    def unchecked(
        cls,
        work: np.ndarray,
        loss: np.ndarray,
        target: float,
        time_left: float,
        speed: float,
        family: str,
        budget: float,
        slot: int = -1,
    ) -> TaskHistory:
        """A history built without the checks of the constructor, for producers whose values
        meet them by construction (the environment's histories in
        :mod:`mara_env.predictors.env_histories`, :class:`mara_env.agents.observed_history.ObservedHistories`,
        which checks each observation once): ``work`` and ``loss`` must already be float64
        arrays. It saves the checks' cost on every task of every epoch."""
        history = object.__new__(cls)
        history.__dict__.update(
            work=work,
            loss=loss,
            target=target,
            time_left=time_left,
            speed=speed,
            family=family,
            budget=budget,
            slot=slot,
        )
        return history


@dataclass(frozen=True)
class RemainingWork:
    """Samples of each task's remaining work (``inf``: the target is never reached).

    Attributes:
        samples: ``(n_tasks, n_samples)`` remaining work in the tasks' work units.
    """

    samples: np.ndarray

    def quantiles(self, levels: Sequence[float]) -> np.ndarray:
        """``(n_tasks, len(levels))`` quantiles (``inf`` where "never" is that likely)."""
        return np.quantile(self.samples, np.asarray(levels), axis=1, method="inverted_cdf").T

    def success_probability(
        self,
        time_left: Sequence[float] | np.ndarray,
        speed: Sequence[float] | np.ndarray,
        nodes: float = 1.0,
        alpha: float = 1.0,
    ) -> np.ndarray:
        """Probability that each task reaches its target in ``time_left`` epochs on ``nodes``
        nodes (``progress_gain(speed, nodes, alpha)`` work per epoch,
        :func:`mara_env.sim.rules.progress_gain`)."""
        per_node = np.asarray(time_left, dtype=np.float64) * np.asarray(speed)
        budget = per_node * progress_gain(1.0, nodes, alpha)
        return np.mean(self.samples <= budget[:, None], axis=1)


def is_privileged(component: object) -> bool:
    """Whether a predictor or scheduler reads hidden environment state on purpose.

    A component says so with ``privileged = True`` (the clairvoyant reference, the oracle
    predictor, a scheduler built on the oracle); one that says nothing but has a ``bind``
    method (the :class:`mara_env.agents.base.PrivilegedScheduler` protocol) counts as privileged too.
    Harnesses bind privileged components to the environment every episode, and result tables
    mark them, since no real scheduler could do what they do.

    Example:
        >>> from mara_env.predictors.wls import WLS
        >>> is_privileged(WLS())
        False
    """
    declared = getattr(component, "privileged", None)
    if declared is not None:
        return declared is True
    return callable(getattr(component, "bind", None))


class Predictor(Protocol):
    """Predicts the remaining work of a batch of tasks."""

    @property
    def name(self) -> str:
        """Short identifier shown in result tables."""
        ...

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """Samples of each task's remaining work."""
        ...
