"""Fit the reach planner's model and choose its settings, on training seeds; score both.

Four steps, for one world:

1. **Fit** :class:`mara_env.agents.reach.ReachModel` (a small network, one for every node
   count; :mod:`~mara_env.benchmarks.prediction.reach_fit`) on the rows of
   :mod:`~mara_env.benchmarks.prediction.reach_episodes`: episodes of the ``training`` preset at
   the training load, each workload, train split (the configs the baselines are tuned on,
   :func:`~mara_env.benchmarks.common.tuning_configs.tuning_configs`), training seeds from
   :data:`FIT_SEED_BASE`, played by earliest deadline first.
2. **Choose** the planner's ``drop`` and ``ask``
   (:class:`mara_env.agents.reach_planner.ReachPlanner`) by mean completion on the same configs
   and the baselines' tuning seeds (from :data:`SEARCH_SEED_BASE`), every candidate of
   :data:`PLANNER_GRID` on the same episodes.
3. **Ship** the model with those settings in the world's folder
   (``agents/worlds/v<N>/reach_model.json``), written whole or not at all.
4. **Score**, for reporting only, on evaluation seeds (1000 and up) of the ``evaluation`` preset
   (test split): the model's AUC and Brier score for "reaches its target with every node it may
   get" in the information ladder's bands of the deadline window, beside the ladder's observation
   probe fitted on the same training rows, and its reliability
   (:mod:`~mara_env.benchmarks.prediction.reach_report`).

Run::

    python -m mara_env.benchmarks.prediction.reach_model              # Cluster-v3, minutes
    python -m mara_env.benchmarks.prediction.reach_model --quick --model /tmp/m.json --output /tmp/r

Example:
    >>> rows = fit_rows(world_version=3, seeds=(200, 201), every=10, progress=False, quick=True)
    >>> rows.reached.shape[1:], len(set(rows.episode))
    ((8,), 6)
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from mara_env import TRAINING_LOAD, get_config
from mara_env.agents.evaluation import evaluate
from mara_env.agents.reach import ReachModel, reach_model_path
from mara_env.agents.reach_planner import ReachPlanner
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import add_world_version, positive_int
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS as WORKLOADS
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.seeds import evaluation_seeds, training_seeds
from mara_env.benchmarks.common.tuning_configs import QUICK_ARRIVAL_HORIZON, tuning_configs
from mara_env.benchmarks.common.world_results import world_results
from mara_env.benchmarks.prediction.reach_episodes import DRIVER, ReachRows, collect_reach_rows
from mara_env.benchmarks.prediction.reach_fit import HIDDEN, fit_reach_network
from mara_env.benchmarks.prediction.reach_report import score_rows, write_report

#: First training seed of the episodes the model is fitted on (the tuning uses 100 and up).
FIT_SEED_BASE = 200
#: First training seed of the planner's settings search (the baselines' tuning's own seeds).
SEARCH_SEED_BASE = 100
#: The planner's candidate settings; every pair is tried.
PLANNER_GRID: dict[str, tuple[Any, ...]] = {
    "drop": (0.0, 0.1, 0.2, 0.3, 0.4, 0.5),
    "ask": (None, 0.8, 0.9, 0.95),
}


def fit_rows(
    *, world_version: int, seeds: Sequence[int], every: int, progress: bool, quick: bool = False
) -> ReachRows:
    """The fitting rows: each workload's training config, one episode per seed."""
    configs = tuning_configs(quick=quick, world_version=world_version)
    parts = [
        collect_reach_rows(config, seeds, every=every, progress=progress, workload=workload)
        for workload, config in configs.items()
    ]
    return ReachRows.joined(parts, next(iter(configs.values())).task_node_limit)


def score_rows_of(
    *, world_version: int, count: int, every: int, progress: bool, quick: bool = False
) -> ReachRows:
    """The scoring rows: the evaluation preset at the training load, each workload, one
    episode per evaluation seed (reporting only)."""
    parts = []
    for workload in WORKLOADS:
        config = get_config(
            "evaluation", workload=workload, load=TRAINING_LOAD, world_version=world_version
        )
        if quick:
            config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
        parts.append(
            collect_reach_rows(
                config,
                evaluation_seeds(count),
                every=every,
                progress=progress,
                workload=workload,
            )
        )
    return ReachRows.joined(parts, parts[0].features.shape[1])


def search_planner(
    model: ReachModel, *, world_version: int, seeds: Sequence[int], progress: bool, quick: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The planner's settings of best mean completion on the training configs and ``seeds``
    (ties: the first in :data:`PLANNER_GRID` order), and every candidate's row."""
    configs = tuning_configs(quick=quick, world_version=world_version)
    names = list(PLANNER_GRID)
    candidates = [
        dict(zip(names, values, strict=True))
        for values in itertools.product(*PLANNER_GRID.values())
    ]
    searched = []
    for settings in tqdm(
        candidates, desc="planner settings", unit="candidate", disable=not progress
    ):
        completion = [
            row["completion_rate"]
            for config in configs.values()
            for row in evaluate(ReachPlanner(model, **settings), config, seeds)
        ]
        searched.append(
            {**settings, "completion": float(np.mean(completion)), "episodes": len(completion)}
        )
    best = max(range(len(searched)), key=lambda index: (searched[index]["completion"], -index))
    for index, row in enumerate(searched):
        row["chosen"] = index == best
    return {name: searched[best][name] for name in names}, searched


def _shown(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (as the page names it)."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: fit, choose, ship, score (module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.reach_model",
        description=__doc__.split("\n\n")[0],
    )
    add_world_version(parser, note="The model and page are this world's.")
    parser.add_argument(
        "--fit-seeds",
        type=positive_int,
        default=200,
        help="Training episodes per workload to fit on (default 200).",
    )
    parser.add_argument(
        "--search-seeds",
        type=positive_int,
        default=10,
        help="Training episodes per workload for each planner candidate (default 10).",
    )
    parser.add_argument(
        "--score-seeds",
        type=positive_int,
        default=20,
        help="Evaluation episodes per workload, for the scores only (default 20).",
    )
    parser.add_argument(
        "--every",
        type=positive_int,
        default=2,
        help="Judge the visible tasks every this many epochs (default 2).",
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="Where the model goes (default: the world's shipped folder).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="The results folder (default: benchmarks/results/v<N>/reach).",
    )
    parser.add_argument(
        "--quick", action="store_true", help="A smoke run: short episodes, few seeds."
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bars.")
    arguments = parser.parse_args(argv)
    version = arguments.world_version
    model_path = arguments.model or reach_model_path(version)
    output = arguments.output or world_results(version) / "reach"
    progress = not arguments.no_progress
    quick = arguments.quick
    fit_count, search_count, score_count = (
        (2, 1, 2) if quick else (arguments.fit_seeds, arguments.search_seeds, arguments.score_seeds)
    )
    started = time.perf_counter()
    fit_seeds = training_seeds(FIT_SEED_BASE, fit_count, where="--fit-seeds")
    search_seeds = training_seeds(SEARCH_SEED_BASE, search_count, where="--search-seeds")
    rows = fit_rows(
        world_version=version,
        seeds=fit_seeds,
        every=arguments.every,
        progress=progress,
        quick=quick,
    )
    model, fit_log = fit_reach_network(rows)
    planner, searched = search_planner(
        model, world_version=version, seeds=search_seeds, progress=progress, quick=quick
    )
    command = [
        "python",
        "-m",
        "mara_env.benchmarks.prediction.reach_model",
        *(argv if argv is not None else sys.argv[1:]),
    ]
    facts = {
        "command": command,
        "world_version": version,
        "fit": f"preset 'training' at load {TRAINING_LOAD}, workloads {', '.join(WORKLOADS)}, train split, seeds {fit_seeds[0]}-{fit_seeds[-1]}, played by {DRIVER}, judged every {arguments.every} epochs",
        "fit_rows": int(rows.reached.size),
        "network": f"hidden layers {list(HIDDEN)}, ReLU; weights of the best of {len(fit_log)} checks on held-out training episodes",
        "planner_search": f"the training preset at load {TRAINING_LOAD}, train split, seeds {search_seeds[0]}-{search_seeds[-1]} x {len(WORKLOADS)} workloads, mean completion",
        "commit": git_revision(),
        "platform": platform_line(),
    }
    shipped = ReachModel(model.layers, model.mean, model.scale, planner=planner, facts=facts)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(model_path, json.dumps(shipped.to_json(), indent=1) + "\n")
    scored = score_rows_of(
        world_version=version,
        count=score_count,
        every=arguments.every,
        progress=progress,
        quick=quick,
    )
    scores = score_rows(shipped, rows, scored)
    write_report(
        output,
        shipped,
        scores,
        searched,
        fit_log,
        scored,
        seconds=time.perf_counter() - started,
        model_path=_shown(model_path),
    )
    print(
        f"wrote {_shown(model_path)} (planner settings {planner}) and {_shown(output / 'README.md')}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
