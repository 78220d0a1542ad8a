"""How fast MARA's training rollouts are played by 1, 2, ... worker processes (sampling only).

Each worker count plays the same amount of PPO rollouts of the default training run
(:class:`~mara_env.benchmarks.mara.settings.TrainSettings`: its clusters, epochs per update, predictor,
network and temperature), its clusters split into one shard per worker
(:meth:`~mara_env.benchmarks.mara.rollout_worker.RolloutPlan.shard`), every worker a process of its own
running torch on one thread; no learner runs, so the figure is what sampling alone can give a
learner. The counts are measured round-robin, ``--repeats`` times each, after one warm-up
rollout per worker (which loads the compiled loops and the predictor), and the report gives the
median cluster-epochs per second, its ratio to the first count, the spread of that ratio over
the repeats (each repeat's rate over the first count's in the same round: the rollouts differ
from round to round, so a few repeats scatter it by several per cent), and where the workers'
time went (features, policy, simulation).

Run::

    python -m mara_env.benchmarks.mara.rollout_throughput                      # 1 and 2 workers
    python -m mara_env.benchmarks.mara.rollout_throughput --workers 1 2 4 8 --rollouts 4
    python -m mara_env.benchmarks.mara.rollout_throughput --output benchmarks/results/perf/rollout_throughput.md
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import torch

from mara_env.agents.mara.policy import MaraPolicy
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.common.stopwatch import Stopwatch, breakdown
from mara_env.benchmarks.mara.ppo import rollout_plan
from mara_env.benchmarks.mara.rollout_worker import RolloutPlan, RolloutWorker
from mara_env.benchmarks.mara.settings import TrainSettings


class Pool:
    """``count`` rollout workers, one shard of ``plan`` each, in processes of their own."""

    def __init__(self, plan: RolloutPlan, count: int) -> None:
        self.workers = [RolloutWorker(plan.shard(index, count), 1) for index in range(count)]
        self.watch = Stopwatch()

    def play(self, state: dict[str, torch.Tensor]) -> int:
        """One rollout of every shard with the weights ``state``; returns its cluster-epochs."""
        rollouts = [future.result() for future in [w.submit(state) for w in self.workers]]
        for rollout in rollouts:
            self.watch.add(rollout.seconds)
        return sum(sum(rollout.sizes) for rollout in rollouts)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.rollout_throughput",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2],
        metavar="N",
        help="worker counts to measure, the first being the reference (default: 1 2)",
    )
    parser.add_argument(
        "--rollouts", type=int, default=2, help="rollouts per measurement (default: 2)"
    )
    parser.add_argument(
        "--repeats", type=int, default=9, help="measurements per count, median (default: 9)"
    )
    defaults = TrainSettings()
    parser.add_argument(
        "--world-version", type=int, default=defaults.world_version, help="world version"
    )
    parser.add_argument(
        "--preset", default=defaults.preset, help="training preset (default: %(default)s)"
    )
    parser.add_argument(
        "--clusters", type=int, default=defaults.clusters, help="clusters (default: %(default)s)"
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=defaults.rollout_epochs,
        help="epochs per rollout (default: %(default)s)",
    )
    add_output_argument(parser)
    args = parser.parse_args(argv)
    try:
        args.settings = TrainSettings(
            world_version=args.world_version,
            preset=args.preset,
            clusters=args.clusters,
            rollout_epochs=args.epochs,
        )
    except ValueError as error:
        parser.error(str(error))
    if any(not 1 <= count <= args.clusters for count in args.workers):
        parser.error(f"--workers: each count must be between 1 and the {args.clusters} clusters")
    if args.rollouts < 1 or args.repeats < 1:
        parser.error("--rollouts and --repeats must be >= 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    program = "python -m mara_env.benchmarks.mara.rollout_throughput"
    with printed_report(args.output, "Rollout throughput of MARA's training", argv, program):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Play, time and print the table; returns the exit status."""
    settings: TrainSettings = args.settings
    plan = rollout_plan(settings)
    state = MaraPolicy(settings.policy_config).state_dict()
    print("MARA's training rollouts, sampling only (no learner), one shard per worker process")
    print(f"machine: {available_cores()} cores; {platform_line()}")
    print(
        f"plan: {len(plan.configs)} clusters x {plan.epochs} epochs per rollout, predictor "
        f"{plan.predictor!r}, world v{args.world_version}; {args.rollouts} rollouts x "
        f"{args.repeats} repeats per count, round-robin, median"
    )
    pools = {count: Pool(plan, count) for count in args.workers}
    try:
        for pool in pools.values():
            pool.play(state)  # warm-up: compiled loops, the predictor, the first episodes
            pool.watch.take()
        rates: dict[int, list[float]] = {count: [] for count in pools}
        for _ in range(args.repeats):
            for count, pool in pools.items():
                began = time.perf_counter()
                epochs = sum(pool.play(state) for _ in range(args.rollouts))
                rates[count].append(epochs / (time.perf_counter() - began))
        reference = statistics.median(rates[args.workers[0]])
        print()
        print(
            f"{'workers':>7}  {'cluster-epochs/s':>16}  {'min':>8}  {'max':>8}  {'ratio':>6}  "
            "ratio per round: median [min, max]"
        )
        first = rates[args.workers[0]]
        for count, values in rates.items():
            median = statistics.median(values)
            rounds = [value / base for value, base in zip(values, first, strict=True)]
            print(
                f"{count:>7}  {median:>16,.0f}  {min(values):>8,.0f}  {max(values):>8,.0f}  "
                f"{median / reference:>5.2f}x  {statistics.median(rounds):.2f}x "
                f"[{min(rounds):.2f}x, {max(rounds):.2f}x]"
            )
        for count, pool in pools.items():
            seconds = pool.watch.take()
            print()
            print(f"where the time of {count} worker(s) went (summed over them):")
            print(breakdown(seconds, sum(seconds.values())))
    finally:
        for pool in pools.values():
            pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
