"""Speed and memory: environment and wrapper throughput, episode memory, decision time.

Run ``python -m mara_env.benchmarks.perf <command> [options]``; each command is also its own module:

* ``env-throughput`` (:mod:`mara_env.benchmarks.perf.env_throughput`): agent-steps per second of every
  form of the default world.
* ``wrapper-throughput`` (:mod:`mara_env.benchmarks.perf.wrapper_throughput`): agent-steps per second
  with and without a prediction wrapper.
* ``episode-memory`` (:mod:`mara_env.benchmarks.perf.episode_memory`): peak resident memory of one
  episode at scale.
* ``decision-time`` (:mod:`mara_env.benchmarks.perf.decision_time`): how long each scheduler takes to
  choose one epoch's actions.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "env-throughput": (
        "mara_env.benchmarks.perf.env_throughput",
        "Agent-steps per second of every form of the default world.",
    ),
    "wrapper-throughput": (
        "mara_env.benchmarks.perf.wrapper_throughput",
        "Agent-steps per second with and without a prediction wrapper.",
    ),
    "episode-memory": (
        "mara_env.benchmarks.perf.episode_memory",
        "Peak resident memory of one episode at scale.",
    ),
    "decision-time": (
        "mara_env.benchmarks.perf.decision_time",
        "How long each scheduler takes to choose one epoch's actions.",
    ),
}
