"""Playing one scheduler on one static bundle.

Example:
    >>> import numpy as np
    >>> from mara_env.agents import make_agent
    >>> from mara_env import default_trace_source
    >>> from mara_env.sim.workload import build_workload
    >>> from mara_env.benchmarks.baselines.static_bundle.bundles import BUNDLES, bundle_config, draw_bundle
    >>> config = bundle_config()
    >>> tasks = draw_bundle(
    ...     build_workload(config, default_trace_source()), np.random.default_rng(0),
    ...     BUNDLES["tight"],
    ... )
    >>> play(make_agent("edf"), tasks, config, 0)["arrived"]
    10.0
"""

from __future__ import annotations

import numpy as np

from mara_env import ClusterConfig, TraceSource, node_turns, raw_env
from mara_env.agents import Scheduler, start_episode
from mara_env.sim.workload import TaskTable


def play(
    scheduler: Scheduler,
    tasks: TaskTable,
    config: ClusterConfig,
    seed: int,
    *,
    trace_source: TraceSource | None = None,
) -> dict[str, float]:
    """Run ``scheduler`` for one episode on the given ``tasks``; returns the episode metrics.

    The scheduler acts on observations only, like :func:`mara_env.agents.evaluate` drives it (a
    :class:`agents.PrivilegedScheduler` is bound to the environment); it is started with
    :func:`mara_env.agents.start_episode`.
    """
    env = raw_env(config, trace_source=trace_source)
    env.reset(seed=seed)
    env.simulator.reset(np.random.default_rng(seed), tasks=tasks)
    env.builder.refresh()
    start_episode(scheduler, env, seed)
    for agent, node in node_turns(env):
        env.step(scheduler.act(env.observe(agent), node))
    return env.episode_metrics()
