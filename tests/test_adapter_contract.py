"""What RL libraries rely on in the adapters: a fixed info schema, Python's error for an unknown
keyword, ``max_cycles`` (PettingZoo's ``max_cycles_test`` runs in test_api_conformance.py),
Gymnasium's mask format, the vector env's autoreset modes and sub-env
calls, and the observation key. The libraries themselves are driven in test_rl_clients.py."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils import seeding
from pettingzoo.test import api_test, parallel_api_test

import mara_env
from mara_env import ConfigError, EnvStateError
from mara_env.envs.batched_nodes import BatchedNodesEnv
from mara_env.envs.infos import INFO_FIELDS, TASK_ID_FIELDS
from mara_env.envs.vector_env import ClusterVectorEnv
from mara_env.errors import UnexpectedArgumentError

BUSY = {"config": "tiny", "load": 4.0}  # episodes of a few dozen epochs with many events


# ------------------------------------------------------------------------------ infos
def _aec_infos(env: Any, seed: int) -> list[dict[str, Any]]:
    """node_0's info after reset and after every epoch of an episode (idle-free random play)."""
    env.reset(seed=seed)
    infos, rng = [env.infos["node_0"]], np.random.default_rng(seed)
    for _agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        if env.agent_selection == "node_0" and env.agents:
            infos.append(env.infos["node_0"])
    return infos


def _parallel_infos(env: Any, seed: int) -> list[dict[str, Any]]:
    _, infos = env.reset(seed=seed)
    seen, rng = [infos["node_0"]], np.random.default_rng(seed)
    while env.agents:
        actions = {a: int(rng.integers(0, env.config.n_actions)) for a in env.agents}
        *_, infos = env.step(actions)
        seen.append(infos["node_0"])
    return seen


def _gym_infos(env: Any, seed: int) -> list[dict[str, Any]]:
    _, info = env.reset(seed=seed)
    seen, done = [info], False
    while not done:
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        seen.append(info)
        done = terminated or truncated
    return seen


FORMS: dict[str, tuple[Callable[..., Any], Callable[[Any, int], list[dict[str, Any]]]]] = {
    "aec": (mara_env.env, _aec_infos),
    "parallel": (mara_env.parallel_env, _parallel_infos),
    "gymnasium": (functools.partial(gym.make, mara_env.ENV_ID), _gym_infos),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_infos_have_one_schema_at_reset_and_at_every_step(form: str) -> None:
    make, play = FORMS[form]
    env = make(**BUSY)
    infos = play(env, 3)
    unwrapped = env.unwrapped
    extra = ["action_mask"] if form == "gymnasium" else []
    for info in infos:
        assert list(info) == [*INFO_FIELDS, *extra]
        for key, (dtype, _) in INFO_FIELDS.items():
            assert type(info[key]) is dtype, (key, type(info[key]))
    first, last = infos[0], infos[-1]
    assert first["epoch"] == -1 and first["completed"] == 0 and first["completion_rate"] == 0.0
    assert [info["epoch"] for info in infos[1:]] == list(range(len(infos) - 1))
    metrics = unwrapped.episode_metrics()
    assert sum(int(info["completed"]) for info in infos) == metrics["completed"] > 0
    assert first["arrived"] + sum(int(i["arrived"]) for i in infos[1:]) == metrics["arrived"]
    assert last["completion_rate"] == metrics["completion_rate"]
    if form == "gymnasium":
        assert all(info["action_mask"].shape == (2, 4) for info in infos)
        assert infos[0]["action_mask"] is not infos[1]["action_mask"]


@pytest.mark.parametrize("form", list(FORMS))
def test_task_ids_are_in_the_infos_only_on_request(form: str) -> None:
    make, play = FORMS[form]
    plain = play(make(**BUSY), 5)
    with_ids = play(make(info_task_ids=True, **BUSY), 5)
    assert not any(key in info for info in plain for key in TASK_ID_FIELDS)
    assert with_ids[0]["completed_tasks"].size == with_ids[0]["expired_tasks"].size == 0
    for info in with_ids:
        assert info["completed_tasks"].dtype == info["expired_tasks"].dtype == np.int64
        assert len(info["completed_tasks"]) == info["completed"]
        assert len(info["expired_tasks"]) == info["expired"]
    ids = np.concatenate([np.r_[i["completed_tasks"], i["expired_tasks"]] for i in with_ids])
    assert len(set(ids.tolist())) == len(ids) > 0, "every task ends once"


# ------------------------------------------------------------------------------ keywords
CONSTRUCTORS: dict[str, Callable[..., Any]] = {
    "raw_env": mara_env.raw_env,
    "env": mara_env.env,
    "parallel_env": mara_env.parallel_env,
    "gym.make": functools.partial(gym.make, mara_env.ENV_ID),
    "pettingzoo.make aec": functools.partial(pettingzoo.make, "aec", mara_env.ENV_ID),
    "pettingzoo.make parallel": functools.partial(pettingzoo.make, "parallel", mara_env.ENV_ID),
    "gym.make_vec": functools.partial(
        gym.make_vec, mara_env.ENV_ID, 2, vectorization_mode="vector_entry_point"
    ),
    "ClusterVectorEnv": functools.partial(ClusterVectorEnv, 2),
    "BatchedNodesEnv": functools.partial(BatchedNodesEnv, 2),
    "get_config": functools.partial(mara_env.get_config, "tiny"),
    "ClusterConfig.replace": mara_env.ClusterConfig().replace,
}


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_an_unknown_keyword_is_python_s_type_error_and_a_config_error(name: str) -> None:
    make = CONSTRUCTORS[name]
    with pytest.raises(UnexpectedArgumentError) as raised:
        make(config="tiny", frameskip=1) if name not in (
            "get_config",
            "ClusterConfig.replace",
        ) else (make(frameskip=1))
    error = raised.value
    assert isinstance(error, ConfigError) and isinstance(error, TypeError)
    assert "got an unexpected keyword argument 'frameskip'" in str(error)
    assert "n_nodes" in str(error), "the message lists what is accepted"


def test_an_unknown_keyword_can_be_dropped_as_torchrl_drops_frameskip() -> None:
    """TorchRL's GymEnv passes frameskip and retries without it on Python's TypeError."""
    kwargs: dict[str, Any] = {"config": "tiny", "frameskip": 1}
    try:
        env = gym.make(mara_env.ENV_ID, **kwargs)
    except TypeError as error:
        assert "unexpected keyword argument 'frameskip'" in str(error)
        kwargs.pop("frameskip")
        env = gym.make(mara_env.ENV_ID, **kwargs)
    assert env.unwrapped.config == mara_env.get_config("tiny")


def test_unknown_keywords_are_all_named_and_conventions_get_a_hint() -> None:
    with pytest.raises(TypeError, match=r"argument 'frameskip' \(and 'n_node'\)"):
        mara_env.raw_env("tiny", frameskip=1, n_node=3)
    with pytest.raises(TypeError, match=r"max_episode_steps to gym\.make"):
        gym.make(mara_env.ENV_ID, config="tiny", max_cycles=5)
    mara_env.raw_env("tiny", workload="synthetic")  # get_config's own keyword still works


# ------------------------------------------------------------------------------ max_cycles
def test_max_cycles_only_truncates_the_world_it_would_otherwise_play() -> None:
    cut, whole = (
        mara_env.parallel_env(max_cycles=5, **BUSY),
        mara_env.parallel_env(**BUSY),
    )
    seen = [cut.reset(seed=4)[0], whole.reset(seed=4)[0]]
    for epoch in range(5):
        actions = {agent: epoch % 4 for agent in cut.agents}
        first, second = cut.step(actions), whole.step(actions)
        np.testing.assert_array_equal(
            first[0]["node_1"]["observation"], second[0]["node_1"]["observation"]
        )
        assert first[1] == second[1] and first[4] == second[4]
        assert all(first[3].values()) == (epoch == 4) and not any(second[3].values())
    assert cut.agents == [] and seen[0].keys() == seen[1].keys()
    ended = mara_env.parallel_env(config="tiny", max_cycles=10**6)
    ended.reset(seed=0)
    while ended.agents:  # an episode that terminates first is not truncated
        *_, terminations, truncations, _ = ended.step(dict.fromkeys(ended.agents, 3))
    assert all(terminations.values()) and not any(truncations.values())
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ConfigError, match="max_cycles"):
            mara_env.raw_env("tiny", max_cycles=bad)


# ------------------------------------------------------------------------------ masks
def test_the_central_form_gives_its_mask_in_gymnasium_s_format() -> None:
    env = gym.make(mara_env.ENV_ID, **BUSY)
    _, info = env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(30):
        unwrapped = env.unwrapped
        masks = unwrapped.node_masks()
        np.testing.assert_array_equal(info["action_mask"], masks)
        np.testing.assert_array_equal(masks.reshape(-1).astype(bool), unwrapped.action_masks())
        assert masks.dtype == np.int8 and masks.shape == (2, 4)
        action = env.action_space.sample(mask=unwrapped.sample_mask())
        _, _, terminated, truncated, info = env.step(action)
        assert info["illegal_actions"] == 0 and not (terminated or truncated)
    envs = ClusterVectorEnv(3, **BUSY)
    _, infos = envs.reset(seed=0)
    assert infos["action_mask"].shape == (3, 2, 4)
    rows = envs.sample_mask()
    assert [len(row) for row in rows] == [2, 2, 2]
    actions = np.stack([envs.single_action_space.sample(mask=row) for row in rows])
    assert envs.step(actions)[4]["illegal_actions"].sum() == 0


# ------------------------------------------------------------------------------ vector env
def test_the_vector_env_calls_and_sets_what_sync_vector_env_does() -> None:
    fast = gym.make_vec(mara_env.ENV_ID, 2, vectorization_mode="vector_entry_point", **BUSY)
    slow = gym.make_vec(mara_env.ENV_ID, 2, vectorization_mode="sync", **BUSY)
    fast.reset(seed=7), slow.reset(seed=7)
    for _ in range(3):
        actions = np.ones((2, 2), dtype=np.int64)
        fast.step(actions), slow.step(actions)
    for name in ("action_masks", "node_masks", "sample_mask"):
        for mine, theirs in zip(fast.call(name), slow.call(name), strict=True):
            np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
    assert fast.call("episode_metrics") == slow.call("episode_metrics")
    for mine, theirs in zip(fast.get_attr("np_random"), slow.get_attr("np_random"), strict=True):
        assert mine.bit_generator.state == theirs.bit_generator.state
    assert fast.get_attr("config") == slow.get_attr("config")
    assert fast.get_attr("action_space") == slow.get_attr("action_space")
    assert fast.get_attr("simulator")[1].state.epoch == 3
    generators = [seeding.np_random(seed)[0] for seed in (11, 12)]
    fast.set_attr("np_random", generators)
    np.testing.assert_array_equal(fast.reset()[0], slow.reset(seed=11)[0])
    fast.set_attr("strict", True)
    assert fast.get_attr("strict") == (True, True)
    with pytest.raises(ConfigError, match="same for all"):
        fast.set_attr("strict", [True, False])
    with pytest.raises(ConfigError, match="one value per sub-env"):
        fast.set_attr("strict", [True])
    with pytest.raises(AttributeError, match="only"):
        fast.set_attr("config", None)
    with pytest.raises(AttributeError, match="no such method"):
        fast.call("reset")


def test_the_vector_env_without_autoreset_waits_for_a_masked_reset() -> None:
    envs = ClusterVectorEnv(3, "tiny", autoreset_mode="Disabled")
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.DISABLED
    with pytest.raises(EnvStateError, match="before the first reset"):
        envs.reset(options={"reset_mask": np.array([True, False, False])})
    envs.reset(seed=0)
    done = np.zeros(3, dtype=bool)
    while not done.any():
        _, _, terminated, truncated, infos = envs.step(np.full((3, 2), 3))
        done = terminated | truncated
    last = envs.call("episode_metrics")
    with pytest.raises(EnvStateError, match="reset_mask"):
        envs.step(np.full((3, 2), 3))
    for bad in (done.astype(int), done[:2], np.zeros(3, dtype=bool), [True] * 3):
        with pytest.raises(ConfigError, match="reset_mask"):
            envs.reset(options={"reset_mask": bad})
    _, infos = envs.reset(options={"reset_mask": done})
    np.testing.assert_array_equal(infos["_epoch"], done)
    assert (infos["epoch"][done] == -1).all() and (infos["epoch"][~done] == 0).all()
    kept = envs.call("episode_metrics")
    assert [kept[i] == last[i] for i in range(3)] == (~done).tolist()
    envs.step(np.full((3, 2), 3))  # steps again


# ------------------------------------------------------------------------------ observation key
def test_the_observation_key_renames_the_vector_in_both_pettingzoo_forms() -> None:
    aec = mara_env.env("tiny", observation_key="observations")
    parallel = mara_env.parallel_env("tiny", observation_key="observations")
    assert set(aec.observation_space("node_0").spaces) == {"observations", "action_mask"}
    api_test(aec, num_cycles=20)
    parallel_api_test(parallel, num_cycles=20)
    renamed, _ = parallel.reset(seed=1)
    plain, _ = mara_env.parallel_env("tiny").reset(seed=1)
    np.testing.assert_array_equal(renamed["node_1"]["observations"], plain["node_1"]["observation"])
    from mara_env.predictors.wrappers import PredictionParallelWrapper

    wrapped = PredictionParallelWrapper(parallel, "wls", n_samples=4)
    observations, _ = wrapped.reset(seed=1)
    assert wrapped.observation_space("node_0").contains(observations["node_0"])
    for bad in ("", "action_mask", 3):
        with pytest.raises(ConfigError, match="observation_key"):
            mara_env.raw_env("tiny", observation_key=bad)
