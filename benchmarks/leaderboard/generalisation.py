"""The generalisation track: the shipped schedulers on clusters and workloads none was tuned on.

MARA was trained, and the baselines tuned, on 8 nodes, 16 slots, the ``in_distribution``
workload and the training load. This track plays them zero-shot on :data:`VARIANTS` of the
``evaluation`` preset (held-out test curves, evaluation seeds): fewer and more nodes, more
slots, the ``synthetic`` family none of them saw, and heavier loads, beside the setting they
were made for. Each variant reports every agent's mean completion rate and MARA's paired
difference from each other agent (the same episodes), with 95% bootstrap intervals over seeds.

Episodes are appended to ``episodes.csv`` as they finish, keyed by what produced them
(:mod:`mara_env.benchmarks.common.keys`: the agent's code and weights with the leaderboard's shared
code), so a second run resumes and a changed agent plays again. ``README.md`` is written from
the rows of the current keys.

Run::

    python -m mara_env.benchmarks.leaderboard.generalisation              # 7 variants x 5 agents x 20 seeds
    python -m mara_env.benchmarks.leaderboard.generalisation --quick      # a smoke run

Example:
    >>> list(VARIANTS)[:2]
    ['as trained: 8 nodes, 16 slots', '4 nodes, 8 slots']
    >>> variant_config("4 nodes, 8 slots").n_nodes
    4
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mara_env import ClusterConfig, get_config
from mara_env.agents import known_agents
from mara_env.agents.statistics import mean_ci
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import add_world_version, positive_int
from mara_env.benchmarks.common.keys import Manifest, build_agent
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env.benchmarks.leaderboard.backends import run_cells
from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
from mara_env.benchmarks.leaderboard.grid import QUICK_ARRIVAL_HORIZON, Cell
from mara_env.worlds.config import LATEST_WORLD_VERSION, env_id

#: The schedulers the track plays: MARA and the baselines it is compared with.
AGENTS = ("mara", "lara", "laira", "edf", "clairvoyant")
#: The agent whose paired differences the track reports.
FOCUS = "mara"
#: Variant label -> fields that change in the ``evaluation`` preset.
VARIANTS: Mapping[str, Mapping[str, Any]] = {
    "as trained: 8 nodes, 16 slots": {},
    "4 nodes, 8 slots": {"n_nodes": 4, "n_slots": 8},
    "16 nodes, 16 slots": {"n_nodes": 16},
    "16 nodes, 32 slots": {"n_nodes": 16, "n_slots": 32},
    "8 nodes, 32 slots": {"n_slots": 32},
    "synthetic family": {"workload": "synthetic"},
    "1.5x load": {"load_factor": 1.5},
    "2x load": {"load_factor": 2.0},
}
DEFAULT_SEEDS = 20
DEFAULT_OUTPUT = Path("benchmarks/results/v3/generalisation")
#: Columns of ``episodes.csv``; a row is keyed by the first four.
SCHEMA: dict[str, type] = {
    "agent": str,
    "variant": str,
    "seed": int,
    "code": str,
    "completion_rate": float,
    "completed": int,
    "arrived": int,
}
KEY = ("agent", "variant", "seed", "code")
#: The manifest item naming the world an episode was played in.
WORLD = "world version"


def variant_config(
    variant: str, *, quick: bool = False, world_version: int = LATEST_WORLD_VERSION
) -> ClusterConfig:
    """The ``evaluation`` preset of ``world_version`` changed as :data:`VARIANTS` says
    (arrivals over :data:`~mara_env.benchmarks.leaderboard.grid.QUICK_ARRIVAL_HORIZON` epochs with
    ``quick``).

    Raises:
        KeyError: For a variant that is not in :data:`VARIANTS`.
    """
    fields = dict(VARIANTS[variant])
    load_factor = fields.pop("load_factor", 1.0)
    base = get_config(
        "evaluation", workload=fields.pop("workload", None), world_version=world_version
    )
    config = base.replace(load=base.load * load_factor, **fields)
    return config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON) if quick else config


def agent_manifests(
    agents: Sequence[str], world_version: int = LATEST_WORLD_VERSION
) -> dict[str, Manifest]:
    """Each agent's key manifest in ``world_version``: its code and weights (those shipped for
    that world) with the leaderboard's shared code and the world."""
    shared = {**shared_manifest().items, WORLD: str(world_version)}
    return {
        agent: Manifest({**build_agent(agent, world_version).manifest.items, **shared})
        for agent in agents
    }


def open_episodes(path: Path) -> ResultsStore:
    """``episodes.csv`` (rows appended as episodes finish, a file with other columns refused)."""
    return ResultsStore(path, SCHEMA, key=KEY, advice="Pass another --output.")


def run(
    agents: Sequence[str],
    seeds: Sequence[int],
    output: Path,
    *,
    quick: bool,
    workers: int,
    progress: bool,
    world_version: int = LATEST_WORLD_VERSION,
) -> tuple[ResultsStore, dict[str, Manifest]]:
    """Play every (variant, agent, seed) episode of ``world_version`` that
    ``output/episodes.csv`` lacks."""
    store = open_episodes(output / "episodes.csv")
    manifests = agent_manifests(agents, world_version)
    for manifest in manifests.values():
        store.record_manifest(manifest)
    done = store.done()
    configs = {
        variant: variant_config(variant, quick=quick, world_version=world_version)
        for variant in VARIANTS
    }
    cells = [
        Cell(agent, seed, configs[variant], variant)
        for variant in VARIANTS
        for agent in agents
        for seed in seeds
        if (agent, variant, seed, manifests[agent].digest) not in done
    ]

    def keep(rows: list[dict[str, Any]]) -> None:
        store.extend(
            {
                "agent": row["agent"],
                "variant": row["config"],
                "seed": row["seed"],
                "code": manifests[row["agent"]].digest,
                "completion_rate": row["completion_rate"],
                "completed": int(row["completed"]),
                "arrived": int(row["arrived"]),
            }
            for row in rows
        )

    run_cells(cells, workers=workers, on_rows=keep, progress=progress, description="generalisation")
    return store, manifests


def markdown(
    store: ResultsStore,
    manifests: Mapping[str, Manifest],
    seeds: Sequence[int],
    note: str,
    world_version: int = LATEST_WORLD_VERSION,
) -> str:
    """The results page, from the rows of the current keys."""
    agents = list(manifests)
    rates: dict[tuple[str, str], dict[int, float]] = {}
    for row in store.rows:
        if row["agent"] in manifests and row["code"] == manifests[row["agent"]].digest:
            rates.setdefault((row["agent"], row["variant"]), {})[row["seed"]] = row[
                "completion_rate"
            ]
    others = [agent for agent in agents if agent != FOCUS]
    lines = [
        "# Generalisation track",
        "",
        "The shipped schedulers played zero-shot on clusters and workloads none was trained or "
        "tuned on (`evaluation` preset: held-out test curves; evaluation seeds "
        f"{seeds[0]}-{seeds[-1]}). Written by `python -m mara_env.benchmarks.leaderboard.generalisation` "
        "from `episodes.csv`. Completion rate, mean [95% bootstrap interval over seeds]; "
        f"{FOCUS} minus each other agent on the same episodes. The world is "
        f"`{env_id(world_version)}`; what "
        "its observation gives away of a task's effort is measured by `python -m "
        f"mara_env.benchmarks.prediction.leak_audit` (`benchmarks/results/leak_audit/`). {note}",
        "",
        "| variant | "
        + " | ".join(agents)
        + " | "
        + " | ".join(f"{FOCUS} - {other}" for other in others)
        + " |",
        "|---|" + "---|" * (len(agents) + len(others)),
    ]
    for variant in VARIANTS:
        cells = []
        for agent in agents:
            found = rates.get((agent, variant), {})
            # in seed order: the interval must not depend on the order rows were written in
            complete = len(found) == len(seeds)
            cells.append(mean_ci([found[seed] for seed in seeds]).bracketed() if complete else "-")
        focus = rates.get((FOCUS, variant), {})
        for other in others:
            theirs = rates.get((other, variant), {})
            if len(focus) == len(theirs) == len(seeds):
                paired = [focus[seed] - theirs[seed] for seed in seeds]
                cells.append(mean_ci(paired).bracketed("+.3f"))
            else:
                cells.append("-")
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.leaderboard.generalisation",
        description="Play the shipped schedulers zero-shot on other clusters, workloads and loads.",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=DEFAULT_SEEDS,
        help=f"Evaluation seeds per agent and variant, from 1000 (default {DEFAULT_SEEDS}).",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(AGENTS),
        help=f"Registered agents (default: {' '.join(AGENTS)}); {FOCUS} first if given.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"Where episodes.csv and README.md go (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=available_cores(),
        help="Worker processes (default: the available cores).",
    )
    add_world_version(
        parser,
        note="1 replays Cluster-v1 with the settings and checkpoints shipped for it (give it "
        "its own --output).",
    )
    parser.add_argument(
        "--quick", action="store_true", help="A smoke run: 2 seeds, arrivals over 30 epochs."
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the track and write its page; returns 0."""
    parser = build_parser()
    args = parser.parse_args(argv)
    unknown = [agent for agent in args.agents if agent not in known_agents()]
    if unknown or FOCUS not in args.agents:
        parser.error(
            f"--agents must be registered agents including {FOCUS!r} "
            f"({', '.join(known_agents())}); unknown: {unknown}."
        )
    seeds = evaluation_seeds(2 if args.quick else args.seeds)
    start = time.perf_counter()
    try:
        store, manifests = run(
            args.agents,
            seeds,
            args.output,
            quick=args.quick,
            workers=args.workers,
            progress=not args.no_progress,
            world_version=args.world_version,
        )
    except ResultsFileError as error:
        parser.error(str(error))
    note = (
        f"Run in {time.perf_counter() - start:.0f} s at commit {git_revision()} on "
        f"{platform_line()}."
    )
    page = markdown(store, manifests, seeds, note, args.world_version)
    write_atomically(args.output / "README.md", page)
    print(page)
    print(f"Wrote {args.output / 'episodes.csv'} and {args.output / 'README.md'}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
