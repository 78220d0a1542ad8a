"""Decision time: how long a scheduler takes to choose the actions of one epoch.

Plays whole episodes of a config (default ``training``: 8 nodes, 16 visible slots) with each
scheduler through ``mara_env.raw_env`` and times every ``act`` call; an epoch's decision time is
the sum over its nodes' calls (what :func:`mara_env.agents.evaluation.evaluate` reports as
``decision_ms_per_epoch``, but per epoch instead of averaged). The figures are given over all
epochs and over the **full** epochs, in which every visible slot holds a task (16 visible tasks
on the training config): the busiest case for schedulers whose work grows with the tasks.

The process pins itself to one CPU core (where the OS allows it) so that figures do not depend
on how many cores the machine has free. ``--clock cpu`` times with this thread's CPU time
instead of the wall clock: on a machine busy with other work, wall-clock figures include the
time the scheduler waited for the core, CPU-time figures do not. Schedulers that read hidden state on purpose (a
clairvoyant reference) are handed the environment with ``bind(env)``, as the evaluation harness
does.

Run::

    python -m mara_env.benchmarks.perf.decision_time                          # every registered agent
    python -m mara_env.benchmarks.perf.decision_time --agents laira lara edf --seeds 0 1 2 3 4
    python -m mara_env.benchmarks.perf.decision_time --agents my_pkg.my_mod:MyScheduler --config tiny
    python -m mara_env.benchmarks.perf.decision_time --agents laira --clock cpu
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.report import add_output_argument, printed_report

#: Seeds played by default.
DEFAULT_SEEDS = (0, 1, 2)
#: The clocks ``--clock`` can choose: wall time, or the CPU time of the calling thread.
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


@dataclass(frozen=True)
class DecisionTimes:
    """Per-epoch decision times of one scheduler.

    Attributes:
        agent: The scheduler's name.
        milliseconds: Decision time of every epoch played, in ms.
        full: Per epoch, whether every visible slot held a task.
    """

    agent: str
    milliseconds: np.ndarray
    full: np.ndarray

    def summary(self, only_full: bool = False) -> dict[str, float]:
        """Count, mean, median and 95th percentile (ms) over all or only the full epochs."""
        times = self.milliseconds[self.full] if only_full else self.milliseconds
        if len(times) == 0:
            return {"epochs": 0.0, "mean": np.nan, "median": np.nan, "p95": np.nan}
        return {
            "epochs": float(len(times)),
            "mean": float(np.mean(times)),
            "median": float(np.median(times)),
            "p95": float(np.quantile(times, 0.95)),
        }


@contextmanager
def one_core() -> Iterator[str]:
    """Run the block on one CPU core (restoring the previous affinity); yields what was done."""
    if not hasattr(os, "sched_setaffinity"):
        yield "not pinned (no sched_setaffinity on this platform)"
        return
    previous = os.sched_getaffinity(0)
    core = min(previous)
    os.sched_setaffinity(0, {core})
    try:
        yield f"pinned to core {core}"
    finally:
        os.sched_setaffinity(0, previous)


def time_scheduler(name: str, config: Any, seeds: list[int], clock: str = "wall") -> DecisionTimes:
    """Play one episode per seed with the scheduler ``name`` and time its decisions.

    Args:
        name: A registered agent name or an import path ``"package.module:ClassName"``.
        config: A preset name or a :class:`mara_env.ClusterConfig`.
        seeds: Environment seeds (the scheduler gets :func:`mara_env.agents.evaluation.scheduler_seed`).
        clock: ``"wall"`` or ``"cpu"`` (see :data:`CLOCKS`).

    Raises:
        ValueError: For an unknown clock.
    """
    if clock not in CLOCKS:
        raise ValueError(f"time_scheduler: clock must be one of {sorted(CLOCKS)}, got {clock!r}.")
    now = CLOCKS[clock]
    import mara_env
    from mara_env.agents.evaluation import start_episode
    from mara_env.agents.registry import make_agent

    scheduler = make_agent(name)
    env = mara_env.raw_env(config)
    n_slots = env.config.n_slots
    milliseconds: list[float] = []
    full: list[bool] = []
    for seed in seeds:
        env.reset(seed=seed)
        start_episode(scheduler, env, seed)
        for agent, node in mara_env.node_turns(env):
            observation = env.observe(agent)
            if node == 0:
                milliseconds.append(0.0)
                occupied = observation["action_mask"][:n_slots].sum()
                full.append(bool(occupied == n_slots))
            tick = now()
            action = scheduler.act(observation, node)
            milliseconds[-1] += 1000.0 * (now() - tick)
            env.step(action)
    return DecisionTimes(scheduler.name, np.array(milliseconds), np.array(full, dtype=bool))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.perf.decision_time",
        description="Per-epoch decision time of schedulers, on one CPU core.",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=None,
        help="agent names or import paths (default: every registered agent)",
    )
    parser.add_argument("--config", default="training", help="config preset (default: training)")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=list(DEFAULT_SEEDS),
        help="environment seeds, one episode each (default: 0 1 2)",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall time (default) or this thread's CPU time",
    )
    add_output_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    with printed_report(
        args.output,
        "Decision time per epoch",
        argv,
        "python -m mara_env.benchmarks.perf.decision_time",
    ):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The measurement and its printed report; returns the exit status."""
    from mara_env.agents.registry import known_agents

    names = args.agents if args.agents else list(known_agents())
    with one_core() as pinned:
        print(
            f"decision time per epoch (ms, {args.clock} clock), config {args.config!r}, "
            f"seeds {args.seeds}; {platform_line()}, "
            f"{os.cpu_count()} CPU cores, {pinned}"
        )
        header = (
            f"{'agent':24s} {'epochs':>7s} {'mean':>8s} {'median':>8s} {'p95':>8s}"
            f" | {'full epochs':>11s} {'mean':>8s} {'median':>8s} {'p95':>8s}"
        )
        print(header)
        print("-" * len(header))
        for name in names:
            times = time_scheduler(name, args.config, args.seeds, args.clock)
            every, busiest = times.summary(), times.summary(only_full=True)
            print(
                f"{times.agent:24s} {every['epochs']:7.0f} {every['mean']:8.3f} "
                f"{every['median']:8.3f} {every['p95']:8.3f} | {busiest['epochs']:11.0f} "
                f"{busiest['mean']:8.3f} {busiest['median']:8.3f} {busiest['p95']:8.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
