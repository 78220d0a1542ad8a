"""Where each scheduler's work goes: node-epochs on tasks that could never finish, on tasks that
could but expired, and on tasks that finished.

A task **could never finish** when no number of nodes it may get (1 to the config's
``task_node_limit``), held from its arrival, makes it report a loss at or below its target by its
deadline, by the simulator's exact stepping (:func:`mara_env.sim.rules.epochs_to_target`;
privileged: read from its hidden curve). Every node count is tried because a loss is read where
each epoch lands on the curve: fewer nodes can land on a dip below the target that more nodes
step over. Every
node that chose a task's slot in an epoch counts as one busy node-epoch on that task. Per agent,
over the same episodes: the share of its busy node-epochs on each kind of task, and the share of
the tasks that could finish that did.

Run::

    python -m mara_env.benchmarks.prediction.work_split             # Cluster-v3, load 1.4
    python -m mara_env.benchmarks.prediction.work_split --agents edf reach_planner --seeds 2
    python -m mara_env.benchmarks.prediction.work_split --agents edf mara \\
        benchmarks/results/v3/mara/value_oracle.pt      # a MARA checkpoint, named by its stem

Example:
    >>> from mara_env import get_config
    >>> split = episode_split("edf", get_config("training", arrival_horizon=20), 0)
    >>> sorted(split)
    ['busy', 'completed', 'could_finish', 'could_finish_completed', 'on_expired_could_finish', 'on_never']
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from mara_env import TRAINING_LOAD, ClusterConfig, get_config, node_turns, raw_env
from mara_env.agents import Scheduler, make_agent, start_episode
from mara_env.agents.mara.agent import Mara
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import add_world_version, positive_int
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.statistics import episode_bootstrap
from mara_env.benchmarks.common.threads import one_torch_thread_if_loaded
from mara_env.benchmarks.common.world_results import world_results
from mara_env.sim.rules import effective_share, epochs_to_target
from mara_env.sim.simulator import ClusterSimulator
from mara_env.sim.task_fields import COMPLETED

#: The agents measured by default.
AGENTS = ("edf", "mara", "reach_planner", "clairvoyant")
#: The statistics of the page, as (name, numerator, denominator) of summed episode counts.
SHARES = (
    ("busy node-epochs on tasks that could never finish", "on_never", "busy"),
    ("busy node-epochs on tasks that could finish but expired", "on_expired_could_finish", "busy"),
    ("completion among the tasks that could finish", "could_finish_completed", "could_finish"),
)
RESAMPLES = 1000


def could_finish(simulator: ClusterSimulator) -> np.ndarray:
    """**Privileged**: per task of the episode, whether some number of nodes it may get, held
    from its arrival, brings it to its target by its deadline."""
    config, tasks, workload = simulator.config, simulator.state.tasks, simulator.workload
    nodes = np.arange(1, config.task_node_limit + 1)
    first = effective_share(nodes, 0, config.switch_cost)
    return np.array(
        [
            epochs_to_target(
                workload.curves[tasks.curve_row[task]],
                0.0,
                float(tasks.target[task]),
                float(tasks.speed[task]),
                float(tasks.alpha[task]),
                first,
                nodes,
                int(tasks.deadline[task] - tasks.arrival[task]),
            ).min()
            <= tasks.deadline[task] - tasks.arrival[task]
            for task in range(len(tasks.target))
        ],
        dtype=bool,
    )


def build(agent: str, config: ClusterConfig) -> Scheduler:
    """The scheduler ``agent`` names: a MARA checkpoint (a ``.pt`` path), else a registered
    agent with the artifacts shipped for ``config``'s world."""
    if agent.endswith(".pt"):
        return Mara.load(agent)
    return make_agent(agent, world_version=config.world_version)


def label(agent: str) -> str:
    """The name an agent's rows carry: a checkpoint's file stem, else its registered name."""
    return Path(agent).stem if agent.endswith(".pt") else agent


def episode_split(agent: str, config: ClusterConfig, seed: int) -> dict[str, float]:
    """One episode of ``agent`` (:func:`build`): its busy node-epochs in all and on each kind
    of task, and the tasks that could finish and did."""
    env = raw_env(config)
    env.reset(seed=seed)
    scheduler = build(agent, config)
    start_episode(scheduler, env, seed)
    simulator = env.simulator
    possible = could_finish(simulator)
    busy = np.zeros(len(possible))
    for name, node in node_turns(env):
        action = scheduler.act(env.observe(name), node)
        if action < config.n_slots:
            busy[int(simulator.state.slots[action])] += 1
        env.step(action)
    completed = simulator.state.status == COMPLETED
    return {
        "busy": float(busy.sum()),
        "on_never": float(busy[~possible].sum()),
        "on_expired_could_finish": float(busy[possible & ~completed].sum()),
        "could_finish": float(possible.sum()),
        "could_finish_completed": float((possible & completed).sum()),
        "completed": float(completed.sum()),
    }


def measure(
    agents: Sequence[str], configs: Sequence[ClusterConfig], seeds: Sequence[int], progress: bool
) -> dict[str, list[dict[str, Any]]]:
    """Every agent's episodes, one per config and seed (the same episodes for every agent)."""
    episodes: dict[str, list[dict[str, Any]]] = {}
    with one_torch_thread_if_loaded():
        for agent in agents:
            grid = [(index, config, seed) for index, config in enumerate(configs) for seed in seeds]
            episodes[label(agent)] = [
                {"seed": f"{index}/{seed}", **episode_split(agent, config, seed)}
                for index, config, seed in tqdm(grid, desc=label(agent), disable=not progress)
            ]
    return episodes


def shares(episodes: Sequence[dict[str, Any]], picked: np.ndarray) -> dict[str, float]:
    """Each statistic of :data:`SHARES` over the episodes ``picked`` (ratios of sums)."""
    return {
        name: sum(episodes[i][top] for i in picked)
        / max(sum(episodes[i][bottom] for i in picked), 1.0)
        for name, top, bottom in SHARES
    }


def never_ratios(episodes: dict[str, list[dict[str, Any]]], picked: np.ndarray) -> dict[str, float]:
    """Each agent's node-epochs on tasks that could never finish over EDF's, on the episodes
    ``picked`` (the same episodes for every agent)."""
    base = max(sum(episodes["edf"][i]["on_never"] for i in picked), 1.0)
    return {
        agent: sum(rows[i]["on_never"] for i in picked) / base
        for agent, rows in episodes.items()
        if agent != "edf"
    }


def markdown(episodes: dict[str, list[dict[str, Any]]], header: str) -> str:
    """The page: a table of each agent's shares with 95% intervals over episodes, and each
    agent's node-epochs on tasks that could never finish relative to EDF's (with ``edf``)."""
    rng = np.random.default_rng(0)
    table = {
        agent: episode_bootstrap(rows, partial(shares, rows), RESAMPLES, rng)
        for agent, rows in episodes.items()
    }
    lines = [
        header,
        "",
        "| agent | " + " | ".join(name for name, _, _ in SHARES) + " |",
        "|---|" + "---|" * len(SHARES),
    ]
    for agent, values in table.items():
        cells = [
            f"{values[name][0]:.3f} [{values[name][1]:.3f}, {values[name][2]:.3f}]"
            for name, _, _ in SHARES
        ]
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    if "edf" in table:
        ratios = episode_bootstrap(
            episodes["edf"], lambda p: never_ratios(episodes, p), RESAMPLES, rng
        )
        lines += [
            "",
            "Node-epochs on tasks that could never finish, as a share of EDF's on the same "
            "episodes (95% intervals over resampled episodes):",
            "",
            *(
                f"- `{agent}`: {v:.2f} [{low:.2f}, {high:.2f}] times EDF's"
                for agent, (v, low, high) in ratios.items()
            ),
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.work_split",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(AGENTS),
        help=f"Registered agents or MARA checkpoints (.pt) (default: {' '.join(AGENTS)}).",
    )
    add_world_version(parser, note="Registered agents use the artifacts shipped for it.")
    parser.add_argument(
        "--load",
        type=float,
        default=TRAINING_LOAD,
        help=f"The arrival load (default {TRAINING_LOAD}, the training load).",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=10,
        help="Evaluation seeds per workload (default 10, from 1000).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="The page (default: benchmarks/results/v<N>/reach/work_split.md).",
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bars.")
    arguments = parser.parse_args(argv)
    version = arguments.world_version
    configs = [
        get_config("evaluation", workload=w, load=arguments.load, world_version=version)
        for w in EVALUATION_WORKLOADS
    ]
    seeds = evaluation_seeds(arguments.seeds)
    started = time.perf_counter()
    episodes = measure(arguments.agents, configs, seeds, not arguments.no_progress)
    command = " ".join(
        [
            "python -m mara_env.benchmarks.prediction.work_split",
            *(argv if argv is not None else sys.argv[1:]),
        ]
    )
    header = (
        f"# Where the work goes, Cluster-v{version}\n\n"
        f"Written by `{command.strip()}` in {time.perf_counter() - started:.0f} s at commit {git_revision()} on "
        f"{platform_line()}. The `evaluation` preset at load {arguments.load}, workloads "
        f"{', '.join(EVALUATION_WORKLOADS)}, seeds {seeds[0]}-{seeds[-1]} ({len(seeds) * len(configs)} episodes, the "
        "same for every agent). A task could never finish when no number of nodes it may get, held from its arrival, "
        "brings it to its target by its deadline (the simulator's exact stepping; privileged). Brackets: 95% intervals over "
        "resampled episodes (ratios of sums)."
    )
    output = arguments.output or world_results(version) / "reach" / "work_split.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(output, markdown(episodes, header))
    print(output.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
