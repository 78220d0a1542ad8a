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
    0 ``occupied``
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
    14-17 family one-hot in :data:`mara_env.families.FAMILY_NAMES` order

The state vector (for centralised critics) is the observation with the node-specific entries at
0, followed by each node's previous slot and this epoch's choice so far, both as
``slot / n_slots`` (1 = idle or not yet chosen).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mara_env.config import ClusterConfig
from mara_env.families import FAMILY_NAMES
from mara_env.simulator import NO_TASK, ClusterSimulator

#: Every observation and state value lies in [-FEATURE_BOUND, FEATURE_BOUND] (values are clipped).
FEATURE_BOUND = 100.0
TIME_SCALE = 50.0
SPEED_SCALE = 10.0
STEP_SCALE = 100.0

GLOBAL_FEATURES = 8
SLOT_FEATURES = 14 + len(FAMILY_NAMES)

G_EPOCH, G_OPEN, G_QUEUE, G_QUEUE_TIME, G_ACTIVE, G_DECIDED, G_NODE, G_IDLE = range(8)
(
    S_OCCUPIED,
    S_LOG_LOSS,
    S_LOG_TARGET,
    S_PROGRESS,
    S_TIME_LEFT,
    S_TIME_FRACTION,
    S_AGE,
    S_WORK,
    S_SPEED,
    S_STEPS,
    S_SLOPE,
    S_NODES_LAST,
    S_NODES_NOW,
    S_MINE,
) = range(14)
S_FAMILY = 14


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
        family: Family index of each slot (into ``FAMILY_NAMES``; -1 if empty).
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
    vector = np.asarray(observation, dtype=np.float64)
    if vector.shape != (observation_size(config),):
        raise ValueError(
            f"decode_observation: expected a vector of length {observation_size(config)} for "
            f"this config, got shape {vector.shape}."
        )
    slots = vector[GLOBAL_FEATURES:].reshape(config.n_slots, SLOT_FEATURES)
    occupied = slots[:, S_OCCUPIED] > 0.5
    one_hot = slots[:, S_FAMILY:]
    return SlotView(
        occupied=occupied,
        log_loss_ratio=slots[:, S_LOG_LOSS],
        log_target_ratio=slots[:, S_LOG_TARGET],
        progress=slots[:, S_PROGRESS],
        time_left=np.rint(slots[:, S_TIME_LEFT] * TIME_SCALE),
        age=np.rint(slots[:, S_AGE] * TIME_SCALE),
        work=np.rint(slots[:, S_WORK] * TIME_SCALE),
        recent_slope=slots[:, S_SLOPE],
        nodes_this_epoch=np.rint(slots[:, S_NODES_NOW] * config.n_nodes).astype(np.int64),
        nodes_decided=round(vector[G_DECIDED] * config.n_nodes),
        node_index=round(vector[G_NODE] * config.n_nodes),
        family=np.where(occupied, one_hot.argmax(axis=1), -1),
    )


class ObservationBuilder:
    """Builds observations, masks and states; the per-epoch part is computed once per epoch.

    Args:
        simulator: The simulator whose state is observed.
    """

    def __init__(self, simulator: ClusterSimulator) -> None:
        self.simulator = simulator
        config = simulator.config
        self.config = config
        self.size = observation_size(config)
        slot_offsets = GLOBAL_FEATURES + SLOT_FEATURES * np.arange(config.n_slots)
        self._now_index = slot_offsets + S_NODES_NOW
        self._mine_index = slot_offsets + S_MINE
        self._base = np.zeros(self.size, dtype=np.float32)
        self._mask = np.zeros(config.n_actions, dtype=np.int8)
        self._previous_slot = np.full(config.n_nodes, config.n_slots, dtype=np.int64)

    def refresh(self) -> None:
        """Recompute the per-epoch part after a reset or an epoch."""
        sim, config = self.simulator, self.config
        state, tasks = sim.state, sim.state.tasks
        n_slots = config.n_slots
        base = np.zeros(self.size, dtype=np.float32)
        base[G_EPOCH] = state.epoch / config.arrival_horizon
        base[G_OPEN] = float(state.epoch < config.arrival_horizon)
        base[G_QUEUE] = len(state.queue) / n_slots
        if state.queue:
            queued = np.asarray(state.queue)
            base[G_QUEUE_TIME] = (tasks.deadline[queued].min() - state.epoch) / TIME_SCALE
        occupied = np.flatnonzero(state.slots != NO_TASK)
        self._previous_slot = self._slot_of_each_node()
        nodes_last = np.bincount(self._previous_slot, minlength=n_slots + 1)
        base[G_ACTIVE] = len(occupied) / n_slots
        slot_matrix = base[GLOBAL_FEATURES:].reshape(n_slots, SLOT_FEATURES)
        if len(occupied):
            ids = state.slots[occupied]
            initial = np.log(tasks.initial_loss[ids])
            log_loss = np.log(state.loss[ids])
            log_target = np.log(tasks.target[ids])
            deadline, arrival = tasks.deadline[ids], tasks.arrival[ids]
            worked = state.work[ids] - state.previous_work[ids]
            slope = np.where(
                worked > 0,
                (np.log(state.previous_loss[ids]) - log_loss) / np.maximum(worked, 1.0),
                0.0,
            )
            rows = slot_matrix[occupied]
            rows[:, S_OCCUPIED] = 1.0
            rows[:, S_LOG_LOSS] = log_loss - initial
            rows[:, S_LOG_TARGET] = log_target - initial
            rows[:, S_PROGRESS] = np.clip((initial - log_loss) / (initial - log_target), 0.0, 1.0)
            rows[:, S_TIME_LEFT] = (deadline - state.epoch) / TIME_SCALE
            rows[:, S_TIME_FRACTION] = (deadline - state.epoch) / (deadline - arrival)
            rows[:, S_AGE] = (state.epoch - arrival) / TIME_SCALE
            rows[:, S_WORK] = state.work[ids] / TIME_SCALE
            rows[:, S_SPEED] = tasks.speed[ids] / SPEED_SCALE
            rows[:, S_STEPS] = state.progress[ids] / STEP_SCALE
            rows[:, S_SLOPE] = slope
            rows[:, S_NODES_LAST] = nodes_last[occupied] / config.n_nodes
            rows[np.arange(len(ids)), S_FAMILY + tasks.family[ids]] = 1.0
            slot_matrix[occupied] = rows
        self._base = np.clip(base, -FEATURE_BOUND, FEATURE_BOUND)
        mask = np.zeros(config.n_actions, dtype=np.int8)
        mask[occupied] = 1
        mask[config.idle_action] = 1
        self._mask = mask

    def _slot_of_each_node(self) -> np.ndarray:
        """Slot of the task each node trained last epoch (``n_slots`` if idle or gone)."""
        state = self.simulator.state
        slot_of_task = {task: slot for slot, task in enumerate(state.slots.tolist())}
        idle = self.config.n_slots
        return np.array(
            [slot_of_task.get(task, idle) if task != NO_TASK else idle
             for task in state.node_task.tolist()],
            dtype=np.int64,
        )

    def observe(self, node: int, counts: np.ndarray, decided: int) -> np.ndarray:
        """Node ``node``'s observation given this epoch's per-slot choice ``counts`` so far."""
        obs = self._base.copy()
        n_nodes = self.config.n_nodes
        obs[G_DECIDED] = decided / n_nodes
        obs[G_NODE] = node / n_nodes
        previous = self._previous_slot[node]
        obs[G_IDLE] = float(previous == self.config.n_slots)
        obs[self._now_index] = counts[:-1] / n_nodes
        if previous < self.config.n_slots:
            obs[self._mine_index[previous]] = 1.0
        return obs

    def mask(self, counts: np.ndarray) -> np.ndarray:
        """The int8 action mask given this epoch's per-slot choice ``counts`` so far."""
        mask = self._mask.copy()
        cap = self.config.max_nodes_per_task
        if cap is not None:
            mask[:-1] &= (counts[:-1] < cap).astype(np.int8)
        return mask

    def state_vector(self, counts: np.ndarray, choices: np.ndarray) -> np.ndarray:
        """The centralised state: shared features, previous slots, this epoch's choices."""
        shared = self._base.copy()
        decided = int((choices < self.config.n_slots).sum())
        shared[G_DECIDED] = decided / self.config.n_nodes
        shared[self._now_index] = counts[:-1] / self.config.n_nodes
        scale = 1.0 / self.config.n_slots
        return np.concatenate(
            [shared, self._previous_slot * scale, choices * scale]
        ).astype(np.float32)
