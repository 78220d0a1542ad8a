"""The fast observation builder against a slow, obviously-correct reference.

The reference recomputes every feature of every slot from the simulator state with plain Python,
following the layout documented in ``mara_env.sim.observation``; the builder caches per-task tables
and updates them incrementally. They must agree at every step of whole episodes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mara_env
from mara_env.curves.families import FAMILY_NAMES
from mara_env.sim.observation import (
    FEATURE_BOUND,
    GLOBAL_FEATURES,
    S_BUDGET,
    S_SERIAL,
    SERIAL_SCALE,
    SLOT_FEATURES,
    SPEED_SCALE,
    STEP_SCALE,
    TIME_SCALE,
)
from mara_env.sim.simulator import NO_TASK


def reference_observation(env: mara_env.raw_env, node: int) -> np.ndarray:
    """Node ``node``'s observation, computed feature by feature from the simulator state."""
    config, sim = env.config, env.simulator
    state, tasks = sim.state, sim.state.tasks
    chosen = [int(slot) for slot in env._choices[: env._turn]]
    slots = state.slots.tolist()
    slot_of_task = {task: slot for slot, task in enumerate(slots) if task != NO_TASK}
    previous = [slot_of_task.get(task, config.n_slots) for task in state.node_task.tolist()]
    values = [0.0] * GLOBAL_FEATURES
    values[0] = state.epoch / config.arrival_horizon
    values[1] = 1.0 if state.epoch < config.arrival_horizon else 0.0
    values[2] = len(state.queue) / config.n_slots
    if state.queue:
        values[3] = (min(int(tasks.deadline[t]) for t in state.queue) - state.epoch) / TIME_SCALE
    values[4] = sum(task != NO_TASK for task in slots) / config.n_slots
    values[5] = len(chosen) / config.n_nodes
    values[6] = node / config.n_nodes
    values[7] = 1.0 if previous[node] == config.n_slots else 0.0
    for slot, task in enumerate(slots):
        row = [0.0] * SLOT_FEATURES
        if task != NO_TASK:
            initial, loss = float(tasks.initial_loss[task]), float(state.loss[task])
            target = float(tasks.target[task])
            deadline, arrival = int(tasks.deadline[task]), int(tasks.arrival[task])
            history_work = state.history_work[task]
            history_loss = state.history_loss[task]
            slope = 0.0
            if len(history_work) >= 2:
                slope = math.log(history_loss[-2] / history_loss[-1]) / max(
                    history_work[-1] - history_work[-2], 1.0
                )
            progress = math.log(initial / loss) / math.log(initial / target)
            row[:14] = [
                1.0,
                math.log(loss / initial),
                math.log(target / initial),
                min(max(progress, 0.0), 1.0),
                (deadline - state.epoch) / TIME_SCALE,
                (deadline - state.epoch) / (deadline - arrival),
                (state.epoch - arrival) / TIME_SCALE,
                float(state.work[task]) / TIME_SCALE,
                float(tasks.speed[task]) / SPEED_SCALE,
                float(state.progress[task]) / STEP_SCALE,
                slope,
                previous.count(slot) / config.n_nodes,
                chosen.count(slot) / config.n_nodes,
                1.0 if previous[node] == slot else 0.0,
            ]
            row[14 + FAMILY_NAMES.index(FAMILY_NAMES[int(tasks.family[task])])] = 1.0
            length = int(sim.workload.lengths[int(tasks.curve_row[task])])
            row[S_SERIAL] = (task + 1) / SERIAL_SCALE
            row[S_BUDGET] = length / float(tasks.speed[task]) / TIME_SCALE
        values.extend(row)
    return np.clip(np.array(values), -FEATURE_BOUND, FEATURE_BOUND).astype(np.float32)


def reference_mask(env: mara_env.raw_env) -> np.ndarray:
    """The action mask from first principles: occupied slots under the per-task limit, idle."""
    config, state = env.config, env.simulator.state
    chosen = [int(slot) for slot in env._choices[: env._turn]]
    cap = config.max_nodes_per_task
    mask = [
        int(task != NO_TASK and (cap is None or chosen.count(slot) < cap))
        for slot, task in enumerate(state.slots.tolist())
    ]
    return np.array([*mask, 1], dtype=np.int8)


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"n_nodes": 3, "n_slots": 2, "load": 2.5},
        {"n_nodes": 4, "n_slots": 6, "max_nodes_per_task": 2, "switch_cost": 0.5},
    ],
)
def test_builder_matches_reference_over_episodes(overrides: dict[str, object]) -> None:
    """Every observation and mask of two random episodes equals the slow reference."""
    env = mara_env.raw_env(config="training", arrival_horizon=40, **overrides)
    rng = np.random.default_rng(7)
    for seed in (0, 1):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            node = int(agent.split("_")[1])
            np.testing.assert_allclose(
                observation["observation"], reference_observation(env, node), rtol=1e-5, atol=1e-6
            )
            np.testing.assert_array_equal(observation["action_mask"], reference_mask(env))
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
