"""How each form of the environment is driven for a throughput figure: the random masked policy
(:mod:`mara_env.benchmarks.common.random_policy`) over an AEC env, a Parallel env, the Gymnasium env or
the vector env, for a given number of agent-steps, and where a vector step's time goes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mara_env.benchmarks.common.random_policy import pick_legal_actions, random_legal_action

Runner = Callable[[Any, int, np.random.Generator, int], int]


def run_random_masked(
    env: Any,
    n_steps: int,
    rng: np.random.Generator,
    seed: int = 0,
    *,
    max_episodes: int | None = None,
) -> int:
    """Drive a PettingZoo AEC env with the random masked policy for ``n_steps`` agent-steps.

    Resets with seeds ``seed, seed + 1, ...`` whenever an episode ends; stops after ``n_steps``
    calls of ``env.step`` (possibly mid-episode) or once ``max_episodes`` episodes have ended.

    Returns:
        The number of episodes that ran to their end.
    """
    steps = episodes = 0
    while steps < n_steps:
        env.reset(seed=seed + episodes)
        for _agent in env.agent_iter():
            observation, _reward, termination, truncation, _info = env.last()
            action = (
                None
                if termination or truncation
                else random_legal_action(rng, observation["action_mask"])
            )
            env.step(action)
            steps += 1
            if steps >= n_steps:
                return episodes
        episodes += 1
        if max_episodes is not None and episodes >= max_episodes:
            break
    return episodes


def run_parallel(env: Any, n_steps: int, rng: np.random.Generator, seed: int = 0) -> int:
    """The random masked policy on a PettingZoo Parallel env; one step = ``len(agents)``
    agent-steps. Returns the number of finished episodes."""
    steps = episodes = 0
    while steps < n_steps:
        observations, _ = env.reset(seed=seed + episodes)
        while env.agents:
            actions = {
                agent: random_legal_action(rng, observations[agent]["action_mask"])
                for agent in env.agents
            }
            observations, _, _, _, _ = env.step(actions)
            steps += len(actions)
            if steps >= n_steps:
                return episodes
        episodes += 1
    return episodes


def run_gym(env: Any, n_steps: int, rng: np.random.Generator, seed: int = 0) -> int:
    """The random masked policy on the Gymnasium form (each node's action drawn from its own mask
    in ``action_masks()``); one step = ``n_nodes`` agent-steps. Returns finished episodes."""
    action_masks = env.get_wrapper_attr("action_masks")
    n_nodes = env.unwrapped.config.n_nodes
    steps = episodes = 0
    while steps < n_steps:
        env.reset(seed=seed + episodes)
        done = False
        while not done:
            masks = action_masks().reshape(n_nodes, -1)
            action = np.array([random_legal_action(rng, mask) for mask in masks], dtype=np.int64)
            _, _, terminated, truncated, _ = env.step(action)
            steps += n_nodes
            done = terminated or truncated
            if steps >= n_steps:
                return episodes
        episodes += 1
    return episodes


def run_vector(
    envs: Any,
    n_decisions: int,
    rng: np.random.Generator,
    pick: Callable[[np.ndarray, np.ndarray], np.ndarray] = pick_legal_actions,
) -> int:
    """A batched random masked policy on a vector env that has been reset (each node's action
    uniform among its mask's legal ones, ``pick``: :func:`pick_legal_actions`) for at least
    ``n_decisions`` node-decisions (``num_envs * n_nodes`` per step, whole steps); returns the
    node-decisions made.

    Sub-envs autoreset, so episode starts are counted as the AEC loop counts its resets; the
    episodes continue from one measurement to the next."""
    unwrapped = envs.unwrapped
    shape = (unwrapped.num_envs, unwrapped.config.n_nodes, unwrapped.config.n_actions)
    per_step = shape[0] * shape[1]
    made = 0
    while made < n_decisions:
        masks = unwrapped.action_masks().reshape(shape)
        envs.step(pick(masks, rng.random(shape[:2])))
        made += per_step
    return made


#: The parts of a vector step :func:`step_breakdown` times: (label, object, method name), the
#: objects given as ``"core"`` (the batched core) or ``"env"`` (the vector env).
STEP_PARTS = (
    ("epoch (core.advance)", "core", "advance"),
    ("episode starts (core.reset)", "core", "reset"),
    ("observations and masks", "env", "_observations"),
    ("action_masks()", "env", "action_masks"),
)


def step_breakdown(envs: Any, n_decisions: int, rng: np.random.Generator) -> dict[str, float]:
    """Milliseconds per vector step spent in each of :data:`STEP_PARTS`, in the policy
    (:func:`pick_legal_actions`) and in the rest of the loop, over a run of :func:`run_vector`
    with those methods timed (a separate run: the timers cost a little)."""
    unwrapped = envs.unwrapped
    owners = {"core": unwrapped.core, "env": unwrapped}
    spent = dict.fromkeys([label for label, _, _ in STEP_PARTS] + ["policy"], 0.0)

    def timed(label: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - start

        return call

    for label, owner, name in STEP_PARTS:
        setattr(owners[owner], name, timed(label, getattr(owners[owner], name)))
    try:
        start = time.perf_counter()
        made = run_vector(envs, n_decisions, rng, timed("policy", pick_legal_actions))
        total = time.perf_counter() - start
    finally:
        for _, owner, name in STEP_PARTS:
            delattr(owners[owner], name)  # the class's method again
    steps = made / (unwrapped.num_envs * unwrapped.config.n_nodes)
    shares = {label: seconds / steps * 1e3 for label, seconds in spent.items()}
    shares["rest of the loop"] = total / steps * 1e3 - sum(shares.values())
    return shares
