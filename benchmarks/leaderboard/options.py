"""The ``mara-leaderboard`` command's options: :func:`build_parser`, with their defaults and help.

:mod:`mara_env.benchmarks.leaderboard.cli` parses them and runs the grid.

Example:
    >>> args = build_parser().parse_args(["--quick", "--agents", "edf"])
    >>> args.quick, args.agents
    (True, ['edf'])
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mara_env import TRAINING_LOAD, WORKLOADS
from mara_env.agents import known_agents
from mara_env.benchmarks.common.arguments import add_world_version, positive_float, positive_int
from mara_env.benchmarks.leaderboard.backends import (
    available_cores,
)
from mara_env.benchmarks.leaderboard.grid import (
    DEFAULT_LOAD_FACTORS,
    DEFAULT_SEEDS,
    DEFAULT_WORKLOADS,
    EVALUATION_SEED_BASE,
    QUICK_ARRIVAL_HORIZON,
    QUICK_SEEDS,
)
from mara_env.benchmarks.leaderboard.journal import JOURNAL
from mara_env.benchmarks.leaderboard.own_workloads import (
    family_and_alpha,
)
from mara_env.benchmarks.leaderboard.summary import REFERENCE_AGENT
from mara_env.benchmarks.leaderboard.validate import DEFAULT_SAMPLE, parse_sample
from mara_env.curves.recorded_durations import CURVE_DURATIONS

#: Where results go unless ``--output`` says otherwise (relative to the working directory).
DEFAULT_OUTPUT = Path("leaderboard_results")


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    registered = known_agents()
    parser = argparse.ArgumentParser(
        prog="mara-leaderboard",
        description="Rank schedulers by completion rate over agents x workloads x loads x "
        f"evaluation seeds ({EVALUATION_SEED_BASE}, {EVALUATION_SEED_BASE + 1}, ...), with "
        "bootstrap confidence intervals, tables, plots and resumable results.",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(registered),
        metavar="AGENT",
        help="The agents to rank: registered names or import paths 'package.module:ClassName' "
        f"(default: every registered agent: {' '.join(registered)}). Import paths resolve "
        "against the working directory, which the command adds to sys.path after the "
        "installation: run it from the folder holding my_sched.py to rank my_sched:MyScheduler.",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="IMPORT_PATH",
        help="Add a scheduler of your own beside --agents, e.g. my_pkg.my_module:MyScheduler "
        "(any class following mara_env.agents.base.Scheduler, importable from the working directory or "
        "installed); repeatable.",
    )
    parser.add_argument(
        "--workloads",
        "--workload",
        nargs="+",
        default=None,
        metavar="WORKLOAD",
        help=f"Workloads (default: {' '.join(DEFAULT_WORKLOADS)}, or with --traces every one "
        f"its families can play; known: {' '.join(sorted(WORKLOADS))}).",
    )
    parser.add_argument(
        "--arrivals",
        default="poisson",
        metavar="PROCESS",
        help="How tasks arrive (ClusterConfig.arrivals): 'poisson' (default), 'philly' (a real "
        "cluster's bursty, diurnal submissions replayed at the same mean load), or the path of "
        "a .csv of submission times (a 'timestamp' column).",
    )
    parser.add_argument(
        "--own-families",
        nargs="+",
        default=[],
        type=family_and_alpha,
        metavar="NAME=ALPHA",
        help="Families of your own in --traces, each with its parallel-scaling exponent "
        "(e.g. speech=0.8): the simulator uses it, schedulers see the family as 'other'; each "
        "is also a workload of that family alone.",
    )
    parser.add_argument(
        "--traces",
        type=Path,
        default=None,
        metavar="FILE",
        help="Your own curves instead of the shipped ones: a curve table (.csv, see "
        "mara_env.curves.curve_tables) or a trace file (.npz, from python -m mara_env.benchmarks.collect pack "
        "--from). Its test runs are played; the results name the file and its SHA-256.",
    )
    parser.add_argument(
        "--durations",
        choices=CURVE_DURATIONS,
        default="stretched",
        help="How long a node takes to train a whole curve (ClusterConfig.curve_durations): "
        "'stretched' (default: every curve in U(epochs_per_curve) epochs) or 'recorded' (each "
        "curve's recorded work sets it, relative to its family's median run; the curves need "
        "a work axis, e.g. a work column in --traces).",
    )
    parser.add_argument(
        "--hopeless-curves",
        type=float,
        default=None,
        metavar="SHARE",
        help="Cluster-v2 and later: a hopeless task runs a curve drawn among this share of its "
        "family's curves that never reach its target, nearest first "
        "(ClusterConfig.hopeless_curve_share; 1: all of them; 0.1: the nearest tenth, which "
        "stall just short of the target; default: the world's own, 1 on Cluster-v2 and 0.1 on "
        "Cluster-v3).",
    )
    parser.add_argument(
        "--loads",
        nargs="+",
        type=positive_float,
        default=list(DEFAULT_LOAD_FACTORS),
        metavar="FACTOR",
        help=f"Loads as multiples of the training load {TRAINING_LOAD} (default: "
        f"{' '.join(f'{f:g}' for f in DEFAULT_LOAD_FACTORS)}).",
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        default=None,
        metavar="SEEDS",
        help="Evaluation seeds per agent, workload and load: a count N (seeds "
        f"{EVALUATION_SEED_BASE}..{EVALUATION_SEED_BASE}+N-1), a range such as "
        f"{EVALUATION_SEED_BASE}-{EVALUATION_SEED_BASE + 9}, or consecutive seeds such as "
        f"{EVALUATION_SEED_BASE + 5} {EVALUATION_SEED_BASE + 6} (default {DEFAULT_SEEDS}; "
        f"{QUICK_SEEDS} with --quick).",
    )
    parser.add_argument(
        "--config",
        default="evaluation",
        help="Config preset the grid varies (default: 'evaluation', held-out test curves).",
    )
    add_world_version(
        parser, note="1 replays Cluster-v1 with the settings and checkpoints shipped for it."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"A fast look: {QUICK_SEEDS} seeds, arrivals during {QUICK_ARRIVAL_HORIZON} epochs.",
    )
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="'local' (default): worker processes on this machine; 'ray': Ray tasks on a "
        "cluster (--ray-address) or a local Ray instance. Same numbers either way.",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=available_cores(),
        help="Local worker processes, or CPUs of a local Ray instance (default: the available "
        "cores; 1 runs in this process).",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="Connect to an existing Ray cluster ('auto' on a cluster node, "
        "'ray://head:10001' from outside); default: start a local instance.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"Results directory (default: ./{DEFAULT_OUTPUT}): {JOURNAL} (every finished "
        "episode, appended as it ends; a re-run resumes from it), episodes.csv/.json, "
        "leaderboard.md/.json and the plots.",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help=f"Start afresh; the old {JOURNAL} is kept as a timestamped backup.",
    )
    parser.add_argument(
        "--reference",
        default=None,
        metavar="AGENT",
        help="Agent that the probability of improvement compares with (default "
        f"{REFERENCE_AGENT}, when it runs).",
    )
    parser.add_argument(
        "--resamples",
        type=positive_int,
        default=5000,
        help="Bootstrap resamples for the confidence intervals (default 5000).",
    )
    parser.add_argument("--no-plots", action="store_true", help="Skip the figures.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    parser.add_argument(
        "--validate",
        type=Path,
        default=None,
        metavar="DIR",
        help="Check the results in DIR instead of running: every line's integrity hash, every "
        f"table recomputed from {JOURNAL}, the recorded code fingerprints against the "
        "installed code, and a replay from scratch of a sample of episodes (--sample): counts "
        "compared exactly, float metrics within a few ulps (another CPU or NumPy version may "
        "round the last bits otherwise). Prints what differs; exits 1 on any difference, 3 if "
        "an agent cannot be imported here and nothing else differs.",
    )
    parser.add_argument(
        "--sample",
        type=parse_sample,
        default=DEFAULT_SAMPLE,
        metavar="N|all",
        help="With --validate: how many episodes to replay, at random ('all': every one; "
        "default: one per agent, workload and load).",
    )
    parser.add_argument(
        "--sample-seed",
        type=int,
        default=None,
        metavar="SEED",
        help="With --validate: seed of the sample (default: a fresh one, printed).",
    )
    return parser
