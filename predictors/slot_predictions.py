"""The prediction block of each slot, computed once per epoch: its options, its decoding, and
:class:`SlotPredictions`, which the observation wrappers of :mod:`mara_env.predictors.wrappers`
append to every observation.

A block holds, per slot, ``len(quantile_levels) + 2`` values: the quantiles of the needed /
available work on one node, then the probabilities of success on one node and on all the nodes
the task may get (:mod:`mara_env.predictors.wrappers` says what each means).

Example:
    >>> import numpy as np
    >>> options = PredictionOptions()
    >>> options.features_per_slot, options.success_one_node
    (5, 3)
    >>> decode_predictions(np.arange(10.0), n_slots=2).success_all_nodes.tolist()
    [4.0, 9.0]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from mara_env.predictors.base import Predictor, is_privileged
from mara_env.predictors.env_histories import HistoryBuffers
from mara_env.predictors.registry import make_predictor
from mara_env.predictors.slot_features import (
    NEED_CAP,
    PREDICTION_FEATURES,
    QUANTILE_LEVELS,
    quantile_positions,
    slot_features,
    success_thresholds,
)
from mara_env.sim.simulator import NO_TASK, ClusterSimulator, ClusterState

#: Indices within a slot's block of prediction features, for the default quantile levels.
NEED_Q10, NEED_Q50, NEED_Q90, SUCCESS_ONE_NODE, SUCCESS_ALL_NODES = range(PREDICTION_FEATURES)


#: Spawn key of the predictor's generator under the ``reset`` seed (the bytes of "pred").
_SPAWN_KEY = (0x70726564,)


class PredictorOutputError(ValueError):
    """A predictor returned samples of the wrong shape, or NaN or negative remaining work."""


@dataclass(frozen=True)
class PredictionOptions:
    """How the prediction features are computed.

    Attributes:
        n_samples: Samples of remaining work drawn per task.
        quantile_levels: Levels of the ``need`` features, strictly increasing in [0, 1].
        need_cap: Cap of the ``need`` features (needed / available); "never" reads as the cap.
        reuse_samples: Keep a task's samples while its history does not change.

    Example:
        >>> PredictionOptions(n_samples=0)
        Traceback (most recent call last):
        ...
        ValueError: PredictionOptions.n_samples must be an int >= 1, got 0. Use e.g. 16 samples per task.
    """

    n_samples: int = 16
    quantile_levels: tuple[float, ...] = QUANTILE_LEVELS
    need_cap: float = NEED_CAP
    reuse_samples: bool = True

    def __post_init__(self) -> None:
        n = self.n_samples
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(
                f"PredictionOptions.n_samples must be an int >= 1, got {n!r}. "
                "Use e.g. 16 samples per task."
            )
        levels = self.quantile_levels
        if not (
            isinstance(levels, tuple)
            and levels
            and all(isinstance(q, (int, float)) and 0.0 <= q <= 1.0 for q in levels)
            and all(low < high for low, high in itertools.pairwise(levels))
        ):
            raise ValueError(
                f"PredictionOptions.quantile_levels must be a non-empty tuple of strictly "
                f"increasing numbers in [0, 1], got {levels!r}. E.g. (0.1, 0.5, 0.9)."
            )
        cap = self.need_cap
        if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not math.isfinite(cap):
            raise ValueError(f"PredictionOptions.need_cap must be a finite number, got {cap!r}.")
        if cap <= 0:
            raise ValueError(f"PredictionOptions.need_cap must be > 0, got {cap!r}. E.g. 10.0.")
        if not isinstance(self.reuse_samples, bool):
            raise ValueError(
                f"PredictionOptions.reuse_samples must be True or False, got {self.reuse_samples!r}."
            )

    @property
    def features_per_slot(self) -> int:
        """Prediction features per slot: the quantiles, then the two success probabilities."""
        return len(self.quantile_levels) + 2

    @property
    def success_one_node(self) -> int:
        """Index of ``success_one_node`` within a slot's block."""
        return len(self.quantile_levels)

    @property
    def success_all_nodes(self) -> int:
        """Index of ``success_all_nodes`` within a slot's block."""
        return len(self.quantile_levels) + 1

    def bounds(self, n_slots: int) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds of the ``n_slots`` blocks (for the observation spaces)."""
        high = np.ones(self.features_per_slot, dtype=np.float32)
        high[: len(self.quantile_levels)] = self.need_cap
        return np.zeros(n_slots * self.features_per_slot, np.float32), np.tile(high, n_slots)


@dataclass(frozen=True)
class PredictionView:
    """The prediction block of a vector, decoded into named per-slot arrays.

    Attributes:
        need: ``(n_slots, n_levels)`` needed / available on one node at each quantile level.
        success_one_node: Probability of reaching the target by the deadline on one node.
        success_all_nodes: The same on all the nodes the task may get.
    """

    need: np.ndarray
    success_one_node: np.ndarray
    success_all_nodes: np.ndarray


def decode_predictions(
    vector: np.ndarray, n_slots: int, options: PredictionOptions | None = None
) -> PredictionView:
    """Decode the prediction block at the end of a wrapped observation, state or Gymnasium
    observation (``options``: the wrapper's, default :class:`PredictionOptions`).

    Raises:
        ValueError: If the vector is not 1-d or too short to hold the block.
    """
    options = PredictionOptions() if options is None else options
    vector = np.asarray(vector, dtype=np.float64)
    size = n_slots * options.features_per_slot
    if vector.ndim != 1 or vector.size < size:
        raise ValueError(
            f"decode_predictions: expected a 1-d vector ending with {n_slots} x "
            f"{options.features_per_slot} prediction features, got shape {vector.shape}. Pass a "
            "wrapped observation['observation'], state() or Gymnasium observation."
        )
    block = vector[vector.size - size :].reshape(n_slots, options.features_per_slot)
    return PredictionView(
        need=block[:, : len(options.quantile_levels)],
        success_one_node=block[:, options.success_one_node],
        success_all_nodes=block[:, options.success_all_nodes],
    )


def resolve_predictor(predictor: str | Predictor) -> Predictor:
    """A predictor object from a registered name or a predictor.

    Raises:
        mara_env.predictors.registry.UnknownPredictorError: For an unknown name.
        TypeError: For a class instead of an instance, or an object without ``predict``.
    """
    if isinstance(predictor, str):
        return make_predictor(predictor)
    if isinstance(predictor, type):
        raise TypeError(
            f"predictor must be a predictor object, got the class {predictor.__name__}; pass an "
            f"instance such as {predictor.__name__}() or a registered name."
        )
    if not callable(getattr(predictor, "predict", None)):
        raise TypeError(
            f"predictor must be a registered name (e.g. 'wls') or an object with a "
            f"predict(histories, n_samples, rng) method, got {type(predictor).__name__} "
            f"{predictor!r}."
        )
    return predictor


class SlotPredictions:
    """The prediction features of one simulator's slots, computed at most once per epoch.

    Per slot it keeps the sorted samples of the task in it and the history length they were
    predicted from; an epoch's features then take a few array operations over all slots, plus one
    ``predict`` call for the slots whose task is new or was trained.

    Args:
        simulator: The simulator whose slotted tasks are predicted.
        predictor: The predictor (an object or a registered name).
        options: How features are computed.

    Attributes:
        rng: The generator passed to the predictor (see :meth:`reset`).
        predict_calls: ``predict`` calls made so far.
        current: The features as of the last :meth:`features` call (a view, overwritten in
            place when an epoch is computed).
    """

    def __init__(
        self,
        simulator: ClusterSimulator,
        predictor: str | Predictor,
        options: PredictionOptions | None = None,
    ) -> None:
        self.simulator = simulator
        self.predictor = resolve_predictor(predictor)
        self.options = PredictionOptions() if options is None else options
        config = simulator.config
        self.n_slots = config.n_slots
        self.size = config.n_slots * self.options.features_per_slot
        self._nodes = float(config.task_node_limit)
        self._quantile_index = quantile_positions(
            self.options.n_samples, self.options.quantile_levels
        )
        # The features of the current epoch, written in place; current is a flat view of it.
        self._block = np.zeros((config.n_slots, self.options.features_per_slot), np.float32)
        self.current = self._block.reshape(-1)
        self._histories = HistoryBuffers(simulator)
        self.rng = np.random.default_rng()
        self.predict_calls = 0
        self._state: ClusterState | None = None
        self._epoch = -1
        self._clear_slots()
        self._bind()

    def _bind(self) -> None:
        """Hand a privileged predictor (the oracle) this simulator, for the episode ahead."""
        if is_privileged(self.predictor):
            cast(Any, self.predictor).bind(self.simulator)

    def reset(self, seed: int | None) -> None:
        """Start over after the env's reset: a seed gives a new generator (a child of the seed),
        ``None`` continues the current one."""
        if seed is not None:
            self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=_SPAWN_KEY))
        self._state = None
        self._bind()

    def features(self) -> np.ndarray:
        """The current epoch's prediction features (computed on the first call of an epoch).

        The array is overwritten in the next epoch: copy it (e.g. by concatenating) before
        handing it out.
        """
        state = self.simulator.state
        if state is not self._state or state.epoch != self._epoch:
            self._refresh(state)
        return self.current

    def _clear_slots(self) -> None:
        """Empty every slot's row (see :meth:`_empty_slot`)."""
        n_slots = self.n_slots
        self._slot_task = [NO_TASK] * n_slots
        self._slot_length = [0] * n_slots
        self._sorted = np.zeros((n_slots, self.options.n_samples))
        self._deadline = np.full(n_slots, np.inf)
        self._speed = np.ones(n_slots)
        self._thresholds = np.full((n_slots, 2), -1.0)

    def _refresh(self, state: ClusterState) -> None:
        if state is not self._state:
            self._clear_slots()
        self._state, self._epoch = state, state.epoch
        history, reuse, known_length = (
            state.history_loss,
            self.options.reuse_samples,
            self._slot_length,
        )
        stale_slots, stale_tasks, stale_lengths = [], [], []
        for slot, task in enumerate(state.slots.tolist()):
            if task != self._slot_task[slot]:
                if task == NO_TASK:
                    self._empty_slot(slot)
                    continue
                self._fill_slot(slot, task, state)
            elif task == NO_TASK:
                continue
            length = len(history[task])
            if length != known_length[slot] or not reuse:
                stale_slots.append(slot)
                stale_tasks.append(task)
                stale_lengths.append(length)
        if stale_slots:
            self._predict(stale_slots, stale_tasks, stale_lengths)
        # A slotted task has at least one epoch left (it expires when its deadline comes).
        available = (self._deadline - state.epoch) * self._speed
        slot_features(
            self._sorted,
            available,
            self._thresholds,
            self._quantile_index,
            self.options.need_cap,
            out=self._block,
        )
        self.current = self._block.reshape(-1)  # re-taken: a pickled copy no longer shares memory

    def _fill_slot(self, slot: int, task: int, state: ClusterState) -> None:
        tasks = state.tasks
        self._slot_task[slot] = task
        self._slot_length[slot] = 0
        self._deadline[slot] = tasks.deadline.item(task)
        self._speed[slot] = tasks.speed.item(task)
        self._thresholds[slot] = success_thresholds(tasks.alpha[task : task + 1], self._nodes)

    def _empty_slot(self, slot: int) -> None:
        """An empty row gives all-zero features without masking: samples 0 and an infinite
        deadline (so every need is 0 / inf = 0), and thresholds -1 that no sample meets."""
        self._slot_task[slot] = NO_TASK
        self._slot_length[slot] = 0
        self._sorted[slot] = 0.0
        self._deadline[slot] = np.inf
        self._speed[slot] = 1.0
        self._thresholds[slot] = -1.0

    def _predict(self, slots: list[int], tasks: list[int], lengths: list[int]) -> None:
        """One batched ``predict`` call for the ``tasks`` in ``slots`` (whose histories have
        ``lengths`` points); keeps their sorted samples."""
        histories = self._histories.histories(tasks)
        n_samples = self.options.n_samples
        remaining = self.predictor.predict(histories, n_samples, self.rng)
        self.predict_calls += 1
        returned = getattr(remaining, "samples", None)
        samples = np.zeros(0) if returned is None else np.asarray(returned, dtype=np.float64)
        if samples.shape != (len(tasks), n_samples):
            raise PredictorOutputError(
                f"{_name(self.predictor)}.predict returned samples of shape {samples.shape} for "
                f"{len(tasks)} tasks and n_samples={n_samples}; expected a RemainingWork with "
                f"samples of shape {(len(tasks), n_samples)}."
            )
        if not np.minimum.reduce(samples, axis=None) >= 0.0:  # NaN fails the comparison too
            raise PredictorOutputError(
                f"{_name(self.predictor)}.predict returned NaN or negative remaining work; "
                "samples must be >= 0, with inf for 'never'."
            )
        samples = np.sort(samples, axis=1)
        self._sorted[slots] = samples
        for slot, length in zip(slots, lengths, strict=True):
            self._slot_length[slot] = length


def _name(predictor: Predictor) -> str:
    return str(getattr(predictor, "name", type(predictor).__name__))
