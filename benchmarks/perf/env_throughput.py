"""Environment throughput: agent-steps per second of every form of the default world (``ENV_ID``).

Measures, in one run and on one machine, how many agent-steps per second a uniformly random
*masked* policy gets out of:

- ``mara_env.raw_env`` (PettingZoo AEC, no wrappers: the form for hot loops),
- ``mara_env.env`` (AEC with PettingZoo's order-enforcing wrapper),
- ``mara_env.parallel_env`` (one parallel step counts ``n_nodes`` agent-steps),
- ``ClusterGymEnv`` unwrapped and ``gym.make(mara_env.ENV_ID)`` with Gymnasium's default
  wrappers (one step of the central scheduler counts ``n_nodes`` agent-steps),
- and, as a yardstick, PettingZoo's own ``connect_four_v3.raw_env()``, driven by the *same*
  function as the two AEC forms (:func:`run_random_masked`);

then the vector form, ``gym.make_vec(mara_env.ENV_ID, num_envs=N,
vectorization_mode="vector_entry_point")``, for N = 1, 16, 64, 256, 1024 (``--vector-sizes``):
node-decisions per second (one vector step makes ``N * n_nodes``) under a batched random masked
policy (:func:`run_vector`), against the raw AEC env's agent-steps per second, and the memory
of the batched core's state (:attr:`mara_env.sim.core.ClusterBatch.nbytes`); and where a step of
the vector form at N = 256 (else the last size measured) goes (:func:`step_breakdown`: the
epoch, the episode starts of finished clusters, observations, masks, the policy, the rest), from
one more run with those parts timed.

Every AEC form runs the loop PettingZoo documents::

    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else <uniform legal action from the mask>
        env.step(action)

An agent-step is one ``env.step`` call of that loop (steps of finished agents with ``None``
included, which favours connect_four, whose games are short). The Parallel and Gymnasium loops
draw each node's action with the same helper (:func:`random_legal_action`), so the policy costs the
same per agent-step everywhere. Episodes are reset with consecutive seeds, so every repeat plays
the same episodes.

Each form is built and warmed up before timing (the first construction of a mara-env environment
builds cached curve pools; that one-off cost is excluded). Forms are then measured round-robin,
``--repeats`` times each, and the table reports the median (with min and max).

Run::

    python -m mara_env.benchmarks.perf.env_throughput                 # default: 20,000 agent-steps x 5 repeats
    python -m mara_env.benchmarks.perf.env_throughput --quick         # a few seconds, for CI
    python -m mara_env.benchmarks.perf.env_throughput --steps 50000 --repeats 7 --config large
    python -m mara_env.benchmarks.perf.env_throughput --vector-sizes 256          # one vector size only
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.perf.runners import (
    Runner,
    run_gym,
    run_parallel,
    run_random_masked,
    run_vector,
    step_breakdown,
)

#: Agent-steps per measurement and repeats of each measurement, by default and with ``--quick``.
DEFAULT_STEPS, DEFAULT_REPEATS = 20_000, 5
QUICK_STEPS, QUICK_REPEATS = 2_000, 2
#: The target the acceptance criterion sets for raw AEC / connect_four.
TARGET_RATIO = 2.0
#: Vector sizes measured by default, the one the acceptance criterion names and its targets
#: (node-decisions/s of the vector env over agent-steps/s of the raw AEC env).
VECTOR_SIZES = (1, 16, 64, 256, 1024)
VECTOR_TARGET_SIZE, VECTOR_TARGET_RATIO, VECTOR_GOAL_RATIO = 256, 30.0, 100.0
#: A vector measurement makes at least this many steps of the whole batch (with ``--quick``).
MIN_VECTOR_STEPS, QUICK_VECTOR_STEPS = 200, 20


@dataclass
class VectorForm:
    """The vector env at one size."""

    num_envs: int
    envs: Any = None

    @property
    def name(self) -> str:
        return f"vector N={self.num_envs}"


@dataclass
class Form:
    """One environment form to measure."""

    name: str
    make: Callable[[], Any]
    run: Runner
    env: Any = None


def make_forms(config: str) -> list[Form]:
    """The forms measured, in table order (construction is deferred to the warm-up)."""
    import gymnasium as gym
    from pettingzoo.classic.connect_four import connect_four

    import mara_env

    return [
        Form("mara_env.raw_env (AEC)", lambda: mara_env.raw_env(config), run_random_masked),
        Form("mara_env.env (AEC, wrapped)", lambda: mara_env.env(config), run_random_masked),
        Form("mara_env.parallel_env", lambda: mara_env.parallel_env(config), run_parallel),
        Form("ClusterGymEnv (unwrapped)", lambda: mara_env.ClusterGymEnv(config), run_gym),
        Form(
            f'gym.make("{mara_env.ENV_ID}")',
            lambda: gym.make(mara_env.ENV_ID, config=config),
            run_gym,
        ),
        # The class pettingzoo.classic.connect_four_v3.raw_env() returns, imported from its
        # module directly to avoid the deprecation shim of the ``_v3`` name.
        Form("connect_four_v3.raw_env (AEC)", connect_four.raw_env, run_random_masked),
    ]


def machine_description() -> str:
    """Core count, the platform line (:func:`mara_env.benchmarks.common.machine.platform_line`) and the
    PettingZoo and Gymnasium versions."""
    import gymnasium
    import pettingzoo

    return (
        f"{os.cpu_count()} logical cores (os.cpu_count); {platform_line()}; "
        f"pettingzoo {pettingzoo.__version__}, gymnasium {gymnasium.__version__}"
    )


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """The measurement budget options shared by the throughput scripts."""
    parser.add_argument(
        "--steps",
        type=int,
        default=None,
        help=f"agent-steps per measurement (default {DEFAULT_STEPS}, {QUICK_STEPS} with --quick)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help=f"measurements per form; the median is reported (default {DEFAULT_REPEATS}, "
        f"{QUICK_REPEATS} with --quick)",
    )
    parser.add_argument("--quick", action="store_true", help="a tiny budget, for CI smoke runs")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the policy and of the first episode"
    )


def resolve_budget(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Fill ``--steps`` and ``--repeats`` from ``--quick``; both must be >= 1."""
    if args.steps is None:
        args.steps = QUICK_STEPS if args.quick else DEFAULT_STEPS
    if args.repeats is None:
        args.repeats = QUICK_REPEATS if args.quick else DEFAULT_REPEATS
    if args.steps < 1 or args.repeats < 1:
        parser.error("--steps and --repeats must be >= 1")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.perf.env_throughput",
        description="Agent-steps per second of every form of the default world under a random masked "
        "policy, against PettingZoo's connect_four_v3 driven by the same loop.",
    )
    add_budget_arguments(parser)
    parser.add_argument(
        "--config",
        default="training",
        help="mara-env config preset to measure (default: training, 8 nodes x 16 slots)",
    )
    parser.add_argument(
        "--vector-sizes",
        default=",".join(str(size) for size in VECTOR_SIZES),
        help="comma-separated numbers of clusters of the vector form (default: "
        f"{','.join(str(size) for size in VECTOR_SIZES)}; '' skips the vector table)",
    )
    add_output_argument(parser)
    args = parser.parse_args(argv)
    resolve_budget(parser, args)
    try:
        args.vector_sizes = [int(part) for part in args.vector_sizes.split(",") if part.strip()]
    except ValueError:
        parser.error("--vector-sizes must be comma-separated whole numbers")
    if any(size < 1 for size in args.vector_sizes):
        parser.error("--vector-sizes must be >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    with printed_report(
        args.output,
        "Environment throughput",
        argv,
        "python -m mara_env.benchmarks.perf.env_throughput",
    ):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The measurement and its printed report; returns the exit status."""
    import mara_env

    config = mara_env.get_config(args.config)
    forms = make_forms(args.config)

    print("mara-env environment throughput (random masked policy)")
    print(f"machine: {machine_description()}")
    print(
        f"config: {args.config} ({config.n_nodes} nodes, {config.n_slots} slots, "
        f"load {config.load:g}); {args.steps} agent-steps x {args.repeats} repeats, median"
    )

    warmup = max(1, min(args.steps // 10, 2_000))
    for form in forms:
        form.env = form.make()
        form.run(form.env, warmup, np.random.default_rng(args.seed), args.seed)
    vectors = [VectorForm(size) for size in args.vector_sizes]
    for vector in vectors:
        vector.envs = make_vector(args.config, vector.num_envs)
        vector.envs.reset(seed=args.seed)
        run_vector(vector.envs, 1, np.random.default_rng(args.seed))

    names = [form.name for form in forms] + [vector.name for vector in vectors]
    rates: dict[str, list[float]] = {name: [] for name in names}
    episodes: dict[str, int] = {}
    for _ in range(args.repeats):  # round-robin, so drifts of the machine hit every form alike
        for form in forms:
            rng = np.random.default_rng(args.seed)
            start = time.perf_counter()
            episodes[form.name] = form.run(form.env, args.steps, rng, args.seed)
            elapsed = time.perf_counter() - start
            rates[form.name].append(args.steps / elapsed)
        for vector in vectors:
            rng = np.random.default_rng(args.seed)
            start = time.perf_counter()
            made = run_vector(
                vector.envs, vector_budget(args, vector.num_envs, config.n_nodes), rng
            )
            rates[vector.name].append(made / (time.perf_counter() - start))
    for form in forms:
        form.env.close()

    medians = {name: statistics.median(values) for name, values in rates.items()}
    reference = medians[forms[-1].name]
    width = max(len(form.name) for form in forms)
    print()
    print(
        f"{'form':<{width}}  {'steps/s':>10}  {'min':>10}  {'max':>10}  "
        f"{'episodes':>8}  {'vs connect_four':>15}"
    )
    for form in forms:
        values = rates[form.name]
        print(
            f"{form.name:<{width}}  {medians[form.name]:>10,.0f}  {min(values):>10,.0f}  "
            f"{max(values):>10,.0f}  {episodes[form.name]:>8}  "
            f"{medians[form.name] / reference:>14.2f}x"
        )
    ratio = medians[forms[0].name] / reference
    verdict = "met" if ratio >= TARGET_RATIO else "NOT met"
    print()
    print(f"ratio raw AEC / connect_four: {ratio:.2f}x (target >= {TARGET_RATIO:g}x: {verdict})")
    print("episodes = episodes finished per measurement (the last one may stop mid-episode)")
    if vectors:
        print_vector_table(vectors, medians, rates, medians[forms[0].name])
        sizes = [vector.num_envs for vector in vectors]
        profiled = (
            vectors[sizes.index(VECTOR_TARGET_SIZE)] if VECTOR_TARGET_SIZE in sizes else vectors[-1]
        )
        budget = vector_budget(args, profiled.num_envs, config.n_nodes)
        parts = step_breakdown(profiled.envs, budget, np.random.default_rng(args.seed))
        total = sum(parts.values())
        print()
        print(f"where a step of {profiled.name} goes ({total:.3f} ms per step, methods timed):")
        for label, milliseconds in parts.items():
            print(f"  {label:<30} {milliseconds:>7.3f} ms  {milliseconds / total:>4.0%}")
    return 0


def vector_budget(args: argparse.Namespace, num_envs: int, n_nodes: int) -> int:
    """Node-decisions per vector measurement: ``--steps``, but at least
    :data:`MIN_VECTOR_STEPS` (:data:`QUICK_VECTOR_STEPS` with ``--quick``) steps of the batch."""
    least = QUICK_VECTOR_STEPS if args.quick else MIN_VECTOR_STEPS
    return max(args.steps, least * num_envs * n_nodes)


def make_vector(config: str, num_envs: int) -> Any:
    """The vector env of ``num_envs`` clusters, made through Gymnasium's registry."""
    import gymnasium as gym

    import mara_env

    return gym.make_vec(
        mara_env.ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", config=config
    )


def print_vector_table(
    vectors: list[VectorForm],
    medians: dict[str, float],
    rates: dict[str, list[float]],
    raw_aec: float,
) -> None:
    """The vector form's table: node-decisions/s, per cluster-epoch, against the raw AEC env."""
    config = vectors[0].envs.unwrapped.config
    print()
    print(
        f"vector form (gym.make_vec, vector_entry_point), node-decisions/s "
        f"(one step = N x {config.n_nodes} decisions), same run"
    )
    print(
        f"{'N':>6}  {'decisions/s':>12}  {'min':>12}  {'max':>12}  {'epochs/s':>10}  "
        f"{'vs raw AEC':>10}  {'memory':>9}"
    )
    for vector in vectors:
        values = rates[vector.name]
        median = medians[vector.name]
        memory = vector.envs.unwrapped.core.nbytes / 2**20
        print(
            f"{vector.num_envs:>6}  {median:>12,.0f}  {min(values):>12,.0f}  "
            f"{max(values):>12,.0f}  {median / config.n_nodes:>10,.0f}  "
            f"{median / raw_aec:>9.1f}x  {memory:>6.1f} MB"
        )
    target = next((v for v in vectors if v.num_envs == VECTOR_TARGET_SIZE), None)
    if target is not None:
        ratio = medians[target.name] / raw_aec
        verdict = "met" if ratio >= VECTOR_TARGET_RATIO else "NOT met"
        goal = "met" if ratio >= VECTOR_GOAL_RATIO else "not met"
        print()
        print(
            f"ratio vector N={VECTOR_TARGET_SIZE} / raw AEC: {ratio:.1f}x (target >= "
            f"{VECTOR_TARGET_RATIO:g}x: {verdict}; goal {VECTOR_GOAL_RATIO:g}x: {goal})"
        )
    print("memory = the batched core's arrays (state of every cluster, task tables included)")


if __name__ == "__main__":
    raise SystemExit(main())
