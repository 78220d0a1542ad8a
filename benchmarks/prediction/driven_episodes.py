"""An episode played by a fixed scheduler while diagnostics watch it (the verdicts, the leak audit).

Example:
    >>> from mara_env import get_config
    >>> env, driver = driven_episode(get_config("tiny"), "round_robin", 100)
    >>> driver.name, len(env.agents) == env.config.n_nodes
    ('round_robin', True)
    >>> sorted(predictor_generators(["wls", "dkf"], 100, offset=7))
    ['dkf', 'wls']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mara_env import ClusterConfig, raw_env
from mara_env.agents import Scheduler, make_agent, start_episode
from mara_env.curves.traces import TraceSource


def driven_episode(
    config: ClusterConfig, driver: str, seed: int, trace_source: TraceSource | None = None
) -> tuple[raw_env, Scheduler]:
    """The AEC env of ``config`` (on ``trace_source``'s curves, or the package's) reset with
    ``seed``, and the registered scheduler ``driver`` started on it (play it with
    :func:`mara_env.node_turns`)."""
    env = raw_env(config, trace_source=trace_source)
    env.reset(seed=seed)
    scheduler = make_agent(driver)
    start_episode(scheduler, env, seed)
    return env, scheduler


def predictor_generators(
    names: Sequence[str], seed: int, *, offset: int
) -> dict[str, np.random.Generator]:
    """One generator per predictor for episode ``seed``, seeded ``[seed, offset, index]``, so a
    predictor's draws depend neither on the scheduler's nor on the other predictors'."""
    return {name: np.random.default_rng([seed, offset, index]) for index, name in enumerate(names)}
