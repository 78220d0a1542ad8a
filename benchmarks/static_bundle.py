"""A LaiRA-style static bundle: ten tasks arriving at once on one node.

LaiRA's headline experiment (PAPERS.md §3) schedules a bundle of 10 mixed tasks that all start
together on one unit of compute and counts how many reach their target by their deadlines. This
script builds that setting from the shipped curves and runs the shipped schedulers on it:

* **bundle**: ``N_TASKS`` tasks at epoch 0, families as even as possible over tabular, vision
  and rl (shuffled), each on a curve drawn uniformly from its family's **test** split; speed,
  target and deadline drawn as the workload draws them (``ClusterConfig.epochs_per_curve``,
  ``target_fraction``, ``slack_range``; deadline = ceil(slack * demand) at one node). Every
  target is reachable, as in LaiRA's bundle; the deadlines make it impossible to reach them
  all on one node;
* **cluster**: one node, a slot for every task, the default switch cost;
* **agents**: those of :data:`BUNDLE_AGENTS` that are registered (a missing one is skipped
  with a note); seeds ``0 .. N-1`` (``--seeds``), one bundle each, the same bundle for every
  agent.

Each finished seed's rows (one per agent) are appended to ``DIR/bundle.csv`` in one write and
flushed, so an interrupted run loses at most the seed in progress; running again skips the
(agent, seed) pairs already there (``--no-resume`` starts afresh). The summary is a Markdown
table of tasks completed (mean and 95% bootstrap interval, :func:`agents.statistics.mean_ci`).

Usage::

    python -m benchmarks.static_bundle                 # seeds 0-9, results/static_bundle/
    python -m benchmarks.static_bundle --quick --output /tmp/bundle

Example:
    >>> from benchmarks.static_bundle import draw_bundle, bundle_config
    >>> import numpy as np
    >>> from mara_env import default_trace_source
    >>> from mara_env.workload import build_workload
    >>> workload = build_workload(bundle_config(), default_trace_source())
    >>> tasks = draw_bundle(workload, np.random.default_rng(0))
    >>> len(tasks), int(tasks.arrival.max())
    (10, 0)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from agents import Scheduler, known_agents, make_agent, mean_ci, start_episode
from benchmarks.arguments import positive_int
from mara_env import ClusterConfig, TraceSource, default_trace_source, node_turns, raw_env
from mara_env.families import FAMILY_NAMES
from mara_env.workload import TaskTable, Workload, build_workload
from mara_env.workloads import WORKLOADS

#: Tasks in a bundle (LaiRA's mixed bundle has 10).
N_TASKS = 10
#: The schedulers LaiRA compares, by their names in :data:`agents.AGENTS`.
BUNDLE_AGENTS = ("laira", "lara", "uniform", "round_robin", "edf", "successive_halving")
DEFAULT_SEEDS = 10
QUICK_SEEDS = 2
DEFAULT_OUTPUT = Path("results/static_bundle")
#: Draws per task before giving up on finding a curve with a reachable target.
_MAX_DRAWS = 1000
#: Columns of ``bundle.csv``, in order.
COLUMNS = (
    "setup",
    "agent",
    "seed",
    "completed",
    "arrived",
    "completion_rate",
    "switches",
    "utilisation",
    "epochs",
    "illegal_actions",
)


def bundle_config() -> ClusterConfig:
    """One node, a slot per task, the in-distribution families on the test split."""
    return ClusterConfig(
        n_nodes=1,
        n_slots=N_TASKS,
        arrival_horizon=1,
        family_weights=WORKLOADS["in_distribution"],
        split="test",
        infeasible_share=0.0,
    )


def setup_fingerprint(config: ClusterConfig, source: TraceSource) -> str:
    """Identifies the bundle definition, so rows of a different one are never reused."""
    text = f"{N_TASKS}|{config!r}|{source.fingerprint}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def draw_bundle(workload: Workload, rng: np.random.Generator) -> TaskTable:
    """``N_TASKS`` tasks arriving at epoch 0 (see the module docstring for how they are drawn).

    A task's target is the loss its curve reports at a point drawn from ``target_fraction`` of
    its length; draws whose loss there is not below 99% of the initial loss (a flat or rising
    curve) are redrawn, curve included, so that every target is reachable.

    Args:
        workload: A workload of :func:`bundle_config` (its families and split).
        rng: The only source of randomness.
    """
    config = workload.config
    family_slot = rng.permutation(np.arange(N_TASKS) % len(config.families))
    curve_row = np.zeros(N_TASKS, dtype=np.int64)
    target = np.zeros(N_TASKS)
    steps = np.zeros(N_TASKS)
    for task, slot in enumerate(family_slot.tolist()):
        for _ in range(_MAX_DRAWS):
            row = int(rng.choice(workload.rows_by_family[slot]))
            length = int(workload.lengths[row])
            curve = workload.curves[row, :length]
            fraction = rng.uniform(*config.target_fraction)
            position = min(max(int(fraction * length), 1), length - 1)
            if curve[position] <= 0.99 * curve[0]:
                break
        else:
            raise ValueError(
                f"draw_bundle: no curve of family {config.families[slot]!r} drops below 99% of "
                f"its initial loss in {_MAX_DRAWS} draws; check the trace source."
            )
        curve_row[task] = row
        target[task] = curve[position]
        steps[task] = np.flatnonzero(curve[1:] <= curve[position])[0] + 1
    speed = workload.lengths[curve_row] / rng.uniform(*config.epochs_per_curve, size=N_TASKS)
    demand = steps / speed
    slack = rng.uniform(*config.slack_range, size=N_TASKS)
    deadline = np.maximum(1, np.ceil(slack * demand)).astype(np.int64)
    family_names = [config.families[slot] for slot in family_slot.tolist()]
    return TaskTable(
        family=np.array([FAMILY_NAMES.index(name) for name in family_names], dtype=np.int64),
        curve_row=curve_row,
        arrival=np.zeros(N_TASKS, dtype=np.int64),
        deadline=np.minimum(deadline, config.max_epochs),
        target=target,
        speed=speed,
        alpha=np.array([config.alpha_for(name) for name in family_names]),
        initial_loss=workload.curves[curve_row, 0].copy(),
        demand=demand,
    )


def play(
    scheduler: Scheduler,
    tasks: TaskTable,
    config: ClusterConfig,
    seed: int,
    *,
    trace_source: TraceSource | None = None,
) -> dict[str, float]:
    """Run ``scheduler`` for one episode on the given ``tasks``; returns the episode metrics.

    The scheduler acts on observations only, like :func:`agents.evaluate` drives it (a
    :class:`agents.PrivilegedScheduler` is bound to the environment); it is started with
    :func:`agents.start_episode`.
    """
    env = raw_env(config, trace_source=trace_source)
    env.reset(seed=seed)
    env.simulator.reset(np.random.default_rng(seed), tasks=tasks)
    env.builder.refresh()
    start_episode(scheduler, env, seed)
    for agent, node in node_turns(env):
        env.step(scheduler.act(env.observe(agent), node))
    return env.episode_metrics()


class BundleLog:
    """``bundle.csv``: rows of finished seeds, appended one seed at a time.

    Args:
        path: The CSV file.
        setup: Fingerprint of the bundle definition; rows of other setups are kept in the file
            but never reused.
        resume: Keep the rows already in the file; otherwise start it afresh.
    """

    def __init__(self, path: Path, setup: str, *, resume: bool) -> None:
        self.path = path
        self.setup = setup
        self.rows: list[dict[str, Any]] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume and path.exists():
            self._read()
        else:
            path.write_text(",".join(COLUMNS) + "\n")

    def _read(self) -> None:
        text = self.path.read_text()
        complete = text[: text.rfind("\n") + 1]  # a line cut by an interruption is dropped
        if complete != text:
            self.path.write_text(complete)
        reader = csv.DictReader(io.StringIO(complete))
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(
                f"{self.path} does not have the columns {list(COLUMNS)}; it was not written by "
                "this script. Use another --output directory or --no-resume."
            )
        for row in reader:
            if row["setup"] != self.setup:
                continue
            try:
                parsed: dict[str, Any] = {key: float(row[key]) for key in COLUMNS[3:]}
                parsed.update(setup=row["setup"], agent=row["agent"], seed=int(row["seed"]))
            except (TypeError, ValueError) as error:
                raise ValueError(
                    f"{self.path} has a malformed row {row} ({error}); delete it or use "
                    "--no-resume."
                ) from error
            self.rows.append(parsed)

    def done(self) -> set[tuple[str, int]]:
        """(agent, seed) pairs already in the file for this setup."""
        return {(row["agent"], row["seed"]) for row in self.rows}

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` in one write and flush them to disk."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writerows(rows)
        with self.path.open("a") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        self.rows.extend(rows)


def markdown_table(rows: Sequence[dict[str, Any]], agents: Sequence[str]) -> str:
    """Tasks completed per bundle and completion rate per agent, best first."""
    lines = [
        "| agent | seeds | completed of 10 (95% CI) | completion rate | switches |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    summaries = []
    for agent in agents:
        mine = [row for row in rows if row["agent"] == agent]
        if mine:
            completed = mean_ci(row["completed"] for row in mine)
            rate = float(np.mean([row["completion_rate"] for row in mine]))
            switches = float(np.mean([row["switches"] for row in mine]))
            summaries.append((agent, len(mine), completed, rate, switches))
    summaries.sort(key=lambda item: -item[2].mean)
    for agent, seeds, completed, rate, switches in summaries:
        lines.append(
            f"| {agent} | {seeds} | {completed.mean:.2f} [{completed.low:.2f}, "
            f"{completed.high:.2f}] | {rate:.3f} | {switches:.1f} |"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.static_bundle",
        description="LaiRA-style static bundle: 10 mixed tasks at once on one node.",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help=f"Bundles (seeds 0..N-1; default {DEFAULT_SEEDS}, {QUICK_SEEDS} with --quick).",
    )
    parser.add_argument("--quick", action="store_true", help=f"Only {QUICK_SEEDS} seeds.")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(BUNDLE_AGENTS),
        metavar="AGENT",
        help=f"Agents to run (default: {' '.join(BUNDLE_AGENTS)}; unregistered ones skipped).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"Where bundle.csv goes (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument("--no-resume", action="store_true", help="Start DIR/bundle.csv afresh.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bundle benchmark; returns the process exit code."""
    args = build_parser().parse_args(argv)
    registered = set(known_agents())
    agents = [agent for agent in dict.fromkeys(args.agents) if agent in registered]
    for agent in dict.fromkeys(args.agents):
        if agent not in registered:
            print(f"note: agent {agent!r} is not registered; skipped.", file=sys.stderr)
    if not agents:
        print("No registered agent to run.", file=sys.stderr)
        return 2
    n_seeds = args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    config = bundle_config()
    source = default_trace_source()
    workload = build_workload(config, source)
    setup = setup_fingerprint(config, source)
    try:
        log = BundleLog(args.output / "bundle.csv", setup, resume=not args.no_resume)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    done = log.done()
    start = time.perf_counter()
    ran = 0
    for seed in tqdm(range(n_seeds), desc="bundles", disable=args.no_progress):
        todo = [agent for agent in agents if (agent, seed) not in done]
        if not todo:
            continue
        tasks = draw_bundle(workload, np.random.default_rng(seed))
        rows = []
        for agent in todo:
            metrics = play(make_agent(agent), tasks, config, seed, trace_source=source)
            rows.append({"setup": setup, "agent": agent, "seed": seed, **metrics})
            ran += 1
        log.append(rows)
    wanted = [row for row in log.rows if row["seed"] < n_seeds and row["agent"] in agents]
    print(markdown_table(wanted, agents))
    print(
        f"\n{N_TASKS} tasks at once on 1 node, test-split curves, seeds 0..{n_seeds - 1}: "
        f"{ran} episode(s) run in {time.perf_counter() - start:.1f} s; rows in {log.path}."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
