"""Episode memory: peak resident memory (RSS) of one full episode of the default world at scale.

Plays one whole episode of ``mara_env.raw_env`` (PettingZoo AEC) with the random masked policy of
:mod:`mara_env.benchmarks.perf.env_throughput` (the same loop), by default on a large, overloaded cluster:

    mara_env.raw_env(config="training", n_nodes=64, n_slots=64, load=2 * TRAINING_LOAD)

The measurement runs in a fresh Python subprocess, so nothing the caller imported or allocated
counts. The subprocess records its peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) at
three points: after the imports (the baseline: Python, NumPy, Gymnasium, PettingZoo, mara_env),
after building and resetting the environment (which builds the cached curve pool), and after the
episode; the differences show what the environment and the episode themselves add. The target is
a peak below 300 MB.

Run::

    python -m mara_env.benchmarks.perf.episode_memory                       # 64 nodes, 64 slots, 2x load
    python -m mara_env.benchmarks.perf.episode_memory --load-factor 1 --n-nodes 8 --n-slots 16
    python -m mara_env.benchmarks.perf.episode_memory --set arrival_horizon=200 --set shaping_weight=1.0

Peak RSS needs the ``resource`` module (Linux and macOS).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.report import add_output_argument, printed_report

#: Defaults of the measured scenario and the acceptance target.
DEFAULT_NODES, DEFAULT_SLOTS, DEFAULT_LOAD_FACTOR = 64, 64, 2.0
TARGET_MB = 300.0


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MB (10**6 bytes)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return peak / 1e6 if sys.platform == "darwin" else peak * 1024 / 1e6


def measure_episode(config: str, overrides: dict[str, Any], seed: int) -> dict[str, Any]:
    """Play one episode in *this* process and return its figures (peaks in MB).

    Call it in a fresh process (as :func:`main` does) for the peaks to mean anything.
    """
    import numpy as np

    import mara_env
    from mara_env.benchmarks.perf.runners import run_random_masked

    baseline = peak_rss_mb()
    start = time.perf_counter()
    env = mara_env.raw_env(config, **overrides)
    env.reset(seed=seed)
    after_reset = peak_rss_mb()
    finished = run_random_masked(
        env, sys.maxsize, np.random.default_rng(seed), seed, max_episodes=1
    )
    seconds = time.perf_counter() - start
    metrics = env.episode_metrics()
    env.close()
    return {
        "n_nodes": env.config.n_nodes,
        "n_slots": env.config.n_slots,
        "load": env.config.load,
        "finished": finished,
        "epochs": int(metrics["epochs"]),
        "arrived": int(metrics["arrived"]),
        "completed": int(metrics["completed"]),
        "expired": int(metrics["expired"]),
        "completion_rate": float(metrics["completion_rate"]),
        "seconds": seconds,
        "baseline_mb": baseline,
        "after_reset_mb": after_reset,
        "peak_mb": peak_rss_mb(),
    }


def measure_in_subprocess(config: str, overrides: dict[str, Any], seed: int) -> dict[str, Any]:
    """Run :func:`measure_episode` in a fresh interpreter and return its figures."""
    root = str(Path(__file__).absolute().parents[1])  # the folder holding ``benchmarks/``
    code = (
        "import json, sys\n"
        "from mara_env.benchmarks.perf.episode_memory import measure_episode\n"
        "job = json.loads(sys.argv[1])\n"
        "print(json.dumps(measure_episode(job['config'], job['overrides'], job['seed'])))\n"
    )
    job = json.dumps({"config": config, "overrides": overrides, "seed": seed})
    environ = dict(os.environ)
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, environ.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-c", code, job],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"the measuring subprocess failed (exit {result.returncode}):\n{result.stderr}"
        )
    return json.loads(result.stdout.strip().splitlines()[-1])


def parse_override(text: str) -> tuple[str, Any]:
    """``FIELD=VALUE`` with VALUE a Python literal (``3``, ``1.5``, ``'test'``, ``(1.0, 2.0)``);
    anything that is not a literal is taken as a string."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE, got {text!r}")
    try:
        parsed: Any = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = value
    return name.strip(), parsed


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.perf.episode_memory",
        description="Peak RSS of one full episode (random masked policy, raw AEC env), "
        "measured in a fresh subprocess.",
    )
    parser.add_argument("--config", default="training", help="config preset (default: training)")
    parser.add_argument(
        "--n-nodes", type=int, default=DEFAULT_NODES, help=f"nodes (default {DEFAULT_NODES})"
    )
    parser.add_argument(
        "--n-slots",
        type=int,
        default=DEFAULT_SLOTS,
        help=f"visible slots (default {DEFAULT_SLOTS})",
    )
    parser.add_argument(
        "--load-factor",
        type=float,
        default=DEFAULT_LOAD_FACTOR,
        help=f"load as a multiple of mara_env.TRAINING_LOAD (default {DEFAULT_LOAD_FACTOR:g})",
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        metavar="FIELD=VALUE",
        type=parse_override,
        action="append",
        default=[],
        help="any other ClusterConfig field, e.g. --set arrival_horizon=200 (repeatable)",
    )
    parser.add_argument("--seed", type=int, default=0, help="episode and policy seed (default 0)")
    parser.add_argument(
        "--target-mb",
        type=float,
        default=TARGET_MB,
        help=f"the peak RSS to stay under (default {TARGET_MB:g})",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="measure in this process instead of a fresh one (peaks then include everything "
        "this process held before)",
    )
    add_output_argument(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    with printed_report(
        args.output,
        "Peak memory of one episode",
        argv,
        "python -m mara_env.benchmarks.perf.episode_memory",
    ):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The measurement and its printed report; returns the exit status."""
    from mara_env import TRAINING_LOAD, get_config

    overrides: dict[str, Any] = {
        "n_nodes": args.n_nodes,
        "n_slots": args.n_slots,
        "load": args.load_factor * TRAINING_LOAD,
    }
    overrides.update(dict(args.overrides))
    get_config(args.config, **overrides)  # fail here, with the config's own message, if invalid
    if args.in_process:
        figures = measure_episode(args.config, overrides, args.seed)
    else:
        figures = measure_in_subprocess(args.config, overrides, args.seed)

    from mara_env.benchmarks.perf.env_throughput import machine_description

    where = "this process" if args.in_process else "a fresh subprocess"
    shown = ", ".join(f"{name}={value!r}" for name, value in overrides.items())
    print(f"mara-env episode memory (one episode, random masked policy, raw AEC, {where})")
    print(f"machine: {machine_description()}")
    print(
        f"config: {args.config} with {shown} (load {args.load_factor:g}x training); "
        f"seed {args.seed}"
    )
    ended = "terminated/truncated" if figures["finished"] else "DID NOT END"
    print(
        f"episode: {figures['epochs']} epochs ({ended}), "
        f"{figures['epochs'] * figures['n_nodes']} node decisions, "
        f"{figures['seconds']:.1f} s"
    )
    print(
        f"tasks: {figures['arrived']} arrived, {figures['completed']} completed, "
        f"{figures['expired']} expired (completion rate {figures['completion_rate']:.3f})"
    )
    baseline, after_reset, peak = (
        figures["baseline_mb"],
        figures["after_reset_mb"],
        figures["peak_mb"],
    )
    print(f"peak RSS after imports (baseline): {baseline:8.1f} MB")
    print(
        f"peak RSS after env build + reset:  {after_reset:8.1f} MB  "
        f"(+{after_reset - baseline:.1f} MB)"
    )
    print(
        f"peak RSS after the episode:        {peak:8.1f} MB  "
        f"(+{peak - baseline:.1f} MB over the baseline)"
    )
    verdict = "met" if peak < args.target_mb else "NOT met"
    print(f"target: peak RSS < {args.target_mb:g} MB: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
