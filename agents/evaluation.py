"""Running a scheduler for whole episodes and collecting their metrics.

:func:`evaluate` drives :class:`mara_env.raw_env` (the AEC form without PettingZoo's wrappers,
for speed): for every seed it resets the environment with that seed, resets the scheduler with
a seed derived from it (:func:`scheduler_seed`, so the scheduler's random stream is not the
workload's), and asks the scheduler for each node's action until the episode ends. The scheduler
only ever receives ``env.observe(agent)``, except that a :class:`mara_env.agents.base.PrivilegedScheduler`
(a clairvoyant reference) is handed the environment with ``bind(env)`` after the resets.

A scheduler that returns a masked action does not stop the run: the environment turns it into
idle and counts it in ``illegal_actions``. An int outside the action space, which the environment
would reject, is also replaced by idle here and counted in ``invalid_actions`` (out-of-range
actions). An action that is not an int at all (a float, ``None``, an array) is a bug in the
scheduler, not a choice: it stops the run with a :class:`SchedulerError` naming the value, its
type and where it happened, as does an exception raised by the scheduler.

Example:
    >>> from mara_env.agents import make_agent
    >>> from mara_env.agents.evaluation import evaluate
    >>> rows = evaluate(make_agent("edf"), "tiny", seeds=[0, 1])
    >>> [row["seed"] for row in rows]
    [0, 1]
    >>> 0.0 <= rows[0]["completion_rate"] <= 1.0
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
from tqdm.auto import tqdm

from mara_env import ClusterConfig, get_config, node_turns, raw_env
from mara_env.agents.base import PrivilegedScheduler, Scheduler
from mara_env.curves.traces import TraceSourceLike
from mara_env.predictors.base import is_privileged

#: Keys :func:`evaluate` adds to the environment's ``episode_metrics()``.
EXTRA_KEYS = ("agent", "seed", "invalid_actions", "decision_ms_per_epoch", "episode_seconds")

_SCHEDULER_STREAM = 0x5CED


class SchedulerError(RuntimeError):
    """A scheduler raised an exception while acting."""


def scheduler_seed(seed: int) -> int:
    """The seed a scheduler is reset with for the episode of environment seed ``seed``.

    Derived so that the scheduler's generator never replays the environment's stream.

    Example:
        >>> scheduler_seed(0) == scheduler_seed(0) != scheduler_seed(1)
        True
    """
    return int(np.random.SeedSequence([seed, _SCHEDULER_STREAM]).generate_state(1)[0])


def start_episode(scheduler: Scheduler, env: raw_env, seed: int) -> None:
    """Ready ``scheduler`` for the episode ``env`` was just reset to with ``seed``.

    Resets it with :func:`scheduler_seed` of ``seed`` and, for a privileged scheduler
    (:func:`mara_env.predictors.base.is_privileged`: the clairvoyant reference, a scheduler fed the
    oracle), binds it to ``env``: what :func:`evaluate` does every episode, and what any other
    harness must do to play the same episode.

    Example:
        >>> import mara_env
        >>> from mara_env.agents import make_agent
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=3)
        >>> start_episode(make_agent("edf"), env, seed=3)
    """
    scheduler.reset(env.config, seed=scheduler_seed(seed))
    if is_privileged(scheduler):
        cast(PrivilegedScheduler, scheduler).bind(env)


def evaluate(
    scheduler: Scheduler,
    config: str | ClusterConfig,
    seeds: Iterable[int],
    *,
    trace_source: TraceSourceLike | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """Run ``scheduler`` for one episode per seed and return each episode's metrics.

    Args:
        scheduler: Any object following :class:`mara_env.agents.base.Scheduler`.
        config: A preset name or a :class:`mara_env.ClusterConfig`.
        seeds: Environment seeds, one episode each.
        trace_source: Where curves come from (default: the package's default source).
        progress: Show a progress bar over the seeds.

    Returns:
        One dict per seed: the environment's ``episode_metrics()`` (``completion_rate``,
        ``completed``, ``arrived``, ``utilisation``, ``switches``, ``wasted_node_epochs``,
        ``illegal_actions``, ...) plus ``agent`` (the scheduler's name), ``seed``,
        ``invalid_actions`` (out-of-range int actions replaced by idle), ``decision_ms_per_epoch``
        (time spent in ``act`` per epoch) and ``episode_seconds`` (wall time).

    Raises:
        SchedulerError: If the scheduler raises while acting, or returns an action that is not
            an int.
        mara_env.ConfigError: For an unknown preset or an invalid config.
    """
    config = get_config(config)
    env = raw_env(config, trace_source=trace_source)
    rows = []
    for seed in tqdm(list(seeds), desc=scheduler.name, disable=not progress, leave=False):
        rows.append(_run_episode(env, scheduler, int(seed)))
    return rows


def _run_episode(env: raw_env, scheduler: Scheduler, seed: int) -> dict[str, Any]:
    start = time.perf_counter()
    env.reset(seed=seed)
    config = env.config
    start_episode(scheduler, env, seed)
    thinking = 0.0
    invalid = 0
    epoch = -1
    for agent, node in node_turns(env):
        if node == 0:
            epoch += 1
        observation = env.observe(agent)
        tick = time.perf_counter()
        try:
            action = scheduler.act(observation, node)
        except Exception as error:
            raise SchedulerError(
                f"Scheduler {scheduler.name!r} ({type(scheduler).__name__}) raised "
                f"{type(error).__name__} at seed {seed}, epoch {epoch}, "
                f"node {node}: {error}"
            ) from error
        thinking += time.perf_counter() - tick
        value = _as_int(action)
        if value is None:
            raise SchedulerError(
                f"Scheduler {scheduler.name!r} ({type(scheduler).__name__}) returned "
                f"{action!r} of type {type(action).__name__} at seed {seed}, epoch {epoch}, "
                f"node {node}: an action must be an int in [0, {config.idle_action}] (a slot, "
                f"or {config.idle_action} for idle). Return int(...) of your choice."
            )
        if 0 <= value < config.n_actions:
            env.step(value)
        else:
            invalid += 1
            env.step(config.idle_action)
    metrics: dict[str, Any] = dict(env.episode_metrics())
    epochs = max(metrics["epochs"], 1.0)
    metrics.update(
        agent=scheduler.name,
        seed=seed,
        invalid_actions=float(invalid),
        decision_ms_per_epoch=1000.0 * thinking / epochs,
        episode_seconds=time.perf_counter() - start,
    )
    return metrics


def _as_int(action: Any) -> int | None:
    """``action`` as an int (a Python or NumPy integer, or a 0-d integer array), else ``None``."""
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return None
    return int(action)
