"""The ladder's rungs as MARA's features: the shipped policy with other predictions swapped in
at test time.

The shipped MARA policy (``agents/worlds/v3/mara.pt``) reads features computed from the
target-blind flow-matching predictor it was trained with. This plays it on the same episodes with
that predictor replaced, without retraining, by

- ``no predictions``: constant prediction features (:class:`mara_env.agents.mara.features.NoPredictions`);
- ``loss-history posterior``: the posterior over the train split's curves given the task's
  reported losses and the world's target rule
  (:class:`~mara_env.benchmarks.prediction.curve_posterior.PosteriorPredictor`, observation only), with the
  bandwidths the ladder chose on training seeds for Cluster-v3's posterior (its
  ``bandwidths.csv``; that posterior reads absolute losses, this one losses relative to the loss
  at arrival, as MARA's histories hold them);
- ``denoised oracle``: each task's remaining work along its own curve's trend
  (:class:`~mara_env.benchmarks.prediction.denoised_oracle.DenoisedOracle`, privileged);
- ``oracle``: the exact remaining work (:class:`mara_env.predictors.oracle.Oracle`, privileged);

beside the shipped features and earliest deadline first. Every variant plays the same episodes
(the ``evaluation`` preset of Cluster-v3, held-out curves, the evaluation workloads at loads 1.4,
2.1 and 2.8, seeds from 1000), so each difference from the shipped features is paired, with a 95%
bootstrap interval over episodes. A policy trained on one predictor's features may not know what
to do with another's: a gain here is a lower bound on what those features are worth to a policy
trained on them, and a loss may only mean the policy was not trained for them.

Run::

    python -m mara_env.benchmarks.prediction.feature_swaps            # 10 seeds: 450 episodes
    python -m mara_env.benchmarks.prediction.feature_swaps --quick    # a smoke run

Example:
    >>> rows = play_cells([("edf", "rl", 1.4, 1000)], workers=1, progress=False)
    >>> rows[0]["variant"], rows[0]["arrived"] > 0
    ('edf', True)
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from mara_env import get_config
from mara_env.agents import Scheduler, evaluate, make_agent
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.features import FeatureBuilder, NoPredictions
from mara_env.agents.statistics import mean_ci
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.lifeline import start_worker, worker_context
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.prediction.curve_posterior import CurvePosterior, PosteriorPredictor
from mara_env.benchmarks.prediction.denoised_oracle import DenoisedOracle
from mara_env.benchmarks.prediction.ladder_report import csv_text
from mara_env.predictors.base import Predictor
from mara_env.predictors.oracle import Oracle

DEFAULT_OUTPUT = Path("benchmarks/results/ladder")
#: The world the shipped policy was trained in.
WORLD = 3
LOADS = (1.4, 2.1, 2.8)
SHIPPED = "mara (shipped features)"
#: The ladder's bandwidth search, whose choice for Cluster-v3 the posterior takes.
BANDWIDTHS = DEFAULT_OUTPUT / "bandwidths.csv"


@functools.cache
def posterior() -> CurvePosterior:
    """Cluster-v3's relative posterior, with the bandwidths the ladder chose on training seeds.

    Raises:
        FileNotFoundError: If the ladder's bandwidth search is not there (run ``python -m
            mara_env.benchmarks.prediction.ladder`` first).
    """
    if not BANDWIDTHS.is_file():
        raise FileNotFoundError(
            f"{BANDWIDTHS} is missing: the posterior takes the bandwidths the ladder chose on "
            "training seeds; run python -m mara_env.benchmarks.prediction.ladder first (from the "
            "repository root)."
        )
    with BANDWIDTHS.open() as handle:
        (chosen,) = [
            row
            for row in csv.DictReader(handle)
            if row["world"] == f"v{WORLD}" and row["chosen"] == "True"
        ]
    config = get_config("training", world_version=WORLD)
    return CurvePosterior.for_world(config, relative=True).with_bandwidths(
        float(chosen["loss_bandwidth"]), float(chosen["target_bandwidth"])
    )


#: The variants: name -> the predictor swapped into the shipped policy (``None``: none).
SWAPS: dict[str, Callable[[], Predictor] | None] = {
    SHIPPED: None,
    "mara + no predictions": NoPredictions,
    "mara + loss-history posterior": lambda: PosteriorPredictor(posterior()),
    "mara + denoised oracle": DenoisedOracle,
    "mara + oracle": Oracle,
}
#: The reference beside them.
REFERENCE = "edf"
VARIANTS = (*SWAPS, REFERENCE)
FIELDS = ("variant", "workload", "load", "seed", "completion_rate", "completed", "arrived")

Cell = tuple[str, str, float, int]


def build(variant: str) -> Scheduler:
    """The scheduler of ``variant``."""
    if variant == REFERENCE:
        return make_agent(REFERENCE)
    agent = Mara.load(world_version=WORLD)
    make = SWAPS[variant]
    if make is not None:
        agent.features = FeatureBuilder(make(), agent.features.n_samples)
    return agent


def play(cell: Cell) -> dict[str, Any]:
    """One episode of ``cell`` = (variant, workload, load, seed)."""
    variant, workload, load, seed = cell
    config = get_config("evaluation", workload=workload, load=load, world_version=WORLD)
    (metrics,) = evaluate(build(variant), config, [seed])
    return {
        "variant": variant,
        "workload": workload,
        "load": load,
        "seed": seed,
        "completion_rate": float(metrics["completion_rate"]),
        "completed": int(metrics["completed"]),
        "arrived": int(metrics["arrived"]),
    }


def play_cells(cells: Sequence[Cell], *, workers: int, progress: bool) -> list[dict[str, Any]]:
    """Every cell's row, in the order of ``cells`` (in ``workers`` processes when > 1)."""
    if workers == 1:
        return [play(cell) for cell in tqdm(cells, desc="episodes", disable=not progress)]
    with ProcessPoolExecutor(
        workers,
        mp_context=worker_context(),
        initializer=start_worker,
        initargs=(os.getpid(), False),
    ) as pool:
        return list(
            tqdm(pool.map(play, cells), total=len(cells), desc="episodes", disable=not progress)
        )


def summary(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The page's table: each variant's mean completion rate and its paired difference from the
    shipped features, each with a 95% bootstrap interval over episodes."""
    by_variant: dict[str, dict[tuple[str, float, int], float]] = {}
    for row in rows:
        key = (row["workload"], row["load"], row["seed"])
        by_variant.setdefault(row["variant"], {})[key] = row["completion_rate"]
    episodes = sorted(by_variant[SHIPPED])
    shipped = np.array([by_variant[SHIPPED][key] for key in episodes])
    lines = [
        "| variant | completion rate [95% CI] | minus the shipped features [95% CI] |",
        "| --- | ---: | ---: |",
    ]
    for variant in VARIANTS:
        values = np.array([by_variant[variant][key] for key in episodes])
        mean = mean_ci(values)
        difference = "-" if variant == SHIPPED else _interval(mean_ci(values - shipped), "+.3f")
        lines.append(f"| {variant} | {_interval(mean, '.3f')} | {difference} |")
    return lines


def _interval(value: Any, form: str) -> str:
    return f"{value.mean:{form}} [{value.low:{form}}, {value.high:{form}}]"


def page(rows: Sequence[dict[str, Any]], seeds: Sequence[int], note: str) -> str:
    """The results page."""
    return "\n".join(
        [
            "# The ladder's rungs as MARA's features",
            "",
            "The shipped MARA policy of Cluster-v3 with other predictions swapped in at test "
            "time, no retraining (written by `python -m mara_env.benchmarks.prediction.feature_swaps`; "
            "`benchmarks/prediction/feature_swaps.py` says what each variant is). Every variant "
            f"plays the same {len(rows) // len(VARIANTS)} episodes: the `evaluation` preset "
            "(held-out curves), workloads "
            f"{', '.join(EVALUATION_WORKLOADS)}, loads {', '.join(f'{x:g}' for x in LOADS)}, "
            f"seeds {seeds[0]}-{seeds[-1]}; differences are paired on them. A policy trained on "
            "one predictor's features may not use another's well: a gain is a lower bound on "
            f"what the features are worth to a policy trained on them. {note}",
            "",
            *summary(rows),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Play every variant on the same episodes; write ``feature_swaps.csv`` and
    ``feature_swaps.md``; returns 0."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.feature_swaps",
        description="Play the shipped MARA policy with other predictions swapped in at test time.",
    )
    parser.add_argument(
        "--seeds", type=positive_int, default=10, help="Evaluation seeds from 1000 (default 10)."
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=available_cores(),
        help="Worker processes (default: the available cores).",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help=f"Where feature_swaps.csv and feature_swaps.md go (default {DEFAULT_OUTPUT}).",
    )
    parser.add_argument("--quick", action="store_true", help="A smoke run: 1 seed, load 1.4.")
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    args = parser.parse_args(argv)
    seeds = evaluation_seeds(1 if args.quick else args.seeds)
    loads = LOADS[:1] if args.quick else LOADS
    cells = [
        (variant, workload, load, seed)
        for variant in VARIANTS
        for workload in EVALUATION_WORKLOADS
        for load in loads
        for seed in seeds
    ]
    start = time.perf_counter()
    rows = play_cells(cells, workers=args.workers, progress=not args.no_progress)
    note = (
        f"Run in {time.perf_counter() - start:.0f} s at commit {git_revision()} on "
        f"{platform_line()}."
    )
    text = page(rows, seeds, note)
    args.output.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output / "feature_swaps.csv", csv_text(rows, FIELDS))
    write_atomically(args.output / "feature_swaps.md", text)
    print(text)
    print(f"Wrote feature_swaps.csv and feature_swaps.md to {args.output}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
