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
from mara_env.simulator import ClusterSimulator

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
_TRAINED_COLUMNS = np.array([S_LOG_LOSS, S_PROGRESS, S_WORK, S_STEPS, S_SLOPE])
_TIME_COLUMNS = np.array([S_TIME_LEFT, S_TIME_FRACTION, S_AGE])


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
    """Builds observations, masks and states.

    The per-epoch part is computed once per epoch by :meth:`refresh`; within an epoch
    :meth:`record_choice` updates the "chosen this epoch" counts and the mask incrementally, so
    one node's observation costs a copy and a few writes.

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
        self._current = np.zeros(self.size, dtype=np.float32)
        self._mask = np.zeros(config.n_actions, dtype=np.int8)
        self._previous_slot = np.full(config.n_nodes, config.n_slots, dtype=np.int64)
        self.counts = [0] * config.n_actions
        self.legal: list[int] = [0] * config.n_actions
        self._episode_state: object = None
        self.decided = 0
        self._per_node = 1.0 / config.n_nodes

    def _start_episode(self) -> None:
        """Per-episode tables, one row per task plus an all-zero row that ``NO_TASK`` (-1) reads.

        ``_task_rows`` holds each task's slot features except the epoch-dependent ones: the
        static ones are written here, the ones that change when a task trains by
        :meth:`_update_trained`. Time features are ``intercept + epoch * slope``.
        """
        tasks = self.simulator.state.tasks
        self._tasks = tasks
        n = len(tasks)
        rows = np.zeros((n + 1, SLOT_FEATURES))
        rows[:n, S_OCCUPIED] = 1.0
        rows[:n, S_LOG_TARGET] = -tasks.log_gap
        rows[:n, S_SPEED] = tasks.speed / SPEED_SCALE
        rows[np.arange(n), S_FAMILY + tasks.family] = 1.0
        self._task_rows = rows
        deadline, arrival = tasks.deadline.astype(np.float64), tasks.arrival.astype(np.float64)
        window = np.maximum(deadline - arrival, 1.0)
        intercept = np.zeros((n + 1, len(_TIME_COLUMNS)))
        slope = np.zeros((n + 1, len(_TIME_COLUMNS)))
        intercept[:n] = np.column_stack(
            (deadline / TIME_SCALE, deadline / window, -arrival / TIME_SCALE)
        )
        slope[:n] = np.column_stack(
            (np.full(n, -1.0 / TIME_SCALE), -1.0 / window, np.full(n, 1.0 / TIME_SCALE))
        )
        self._time_intercept, self._time_slope = intercept, slope

    def _update_trained(self) -> None:
        """Features that change only when a task trains: computed for last epoch's tasks."""
        state, tasks = self.simulator.state, self._tasks
        trained = state.last_trained
        log_loss = np.log(state.loss[trained])
        worked = state.work[trained] - state.previous_work[trained]
        rows = self._task_rows
        rows[trained, S_LOG_LOSS] = log_loss - tasks.log_initial_loss[trained]
        rows[trained, S_PROGRESS] = state.phi[trained]
        rows[trained, S_WORK] = state.work[trained] * (1.0 / TIME_SCALE)
        rows[trained, S_STEPS] = state.progress[trained] * (1.0 / STEP_SCALE)
        rows[trained, S_SLOPE] = (np.log(state.previous_loss[trained]) - log_loss) / np.maximum(
            worked, 1.0
        )

    def refresh(self) -> None:
        """Recompute the per-epoch part after a reset or an epoch; clears this epoch's choices."""
        config, state = self.config, self.simulator.state
        if state is not self._episode_state:
            self._episode_state = state
            self._start_episode()
        elif len(state.last_trained):
            self._update_trained()
        n_slots = config.n_slots
        slots = state.slots
        matrix = self._task_rows[slots]
        matrix[:, _TIME_COLUMNS] = (
            self._time_intercept[slots] + state.epoch * self._time_slope[slots]
        )
        previous = state.task_slot[state.node_task]  # -1: idle, or the task has left
        previous[previous < 0] = n_slots
        self._previous_slot = previous
        matrix[:, S_NODES_LAST] = np.bincount(previous, minlength=n_slots + 1)[:n_slots]
        matrix[:, S_NODES_LAST] *= self._per_node
        base = np.empty(self.size)
        base[GLOBAL_FEATURES:] = matrix.ravel()
        queue = state.queue
        n_occupied = int(matrix[:, S_OCCUPIED].sum())
        base[:GLOBAL_FEATURES] = (
            state.epoch / config.arrival_horizon,
            float(state.epoch < config.arrival_horizon),
            len(queue) / n_slots,
            (self._tasks.deadline[queue].min() - state.epoch) / TIME_SCALE if queue else 0.0,
            n_occupied / n_slots,
            0.0,
            0.0,
            0.0,
        )
        np.maximum(base, -FEATURE_BOUND, out=base)
        np.minimum(base, FEATURE_BOUND, out=base)
        self._current = base.astype(np.float32)
        mask = np.ones(config.n_actions, dtype=np.int8)
        mask[:-1] = matrix[:, S_OCCUPIED]
        self._mask = mask
        self.legal = mask.tolist()
        self.counts = [0] * config.n_actions
        self.decided = 0

    def record_choice(self, action: int) -> None:
        """Count one node's legal choice this epoch (updates observations and the mask)."""
        self.counts[action] += 1
        self.decided += 1
        self._current[G_DECIDED] = self.decided * self._per_node
        if action < self.config.n_slots:
            self._current[self._now_index[action]] = self.counts[action] * self._per_node
            cap = self.config.max_nodes_per_task
            if cap is not None and self.counts[action] >= cap:
                self._mask[action] = 0
                self.legal[action] = False

    def observe(self, node: int) -> np.ndarray:
        """Node ``node``'s observation (a fresh array)."""
        obs = self._current.copy()
        obs[G_NODE] = node * self._per_node
        previous = self._previous_slot[node]
        if previous < self.config.n_slots:
            obs[self._mine_index[previous]] = 1.0
        else:
            obs[G_IDLE] = 1.0
        return obs

    def mask(self) -> np.ndarray:
        """The int8 action mask (a fresh array)."""
        return self._mask.copy()

    def state_vector(self, choices: np.ndarray) -> np.ndarray:
        """The centralised state: shared features, previous slots, this epoch's choices."""
        scale = 1.0 / self.config.n_slots
        return np.concatenate(
            (self._current, self._previous_slot * scale, choices * scale), dtype=np.float32
        )
