"""The batched forms (vector env, batched nodes, SB3 adapter) against the single-cluster forms.

Every sub-env of a batch must play, step for step, the episodes of the single env reset with the
sub-env's seed (``seed + i``): observations, masks, rewards, terminations, truncations and counts,
through autoresets, with random (also masked and out-of-mask) actions.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from agreement import assert_agree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_properties import configs

import mara_env
from conftest import ExactTraceSource
from mara_env import ActionError, ConfigError, EnvStateError
from mara_env.envs.batched_nodes import BatchedNodesEnv
from mara_env.envs.vector_env import ClusterVectorEnv

CONFIGS: list[dict[str, Any]] = [
    {"config": "tiny"},
    {"config": "tiny", "load": 4.0, "n_nodes": 4, "max_nodes_per_task": 1},
    {"config": "tiny", "n_nodes": 1, "n_slots": 2, "load": 5.0, "switch_cost": 0.5},
    {"config": "tiny", "shaping_weight": 1.0, "load": 3.0},
    {"config": "tiny", "shaping_weight": 1.0, "shaping_discount": 0.9, "load": 3.0},
    {"config": "training", "arrival_horizon": 15},
]
MODES = ["NextStep", "SameStep", "Disabled"]


def vector_and_sync(num_envs: int, mode: str, **config: Any) -> tuple[Any, Any]:
    fast = gym.make_vec(
        mara_env.ENV_ID,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        autoreset_mode=mode,
        **config,
    )
    slow = gym.make_vec(
        mara_env.ENV_ID,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode(mode)},
        **config,
    )
    return fast, slow


def play_vector_against_sync(num_envs: int, seed: int, mode: str, steps: int, **config: Any) -> int:
    """Step the vector env and Gymnasium's SyncVectorEnv of single envs with the same actions;
    the number of episode ends seen."""
    fast, slow = vector_and_sync(num_envs, mode, **config)
    assert fast.metadata["autoreset_mode"] == gym.vector.AutoresetMode(mode)
    assert fast.observation_space == slow.observation_space
    assert fast.action_space == slow.action_space
    observations, _ = fast.reset(seed=seed)
    expected, _ = slow.reset(seed=seed)
    assert_agree(observations, expected, "reset")
    rng = np.random.default_rng(seed)
    n_nodes, n_actions = fast.unwrapped.config.n_nodes, fast.unwrapped.config.n_actions
    ends = 0
    for _ in range(steps):
        masks = fast.unwrapped.action_masks()
        assert np.array_equal(masks, np.stack(slow.call("action_masks")))
        if rng.random() < 0.5:  # legal actions from the masks
            scores = rng.random(masks.shape).reshape(num_envs, n_nodes, n_actions)
            actions = (scores * masks.reshape(scores.shape)).argmax(axis=2)
        else:  # anything in the action space, masked actions included
            actions = rng.integers(0, n_actions, size=(num_envs, n_nodes))
        got, want = fast.step(actions), slow.step(actions)
        for name, mine, theirs in zip(
            ("observations", "rewards", "terminations", "truncations"),
            got[:4],
            want[:4],
            strict=True,
        ):
            assert_agree(mine, theirs, name)
            assert mine.dtype == theirs.dtype or name == "rewards", name
        assert got[0] in fast.observation_space
        assert_same_infos(got[4], want[4])
        done = got[2] | got[3]
        if mode == "Disabled" and done.any():  # the caller resets the finished sub-envs
            mine, theirs = (
                fast.reset(options={"reset_mask": done}),
                slow.reset(options={"reset_mask": done}),
            )
            assert_agree(mine[0], theirs[0], "reset_mask")
            assert_same_infos(mine[1], theirs[1])
        ends += int(done.sum())
    return ends


def assert_same_infos(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    """The vector env's infos are SyncVectorEnv's: the same keys and masks, and equal values
    (of the same dtype) wherever a mask is set."""
    assert mine.keys() == theirs.keys(), sorted(set(mine) ^ set(theirs))
    for key, values in theirs.items():
        if key.startswith("_"):
            assert np.array_equal(mine[key], values), key
        elif key == "final_info":
            assert_same_infos(mine[key], values)
        elif key == "final_obs":  # SyncVectorEnv keeps an object array of observations
            chosen = np.flatnonzero(theirs["_final_obs"])
            expected = np.stack([values[i] for i in chosen])
            assert_agree(mine[key][chosen], expected, key)
        else:
            present = theirs[f"_{key}"]
            assert mine[key].dtype == values.dtype, key
            assert_agree(mine[key][present], values[present], key)


@pytest.mark.parametrize(
    ("config", "mode"),
    [(config, mode) for config in CONFIGS for mode in MODES if mode != "Disabled"]
    + [(config, "Disabled") for config in CONFIGS[:3]],
)
def test_vector_sub_envs_play_the_single_env_episodes(config: dict[str, Any], mode: str) -> None:
    steps = 60 if config["config"] == "training" else 150
    assert (
        play_vector_against_sync(3, 11, mode, steps, **config) > 0 or config["config"] == "training"
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=configs(), seed=st.integers(0, 2**31), num_envs=st.integers(1, 4))
def test_vector_equals_single_envs_for_any_config(
    config: mara_env.ClusterConfig, seed: int, num_envs: int
) -> None:
    source = ExactTraceSource({"synthetic": [np.linspace(1.0, 0.1, 12), np.geomspace(2.0, 0.2, 7)]})
    fast = ClusterVectorEnv(
        num_envs, config.replace(family_weights=(("synthetic", 1.0),)), trace_source=source
    )
    singles = [mara_env.ClusterGymEnv(fast.config, trace_source=source) for _ in range(num_envs)]
    observations, _ = fast.reset(seed=seed)
    for index, single in enumerate(singles):
        assert_agree(single.reset(seed=seed + index)[0], observations[index], "reset")
    rng = np.random.default_rng(seed)
    waiting = np.zeros(num_envs, dtype=bool)
    for _ in range(40):
        actions = rng.integers(0, fast.config.n_actions, size=(num_envs, fast.config.n_nodes))
        observations, rewards, terminations, truncations, _ = fast.step(actions)
        for index, single in enumerate(singles):
            if waiting[index]:  # NEXT_STEP: this step reset the sub-env
                expected, _ = single.reset()
                assert rewards[index] == 0.0 and not terminations[index]
                assert_agree(observations[index], expected, "autoreset")
                waiting[index] = False
                continue
            expected, reward, terminated, truncated, _ = single.step(actions[index])
            assert_agree(observations[index], expected, "observation")
            assert_agree(float(rewards[index]), reward, "reward")
            assert (terminations[index], truncations[index]) == (terminated, truncated)
            waiting[index] = terminated or truncated


def play_nodes_against_aec(num_envs: int, seed: int, steps: int, **config: Any) -> int:
    """The batched nodes entry against one AEC env per cluster, node by node; resets seen."""
    batch = BatchedNodesEnv(num_envs, **config)
    batch.reset(seed=seed)
    envs = [mara_env.raw_env(**config) for _ in range(num_envs)]
    for index, env in enumerate(envs):
        env.reset(seed=seed + index)
    rng = np.random.default_rng(seed)
    waiting = np.zeros(num_envs, dtype=bool)
    resets = 0
    for _ in range(steps):
        choices = np.zeros((num_envs, 0), dtype=np.int64)
        seen = []
        for _node in range(batch.n_nodes):
            observations, masks = batch.observe(choices)
            states = batch.state(choices)
            seen.append((observations, masks))
            actions = rng.integers(0, batch.config.n_actions, size=num_envs)
            for index, env in enumerate(envs):
                if waiting[index]:
                    continue
                given_ = env.observe(env.agent_selection)
                assert_agree(given_["observation"], observations[index], "observation")
                assert np.array_equal(given_["action_mask"], masks[index])
                assert_agree(env.state(), states[index], "state")
                env.step(int(actions[index]))
            choices = np.column_stack((choices, actions))
        every_node, every_mask = batch.observe_all(choices)
        for node, (observations, masks) in enumerate(seen):
            assert_agree(every_node[:, node], observations, "observe_all")
            assert np.array_equal(every_mask[:, node], masks)
        rewards, terminations, truncations, infos = batch.step(choices)
        for index, env in enumerate(envs):
            if waiting[index]:
                assert rewards[index] == 0.0
                env.reset()
                waiting[index] = False
                resets += 1
            else:
                assert_agree(float(rewards[index]), env.rewards["node_0"], "reward")
                assert terminations[index] == env.terminations["node_0"]
                assert truncations[index] == env.truncations["node_0"]
                waiting[index] = terminations[index] or truncations[index]
            for key, value in env.infos["node_0"].items():  # a step's info, or a reset's
                assert infos[f"_{key}"][index] and infos[key].dtype == value.dtype, key
                assert_agree(infos[key][index], value, key)
    return resets


@pytest.mark.parametrize("config", CONFIGS[:4])
def test_batched_nodes_see_what_the_aec_nodes_see(config: dict[str, Any]) -> None:
    assert play_nodes_against_aec(3, 5, 250, **config) > 0


def test_vector_env_rejects_bad_input_early() -> None:
    envs = ClusterVectorEnv(2, "tiny")
    with pytest.raises(EnvStateError):
        envs.step(np.zeros((2, 2), dtype=np.int64))
    envs.reset(seed=0)
    with pytest.raises(ActionError, match="shape"):
        envs.step(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ActionError, match="integers"):
        envs.step(np.zeros((2, 2)))
    with pytest.raises(ActionError, match="lie in"):
        envs.step(np.full((2, 2), 9))
    with pytest.raises(ConfigError, match="autoreset_mode"):
        ClusterVectorEnv(2, "tiny", autoreset_mode="EveryStep")
    with pytest.raises(ConfigError, match="batch_size"):
        ClusterVectorEnv(0, "tiny")
    strict = ClusterVectorEnv(1, "tiny", strict=True)
    strict.reset(seed=0)  # no task has arrived: every slot is empty
    with pytest.raises(ActionError, match="strict"):
        strict.step(np.zeros((1, 2), dtype=np.int64))


def test_vector_env_returns_fresh_arrays_and_list_seeds() -> None:
    envs = ClusterVectorEnv(2, "tiny")
    first, _ = envs.reset(seed=[3, 9])
    single = mara_env.ClusterGymEnv("tiny")
    assert_agree(first[1], single.reset(seed=9)[0], "reset")
    second = envs.step(np.full((2, 2), 3))[0]
    assert not np.shares_memory(first, second)
    assert envs.action_masks().shape == (2, 2 * 4)


def test_maskable_ppo_trains_on_the_sb3_adapter() -> None:
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecEnv

    from mara_env.envs.sb3_vec_env import SB3ClusterVecEnv

    torch.set_num_threads(1)
    venv = SB3ClusterVecEnv(4, config="tiny", seed=0)
    assert isinstance(venv, VecEnv)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    model.learn(total_timesteps=128)
    assert model.num_timesteps >= 128
    observations = venv.reset()
    actions, _ = model.predict(observations, action_masks=venv.action_masks())
    assert actions.shape == (4, 2)
    venv.step_async(actions)
    _, rewards, dones, infos = venv.step_wait()
    assert rewards.shape == dones.shape == (4,) and len(infos) == 4


def test_slot_view_decodes_every_documented_field() -> None:
    env = mara_env.raw_env("tiny", load=4.0)
    env.reset(seed=2)
    for _ in range(7):  # three epochs, then node 0 of the fourth
        env.step(0)
    state = env.simulator.state
    view = mara_env.decode_observation(env.observe("node_1")["observation"], env.config)
    slots = state.slots
    occupied = slots >= 0
    tasks = state.tasks
    assert view.queue_length == len(state.queue)
    assert view.active_tasks == int(occupied.sum())
    assert view.arrivals_open == (state.epoch < env.config.arrival_horizon)
    assert view.nodes_decided == 1 and view.node_index == 1
    ids = slots[occupied]
    assert np.allclose(view.speed[occupied], tasks.speed[ids], rtol=1e-6)
    assert np.allclose(view.curve_steps[occupied], state.progress[ids], rtol=1e-6, atol=1e-4)
    expected_fraction = (tasks.deadline[ids] - state.epoch) / np.maximum(
        tasks.deadline[ids] - tasks.arrival[ids], 1
    )
    assert np.allclose(view.time_left_fraction[occupied], expected_fraction, rtol=1e-6)
    trained_by = np.bincount(
        [int(np.flatnonzero(slots == t)[0]) for t in state.node_task if t in ids],
        minlength=env.config.n_slots,
    )
    assert view.nodes_last_epoch.tolist() == trained_by.tolist()
    mine = state.node_task[1]
    assert view.node_was_idle == (mine not in ids)
    assert view.mine_last_epoch.tolist() == (slots == mine).tolist()
    if state.queue:
        least = min(int(tasks.deadline[t]) for t in state.queue) - state.epoch
        assert view.queue_min_time_left == least
