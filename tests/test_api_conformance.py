"""Conformance of every registered mara-env id with the PettingZoo and Gymnasium APIs.

Ids are read from the registries (``gymnasium.registry``, ``pettingzoo.aec_registry``,
``pettingzoo.parallel_registry``), so a newly registered id is checked without editing this file.
Each id is checked under several short configurations (:data:`conftest.CONFIG_CASES`).
"""

from __future__ import annotations

import functools
import types
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)
from pettingzoo.utils import aec_to_parallel, parallel_to_aec

import mara_env
from conftest import (
    AEC_IDS,
    CONFIG_CASES,
    GYM_IDS,
    PARALLEL_IDS,
    run_aec_episode,
    unexpected_warnings,
)

#: Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

CASES = list(CONFIG_CASES.items())
CASE_IDS = list(CONFIG_CASES)


def test_ids_are_registered_in_every_registry() -> None:
    """Importing mara_env registers Cluster-v1 with Gymnasium and both PettingZoo registries."""
    assert mara_env.ENV_ID in GYM_IDS
    assert mara_env.ENV_ID in AEC_IDS
    assert mara_env.ENV_ID in PARALLEL_IDS
    assert AEC_IDS == PARALLEL_IDS, "every AEC id should also exist in Parallel form"


def test_register_envs_is_idempotent() -> None:
    """Calling register_envs() again neither fails nor warns about overriding."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mara_env.register_envs()
    assert registered_count() == (len(GYM_IDS), len(AEC_IDS), len(PARALLEL_IDS))


def registered_count() -> tuple[int, int, int]:
    return (
        sum(i.startswith("mara_env/") for i in gym.registry),
        sum(i.startswith("mara_env/") for i in pettingzoo.aec_registry),
        sum(i.startswith("mara_env/") for i in pettingzoo.parallel_registry),
    )


# ---------------------------------------------------------------------------- PettingZoo
@pytest.mark.parametrize("env_id", AEC_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_api_test(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """PettingZoo's api_test passes (without unexpected warnings) on every id and config."""
    env = pettingzoo.make("aec", env_id, **kwargs)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        api_test(env, num_cycles=300)
    assert unexpected_warnings(records) == []


@pytest.mark.parametrize("env_id", AEC_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_seed_test(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """Two AEC envs reset with the same seed play identically (PettingZoo's seed_test)."""
    seed_test(functools.partial(pettingzoo.make, "aec", env_id, **kwargs), num_cycles=200)


@pytest.mark.parametrize("env_id", PARALLEL_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_parallel_api_test(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """PettingZoo's parallel_api_test passes (without unexpected warnings)."""
    env = pettingzoo.make("parallel", env_id, **kwargs)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        parallel_api_test(env, num_cycles=300)
    assert unexpected_warnings(records) == []


@pytest.mark.parametrize("env_id", PARALLEL_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_parallel_seed_test(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """Two Parallel envs reset with the same seed play identically."""
    parallel_seed_test(
        functools.partial(pettingzoo.make, "parallel", env_id, **kwargs), num_cycles=200
    )


@pytest.mark.parametrize("env_id", AEC_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_render_test(
    env_id: str, case: str, kwargs: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """render_test: human prints and returns None, ansi gives a str, rgb_array an HxWx3 image."""
    ansi_has_nodes = {"ansi": lambda text: "node" in text and "epoch" in text}
    render_test(functools.partial(pettingzoo.make, "aec", env_id, **kwargs), ansi_has_nodes)
    assert "epoch" in capsys.readouterr().out, "human mode should print the text table"


@pytest.mark.parametrize("env_id", PARALLEL_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_parallel_render_modes(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """The Parallel form renders like the AEC form (render_test only drives AEC envs)."""
    for mode, kind in (("ansi", str), ("rgb_array", np.ndarray)):
        env = pettingzoo.make("parallel", env_id, render_mode=mode, **kwargs)
        observations, _ = env.reset(seed=0)
        for _ in range(3):
            if not env.agents:
                break
            actions = {
                a: env.action_space(a).sample(observations[a]["action_mask"]) for a in env.agents
            }
            observations, *_ = env.step(actions)
            frame = env.render()
            assert isinstance(frame, kind)
            if mode == "rgb_array":
                assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
        env.close()


@pytest.mark.parametrize("env_id", AEC_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_pettingzoo_state_test(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """state_test: state() lies in state_space in both forms, without unexpected warnings."""
    env = pettingzoo.make("aec", env_id, **kwargs)
    parallel = pettingzoo.make("parallel", env_id, **kwargs)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        state_test(env, parallel, num_cycles=50)
    assert unexpected_warnings(records) == []


def test_pettingzoo_max_cycles_test_on_the_package() -> None:
    """max_cycles_test on the module itself (``mara_env.env``, ``mara_env.parallel_env`` take
    ``max_cycles``, the epochs before truncation), with the default config."""
    max_cycles_test(mara_env)


@pytest.mark.parametrize("env_id", AEC_IDS)
def test_pettingzoo_max_cycles_test(env_id: str) -> None:
    """max_cycles_test on every id, through PettingZoo's registry."""
    max_cycles_test(
        types.SimpleNamespace(
            env=functools.partial(pettingzoo.make, "aec", env_id),
            parallel_env=functools.partial(pettingzoo.make, "parallel", env_id),
        )
    )


@pytest.mark.parametrize("env_id", AEC_IDS)
def test_parallel_conversions_round_trip(env_id: str) -> None:
    """The AEC form converts to Parallel (is_parallelizable) and back, passing both API tests."""
    aec = pettingzoo.make("aec", env_id, config="tiny")
    assert aec.metadata["is_parallelizable"]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        parallel_api_test(aec_to_parallel(aec), num_cycles=200)
        api_test(parallel_to_aec(pettingzoo.make("parallel", env_id, config="tiny")), 200)
    assert unexpected_warnings(records) == []


@pytest.mark.parametrize("env_id", AEC_IDS)
def test_agents_and_spaces_match_the_documented_table(env_id: str) -> None:
    """Agents node_0..node_{K-1}; Discrete(n_slots + 1); int8 mask; spaces by identity."""
    env = pettingzoo.make("aec", env_id, config="tiny", n_nodes=3, n_slots=5)
    env.reset(seed=0)
    assert env.possible_agents == ["node_0", "node_1", "node_2"]
    space = env.action_space("node_1")
    assert isinstance(space, gym.spaces.Discrete) and space.n == 6
    assert env.action_space("node_2") is env.action_space("node_2")
    assert env.observation_space("node_0") is env.observation_space("node_0")
    observation = env.observe("node_0")
    assert observation["action_mask"].dtype == np.int8
    assert observation["observation"].dtype == np.float32
    assert env.observation_space("node_0").contains(observation)
    assert env.unwrapped.state_space.contains(env.state())


# ---------------------------------------------------------------------------- Gymnasium
@pytest.mark.parametrize("env_id", GYM_IDS)
@pytest.mark.parametrize(("case", "kwargs"), CASES, ids=CASE_IDS)
def test_gymnasium_check_env(env_id: str, case: str, kwargs: dict[str, Any]) -> None:
    """Gymnasium's check_env passes on the unwrapped env (with its render check) warning-free."""
    env = gym.make(env_id, render_mode="rgb_array", **kwargs)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=False)
    assert [str(r.message) for r in records] == []


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_make_with_module_prefix(env_id: str) -> None:
    """``gym.make("mara_env:<id>")`` imports the package itself and plays a whole episode."""
    env = gym.make(f"mara_env:{env_id}", config="tiny")
    observation, info = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    assert info["epoch"] == -1 and info["action_mask"].shape == (2, 4)
    done, epochs = False, 0
    while not done:
        mask = env.unwrapped.action_masks().reshape(env.unwrapped.config.n_nodes, -1)
        action = np.array([np.flatnonzero(row)[0] for row in mask])
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation)
        assert isinstance(reward, float)
        done = terminated or truncated
        epochs += 1
    assert epochs == env.unwrapped.episode_metrics()["epochs"]
    env.close()


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_make_vec(env_id: str) -> None:
    """``gym.make_vec`` builds two copies that step and auto-reset."""
    envs = gym.make_vec(env_id, num_envs=2, config="tiny", load=4.0)
    observations, _ = envs.reset(seed=[3, 4])
    assert observations.shape == (2, *envs.single_observation_space.shape)
    finished = 0
    for _ in range(200):
        observations, rewards, terminated, truncated, _ = envs.step(envs.action_space.sample())
        assert rewards.shape == (2,)
        finished += int(np.sum(terminated | truncated))
    assert finished >= 2, "200 epochs of the tiny config should end several episodes"
    envs.close()


@pytest.mark.parametrize("env_id", GYM_IDS)
def test_gymnasium_spaces_match_the_documented_table(env_id: str) -> None:
    """MultiDiscrete([n_slots + 1] * n_nodes) actions; flat bool masks of n_nodes*(n_slots+1)."""
    env = gym.make(env_id, config="tiny", n_nodes=3, n_slots=4)
    env.reset(seed=1)
    assert isinstance(env.action_space, gym.spaces.MultiDiscrete)
    assert env.action_space.nvec.tolist() == [5, 5, 5]
    masks = env.unwrapped.action_masks()
    assert masks.dtype == bool and masks.shape == (15,)
    aec = mara_env.raw_env(config="tiny", n_nodes=3, n_slots=4)
    assert env.observation_space == aec.state_space


# ---------------------------------------------------------------------------- SB3
@pytest.mark.parametrize("env_id", GYM_IDS)
def test_sb3_maskable_ppo_learns_a_few_steps(env_id: str) -> None:
    """SB3's make_vec_env + sb3-contrib's MaskablePPO train on the Gymnasium form."""
    pytest.importorskip("torch")
    sb3_env_util = pytest.importorskip("stable_baselines3.common.env_util")
    contrib = pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks

    vec_env = sb3_env_util.make_vec_env(
        f"mara_env:{env_id}", n_envs=2, seed=0, env_kwargs={"config": "tiny"}
    )
    vec_env.reset()
    masks = get_action_masks(vec_env)
    config = mara_env.get_config("tiny")
    assert masks.shape == (2, config.n_nodes * config.n_actions)
    assert masks.dtype == bool and masks.any(axis=1).all()
    model = contrib.MaskablePPO(
        "MlpPolicy", vec_env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(total_timesteps=64)
    assert model.num_timesteps >= 64
    observation = vec_env.reset()
    action, _ = model.predict(observation, action_masks=get_action_masks(vec_env))
    assert action.shape == (2, config.n_nodes)
    vec_env.close()


# ---------------------------------------------------------------------------- presets
@pytest.mark.parametrize("preset", sorted(mara_env.PRESETS))
def test_every_preset_plays_an_episode(preset: str) -> None:
    """Every named preset builds in all three forms and plays (shortened) to the end."""
    short = {"arrival_horizon": 30, "max_epochs": 400}
    result = run_aec_episode(mara_env.raw_env(preset, **short), seed=0)
    assert result["steps"] > 0
    parallel = mara_env.parallel_env(preset, **short)
    parallel.reset(seed=0)
    gym_env = gym.make(mara_env.ENV_ID, config=preset, **short)
    gym_env.reset(seed=0)
    assert gym_env.unwrapped.config == mara_env.get_config(preset, **short)


def test_observations_and_states_are_fresh_arrays() -> None:
    """Mutating a returned observation, mask or state never changes what the env returns next."""
    env = mara_env.raw_env(config="tiny", load=4.0)
    env.reset(seed=0)
    first = env.observe("node_0")
    expected = {key: value.copy() for key, value in first.items()}
    state = env.state()
    expected_state = state.copy()
    first["observation"][:] = 42.0
    first["action_mask"][:] = 0
    state[:] = 42.0
    again = env.observe("node_0")
    np.testing.assert_array_equal(again["observation"], expected["observation"])
    np.testing.assert_array_equal(again["action_mask"], expected["action_mask"])
    np.testing.assert_array_equal(env.state(), expected_state)
    parallel = mara_env.parallel_env(config="tiny", load=4.0)
    observations, _ = parallel.reset(seed=0)
    assert observations["node_0"]["observation"] is not observations["node_1"]["observation"]
    observations["node_0"]["action_mask"][:] = 0
    assert observations["node_1"]["action_mask"][-1] == 1
