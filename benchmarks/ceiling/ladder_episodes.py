"""The ladder's episodes: each rung played on small Cluster-v3 episodes, kept in a resumable store.

The rungs (:data:`RUNGS`, then the exact optimum and the certified bound) play the small cluster
(:data:`SMALL`) at the leaderboard's loads. Every rung's episode is a row of ``ladder.csv``,
keyed by the digest of what produced it: the agent's code and weights (the optimum's solver time
limit too), this module and what it imports, the data; a rerun plays only what is missing or
stale. The page is written by :mod:`mara_env.benchmarks.ceiling.ladder`, whose edits re-key nothing.

Example:
    >>> row = play_rung("edf", 1.4, 1000, code="c")
    >>> row["rung"], row["completed"] <= row["arrived"]
    ('edf', True)
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from mara_env import ClusterConfig, get_config, raw_env
from mara_env.agents import evaluate
from mara_env.benchmarks.common.keys import build_agent, code_manifest
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.store import ResultsStore
from mara_env.benchmarks.common.threads import one_torch_thread_if_loaded
from mara_env.benchmarks.common.world_results import world_results

#: The world the ladder is measured on (its loads come from the command line).
WORLD_VERSION = 3
#: The small cluster: the leaderboard's world with 4 nodes, 8 slots and 30 epochs of arrivals.
SMALL = {"n_nodes": 4, "n_slots": 8, "arrival_horizon": 30}
#: The loads of the leaderboard's protocol (1x, 1.5x and 2x the training load).
LOADS = (1.4, 2.1, 2.8)
#: The schedulers of the ladder, weakest first (registered agent names).
RUNGS = ("random", "edf", "reach_planner", "mara", "lara_oracle", "clairvoyant")
#: The rung of the exact optimum, and that of the certified bound.
OPTIMUM, BOUND = "optimum", "bound"
#: The optimum's import path (it is not a registered agent: it needs the ``optimum`` extra).
OPTIMUM_AGENT = "mara_env.agents.optimum.agent:OfflineOptimum"
#: The module of the bound. The harness reaches the optimum and the bound by name, not by
#: ``import``, so that their code keys their own rows only (:func:`rung_manifest`).
BOUND_MODULE = "mara_env.agents.optimum.bound"
#: Seconds the solver may spend on an episode by default.
TIME_LIMIT = 300.0
COLUMNS = {
    "rung": str,
    "load": float,
    "seed": int,
    "code": str,
    "completed": int,
    "arrived": int,
    "status": str,
    "solver_bound": int,
    "seconds": float,
}
KEY = ("rung", "load", "seed", "code")
#: Where the store, the page and the plot go by default.
OUTPUT = world_results(WORLD_VERSION) / "ceiling"


def small_config(load: float) -> ClusterConfig:
    """The small cluster at ``load``."""
    return get_config(
        "training",
        load=load,
        n_nodes=SMALL["n_nodes"],
        n_slots=SMALL["n_slots"],
        arrival_horizon=SMALL["arrival_horizon"],
    )


def rung_manifest(rung: str, time_limit: float) -> Manifest:
    """What a rung's rows depend on: its code and weights, this harness, the data (and, for the
    optimum, the solver's time limit)."""
    harness = code_manifest(
        ["mara_env.benchmarks.ceiling.ladder_episodes"], world_version=WORLD_VERSION
    )
    if rung == BOUND:
        own = code_manifest([BOUND_MODULE], world_version=WORLD_VERSION).items
    elif rung == OPTIMUM:
        own = {**build_agent(OPTIMUM_AGENT).manifest.items, "time limit": repr(float(time_limit))}
    else:
        own = build_agent(rung, WORLD_VERSION).manifest.items
    return Manifest(dict(sorted({**harness.items, **own}.items())))


def play_rung(
    rung: str, load: float, seed: int, *, code: str, time_limit: float = TIME_LIMIT
) -> dict[str, Any]:
    """One episode of one rung: the completions it reaches (the bound's: what it certifies)."""
    config = small_config(load)
    start = time.perf_counter()
    status, solver_bound = "", -1
    if rung == BOUND:
        env = raw_env(config)
        env.reset(seed=seed)
        bound = importlib.import_module(BOUND_MODULE)
        completed, arrived = bound.episode_bound(env.simulator), len(env.simulator.state.tasks)
    else:
        scheduler: Any = build_agent(
            OPTIMUM_AGENT if rung == OPTIMUM else rung, WORLD_VERSION
        ).scheduler
        if rung == OPTIMUM:
            scheduler.time_limit = float(time_limit)
        metrics = evaluate(scheduler, config, [seed])[0]
        completed, arrived = int(metrics["completed"]), int(metrics["arrived"])
        if rung == OPTIMUM:
            solution = scheduler.solution
            if solution.completed >= 0 and solution.completed != completed:
                source = (
                    "the clairvoyant reference's" if scheduler.from_clairvoyant else "the program's"
                )
                raise RuntimeError(
                    f"the optimum's schedule ({source}) for load {load}, seed {seed} completes "
                    f"{completed} tasks in the environment but {solution.completed} by its count: "
                    "they should agree (please report this episode)."
                )
            status, solver_bound = solution.status, solution.bound
    seconds = time.perf_counter() - start
    return {
        "rung": rung, "load": float(load), "seed": int(seed), "code": code,
        "completed": completed, "arrived": arrived, "status": status,
        "solver_bound": solver_bound, "seconds": seconds,
    }  # fmt: skip


def run(
    output: Path,
    *,
    seeds: Sequence[int],
    loads: Sequence[float] = LOADS,
    time_limit: float = TIME_LIMIT,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Play every rung on every (load, seed) not already in ``output``'s store; the store's
    rows made by the current code (those of every load and seed it holds)."""
    store = ResultsStore(output / "ladder.csv", COLUMNS, key=KEY)
    rungs = (*RUNGS, OPTIMUM, BOUND)
    codes = {}
    for rung in rungs:
        manifest = rung_manifest(rung, time_limit)
        store.record_manifest(manifest)
        codes[rung] = manifest.digest
    work = [
        (rung, load, seed)
        for load in loads
        for seed in seeds
        for rung in rungs
        if (rung, float(load), int(seed), codes[rung]) not in store.done()
    ]
    with one_torch_thread_if_loaded():
        for rung, load, seed in tqdm(work, desc="ladder", disable=not progress):
            store.append(play_rung(rung, load, seed, code=codes[rung], time_limit=time_limit))
    return [row for row in store.rows if row["code"] == codes.get(row["rung"])]
