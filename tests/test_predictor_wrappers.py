"""Prediction observation wrappers: API conformance of the wrapped forms, known answers,
equivalence to direct ``predict`` calls on independently built histories, one ``predict`` call per
epoch, seeding, pickling, bad input, and the throughput script."""

from __future__ import annotations

import copy
import functools
import pickle
import re
import types
import warnings
from collections.abc import Callable, Sequence
from typing import Any, cast

import cloudpickle
import gymnasium as gym
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.classic.connect_four import connect_four
from pettingzoo.test import (
    api_test,
    max_cycles_test,
    parallel_api_test,
    parallel_seed_test,
    seed_test,
    state_test,
)
from pettingzoo.utils import aec_to_parallel

import mara_env
from conftest import CONFIG_CASES, ExactTraceSource, synthetic_config, unexpected_warnings
from mara_env.benchmarks.perf import wrapper_throughput
from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors import WLS, RemainingWork, TaskHistory
from mara_env.predictors.env_histories import HistoryBuffers, slotted_tasks, task_histories
from mara_env.predictors.flow_matching import WITHOUT_TARGET, shipped_checkpoint
from mara_env.predictors.registry import UnknownPredictorError
from mara_env.predictors.wrappers import (
    NEED_Q50,
    PREDICTION_FEATURES,
    SUCCESS_ALL_NODES,
    SUCCESS_ONE_NODE,
    PredictionAECWrapper,
    PredictionGymWrapper,
    PredictionOptions,
    PredictionParallelWrapper,
    PredictorOutputError,
    add_predictions,
    decode_predictions,
)
from mara_env.sim.observation import (
    GLOBAL_FEATURES,
    S_LOG_LOSS,
    S_LOG_TARGET,
    S_SPEED,
    S_STEPS,
    SLOT_FEATURES,
    SPEED_SCALE,
    STEP_SCALE,
    decode_observation,
    observation_size,
    state_size,
)

ENV_ID = mara_env.ENV_ID
#: Configs of the conformance tests (a subset of conftest.CONFIG_CASES, to stay fast).
CASES = ["tiny", "one_node", "two_slots", "one_node_per_task"]
#: Gymnasium's checker always warns that a wrapped env is not the raw env.
WRAPPED_WARNING = "is different from the unwrapped version"


def wrapped_aec(predictor: Any = "wls", n_samples: int = 8, **kwargs: Any) -> PredictionAECWrapper:
    return PredictionAECWrapper(
        pettingzoo.make("aec", ENV_ID, **kwargs), predictor, n_samples=n_samples
    )


def wrapped_parallel(
    predictor: Any = "wls", n_samples: int = 8, **kwargs: Any
) -> PredictionParallelWrapper:
    env = pettingzoo.make("parallel", ENV_ID, **kwargs)
    return PredictionParallelWrapper(env, predictor, n_samples=n_samples)


def wrapped_gym(predictor: Any = "wls", n_samples: int = 8, **kwargs: Any) -> PredictionGymWrapper:
    return PredictionGymWrapper(gym.make(ENV_ID, **kwargs), predictor, n_samples=n_samples)


class SpyPredictor:
    """A predictor that records every call: the histories, a copy of the generator as it was
    before the call, and the samples returned."""

    name = "spy"

    def __init__(self, inner: Any = None) -> None:
        self.inner = WLS() if inner is None else inner
        self.calls: list[tuple[list[TaskHistory], np.random.Generator, np.ndarray]] = []

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        before = copy.deepcopy(rng)
        result = self.inner.predict(histories, n_samples, rng)
        self.calls.append((list(histories), before, result.samples.copy()))
        return result


def observed_history(simulator: Any, task: int) -> TaskHistory:
    """A task's history built here, independently of mara_env.predictors.env_histories (and validated
    by TaskHistory): losses and target relative to the loss at arrival."""
    state, tasks = simulator.state, simulator.state.tasks
    initial = state.history_loss[task][0]
    return TaskHistory(
        np.array(state.history_progress[task]),
        np.array(state.history_loss[task]) / initial,
        target=float(tasks.target[task]) / initial,
        time_left=float(tasks.deadline[task] - state.epoch),
        speed=float(tasks.speed[task]),
        family=FAMILY_NAMES[int(tasks.family[task])],
    )


def assert_same_history(got: TaskHistory, want: TaskHistory) -> None:
    np.testing.assert_array_equal(got.work, want.work)
    np.testing.assert_allclose(got.loss, want.loss, rtol=1e-15)
    assert got.target == pytest.approx(want.target, rel=1e-15)
    assert (got.time_left, got.speed, got.family) == (want.time_left, want.speed, want.family)


def reference_features(
    simulator: Any, samples_of: dict[int, np.ndarray], options: PredictionOptions
) -> np.ndarray:
    """The prediction block from each slotted task's samples, through RemainingWork's API."""
    state, tasks, config = simulator.state, simulator.state.tasks, simulator.config
    nodes = config.n_nodes if config.max_nodes_per_task is None else config.max_nodes_per_task
    block = np.zeros((config.n_slots, options.features_per_slot))
    for slot, task in enumerate(state.slots.tolist()):
        if task < 0:
            continue
        remaining = RemainingWork(samples_of[task][None, :])
        time_left, speed = float(tasks.deadline[task] - state.epoch), float(tasks.speed[task])
        quantiles = remaining.quantiles(options.quantile_levels)[0]
        block[slot, : len(quantiles)] = np.minimum(quantiles / speed / time_left, options.need_cap)
        block[slot, options.success_one_node] = remaining.success_probability([time_left], [speed])[
            0
        ]
        block[slot, options.success_all_nodes] = remaining.success_probability(
            [time_left], [speed], nodes=min(nodes, config.n_nodes), alpha=float(tasks.alpha[task])
        )[0]
    return block.ravel()


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def play_aec(env: Any, action_seed: int, max_steps: int = 100_000) -> list[Any]:
    """Play an AEC env to the end of its episode; record every last() and state()."""
    rng, trace = np.random.default_rng(action_seed), []
    for _ in env.agent_iter(max_steps):
        observation, reward, termination, truncation, _ = env.last()
        trace.append((observation, reward, termination, truncation, env.state()))
        done = termination or truncation
        env.step(None if done else random_legal(rng, observation["action_mask"]))
    return trace


def play_parallel(env: Any, action_seed: int, observations: dict[str, Any]) -> list[Any]:
    rng, trace = np.random.default_rng(action_seed), []
    while env.agents:
        actions = {a: random_legal(rng, observations[a]["action_mask"]) for a in env.agents}
        observations, rewards, *_ = env.step(actions)
        trace.append((observations, rewards, env.state()))
    return trace


def play_gym(env: Any, action_seed: int) -> list[Any]:
    rng, trace, done = np.random.default_rng(action_seed), [], False
    n_nodes = env.unwrapped.config.n_nodes
    while not done:
        masks = env.action_masks().reshape(n_nodes, -1)
        observation, reward, terminated, truncated, _ = env.step(
            np.array([random_legal(rng, mask) for mask in masks])
        )
        trace.append((observation, reward))
        done = terminated or truncated
    return trace


def assert_same(first: Any, second: Any) -> None:
    """Deep equality of nested dicts / tuples / lists / arrays / scalars."""
    if isinstance(first, dict):
        assert first.keys() == second.keys()
        for key in first:
            assert_same(first[key], second[key])
    elif isinstance(first, (list, tuple)):
        assert len(first) == len(second)
        for a, b in zip(first, second, strict=True):
            assert_same(a, b)
    elif isinstance(first, np.ndarray):
        assert first.dtype == second.dtype
        np.testing.assert_array_equal(first, second)
    else:
        assert first == second


# ---------------------------------------------------------------------------- conformance
@pytest.mark.parametrize("case", CASES)
def test_wrapped_aec_passes_api_and_seed_tests(case: str) -> None:
    """PettingZoo's api_test (without unexpected warnings) and seed_test on the AEC wrapper."""
    kwargs = CONFIG_CASES[case]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        api_test(wrapped_aec(**kwargs), num_cycles=300)
    assert unexpected_warnings(records) == []
    seed_test(functools.partial(wrapped_aec, **kwargs), num_cycles=200)


@pytest.mark.parametrize("case", CASES)
def test_wrapped_parallel_passes_api_and_seed_tests(case: str) -> None:
    """parallel_api_test and parallel_seed_test on the Parallel wrapper."""
    kwargs = CONFIG_CASES[case]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        parallel_api_test(wrapped_parallel(**kwargs), num_cycles=300)
    assert unexpected_warnings(records) == []
    parallel_seed_test(functools.partial(wrapped_parallel, **kwargs), num_cycles=200)


@pytest.mark.parametrize("case", ["tiny", "one_node_per_task"])
def test_wrapped_state_and_parallel_conversion(case: str) -> None:
    """state_test on both wrapped forms, and the wrapped AEC env converted to Parallel form."""
    kwargs = CONFIG_CASES[case]
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        state_test(wrapped_aec(**kwargs), wrapped_parallel(**kwargs), num_cycles=50)
        parallel_api_test(aec_to_parallel(wrapped_aec(**kwargs)), num_cycles=100)
    assert unexpected_warnings(records) == []


def test_wrapped_forms_pass_max_cycles_test() -> None:
    """max_cycles_test through the max_epochs adapter of test_api_conformance: the safety limit
    still ends wrapped episodes after exactly max_epochs epochs."""

    def overrides(max_cycles: int) -> dict[str, Any]:
        return {
            "config": "tiny",
            "n_nodes": 16,
            "load": 3.0,
            "arrival_horizon": max_cycles - 1,
            "max_epochs": max_cycles,
            "infeasible_share": 1.0,
        }

    max_cycles_test(
        types.SimpleNamespace(
            env=lambda max_cycles: wrapped_aec(**overrides(max_cycles)),
            parallel_env=lambda max_cycles: wrapped_parallel(**overrides(max_cycles)),
        )
    )


@pytest.mark.parametrize("case", CASES)
def test_wrapped_gym_passes_check_env(case: str) -> None:
    """Gymnasium's check_env (with its render check) passes on a gym.make-built env wrapped;
    the only warning is the checker's note that the env is wrapped."""
    env = wrapped_gym(render_mode="rgb_array", **CONFIG_CASES[case])
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=False)
    assert [str(r.message) for r in records if WRAPPED_WARNING not in str(r.message)] == []


def test_spaces_are_built_once_and_extend_the_wrapped_ones() -> None:
    """Spaces by identity; the base part of each Box is the wrapped env's; the prediction block
    is bounded by [0, need_cap] for needs and [0, 1] for probabilities."""
    env = wrapped_aec(config="tiny", n_nodes=3, n_slots=4)
    raw = cast(mara_env.raw_env, env.unwrapped)
    space = env.observation_space("node_0")
    assert space is env.observation_space("node_2") and env.observation_spaces["node_1"] is space
    base_space = cast(gym.spaces.Dict, raw.observation_space("node_0"))
    box = cast(gym.spaces.Box, space["observation"])
    base = cast(gym.spaces.Box, base_space["observation"])
    assert box.shape == (observation_size(raw.config) + 4 * PREDICTION_FEATURES,)
    np.testing.assert_array_equal(box.low[: observation_size(raw.config)], base.low)
    block_high = box.high[observation_size(raw.config) :].reshape(4, PREDICTION_FEATURES)
    assert (block_high[:, NEED_Q50] == 10.0).all() and (block_high[:, SUCCESS_ONE_NODE] == 1).all()
    assert env.state_space.shape == (state_size(raw.config) + 4 * PREDICTION_FEATURES,)
    assert space["action_mask"] == base_space["action_mask"]
    gym_env = wrapped_gym(config="tiny")
    tiny = mara_env.get_config("tiny")
    assert gym_env.observation_space.shape == (state_size(tiny) + 3 * PREDICTION_FEATURES,)


# ---------------------------------------------------------------------------- known answers
def power_law_env(**kwargs: Any) -> PredictionAECWrapper:
    """One node, curves that are exact power laws l(k) = 2 (k + 1)^-0.7 of 60 steps, speed 1,
    alpha 1, no switch cost and feasible targets: progress is a whole number of steps, so every
    reported loss lies on the power law that WLS fits."""
    curve = [2.0 * (k + 1.0) ** -0.7 for k in range(60)]
    config = synthetic_config(
        n_nodes=1,
        n_slots=3,
        load=4.0,
        arrival_horizon=30,
        switch_cost=0.0,
        alpha=1.0,
        epochs_per_curve=(60.0, 60.0),
        infeasible_share=0.0,
    )
    raw = mara_env.raw_env(config, trace_source=ExactTraceSource({"synthetic": [curve]}))
    return PredictionAECWrapper(raw, "wls", **kwargs)


def test_wls_quantiles_match_the_exact_remaining_work_of_a_power_law() -> None:
    """On exact power-law traces WLS extrapolates exactly: every quantile of the need equals the
    true remaining node-epochs (the privileged answer) over the time left, and the success
    probabilities are 0 or 1 accordingly. Tasks never trained (one point) read as "never"."""
    env = power_law_env(n_samples=16)
    env.reset(seed=5)
    simulator, checked, never = env.unwrapped.simulator, 0, 0
    for _ in env.agent_iter(10_000):
        observation, _, termination, truncation, _ = env.last()
        view = decode_predictions(observation["observation"], 3)
        state = simulator.state
        truth = simulator.privileged_remaining_work()
        for slot, task in enumerate(state.slots.tolist()):
            if task < 0:
                assert (view.need[slot] == 0).all() and view.success_one_node[slot] == 0
                continue
            time_left = float(state.tasks.deadline[task] - state.epoch)
            if len(state.history_loss[task]) == 1:
                assert (view.need[slot] == 10.0).all() and view.success_all_nodes[slot] == 0
                never += 1
                continue
            expected = min(truth[slot] / time_left, 10.0)
            np.testing.assert_allclose(view.need[slot], expected, rtol=1e-4, atol=1e-3)
            if abs(truth[slot] - time_left) > 1e-3:
                assert view.success_one_node[slot] == float(truth[slot] < time_left)
                assert view.success_all_nodes[slot] == view.success_one_node[slot]
            checked += 1
        mask = observation["action_mask"]
        env.step(None if termination or truncation else (0 if mask[0] else 3))
    assert checked >= 20 and never >= 5


# ---------------------------------------------------------------------------- equivalence
@pytest.mark.parametrize("reuse", [True, False], ids=["reuse", "no-reuse"])
def test_predictions_equal_direct_predict_calls_on_independent_histories(reuse: bool) -> None:
    """Each epoch's predict call gets exactly the histories of the tasks that are new or were
    trained (all slotted tasks without reuse), equal to histories built here from the
    simulator and consistent with what the observation shows; WLS on those histories with the
    same generator state gives the same samples; and the features equal those computed from the
    latest samples of each task through RemainingWork's quantiles and success_probability."""
    spy = SpyPredictor()
    env = PredictionAECWrapper(
        mara_env.raw_env("tiny", n_nodes=4, n_slots=5, load=3.0, max_nodes_per_task=3),
        spy,
        n_samples=24,
        reuse_samples=reuse,
    )
    options, simulator = env.predictions.options, env.unwrapped.simulator
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    known_length: dict[int, int] = {}
    samples_of: dict[int, np.ndarray] = {}
    epochs_checked = 0
    while env.agents:
        state = simulator.state
        slotted = slotted_tasks(simulator).tolist()
        stale = [
            task
            for task in slotted
            if not reuse or known_length.get(task) != len(state.history_loss[task])
        ]
        if stale:
            histories, generator, samples = spy.calls[-1]
            expected = [observed_history(simulator, task) for task in stale]
            assert len(histories) == len(expected)
            for got, want in zip(histories, expected, strict=True):
                assert_same_history(got, want)
            direct = WLS().predict(expected, options.n_samples, copy.deepcopy(generator))
            # Equal up to the rounding of l / l0, which exp() amplifies for far-off targets.
            np.testing.assert_allclose(direct.samples, samples, rtol=1e-9)
            for task, row in zip(stale, samples, strict=True):
                known_length[task], samples_of[task] = len(state.history_loss[task]), row
        observed = env.observe(env.agent_selection)
        assert observed is not None
        observation = observed["observation"]
        assert_observable(observation, simulator, spy.calls[-1][0] if stale else [])
        block = observation[observation_size(simulator.config) :]
        np.testing.assert_allclose(
            block, reference_features(simulator, samples_of, options), rtol=1e-6
        )
        np.testing.assert_array_equal(env.state()[-block.size :], block)
        epochs_checked += 1
        for _ in range(len(env.possible_agents)):  # one epoch of random legal choices
            observation, _, termination, truncation, _ = env.last()
            done = termination or truncation
            env.step(None if done else random_legal(rng, observation["action_mask"]))
            if not env.agents:
                break
    assert epochs_checked >= 20


def assert_observable(observation: np.ndarray, simulator: Any, histories: list[TaskHistory]):
    """Each history's last point is what the observation shows of some slotted task: its log
    loss and log target ratios, curve steps, speed and time left."""
    view = decode_observation(observation[: observation_size(simulator.config)], simulator.config)
    slots = np.flatnonzero(view.occupied)
    vector = observation.astype(np.float64)
    for history in histories:
        offsets = GLOBAL_FEATURES + SLOT_FEATURES * slots
        matches = (
            np.isclose(vector[offsets + S_LOG_LOSS], np.log(history.loss[-1]), atol=1e-5)
            & np.isclose(vector[offsets + S_LOG_TARGET], np.log(history.target), atol=1e-5)
            & np.isclose(vector[offsets + S_STEPS] * STEP_SCALE, history.work[-1], rtol=1e-5)
            & np.isclose(vector[offsets + S_SPEED] * SPEED_SCALE, history.speed, rtol=1e-5)
            & np.isclose(view.time_left[slots], history.time_left)
        )
        assert matches.any(), history


def test_one_predict_call_per_epoch_whatever_is_observed() -> None:
    """Observing every node several times and calling state() never adds predict calls: there is
    one per epoch in which some slotted task is new or was trained, and none otherwise."""
    spy = SpyPredictor()
    env = PredictionAECWrapper(mara_env.raw_env("tiny", load=4.0), spy, n_samples=8)
    env.reset(seed=2)
    simulator, rng = env.unwrapped.simulator, np.random.default_rng(1)
    lengths: dict[int, int] = {}
    expected_calls = epochs = 0
    while env.agents:
        state = simulator.state
        slotted = slotted_tasks(simulator).tolist()
        if any(lengths.get(task) != len(state.history_loss[task]) for task in slotted):
            expected_calls += 1
        lengths.update({task: len(state.history_loss[task]) for task in slotted})
        for agent in env.possible_agents * 3:
            env.observe(agent)
            env.state()
        assert len(spy.calls) == expected_calls
        for _ in range(len(env.possible_agents)):
            observation, _, termination, truncation, _ = env.last()
            done = termination or truncation
            env.step(None if done else random_legal(rng, observation["action_mask"]))
            if not env.agents:
                break
        epochs += 1
    assert expected_calls >= epochs // 2 and epochs >= 20
    batch_sizes = [len(histories) for histories, _, _ in spy.calls]
    assert max(batch_sizes) > 1, "several tasks should share a batch"


def test_all_forms_predict_alike_and_once_per_epoch() -> None:
    """Driven by the same joint actions from the same seed, the AEC, Parallel and Gymnasium
    wrappers show the same prediction block every epoch, each with one predict call per epoch
    at most."""
    config: dict[str, Any] = {"config": "tiny", "n_nodes": 3, "load": 3.0}
    spies = [SpyPredictor() for _ in range(3)]
    aec = PredictionAECWrapper(mara_env.env(**config), spies[0], n_samples=8)
    parallel = PredictionParallelWrapper(mara_env.parallel_env(**config), spies[1], n_samples=8)
    gym_env = PredictionGymWrapper(gym.make(ENV_ID, **config), spies[2], n_samples=8)
    aec.reset(seed=9)
    parallel_observations, _ = parallel.reset(seed=9)
    gym_observation, _ = gym_env.reset(seed=9)
    rng, epochs = np.random.default_rng(3), 0
    while parallel.agents:
        observed = aec.observe("node_0")
        assert observed is not None
        block = observed["observation"][-15:]
        np.testing.assert_array_equal(parallel_observations["node_2"]["observation"][-15:], block)
        np.testing.assert_array_equal(gym_observation[-15:], block)
        mask = parallel_observations["node_0"]["action_mask"]
        joint = [random_legal(rng, mask) for _ in range(3)]
        for action in joint:
            aec.step(action)
        parallel_observations, *_ = parallel.step(dict(zip(parallel.agents, joint, strict=True)))
        gym_observation, *_ = gym_env.step(np.array(joint))
        epochs += 1
        assert all(len(spy.calls) <= epochs + 1 for spy in spies)
    assert epochs >= 10
    assert len(spies[0].calls) == len(spies[1].calls) == len(spies[2].calls)


def test_wrapping_leaves_the_episode_and_the_base_observation_unchanged() -> None:
    """The wrapped env plays the raw env's episode: same base observations, masks, rewards and
    state prefix, step by step (the predictor has its own generator)."""
    wrapped = PredictionAECWrapper(mara_env.raw_env("tiny", load=4.0), "wls", n_samples=8)
    raw = mara_env.raw_env("tiny", load=4.0)
    wrapped.reset(seed=4)
    raw.reset(seed=4)
    size = observation_size(raw.config)
    first, second = play_aec(wrapped, 6), play_aec(raw, 6)
    assert len(first) == len(second) > 20
    for (obs_w, *rest_w, state_w), (obs_r, *rest_r, state_r) in zip(first, second, strict=True):
        np.testing.assert_array_equal(obs_w["observation"][:size], obs_r["observation"])
        np.testing.assert_array_equal(obs_w["action_mask"], obs_r["action_mask"])
        assert rest_w == rest_r
        np.testing.assert_array_equal(state_w[: state_r.size], state_r)
    assert wrapped.unwrapped.episode_metrics() == raw.episode_metrics()


# ---------------------------------------------------------------------------- seeding, pickling
FORMS: dict[str, Callable[[], Any]] = {
    "aec": lambda: PredictionAECWrapper(mara_env.env("tiny", load=4.0), "wls", n_samples=8),
    "parallel": lambda: PredictionParallelWrapper(
        mara_env.parallel_env("tiny", load=4.0), "wls", n_samples=8
    ),
    "gym": lambda: PredictionGymWrapper(gym.make(ENV_ID, config="tiny", load=4.0), "wls"),
}


def reset_and_play(env: Any, seed: int | None, action_seed: int) -> list[Any]:
    """Reset (seeded or not) and play one whole episode; everything the env reported."""
    if isinstance(env, PredictionParallelWrapper):
        observations, _ = env.reset(seed=seed)
        return [observations, *play_parallel(env, action_seed, observations)]
    if isinstance(env, PredictionGymWrapper):
        observation, _ = env.reset(seed=seed)
        return [observation, *play_gym(env, action_seed)]
    env.reset(seed=seed)
    return play_aec(env, action_seed)


@pytest.mark.parametrize("form", list(FORMS))
def test_same_seed_same_observations_and_seeded_sequences_repeat(form: str) -> None:
    """Two wrapped envs reset with the same seed report the same observations (predictions
    included) over a whole episode and over the unseeded episodes that follow; another seed
    gives other predictions."""
    first, second = FORMS[form](), FORMS[form]()
    for env in (first, second):
        env.reset(seed=21)
    traces = [
        [reset_and_play(env, 21, 1), reset_and_play(env, None, 2), reset_and_play(env, None, 3)]
        for env in (first, second)
    ]
    assert_same(traces[0], traces[1])
    other = reset_and_play(FORMS[form](), 22, 1)
    blocks = [prediction_block(reported) for reported in traces[0][0][:12]]
    other_blocks = [prediction_block(reported) for reported in other[:12]]
    assert not all(np.array_equal(a, b) for a, b in zip(blocks, other_blocks, strict=True))


def prediction_block(reported: Any) -> np.ndarray:
    """The prediction features of one item of a trace (node_0's for the Parallel form)."""
    if isinstance(reported, tuple):  # AEC: (observation, reward, termination, truncation, state)
        reported = reported[0]
    if isinstance(reported, dict) and "node_0" in reported:
        reported = reported["node_0"]
    if isinstance(reported, dict):
        reported = reported["observation"]
    return np.asarray(reported)[-15:]


@pytest.mark.parametrize("pickler", [pickle, cloudpickle], ids=["pickle", "cloudpickle"])
@pytest.mark.parametrize("form", ["aec", "gym"])
def test_pickled_mid_episode_continues_identically(form: str, pickler: Any) -> None:
    """A wrapped env pickled mid-episode continues exactly like the original, predictions and
    the predictor's generator included, and so does the next (unseeded) episode."""
    original = FORMS[form]()
    reset_and_play(original, 5, 0)  # a full episode first, so caches are warm
    original.reset(seed=6)
    rng = np.random.default_rng(7)
    for _ in range(12):
        if form == "aec":
            observation, *_ = original.last()
            original.step(random_legal(rng, observation["action_mask"]))
        else:
            masks = original.action_masks().reshape(original.unwrapped.config.n_nodes, -1)
            original.step(np.array([random_legal(rng, mask) for mask in masks]))
    clone = pickler.loads(pickler.dumps(original))
    play = play_aec if form == "aec" else play_gym
    assert_same(play(original, 8), play(clone, 8))
    assert_same(reset_and_play(original, None, 9), reset_and_play(clone, None, 9))


def test_pickled_parallel_wrapper_plays_identically() -> None:
    """The Parallel wrapper pickles before reset and after a reset."""
    original = FORMS["parallel"]()
    clone = pickle.loads(pickle.dumps(original))
    assert_same(reset_and_play(original, 3, 1), reset_and_play(clone, 3, 1))
    observations, _ = original.reset(seed=4)
    clone = cloudpickle.loads(cloudpickle.dumps(original))
    assert_same(play_parallel(original, 2, observations), play_parallel(clone, 2, observations))


# ---------------------------------------------------------------------------- histories
def test_history_buffers_equal_task_histories_and_independent_ones() -> None:
    """Over a whole episode, the incremental histories equal the stateless ones and those built
    here, and pass TaskHistory's own checks; buffers grow past their first size."""
    env = mara_env.raw_env(  # Cluster-v1's targets make this seed's first task a long one
        "tiny",
        n_nodes=1,
        load=4.0,
        epochs_per_curve=(50.0, 60.0),
        target_fraction=(0.8, 0.85),
        world_version=1,
    )
    env.reset(seed=3)
    simulator = env.unwrapped.simulator
    buffers, longest = HistoryBuffers(simulator), 0
    rng = np.random.default_rng(0)
    while env.agents:
        tasks = slotted_tasks(simulator)
        for got, direct, task in zip(
            buffers.histories(tasks), task_histories(simulator, tasks), tasks.tolist(), strict=True
        ):
            want = observed_history(simulator, task)
            assert_same_history(got, want)
            assert_same_history(direct, want)
            TaskHistory(got.work, got.loss, got.target, got.time_left, got.speed, got.family)
            longest = max(longest, got.work.size)
        observation, _, termination, truncation, _ = env.last()
        mask = observation["action_mask"]
        done = termination or truncation
        env.step(None if done else 0 if mask[0] else random_legal(rng, mask))  # train slot 0
    assert longest > 16


def test_histories_of_tasks_that_have_not_arrived_raise() -> None:
    env = mara_env.raw_env("tiny", load=2.0)
    env.reset(seed=0)
    simulator = env.unwrapped.simulator
    future = len(simulator.state.tasks) - 1
    with pytest.raises(ValueError, match=f"task {future} has not arrived"):
        task_histories(simulator, [future])
    with pytest.raises(ValueError, match="has not arrived"):
        HistoryBuffers(simulator).histories([future])


# ---------------------------------------------------------------------------- layout
def test_decode_predictions_reads_the_documented_layout() -> None:
    """The block is slot-major: needs at the quantile levels, then the two probabilities; the
    default indices match PredictionOptions; custom levels move the probabilities."""
    block = np.arange(3 * PREDICTION_FEATURES, dtype=np.float32) / 100
    view = decode_predictions(np.concatenate((np.full(7, 9.0), block)), 3)
    assert view.need[1].tolist() == pytest.approx([0.05, 0.06, 0.07])
    assert view.success_one_node[2] == pytest.approx(0.13)
    assert view.success_all_nodes[0] == pytest.approx(0.04)
    options = PredictionOptions()
    assert (options.success_one_node, options.success_all_nodes) == (
        SUCCESS_ONE_NODE,
        SUCCESS_ALL_NODES,
    )
    custom = PredictionOptions(quantile_levels=(0.25, 0.75))
    assert custom.features_per_slot == 4 and custom.success_all_nodes == 3
    env = PredictionAECWrapper(mara_env.raw_env("tiny"), "wls", quantile_levels=(0.25, 0.75))
    env.reset(seed=1)
    decoded = decode_predictions(env.state(), 3, env.predictions.options)
    assert decoded.need.shape == (3, 2)
    with pytest.raises(ValueError, match="prediction features"):
        decode_predictions(np.zeros(4), 3)
    with pytest.raises(ValueError, match="prediction features"):
        decode_predictions(np.zeros((2, 30)), 3)


# ---------------------------------------------------------------------------- predictors
@pytest.mark.parametrize("name", ["wls", "dkf"])
def test_registered_predictors_wrap_every_form(name: str) -> None:
    """Registered predictors given by name drive all three wrappers; everything they show
    stays inside the observation spaces."""
    env = add_predictions(mara_env.env("tiny", load=4.0), name, n_samples=8)
    assert isinstance(env, PredictionAECWrapper)
    trace = reset_and_play(env, 0, 0)
    space = env.observation_space("node_0")
    assert all(space.contains(observation) for observation, *_ in trace)
    assert all(env.state_space.contains(state) for *_, state in trace)
    parallel = add_predictions(mara_env.parallel_env("tiny"), name, n_samples=8)
    assert isinstance(parallel, PredictionParallelWrapper)
    observations, _ = parallel.reset(seed=1)
    assert parallel.observation_space("node_1").contains(observations["node_1"])
    gym_env = add_predictions(gym.make(ENV_ID, config="tiny"), name, n_samples=8)
    assert isinstance(gym_env, PredictionGymWrapper)
    observation, _ = gym_env.reset(seed=1)
    for _ in range(5):
        observation, *_ = gym_env.step(gym_env.action_space.sample())
        assert gym_env.observation_space.contains(observation)
    unwrapped = cast(mara_env.ClusterGymEnv, gym_env.unwrapped)
    np.testing.assert_array_equal(gym_env.action_masks(), unwrapped.action_masks())


# ---------------------------------------------------------------------------- bad input
class BrokenPredictor:
    """Returns whatever it was told to, whatever it is asked."""

    name = "broken"

    def __init__(self, make: Callable[[int, int], Any]) -> None:
        self.make = make

    def predict(self, histories: Sequence[TaskHistory], n_samples: int, rng: Any) -> Any:
        return self.make(len(histories), n_samples)


@pytest.mark.parametrize(
    ("predictor", "error", "message"),
    [
        ("wsl", UnknownPredictorError, "Unknown predictor 'wsl'"),
        (42, TypeError, "registered name .* or an object with a predict"),
        (WLS, TypeError, r"got the class WLS; pass an instance such as WLS\(\)"),
    ],
    ids=["unknown-name", "number", "class"],
)
def test_bad_predictors_raise_clear_errors(predictor: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        PredictionAECWrapper(mara_env.raw_env("tiny"), predictor)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_samples": 0}, "n_samples must be an int >= 1, got 0"),
        ({"n_samples": -3}, "n_samples"),
        ({"n_samples": 2.5}, "n_samples"),
        ({"n_samples": True}, "n_samples"),
        ({"quantile_levels": (0.9, 0.1)}, "strictly increasing"),
        ({"quantile_levels": ()}, "quantile_levels"),
        ({"quantile_levels": (0.5, 1.5)}, "quantile_levels"),
        ({"need_cap": 0.0}, "need_cap must be > 0"),
        ({"need_cap": float("inf")}, "need_cap must be a finite number"),
        ({"need_cap": float("nan")}, "need_cap"),
        ({"reuse_samples": "yes"}, "reuse_samples"),
    ],
)
def test_bad_options_raise_clear_errors(options: dict[str, Any], message: str) -> None:
    for make in (
        lambda: PredictionAECWrapper(mara_env.raw_env("tiny"), "wls", **options),
        lambda: PredictionParallelWrapper(mara_env.parallel_env("tiny"), "wls", **options),
        lambda: PredictionGymWrapper(gym.make(ENV_ID, config="tiny"), "wls", **options),
    ):
        with pytest.raises(ValueError, match=re.escape(message) if "(" in message else message):
            make()


def test_wrapping_the_wrong_env_raises() -> None:
    """Each wrapper names the form it expects; non-mara envs are refused."""
    with pytest.raises(TypeError, match="PredictionParallelWrapper or PredictionGymWrapper"):
        PredictionAECWrapper(mara_env.parallel_env("tiny"))
    with pytest.raises(TypeError, match="PredictionAECWrapper or PredictionGymWrapper"):
        PredictionParallelWrapper(mara_env.env("tiny"))
    with pytest.raises(TypeError, match="PredictionAECWrapper or PredictionParallelWrapper"):
        PredictionGymWrapper(mara_env.env("tiny"))
    with pytest.raises(TypeError, match="wraps a mara_env environment"):
        PredictionAECWrapper(connect_four.raw_env())
    with pytest.raises(TypeError, match="expected a mara_env AEC, Parallel or Gymnasium env"):
        add_predictions("mara_env/Cluster-v1")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda n, s: None, r"samples of shape \(0,\)"),
        (lambda n, s: RemainingWork(np.zeros((n, s + 1))), "samples of shape"),
        (lambda n, s: RemainingWork(np.full((n, s), np.nan)), "NaN or negative"),
        (lambda n, s: RemainingWork(-np.ones((n, s))), "NaN or negative"),
    ],
    ids=["none", "shape", "nan", "negative"],
)
def test_bad_predictor_output_raises_clear_errors(make: Any, message: str) -> None:
    env = PredictionAECWrapper(mara_env.raw_env("tiny", load=4.0), BrokenPredictor(make))
    with pytest.raises(PredictorOutputError, match=f"broken.predict returned .*{message}"):
        env.reset(seed=0)


# ---------------------------------------------------------------------------- benchmark
def test_wrapper_throughput_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    """The throughput script runs with a tiny budget, with extra predictors, and prints both
    rates, the wrapper's own cost and, for each predictor with a target, the share its wrapped
    env keeps and the CPU time per epoch that share leaves the predictor."""
    argv = ["--quick", "--steps", "240", "--repeats", "1"]
    argv += ["--predictor", "dkf", "--predictor", "flow_matching"]
    argv += ["--checkpoint", str(shipped_checkpoint(WITHOUT_TARGET))]
    assert wrapper_throughput.main(argv) == 0
    out = capsys.readouterr().out
    assert "logical cores" in out
    forms = ("mara_env.raw_env (AEC)", wrapper_throughput.WRAPPER_ONLY, "+ predictions (wls)")
    for name in (*forms, "+ predictions (dkf)"):
        rate = re.search(re.escape(name) + r"\s+([0-9][0-9,]*)", out)
        assert rate and float(rate.group(1).replace(",", "")) > 0, name
    checkpoint = f"{WITHOUT_TARGET}.pt"
    for predictor, target in (("wls", "0.5"), ("flow_matching", "0.25"), (checkpoint, "0.25")):
        for clock in ("wall-clock", "CPU-time"):
            found = re.search(
                rf"{predictor}-wrapped / raw AEC \({clock}\): ([0-9.]+) "
                rf"\(target >= {target}: (met|NOT met)\)",
                out,
            )
            assert found, (predictor, clock)
            printed = float(found.group(1))
            if abs(printed - float(target)) < 0.0005:  # rounded to the target: either verdict
                continue
            assert found.group(2) == ("met" if printed >= float(target) else "NOT met"), (
                found.group(0)
            )
    budgets = re.findall(
        r"raw env ([0-9,]+); a share of ([0-9.]+) allows ([0-9,]+) added, of which the "
        r"wrapper's own work takes (-?[0-9,]+), leaving (-?[0-9,]+) for the predictor; (\S+) takes",
        out,
    )
    assert [row[-1] for row in budgets] == ["wls", "flow_matching", checkpoint]
    for raw, share, allowed, own, left, _ in budgets:
        raw_us, allowed_us, own_us, left_us = (
            float(v.replace(",", "")) for v in (raw, allowed, own, left)
        )
        assert allowed_us == pytest.approx(raw_us * (1 / float(share) - 1), abs=raw_us * 0.01 + 1)
        assert left_us == pytest.approx(allowed_us - own_us, abs=1.0)
    assert "dkf-wrapped" not in out
    with pytest.raises(SystemExit):
        wrapper_throughput.main(["--quick", "--predictor", "nope"])
    with pytest.raises(SystemExit):
        wrapper_throughput.main(["--quick", "--checkpoint", "no_such_student.pt"])
    assert "no such file no_such_student.pt" in capsys.readouterr().err
