"""What schedulers see: the observation and state vectors, their layout, and a decoder.

The observation of node ``i`` is a float32 vector: :data:`GLOBAL_FEATURES` global values, then
:data:`SLOT_FEATURES` values for each of the ``n_slots`` visible slots (slot-major). Everything in
it is something a real cluster scheduler knows; the hidden rest of each loss curve is not in it.

Global features (index: meaning)
    0 ``epoch_fraction``: epoch / arrival_horizon
    1 ``arrivals_open``: 1 while tasks may still arrive
    2 ``queue_length``: queued (unslotted) tasks / n_slots
    3 ``queue_min_time_left``: least epochs-to-deadline in the queue / TIME_SCALE (0 if empty)
    4 ``active_tasks``: slotted tasks / n_slots
    5 ``nodes_decided``: nodes that already chose this epoch / n_nodes
    6 ``node_index``: the observing node / n_nodes (0 in ``state()``)
    7 ``node_was_idle``: 1 if the observing node idled last epoch (0 in ``state()``)

Slot features (index: meaning; all 0 for an empty slot)
    0 ``occupied``: 1 if a task stands in the slot, 0 if it is empty
    1 ``log_loss_ratio``: ln(current loss / loss at arrival)
    2 ``log_target_ratio``: ln(target / loss at arrival)
    3 ``progress``: normalised log-loss progress toward the target, clipped to [0, 1]
    4 ``time_left``: (deadline - epoch) / TIME_SCALE
    5 ``time_left_fraction``: (deadline - epoch) / (deadline - arrival)
    6 ``age``: (epoch - arrival) / TIME_SCALE
    7 ``work``: node-epochs received / TIME_SCALE
    8 ``speed``: curve steps per node-epoch / SPEED_SCALE
    9 ``curve_steps``: curve steps done / STEP_SCALE
    10 ``recent_slope``: log-loss drop per node-epoch over the task's last training epoch
    11 ``nodes_last_epoch``: nodes that trained the task last epoch / n_nodes
    12 ``nodes_this_epoch``: nodes that already chose it this epoch / n_nodes (AEC form)
    13 ``mine_last_epoch``: 1 if the observing node trained it last epoch (0 in ``state()``)
    14-17 family one-hot in :data:`mara_env.curves.families.FAMILY_NAMES` order (all 0 for a family of
          your own, ``ClusterConfig.own_families``)
    18 ``serial``: (arrival serial + 1) / SERIAL_SCALE, where the serial is the task's index in
    the episode's task table (sorted by arrival) and ids it for the whole episode; 0 only for
    an empty slot. ``rint(value * SERIAL_SCALE) - 1`` recovers it exactly (added in v1)
    19 ``budget``: the task's step budget in node-epochs at one node (its curve's recorded
    points / speed; the simulator repeats the last loss after them) / TIME_SCALE (added in v1)

The state vector (for centralised critics) is the observation with the node-specific entries at
0, followed by each node's previous slot and this epoch's choice so far, both as
``slot / n_slots`` (1 = idle or not yet chosen).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mara_env.curves.families import FAMILY_NAMES, OTHER_FAMILY
from mara_env.sim.core import ClusterBatch
from mara_env.sim.layout import (
    FEATURE_BOUND,
    G_ACTIVE,
    G_DECIDED,
    G_EPOCH,
    G_IDLE,
    G_NODE,
    G_OPEN,
    G_QUEUE,
    G_QUEUE_TIME,
    GLOBAL_FEATURES,
    S_AGE,
    S_BUDGET,
    S_FAMILY,
    S_LOG_LOSS,
    S_LOG_TARGET,
    S_MINE,
    S_NODES_LAST,
    S_NODES_NOW,
    S_OCCUPIED,
    S_PROGRESS,
    S_SERIAL,
    S_SLOPE,
    S_SPEED,
    S_STEPS,
    S_TIME_FRACTION,
    S_TIME_LEFT,
    S_WORK,
    SERIAL_SCALE,
    SLOT_FEATURES,
    SPEED_SCALE,
    STEP_SCALE,
    TIME_SCALE,
)
from mara_env.sim.observation_kernel import fill_shared_observations, fill_slot_features
from mara_env.sim.simulator import ClusterSimulator
from mara_env.sim.task_fields import NO_TASK
from mara_env.worlds.config import ClusterConfig

#: The layout constants (from :mod:`mara_env.sim.layout`) are part of this module's interface.
__all__ = [
    "FEATURE_BOUND",
    "GLOBAL_FEATURES",
    "G_ACTIVE",
    "G_DECIDED",
    "G_EPOCH",
    "G_IDLE",
    "G_NODE",
    "G_OPEN",
    "G_QUEUE",
    "G_QUEUE_TIME",
    "SERIAL_SCALE",
    "SLOT_FEATURES",
    "SPEED_SCALE",
    "STEP_SCALE",
    "S_AGE",
    "S_BUDGET",
    "S_FAMILY",
    "S_LOG_LOSS",
    "S_LOG_TARGET",
    "S_MINE",
    "S_NODES_LAST",
    "S_NODES_NOW",
    "S_OCCUPIED",
    "S_PROGRESS",
    "S_SERIAL",
    "S_SLOPE",
    "S_SPEED",
    "S_STEPS",
    "S_TIME_FRACTION",
    "S_TIME_LEFT",
    "S_WORK",
    "TIME_SCALE",
    "ObservationBuilder",
    "SlotView",
    "decode_observation",
    "nodes_decided",
    "observation_size",
    "occupied_masks",
    "shared_features",
    "shared_observations",
    "slot_columns",
    "slot_matrix",
    "state_size",
    "state_vector",
    "state_vectors",
]


def observation_size(config: ClusterConfig) -> int:
    """Length of one node's observation vector."""
    return GLOBAL_FEATURES + config.n_slots * SLOT_FEATURES


def state_size(config: ClusterConfig) -> int:
    """Length of the state vector."""
    return observation_size(config) + 2 * config.n_nodes


@dataclass(frozen=True)
class SlotView:
    """An observation decoded into named per-slot arrays in natural units.

    Attributes:
        occupied: Whether each slot holds a task.
        log_loss_ratio: ln(current loss / loss at arrival).
        log_target_ratio: ln(target / loss at arrival).
        progress: Normalised log-loss progress toward the target in [0, 1].
        time_left: Epochs until the deadline.
        age: Epochs since arrival.
        work: Node-epochs received so far.
        recent_slope: Log-loss drop per node-epoch over the last training epoch.
        nodes_this_epoch: Nodes that already chose each slot this epoch.
        nodes_decided: Nodes that already chose this epoch.
        node_index: The observing node.
        family: Family code of each slot (index into ``FAMILY_NAMES``;
            :data:`mara_env.curves.families.OTHER_FAMILY` for a family of your own; -1 if empty).
        time_left_fraction: (deadline - epoch) / (deadline - arrival).
        speed: Curve steps one node advances each slot's task per epoch.
        curve_steps: Curve steps done.
        nodes_last_epoch: Nodes that trained each slot's task last epoch.
        mine_last_epoch: Whether the observing node trained each slot's task last epoch.
        epoch_fraction: epoch / arrival_horizon.
        arrivals_open: Whether tasks may still arrive.
        queue_length: Queued (unslotted) tasks.
        queue_min_time_left: Least epochs to deadline in the queue (0 if it is empty).
        active_tasks: Slotted tasks.
        node_was_idle: Whether the observing node idled last epoch.
        serial: Arrival serial of each slot's task (its index in the episode's task table, the
            same for the task's whole episode; -1 if empty).
        budget: Each slot's step budget in node-epochs at one node (curve points / speed; 0 if
            empty).
    """

    occupied: np.ndarray
    log_loss_ratio: np.ndarray
    log_target_ratio: np.ndarray
    progress: np.ndarray
    time_left: np.ndarray
    age: np.ndarray
    work: np.ndarray
    recent_slope: np.ndarray
    nodes_this_epoch: np.ndarray
    nodes_decided: int
    node_index: int
    family: np.ndarray
    time_left_fraction: np.ndarray
    speed: np.ndarray
    curve_steps: np.ndarray
    nodes_last_epoch: np.ndarray
    mine_last_epoch: np.ndarray
    epoch_fraction: float
    arrivals_open: bool
    queue_length: int
    queue_min_time_left: float
    active_tasks: int
    node_was_idle: bool
    serial: np.ndarray
    budget: np.ndarray


def _checked_vector(observation: np.ndarray, config: ClusterConfig, caller: str) -> np.ndarray:
    """``observation`` as a float64 vector, or a ValueError naming ``caller`` if it does not fit
    ``config``."""
    vector = np.asarray(observation, dtype=np.float64)
    if vector.shape != (observation_size(config),):
        raise ValueError(
            f"{caller}: expected a vector of length {observation_size(config)} for this config, "
            f"got shape {vector.shape}."
        )
    return vector


def nodes_decided(observation: np.ndarray, config: ClusterConfig) -> int:
    """How many nodes chose before the observing one this epoch (``SlotView.nodes_decided``),
    without decoding the rest: 0 marks an epoch's first node, the one that decodes it.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=3)
        >>> nodes_decided(env.observe("node_0")["observation"], env.config)
        0
    """
    vector = _checked_vector(observation, config, "nodes_decided")
    return round(vector[G_DECIDED] * config.n_nodes)


def decode_observation(observation: np.ndarray, config: ClusterConfig) -> SlotView:
    """Decode one node's observation vector into a :class:`SlotView`.

    Example:
        >>> import numpy as np
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=3)
        >>> view = decode_observation(env.observe("node_0")["observation"], env.config)
        >>> view.occupied.shape
        (3,)
    """
    vector = _checked_vector(observation, config, "decode_observation")
    n_nodes, n_slots = config.n_nodes, config.n_slots
    slots = vector[GLOBAL_FEATURES:].reshape(n_slots, SLOT_FEATURES)
    occupied = slots[:, S_OCCUPIED] > 0.5
    one_hot = slots[:, S_FAMILY : S_FAMILY + len(FAMILY_NAMES)]
    # the scaled columns in one product, and the whole numbers among them in one rounding
    scaled = slots[:, _SCALED_COLUMNS] * _column_scales(n_nodes)
    whole = np.rint(scaled[:, :_WHOLE_COLUMNS])
    time_left, age, work, serial = whole[:, :4].T
    nodes_now, nodes_last = whole[:, 4:].astype(np.int64).T
    speed, curve_steps, budget = scaled[:, _WHOLE_COLUMNS:].T
    glob = vector[:GLOBAL_FEATURES].tolist()  # Python floats: the same products and roundings
    return SlotView(
        occupied=occupied,
        log_loss_ratio=slots[:, S_LOG_LOSS],
        log_target_ratio=slots[:, S_LOG_TARGET],
        progress=slots[:, S_PROGRESS],
        time_left=time_left,
        age=age,
        work=work,
        recent_slope=slots[:, S_SLOPE],
        nodes_this_epoch=nodes_now,
        nodes_decided=round(glob[G_DECIDED] * n_nodes),
        node_index=round(glob[G_NODE] * n_nodes),
        family=np.where(
            occupied, np.where(one_hot.any(axis=1), one_hot.argmax(axis=1), OTHER_FAMILY), -1
        ),
        time_left_fraction=slots[:, S_TIME_FRACTION],
        speed=speed,
        curve_steps=curve_steps,
        nodes_last_epoch=nodes_last,
        mine_last_epoch=slots[:, S_MINE] > 0.5,
        epoch_fraction=glob[G_EPOCH],
        arrivals_open=glob[G_OPEN] > 0.5,
        queue_length=round(glob[G_QUEUE] * n_slots),
        queue_min_time_left=float(round(glob[G_QUEUE_TIME] * TIME_SCALE)),
        active_tasks=round(glob[G_ACTIVE] * n_slots),
        node_was_idle=glob[G_IDLE] > 0.5,
        serial=np.where(occupied, serial - 1, -1).astype(np.int64),
        budget=budget,
    )


#: The slot columns :func:`decode_observation` scales: first those that hold whole numbers
#: (rounded after scaling), then the others; their scales are :func:`_column_scales`.
_SCALED_COLUMNS = np.array(
    [S_TIME_LEFT, S_AGE, S_WORK, S_SERIAL, S_NODES_NOW, S_NODES_LAST, S_SPEED, S_STEPS, S_BUDGET]
)
_WHOLE_COLUMNS = 6


@lru_cache(maxsize=32)
def _column_scales(n_nodes: int) -> np.ndarray:
    """What each of :data:`_SCALED_COLUMNS` is multiplied by to decode it (read-only)."""
    whole = (TIME_SCALE, TIME_SCALE, TIME_SCALE, SERIAL_SCALE, n_nodes, n_nodes)
    scales = np.array([*whole, SPEED_SCALE, STEP_SCALE, TIME_SCALE], dtype=np.float64)
    scales.setflags(write=False)
    return scales


def slot_columns(core: ClusterBatch, out: np.ndarray | None = None) -> np.ndarray:
    """``(SLOT_FEATURES, B, n_slots)`` float64 slot features of every cluster at its epoch start,
    columns first (node-specific columns 0).

    A pure function of the core's slot rows: the constant features come from each row's feature
    block, the others are computed (:func:`mara_env.sim.observation_kernel.fill_slot_features`); an
    empty slot's row is all zeros.

    Args:
        core: The core whose slots are read.
        out: Where to write them (any ``(SLOT_FEATURES, B, n_slots)`` float64 view, e.g. a
            transposed view of the observations); a new array by default.
    """
    if out is None:
        out = np.empty((core.batch_size, core.config.n_slots, SLOT_FEATURES)).transpose(2, 0, 1)
    fill_slot_features(out.transpose(1, 2, 0), core.slot, core.epoch, core.previous_slot)
    return out


def slot_matrix(core: ClusterBatch) -> np.ndarray:
    """``(B, n_slots, SLOT_FEATURES)`` float64 slot features of every cluster at its epoch start
    (before any node chose; node-specific columns 0): :func:`slot_columns`, slots first."""
    return slot_columns(core).transpose(1, 2, 0)


def shared_observations(core: ClusterBatch, out: np.ndarray | None = None) -> np.ndarray:
    """``(B, observation_size)`` float32: every cluster's observation at its epoch start with
    the node-specific entries at 0 (the first part of the state vector).

    Args:
        core: The core whose clusters are observed.
        out: Where to write them (a ``(B, observation_size)`` float32 view, e.g. the first
            columns of the states); a new array by default.
    """
    config = core.config
    if out is None:
        out = np.empty((core.batch_size, observation_size(config)), dtype=np.float32)
    observations = out
    fill_shared_observations(
        observations,
        core.slot,
        core.epoch,
        core.previous_slot,
        core.queue_length,
        core.queue_min_deadline,
        core.free_slots,
        config.arrival_horizon,
        _global_scales(config),
        FEATURE_BOUND,
    )
    return observations


@lru_cache(maxsize=32)
def _global_scales(config: ClusterConfig) -> np.ndarray:
    """What each global feature's whole number is multiplied by (0 for the node-specific ones,
    which :func:`shared_observations` leaves at 0)."""
    scales = [0.0] * GLOBAL_FEATURES
    scales[G_EPOCH] = 1.0 / config.arrival_horizon
    scales[G_OPEN] = 1.0
    scales[G_QUEUE] = scales[G_ACTIVE] = 1.0 / config.n_slots
    scales[G_QUEUE_TIME] = 1.0 / TIME_SCALE
    cached = np.array(scales)
    cached.setflags(write=False)  # shared by every call for the config
    return cached


def occupied_masks(core: ClusterBatch) -> np.ndarray:
    """``(B, n_slots + 1)`` int8 action masks at the epoch start: occupied slots, and idle."""
    # the last column of ``slot_task`` is the NO_TASK sentinel: it becomes idle's 1
    mask = np.not_equal(core.slot_task, NO_TASK).view(np.int8)
    mask[:, -1] = 1
    return mask


def shared_features(observation: np.ndarray) -> np.ndarray:
    """The features every node of an epoch shares, from one node's observation: a float32 copy
    with the node's own features (its index, whether it was idle, which slot it held) zeroed."""
    shared = np.array(observation, dtype=np.float32)
    shared[[G_NODE, G_IDLE]] = 0.0
    shared[GLOBAL_FEATURES + S_MINE :: SLOT_FEATURES] = 0.0
    return shared


def state_vector(
    shared: np.ndarray, previous_slot: np.ndarray, choices: np.ndarray, n_slots: int
) -> np.ndarray:
    """One cluster's centralised state: ``shared`` features, each node's previous slot and this
    epoch's choices so far (``n_slots``: idle, or undecided), both ``/ n_slots``."""
    scale = 1.0 / n_slots
    return np.concatenate(
        (shared, np.asarray(previous_slot) * scale, np.asarray(choices) * scale), dtype=np.float32
    )


def state_vectors(core: ClusterBatch, shared: np.ndarray | None, choices: np.ndarray) -> np.ndarray:
    """``(B, state_size)`` float32 centralised states: shared features (``None``: the epoch
    start's, :func:`shared_observations`, written straight into the states), each node's previous
    slot and this epoch's choices so far (both ``/ n_slots``)."""
    config = core.config
    size, n_nodes, scale = observation_size(config), config.n_nodes, 1.0 / config.n_slots
    states = np.empty((core.batch_size, state_size(config)), dtype=np.float32)
    if shared is None:
        shared_observations(core, out=states[:, :size])
    else:
        states[:, :size] = shared
    states[:, size : size + n_nodes] = core.previous_slot * scale
    states[:, size + n_nodes :] = choices * scale
    return states


class ObservationBuilder:
    """Builds one cluster's observations, masks and states (cluster 0 of a simulator's core).

    The per-epoch part is computed once per epoch by :meth:`refresh` (with
    :func:`shared_observations`); within an epoch :meth:`record_choice` updates the "chosen this
    epoch" counts and the mask incrementally, so one node's observation costs a copy and a few
    writes.

    Args:
        simulator: The simulator whose state is observed.
    """

    def __init__(self, simulator: ClusterSimulator) -> None:
        self.simulator = simulator
        config = simulator.config
        self.config = config
        self.size = observation_size(config)
        # plain lists and ints: the per-node calls index with them
        slot_offsets = [GLOBAL_FEATURES + SLOT_FEATURES * slot for slot in range(config.n_slots)]
        self._now_index = [offset + S_NODES_NOW for offset in slot_offsets]
        self._mine_index = [offset + S_MINE for offset in slot_offsets]
        self._n_slots = config.n_slots
        self._cap = config.max_nodes_per_task
        self._current = np.zeros(self.size, dtype=np.float32)
        self._mask = np.zeros(config.n_actions, dtype=np.int8)
        self._previous_slot = np.full(config.n_nodes, config.n_slots, dtype=np.int64)
        self._previous_slots = self._previous_slot.tolist()
        self.counts = [0] * config.n_actions
        self.legal: list[int] = [0] * config.n_actions
        self.decided = 0
        self._per_node = 1.0 / config.n_nodes

    def refresh(self) -> None:
        """Recompute the per-epoch part after a reset or an epoch; clears this epoch's choices."""
        core = self.simulator.core
        self._current = shared_observations(core)[0]
        self._previous_slot = core.previous_slot[0].copy()
        self._previous_slots = self._previous_slot.tolist()
        mask = occupied_masks(core)[0]
        self._mask = mask
        self.legal = mask.tolist()
        self.counts = [0] * self.config.n_actions
        self.decided = 0

    def record_choice(self, action: int) -> None:
        """Count one node's legal choice this epoch (updates observations and the mask)."""
        self.counts[action] += 1
        self.decided += 1
        self._current[G_DECIDED] = self.decided * self._per_node
        if action < self._n_slots:
            self._current[self._now_index[action]] = self.counts[action] * self._per_node
            cap = self._cap
            if cap is not None and self.counts[action] >= cap:
                self._mask[action] = 0
                self.legal[action] = False

    def observe(self, node: int) -> np.ndarray:
        """Node ``node``'s observation (a fresh array)."""
        obs = self._current.copy()
        obs[G_NODE] = node * self._per_node
        previous = self._previous_slots[node]
        if previous < self._n_slots:
            obs[self._mine_index[previous]] = 1.0
        else:
            obs[G_IDLE] = 1.0
        return obs

    def mask(self) -> np.ndarray:
        """The int8 action mask (a fresh array)."""
        return self._mask.copy()

    def state_vector(self, choices: np.ndarray) -> np.ndarray:
        """The centralised state: shared features, previous slots, this epoch's choices."""
        return state_vector(self._current, self._previous_slot, choices, self.config.n_slots)
