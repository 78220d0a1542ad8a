"""Cluster-v1's slot columns: the arrival serial and the step budget.

The serial and budget columns are checked against the simulator's hidden task table and
workload (used here only); the earlier columns against digests of what v0 produced for the same
seeds and actions, so v1 plays the same episodes.
"""

from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np
import pytest

import mara_env
from mara_env.agents.observed_history import ObservedHistories
from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.env_histories import HistoryBuffers, task_histories
from mara_env.sim.core import MAX_TASKS_PER_EPISODE
from mara_env.sim.observation import (
    GLOBAL_FEATURES,
    S_BUDGET,
    S_FAMILY,
    S_SERIAL,
    SERIAL_SCALE,
    SLOT_FEATURES,
    TIME_SCALE,
)
from mara_env.sim.simulator import NO_TASK

#: Slot columns of v0 (every one keeps its index and meaning in v1).
V0_SLOT_FEATURES = S_FAMILY + len(FAMILY_NAMES)

#: sha256 of the v0 columns of every observation of an episode played with random legal actions
#: (``numpy.random.default_rng(seed)``), rounded to 6 decimals (:func:`portable_bytes`), as the
#: v0 environment produced them. (They were taken from v1's observations on a machine where the
#: float32 digests of the unrounded columns equalled those v0 had recorded.)
V0_DIGESTS = {
    ("tiny", 0, ()): "783a85223c91f5cee54c498111ea8317ff0d1734ef0f4a97f38bd9ad31f28514",
    ("training", 1, (("arrival_horizon", 30),)): (
        "66ef269508748431fddd75db7494c173bb44688144afbd1b35f23fbc7c10538f"
    ),
}

CASES = [
    ("tiny", {"load": 4.0}),
    ("training", {"arrival_horizon": 30, "load": 2.0}),
    ("training", {"arrival_horizon": 30, "workload": "vision"}),
]


def portable_bytes(values: np.ndarray) -> bytes:
    """``values`` rounded to 6 decimals (signed zeros made 0.0), so that digests of them agree
    across machines: observation columns are of order 1 and another CPU or NumPy version changes
    them by a few ulps at most (:mod:`mara_env.portability`), which moves a value across a
    rounding boundary with a chance of about 1e-9."""
    return (np.round(values, 6) + 0.0).tobytes()


def _slot_rows(vector: np.ndarray, n_slots: int) -> np.ndarray:
    return np.asarray(vector[GLOBAL_FEATURES:]).reshape(n_slots, SLOT_FEATURES)


def test_the_new_columns_follow_the_old_ones() -> None:
    assert (S_SERIAL, S_BUDGET) == (V0_SLOT_FEATURES, V0_SLOT_FEATURES + 1)
    assert SLOT_FEATURES == V0_SLOT_FEATURES + 2
    assert MAX_TASKS_PER_EPISODE < SERIAL_SCALE  # every encoded serial lies in (0, 1)


@pytest.mark.parametrize(("preset", "overrides"), CASES)
def test_serial_and_budget_columns_match_the_task_table(preset: str, overrides: dict) -> None:
    """Through a whole episode each slot shows its task's table index and curve length / speed."""
    env = mara_env.raw_env(preset, **overrides)
    env.reset(seed=5)
    config, state = env.config, env.simulator.state
    tasks, lengths = state.tasks, env.simulator.workload.lengths
    rng = np.random.default_rng(5)
    checked = 0
    for agent, node in mara_env.node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            vector = observation["observation"]
            rows = _slot_rows(vector, config.n_slots)
            view = mara_env.decode_observation(vector, config)
            for slot, task in enumerate(state.slots.tolist()):
                if task == NO_TASK:
                    assert rows[slot, S_SERIAL] == rows[slot, S_BUDGET] == 0.0
                    assert view.serial[slot] == -1 and view.budget[slot] == 0.0
                    continue
                length = float(lengths[tasks.curve_row[task]])
                budget = length / float(tasks.speed[task])
                assert view.serial[slot] == task
                assert rows[slot, S_BUDGET] == pytest.approx(budget / TIME_SCALE, rel=1e-6)
                assert view.budget[slot] == pytest.approx(budget, rel=1e-6)
                checked += 1
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert checked > 20


def test_the_largest_serial_decodes_exactly_from_float32() -> None:
    serials = np.array([0, 1, 12_345, MAX_TASKS_PER_EPISODE - 1])
    encoded = ((serials + 1.0) / SERIAL_SCALE).astype(np.float32)
    decoded = np.rint(encoded.astype(np.float64) * SERIAL_SCALE) - 1
    np.testing.assert_array_equal(decoded, serials)


@pytest.mark.parametrize(("preset", "overrides"), CASES)
def test_observed_budget_equals_the_simulator_budget(preset: str, overrides: dict) -> None:
    """ObservedHistories (observation only) and env_histories (simulator) agree on the budget."""
    env = mara_env.raw_env(preset, **overrides)
    env.reset(seed=2)
    simulator = env.simulator
    histories = ObservedHistories()
    histories.reset(env.config)
    buffers = HistoryBuffers(simulator)
    rng = np.random.default_rng(2)
    checked = 0
    for agent, node in mara_env.node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            histories.update(observation["observation"])
            for slot, task in enumerate(simulator.state.slots.tolist()):
                observed = histories.history(slot)
                if task == NO_TASK:
                    assert observed is None
                    continue
                assert observed is not None
                (direct,) = task_histories(simulator, [task])
                (buffered,) = buffers.histories([task])
                row = simulator.state.tasks.curve_row[task]
                assert direct.budget == buffered.budget == simulator.workload.lengths[row]
                assert observed.budget == pytest.approx(direct.budget, rel=1e-5)
                checked += 1
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert checked > 20


@pytest.mark.parametrize(("preset", "seed", "overrides"), list(V0_DIGESTS))
def test_same_seed_same_episode_as_v0(preset: str, seed: int, overrides: tuple) -> None:
    """The globals and the v0 slot columns of every observation are those v0 produced (in
    Cluster-v1's world, which kept v0's task draws)."""
    env = mara_env.raw_env(preset, world_version=1, **dict(overrides))
    env.reset(seed=seed)
    n_slots = env.config.n_slots
    digest = hashlib.sha256()
    rng = np.random.default_rng(seed)
    for agent, _ in mara_env.node_turns(env):
        observation = env.observe(agent)
        vector = observation["observation"]
        old = np.concatenate(
            (vector[:GLOBAL_FEATURES], _slot_rows(vector, n_slots)[:, :V0_SLOT_FEATURES].ravel())
        )
        digest.update(portable_bytes(old))
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert digest.hexdigest() == V0_DIGESTS[(preset, seed, overrides)]


@pytest.mark.filterwarnings("ignore:.*out of date:DeprecationWarning")
def test_v0_is_deprecated_in_favour_of_the_latest_version() -> None:
    assert mara_env.ENV_ID == "mara_env/Cluster-v3"
    with pytest.raises(gym.error.DeprecatedEnv, match="mara_env/Cluster-v3"):
        gym.make("mara_env/Cluster-v0")
    with pytest.warns(DeprecationWarning, match="Cluster-v1 is out of date"):
        assert gym.make("mara_env/Cluster-v1").unwrapped.config.world_version == 1
    with pytest.warns(DeprecationWarning, match="Cluster-v2 is out of date"):
        assert gym.make("mara_env/Cluster-v2").unwrapped.config.world_version == 2
