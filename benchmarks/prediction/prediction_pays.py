"""When does loss prediction pay? The same schedulers, with and without predictions, on every
world of the information ladder.

The ladder (:mod:`mara_env.benchmarks.prediction.ladder`) says how well anything could know which
tasks can still finish, world by world; this measures what that knowledge is worth to a
scheduler there. On each world of :data:`~mara_env.benchmarks.prediction.audit_worlds.WORLDS`
(v1, whose deadlines leak the true demand; v2 and v3, whose deadlines hide it; v3-smoothed,
Cluster-v3 with curves judged on their trend) every variant plays the same episodes:

- ``edf``: earliest deadline first, no prediction;
- ``lara`` and ``lara_oracle``: LARA with its own predictor, and fed the exact remaining work;
- ``reach_planner``: EDF over the tasks the world's reach model gives a chance (observation only);
- ``mara``: the world's shipped MARA policy and its features; ``mara + no predictions`` and
  ``mara + oracle``: the same policy with constant prediction features, or those of the exact
  remaining work, swapped in at test time (:mod:`~mara_env.benchmarks.prediction.feature_swaps`);
- ``clairvoyant``: the reference that knows every curve.

A world option without shipped models of its own (v3-smoothed) plays its registered world's
models zero-shot; the page says so. Rows are kept the moment each episode ends, keyed by the
code, the shipped models and the grid that made them (:mod:`mara_env.benchmarks.common.store`),
so an interrupted run resumes where it stopped. The page
(:mod:`~mara_env.benchmarks.prediction.prediction_pays_report`) sets each world's ladder beside
the paired differences.

Run::

    python -m mara_env.benchmarks.prediction.prediction_pays            # 2,880 episodes, ~10 min
    python -m mara_env.benchmarks.prediction.prediction_pays --quick    # a smoke run

Example:
    >>> row = play(("v3-smoothed", "edf", "rl", 1.4, 1000), arrival_horizon=10)
    >>> row["world"], row["arrived"] > 0
    ('v3-smoothed', True)
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from mara_env.agents import Scheduler, evaluate, make_agent
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.features import FeatureBuilder, NoPredictions
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.keys import build_agent, code_manifest
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.provenance import checkpoint_hashes, git_revision
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.store import ResultsStore
from mara_env.benchmarks.common.threads import one_torch_thread
from mara_env.benchmarks.prediction.audit_worlds import WORLDS
from mara_env.predictors.base import Predictor
from mara_env.predictors.oracle import Oracle

MODULE = "mara_env.benchmarks.prediction.prediction_pays"
DEFAULT_OUTPUT = Path("benchmarks/results/prediction_pays")
LOADS = (1.4, 2.1, 2.8)
#: MARA's policy with its prediction features swapped at test time: name -> the predictor.
MARA_SWAPS: dict[str, Callable[[], Predictor]] = {
    "mara + no predictions": NoPredictions,
    "mara + oracle": Oracle,
}
#: Every variant, in the page's order.
VARIANTS = (
    "edf",
    "lara",
    "lara_oracle",
    "reach_planner",
    "mara",
    *MARA_SWAPS,
    "clairvoyant",
)
COLUMNS: dict[str, type] = {
    "world": str,
    "variant": str,
    "workload": str,
    "load": float,
    "seed": int,
    "code": str,
    "completion_rate": float,
    "completed": int,
    "arrived": int,
}
KEY = ("world", "variant", "workload", "load", "seed", "code")

Cell = tuple[str, str, str, float, int]


def build(variant: str, world_version: int) -> Scheduler:
    """The scheduler of ``variant`` with the models shipped for ``world_version``."""
    if variant not in MARA_SWAPS:
        return make_agent(variant, world_version=world_version)
    agent = Mara.load(world_version=world_version)
    agent.features = FeatureBuilder(MARA_SWAPS[variant](), agent.features.n_samples)
    agent.name = variant
    return agent


def play(cell: Cell, *, arrival_horizon: int | None = None) -> dict[str, Any]:
    """One episode of ``cell`` = (world, variant, workload, load, seed)."""
    world_name, variant, workload, load, seed = cell
    world = WORLDS[world_name]
    changes: dict[str, Any] = {"workload": workload, "load": load}
    if arrival_horizon is not None:
        changes["arrival_horizon"] = arrival_horizon
    config = world.config("evaluation", **changes)
    (metrics,) = evaluate(
        build(variant, world.version), config, [seed], trace_source=world.trace_source()
    )
    return {
        "world": world_name,
        "variant": variant,
        "workload": workload,
        "load": load,
        "seed": seed,
        "completion_rate": float(metrics["completion_rate"]),
        "completed": int(metrics["completed"]),
        "arrived": int(metrics["arrived"]),
    }


def store_of(output: Path) -> ResultsStore:
    """The episodes' store in ``output``."""
    return ResultsStore(output / "episodes.csv", COLUMNS, key=KEY)


def manifest_of(grid: dict[str, Any], worlds: Sequence[str]) -> Manifest:
    """What makes a row: this module's code closure, each registered variant's own
    (:func:`~mara_env.benchmarks.common.keys.build_agent`: its code and the models it loads), every
    shipped model and the grid (``loads``, ``arrival_horizon``)."""
    versions = sorted({WORLDS[world].version for world in worlds})
    agents = {
        f"{variant}@v{version}": build_agent(variant, version).manifest.digest
        for variant in VARIANTS
        if variant not in MARA_SWAPS
        for version in versions
    }
    settings = {"grid": grid, "agents": agents, "checkpoints": checkpoint_hashes()}
    # the page is written from the rows, so its code keys none of them
    return code_manifest([MODULE], settings=settings, exclude=(f"{MODULE}_report",))


def default_manifest() -> Manifest:
    """The manifest of a full run on every world (the committed store's)."""
    return manifest_of(grid_of(quick=False), list(WORLDS))


def grid_of(*, quick: bool) -> dict[str, Any]:
    """The loads and arrival horizon of a full or a quick run."""
    return {"loads": list(LOADS[:1] if quick else LOADS), "arrival_horizon": 20 if quick else None}


def measure(
    cells: Sequence[Cell],
    store: ResultsStore,
    manifest: Manifest,
    *,
    arrival_horizon: int | None,
    progress: bool,
) -> list[dict[str, Any]]:
    """Every cell's row: those already in ``store`` under ``manifest``'s digest, the others
    played now and appended as each ends."""
    store.record_manifest(manifest)
    code = manifest.digest
    done = store.done()
    todo = [cell for cell in cells if (*cell, code) not in done]
    with one_torch_thread():
        for cell in tqdm(todo, desc="episodes", disable=not progress):
            store.append({**play(cell, arrival_horizon=arrival_horizon), "code": code})
    return [store.get((*cell, code)) for cell in cells]


def main(argv: Sequence[str] | None = None) -> int:
    """Play every variant on every world's episodes; write the store and the page; returns 0."""
    from mara_env.benchmarks.prediction.prediction_pays_report import write_page

    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.prediction_pays",
        description="What predictions are worth to schedulers, on every world of the ladder.",
    )
    parser.add_argument(
        "--worlds",
        nargs="+",
        default=list(WORLDS),
        choices=list(WORLDS),
        help="The worlds played (default: all).",
    )
    parser.add_argument(
        "--seeds", type=positive_int, default=10, help="Evaluation seeds from 1000 (default 10)."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"Where episodes.csv and README.md go (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument(
        "--ladder",
        type=Path,
        default=Path("benchmarks/results/ladder/ladder.csv"),
        help="The ladder's rows the page sets beside the episodes (default "
        "benchmarks/results/ladder/ladder.csv; python -m mara_env.benchmarks.prediction.ladder).",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="A smoke run: 1 seed, load 1.4, arrivals over 20 epochs.",
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    args = parser.parse_args(argv)
    if not args.ladder.is_file():
        parser.error(
            f"--ladder {args.ladder}: no such file; run python -m "
            "mara_env.benchmarks.prediction.ladder first, from the repository root."
        )
    seeds = evaluation_seeds(1 if args.quick else args.seeds)
    grid = grid_of(quick=args.quick)
    loads, horizon = grid["loads"], grid["arrival_horizon"]
    cells = [
        (world, variant, workload, load, seed)
        for world in args.worlds
        for variant in VARIANTS
        for workload in EVALUATION_WORKLOADS
        for load in loads
        for seed in seeds
    ]
    start = time.perf_counter()
    args.output.mkdir(parents=True, exist_ok=True)
    rows = measure(
        cells,
        store_of(args.output),
        manifest_of(grid, args.worlds),
        arrival_horizon=horizon,
        progress=not args.no_progress,
    )
    note = (
        f"Run in {time.perf_counter() - start:.0f} s (episodes already in the store reused) at "
        f"commit {git_revision()} on {platform_line()}."
    )
    page = write_page(args.output, rows, args.ladder, seeds, loads, note)
    print(page)
    print(f"Wrote episodes.csv and README.md to {args.output}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
