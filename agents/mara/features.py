"""What the MARA policy reads: per-slot and global features built from observations alone.

Each epoch the policy gets, for every visible slot, the slot's observed features (the
observation's slot block without the two node-specific entries, ``nodes_this_epoch`` and
``mine_last_epoch``, which the decoder receives per node) followed by :data:`PREDICTION_FEATURES`
prediction features, and a few global values.

Prediction features (per slot, all 0 for an empty slot): those of the environment's prediction
wrappers with their default quantile levels (0.1, 0.5, 0.9) and cap, computed by the same
function (:mod:`mara_env.predictors.slot_features`): ``need_q10``, ``need_q50``, ``need_q90`` (remaining
work over the work one node can still do by the deadline), ``success_one_node`` and
``success_all_nodes`` (on the config's ``task_node_limit`` nodes).

Predictions come from a :class:`mara_env.predictors.base.Predictor` fed with
:class:`mara_env.agents.observed_history.ObservedHistories`; a task's samples are kept until it reports
new losses, so each epoch re-predicts only the tasks trained in the last epoch and new arrivals
(one batched call), while the features of every task follow its shrinking time left.

Example:
    >>> import mara_env
    >>> from mara_env.predictors.registry import make_predictor
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=0)
    >>> builder = FeatureBuilder(make_predictor("wls"), n_samples=8)
    >>> builder.reset(env.config, seed=0)
    >>> observation = env.observe("node_0")
    >>> features = builder.build(observation["observation"], observation["action_mask"])
    >>> features.slots.shape, features.globals.shape, features.previous_slots.tolist()
    ((3, 21), (5,), [3, 3])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mara_env import ClusterConfig
from mara_env.agents.base import NotResetError
from mara_env.agents.observed_history import ObservedHistories
from mara_env.agents.tracking import NO_TASK
from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.base import Predictor, RemainingWork, TaskHistory
from mara_env.predictors.slot_features import (
    NEED_CAP,
    PREDICTION_FEATURES,
    QUANTILE_LEVELS,
    quantile_positions,
    slot_features,
    success_thresholds,
)
from mara_env.sim.observation import (
    GLOBAL_FEATURES,
    S_BUDGET,
    S_MINE,
    S_NODES_NOW,
    S_OCCUPIED,
    S_SERIAL,
    SLOT_FEATURES,
)

#: Observed slot features the policy reads: the slot block minus the two node-specific ones and
#: the v1 columns (the arrival serial is an id, not a feature; the step budget reaches the policy
#: through the predictions), so the shipped checkpoint keeps its inputs.
OBSERVED_SLOT_COLUMNS = np.array(
    [c for c in range(SLOT_FEATURES) if c not in (S_NODES_NOW, S_MINE, S_SERIAL, S_BUDGET)]
)
#: Per-slot input width of the policy.
SLOT_INPUTS = len(OBSERVED_SLOT_COLUMNS) + PREDICTION_FEATURES
#: Global inputs: epoch fraction, arrivals open, queue length, queue's least time left, active.
GLOBAL_INPUTS = 5
#: Network inputs are clipped to +-INPUT_BOUND.
INPUT_BOUND = 10.0


def _clipped_inputs(values: np.ndarray) -> np.ndarray:
    """``values`` clipped to +-:data:`INPUT_BOUND`, as float32 (``np.clip``'s result, with
    less overhead)."""
    clipped = np.maximum(values, -INPUT_BOUND)
    return np.minimum(clipped, INPUT_BOUND, out=clipped).astype(np.float32)


@dataclass(frozen=True)
class EpochFeatures:
    """The policy's inputs for one epoch of one cluster.

    Attributes:
        slots: ``(n_slots, SLOT_INPUTS)`` float32 slot features (0 rows for empty slots).
        globals: ``(GLOBAL_INPUTS,)`` float32 global features.
        mask: ``(n_slots + 1,)`` bool legal actions at the epoch's start (slots, then idle).
        previous_slots: ``(n_nodes,)`` per node, the slot of the task it trained last epoch if
            that task is still there, else ``n_slots`` (idle).
    """

    slots: np.ndarray
    globals: np.ndarray
    mask: np.ndarray
    previous_slots: np.ndarray


def prediction_features(
    samples: np.ndarray,
    time_left: np.ndarray,
    speed: np.ndarray,
    alpha: np.ndarray,
    max_nodes: int,
) -> np.ndarray:
    """The :data:`PREDICTION_FEATURES` values of tasks from their remaining-work samples.

    The wrappers' features (:func:`mara_env.predictors.slot_features.slot_features`) with the default
    quantile levels and cap.

    Args:
        samples: ``(n_tasks, n_samples)`` remaining curve steps (``inf`` = never).
        time_left: Epochs until each task's deadline.
        speed: Curve steps one node advances each task per epoch.
        alpha: Each task's parallel-scaling exponent.
        max_nodes: Nodes a task may get at most.

    Returns:
        ``(n_tasks, PREDICTION_FEATURES)`` float64 features.

    Example:
        >>> samples = np.array([[10.0, 20.0, 30.0, np.inf]])
        >>> features = prediction_features(
        ...     samples, np.array([10.0]), np.array([2.0]), np.array([1.0]), max_nodes=4
        ... )
        >>> features.tolist()
        [[0.5, 1.0, 10.0, 0.5, 0.75]]
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2:
        raise ValueError(
            f"prediction_features: samples must be (n_tasks, n_samples), got {samples.shape}."
        )
    return _sorted_sample_features(
        np.sort(samples, axis=1), time_left, speed, success_thresholds(alpha, max_nodes)
    )


def _sorted_sample_features(
    sorted_samples: np.ndarray, time_left: np.ndarray, speed: np.ndarray, thresholds: np.ndarray
) -> np.ndarray:
    """:func:`prediction_features` of samples already sorted along each row, with the tasks'
    :func:`success_thresholds`."""
    available = np.maximum(np.asarray(time_left, dtype=np.float64), 1.0) * np.asarray(speed)
    positions = _positions(sorted_samples.shape[1])
    return slot_features(sorted_samples, available, thresholds, positions, NEED_CAP)


@lru_cache(maxsize=16)
def _positions(n_samples: int) -> np.ndarray:
    """The default quantile levels' positions among ``n_samples`` sorted samples (read-only)."""
    positions = quantile_positions(n_samples, QUANTILE_LEVELS)
    positions.setflags(write=False)
    return positions


class NoPredictions:
    """A predictor whose every sample is "never" (the ablation without prediction features).

    Its features are constant (need at the cap, success probabilities 0), so they carry no
    information about the task.

    Example:
        >>> NoPredictions().predict([], 4, np.random.default_rng(0)).samples.shape
        (0, 4)
    """

    name = "none"

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """``inf`` samples for every task."""
        return RemainingWork(np.full((len(histories), n_samples), np.inf))


class FeatureBuilder:
    """Turns each epoch's first observation into :class:`EpochFeatures`.

    Keeps the observed histories, the cached prediction samples of each task and, per node, the
    slot it trained last epoch (from :meth:`record` and the slot tracker), so every node's
    decoder input is known at the epoch's start.

    Args:
        predictor: Any predictor (e.g. ``make_predictor("flow_matching")``).
        n_samples: Samples drawn per prediction.

    Attributes:
        histories: The observed task histories.
    """

    def __init__(self, predictor: Predictor, n_samples: int = 16) -> None:
        if not isinstance(n_samples, int) or n_samples < 1:
            raise ValueError(f"FeatureBuilder: n_samples must be an int >= 1, got {n_samples!r}.")
        self.predictor = predictor
        self.n_samples = n_samples
        self.histories = ObservedHistories()
        self._config: ClusterConfig | None = None
        self._rng = np.random.default_rng()
        self._sorted_samples: dict[int, np.ndarray] = {}
        self._chosen = np.zeros(0, dtype=np.int64)
        self._thresholds = np.zeros((len(FAMILY_NAMES) + 1, 2))

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Start an episode of ``config``; the predictor's samples come from ``seed``."""
        self._config = config
        self._rng = np.random.default_rng(seed)
        self.histories.reset(config)
        self._sorted_samples = {}
        self._chosen = np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        # per family code, your own families' ("other") last
        self._thresholds = success_thresholds(config.observed_alphas(), config.task_node_limit)

    @property
    def config(self) -> ClusterConfig:
        """The configuration given to :meth:`reset`."""
        if self._config is None:
            raise NotResetError("FeatureBuilder: call reset(config, seed) before build().")
        return self._config

    def build(self, observation: np.ndarray, mask: np.ndarray) -> EpochFeatures:
        """Features of the epoch whose first observation (no node decided yet) is given.

        Args:
            observation: Node 0's float32 observation vector at the epoch's start.
            mask: Its action mask.

        Raises:
            ValueError: If the observation or mask does not fit the config.
        """
        config = self.config
        mask = np.asarray(mask)
        if mask.shape != (config.n_actions,):
            raise ValueError(
                f"FeatureBuilder.build: the action mask must have shape ({config.n_actions},) "
                f"for this config, got {mask.shape}."
            )
        histories = self.histories
        histories.update(observation)
        view = histories.view
        if view is None:  # update() always sets it; this narrows the type
            raise NotResetError("FeatureBuilder: the histories hold no observation.")
        vector = np.asarray(observation, dtype=np.float64)
        slot_block = vector[GLOBAL_FEATURES:].reshape(config.n_slots, SLOT_FEATURES)
        occupied = slot_block[:, S_OCCUPIED] > 0.5
        predictions = self._predictions(occupied, view.time_left, view.family)
        slots = np.zeros((config.n_slots, SLOT_INPUTS))
        slots[:, : len(OBSERVED_SLOT_COLUMNS)] = slot_block[:, OBSERVED_SLOT_COLUMNS]
        slots[:, len(OBSERVED_SLOT_COLUMNS) :] = predictions
        slots[~occupied] = 0.0
        continuing = histories.tracker.continuing
        previous = self._chosen
        kept = (previous < config.n_slots) & continuing[np.minimum(previous, config.n_slots - 1)]
        previous_slots = np.where(kept, previous, config.idle_action).astype(np.int64)
        return EpochFeatures(
            slots=_clipped_inputs(slots),
            globals=_clipped_inputs(vector[:GLOBAL_INPUTS]),
            mask=mask > 0,
            previous_slots=previous_slots,
        )

    def record(self, actions: np.ndarray) -> None:
        """Remember the actions the nodes took this epoch (their ``previous_slots`` next)."""
        config = self.config
        actions = np.asarray(actions, dtype=np.int64)
        if actions.shape != (config.n_nodes,):
            raise ValueError(
                f"FeatureBuilder.record: expected one action per node, shape ({config.n_nodes},),"
                f" got {actions.shape}."
            )
        self._chosen = actions.copy()

    def _predictions(
        self, occupied: np.ndarray, time_left: np.ndarray, family: np.ndarray
    ) -> np.ndarray:
        histories = self.histories
        cached = self._sorted_samples
        for task in histories.departed_ids:
            cached.pop(task, None)
        ids = histories.task_ids
        slots = np.flatnonzero(occupied & (ids != NO_TASK))
        slot_list = slots.tolist()
        slot_ids = ids[slots].tolist()
        reported = histories.reported_slots
        stale = [
            slot
            for slot, task in zip(slot_list, slot_ids, strict=True)
            if task not in cached or reported[slot]
        ]
        if stale:
            batch = []
            for slot in stale:
                history = histories.history(slot)
                if history is not None:  # always, for an occupied slot
                    batch.append(history)
            remaining = self.predictor.predict(batch, self.n_samples, self._rng)
            # sorted once here, not at every epoch the samples are read
            rows = np.sort(np.asarray(remaining.samples, dtype=np.float64), axis=1)
            for slot, row in zip(stale, rows, strict=True):
                cached[int(ids[slot])] = row
        features = np.zeros((len(occupied), PREDICTION_FEATURES))
        if slot_list:
            features[slots] = _sorted_sample_features(
                np.array([cached[task] for task in slot_ids]),
                time_left[slots],
                histories.speed[slots],
                self._thresholds[family[slots]],
            )
        return features
