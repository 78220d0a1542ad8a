"""Pickling and seeding: copies continue identically, one generator owned by reset(seed=...).

Every environment form is pickled (with ``pickle`` and ``cloudpickle``) before and after
``reset`` and must then play exactly like the original. Seeding must be reproducible, shared by
the three forms, continue across unseeded resets, and never touch a global RNG.
"""

from __future__ import annotations

import os
import pickle
import random
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest

import mara_env

#: Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

PICKLERS = {"pickle": pickle, "cloudpickle": cloudpickle}

FORMS: dict[str, Callable[[], Any]] = {
    "raw_env": lambda: mara_env.raw_env(config="tiny", shaping_weight=0.5),
    "env": lambda: mara_env.env(config="tiny", n_nodes=3, max_nodes_per_task=1),
    "parallel_env": lambda: mara_env.parallel_env(config="tiny", shaping_weight=0.5),
    "gym_make": lambda: gym.make(mara_env.ENV_ID, config="tiny", load=2.0),
    "gym_unwrapped": lambda: gym.make(mara_env.ENV_ID, config="tiny").unwrapped,
}


def is_aec(env: Any) -> bool:
    return hasattr(env, "agent_iter")


def is_parallel(env: Any) -> bool:
    return isinstance(env, mara_env.ClusterParallelEnv)


def reset(env: Any, seed: int | None) -> None:
    env.reset(seed=seed)


def random_joint_action(env: Any, rng: np.random.Generator) -> np.ndarray:
    """One random legal choice per node (an occupied slot or idle) for the simultaneous forms."""
    simulator = env.unwrapped.simulator
    legal = np.append(np.flatnonzero(simulator.state.slots >= 0), simulator.config.idle_action)
    return rng.choice(legal, size=simulator.config.n_nodes)


def step_once(env: Any, rng: np.random.Generator) -> tuple[Any, bool]:
    """One step of any form with random legal actions: (what the env returned, episode over)."""
    if is_aec(env):
        agent = env.agent_selection
        observation, reward, termination, truncation, info = env.last()
        done = termination or truncation
        env.step(None if done else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        return (agent, observation, reward, termination, truncation, info), not env.agents
    joint = random_joint_action(env, rng)
    if is_parallel(env):
        result = env.step({f"node_{i}": int(a) for i, a in enumerate(joint)})
        return result, not env.agents
    result = env.step(joint)
    return result, bool(result[2] or result[3])


def play(env: Any, action_seed: int) -> list[Any]:
    """Play from the env's current point to the end of its episode with random legal actions
    drawn from ``action_seed``; return everything the env reported (and its state)."""
    rng = np.random.default_rng(action_seed)
    trace: list[Any] = []
    done = False
    while not done:
        result, done = step_once(env, rng)
        state = env.state() if hasattr(env, "state") and (is_aec(env) or is_parallel(env)) else None
        trace.append((result, state))
        assert len(trace) < 100_000
    return trace


def assert_same(first: Any, second: Any) -> None:
    """Deep equality of nested dicts / tuples / lists / arrays / floats."""
    if isinstance(first, dict):
        assert isinstance(second, dict) and first.keys() == second.keys()
        for key in first:
            assert_same(first[key], second[key])
    elif isinstance(first, (list, tuple)):
        assert type(first) is type(second) and len(first) == len(second)
        for a, b in zip(first, second, strict=True):
            assert_same(a, b)
    elif isinstance(first, np.ndarray):
        assert isinstance(second, np.ndarray) and first.dtype == second.dtype
        np.testing.assert_array_equal(first, second)
    else:
        assert first == second


@pytest.mark.parametrize("pickler", list(PICKLERS), ids=list(PICKLERS))
@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_pickled_before_reset_plays_identically(form: str, pickler: str) -> None:
    """An env pickled before its first reset behaves exactly like the original."""
    module = PICKLERS[pickler]
    original = FORMS[form]()
    clone = module.loads(module.dumps(original))
    for env in (original, clone):
        reset(env, seed=11)
    assert_same(play(original, 5), play(clone, 5))


@pytest.mark.parametrize("pickler", list(PICKLERS), ids=list(PICKLERS))
@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_pickled_mid_episode_continues_identically(form: str, pickler: str) -> None:
    """An env pickled mid-episode continues like the original, and so do the next (unseeded)
    episodes: the generator's state travels with it."""
    module = PICKLERS[pickler]
    original = FORMS[form]()
    reset(original, seed=3)
    rng = np.random.default_rng(0)
    head = play_some(original, rng, epochs=4)
    assert head > 0
    clone = module.loads(module.dumps(original))
    assert_same(play(original, 9), play(clone, 9))
    for env in (original, clone):
        reset(env, seed=None)
    assert_same(play(original, 10), play(clone, 10))


def play_some(env: Any, rng: np.random.Generator, epochs: int) -> int:
    """Advance a few epochs with random legal actions; return how many steps ran."""
    n_steps = epochs * (len(env.possible_agents) if is_aec(env) else 1)
    for _ in range(n_steps):
        _, done = step_once(env, rng)
        assert not done, "the scenario should still be running"
    return n_steps


@pytest.mark.parametrize("pickler", list(PICKLERS), ids=list(PICKLERS))
def test_env_on_trace_file_pickles(pickler: str, tmp_path) -> None:
    """An env built on a TraceFileSource pickles and continues identically."""
    module = PICKLERS[pickler]
    source = mara_env.SyntheticTraceSource(30, 40, seed=2)
    pools = {
        "synthetic": (
            mara_env.CurvePool.from_curves(
                "synthetic",
                [
                    source.pool("synthetic", s).losses[i]
                    for s in ("train", "test")
                    for i in range(3)
                ],
            ),
            np.array([False] * 3 + [True] * 3),
        )
    }
    path = tmp_path / "curves.npz"
    mara_env.save_traces(path, pools)
    env = mara_env.raw_env(
        config="tiny", workload="synthetic", trace_source=mara_env.TraceFileSource(path)
    )
    env.reset(seed=1)
    clone = module.loads(module.dumps(env))
    assert_same(play(env, 2), play(clone, 2))


# ---------------------------------------------------------------------------- seeding
def tasks_of(env: Any) -> dict[str, np.ndarray]:
    tasks = env.unwrapped.simulator.state.tasks
    return {
        name: getattr(tasks, name)
        for name in ("family", "curve_row", "arrival", "deadline", "target", "speed", "alpha")
    }


@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_same_seed_same_episode(form: str) -> None:
    """Two envs reset with the same seed draw the same tasks and play identically."""
    first, second = FORMS[form](), FORMS[form]()
    reset(first, seed=123)
    reset(second, seed=123)
    assert_same(tasks_of(first), tasks_of(second))
    assert_same(play(first, 1), play(second, 1))


@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_different_seeds_differ_and_unseeded_resets_continue_the_generator(form: str) -> None:
    """Distinct seeds draw distinct workloads; reset() without a seed continues the seeded
    generator, so a seeded sequence of episodes is reproducible."""
    env = FORMS[form]()
    drawn = []
    for seed in range(6):
        reset(env, seed=seed)
        drawn.append(tasks_of(env))
    distinct = {(len(t["arrival"]), tuple(np.round(t["target"], 12))) for t in drawn}
    assert len(distinct) >= 5
    first, second = FORMS[form](), FORMS[form]()
    sequences = []
    for env in (first, second):
        reset(env, seed=77)
        episodes = [tasks_of(env)]
        for _ in range(3):
            reset(env, seed=None)
            episodes.append(tasks_of(env))
        sequences.append(episodes)
    assert_same(sequences[0], sequences[1])
    assert not all(np.array_equal(sequences[0][0]["target"], e["target"]) for e in sequences[0][1:])


def test_all_forms_draw_the_same_tasks_from_the_same_seed() -> None:
    """AEC, Parallel and Gymnasium forms own one generator each, seeded the same way."""
    drawn = []
    for make in (
        lambda: mara_env.raw_env(config="tiny"),
        lambda: mara_env.parallel_env(config="tiny"),
        lambda: gym.make(mara_env.ENV_ID, config="tiny"),
    ):
        env = make()
        env.reset(seed=2024)
        drawn.append(tasks_of(env))
    assert_same(drawn[0], drawn[1])
    assert_same(drawn[0], drawn[2])


def test_no_global_random_state_is_used_or_touched() -> None:
    """Episodes ignore and leave untouched the global NumPy and ``random`` generators."""
    outcomes = []
    for global_seed in (0, 99):
        np.random.seed(global_seed)  # noqa: NPY002 - the global generator is the subject
        random.seed(global_seed)
        numpy_state, python_state = np.random.get_state(), random.getstate()  # noqa: NPY002
        traces = []
        for make in FORMS.values():
            env = make()
            reset(env, seed=8)
            traces.append(play(env, 4))
            env.close()
        outcomes.append(traces)
        after = np.random.get_state()  # noqa: NPY002
        assert after[0] == numpy_state[0] and np.array_equal(after[1], numpy_state[1])
        assert after[2:] == numpy_state[2:]
        assert random.getstate() == python_state
    assert_same(outcomes[0], outcomes[1])


SUBPROCESS_SCRIPT = """
import hashlib, numpy as np, mara_env
env = mara_env.parallel_env(config="tiny", n_nodes=3)
env.reset(seed=31)
digest = hashlib.sha256()
while env.agents:
    actions = {a: i % (env.config.n_slots + 1) for i, a in enumerate(env.agents)}
    observations, rewards, *_ = env.step(actions)
    digest.update(env.state().tobytes())
    digest.update(np.float64(rewards["node_0"]).tobytes())
print(digest.hexdigest(), env.episode_metrics()["arrived"])
"""


def test_episodes_reproduce_across_processes() -> None:
    """The same seed gives bit-identical episodes in fresh interpreters with different hash
    seeds (no dependence on set/dict ordering of hashed objects or on process state)."""
    outputs = set()
    for hash_seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
        result = subprocess.run(
            [sys.executable, "-c", SUBPROCESS_SCRIPT],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
            timeout=120,
        )
        outputs.add(result.stdout.strip())
    assert len(outputs) == 1, outputs


@pytest.mark.parametrize("form", list(FORMS), ids=list(FORMS))
def test_reset_mid_episode_leaves_nothing_behind(form: str) -> None:
    """reset(seed) in the middle of an epoch (after illegal actions, rewards and a few epochs)
    gives exactly the episode a fresh env gives with that seed."""
    used = FORMS[form]()
    reset(used, seed=1)
    rng = np.random.default_rng(4)
    play_some(used, rng, epochs=3)
    if is_aec(used):  # stop mid-epoch, after a masked (illegal) choice
        mask = used.observe(used.agent_selection)["action_mask"]
        used.step(int(np.flatnonzero(mask == 0)[0]) if (mask == 0).any() else 0)
    reset(used, seed=5)
    fresh = FORMS[form]()
    reset(fresh, seed=5)
    assert_same(play(used, 6), play(fresh, 6))
    assert used.unwrapped.episode_metrics() == fresh.unwrapped.episode_metrics()
