"""Evaluate MARA and the baselines it must beat: completion rates with 95% CIs, resumable CSV.

Every agent plays the ``evaluation`` preset (test split of the curves) through
:func:`mara_env.agents.evaluation.evaluate` at each workload and load, on environment seeds 1000 and up
(training used seeds below 1000). Rows already in the CSV are skipped, so an interrupted run
resumes. Each row names what produced it: ``checkpoint``, a digest of the SHA-256 of every
checkpoint loaded to build the agent (its predictor's included; empty for agents without one),
and ``code``, a digest of the agent's code, weights and the code every episode shares (the
leaderboard's manifests, :mod:`mara_env.benchmarks.leaderboard.fingerprints`). A CSV holding an agent's
rows from other weights or other code is refused rather than mixed or overwritten, so an edited
scheduler never reuses its old results. A Markdown table of means and 95% bootstrap CIs
(:func:`mara_env.agents.statistics.mean_ci`) is written beside the CSV.

Run::

    python -m mara_env.benchmarks.mara.evaluate --agents mara lara laira edf clairvoyant
    python -m mara_env.benchmarks.mara.evaluate --loads 1.4 --seeds 20 --paired-with mara \\
        --output benchmarks/results/v1/mara/ablations.csv \\
        --agents mara mara_imitation benchmarks/results/v1/mara/ablation_*.pt

``--gap LOW HIGH`` adds the share of the gap between two agents (e.g. ``lara clairvoyant``)
that each other agent closes at each load, with a 95% bootstrap interval.
``--paired-with AGENT`` adds each agent's difference from ``AGENT`` on the same episodes
(workload, load and seed), with a 95% bootstrap CI over those paired differences: sharper than
comparing two intervals, since both agents meet the same arrivals and curves.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from mara_env import get_config
from mara_env.agents import evaluate
from mara_env.agents.base import Scheduler
from mara_env.benchmarks.common.arguments import add_output, add_world_version
from mara_env.benchmarks.common.keys import (
    Manifest,
    build_agent,
    class_manifest,
    code_manifest,
    played,
)
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env.benchmarks.common.world_results import mara_results
from mara_env.benchmarks.mara.evaluation_tables import (
    Rates,
    gap_closed,
    paired_differences,
    summarise,
    training_seed_differences,
)
from mara_env.benchmarks.mara.prediction_value_table import differences_table
from mara_env.predictors.loaded_checkpoints import recording_checkpoint_loads
from mara_env.worlds.config import LATEST_WORLD_VERSION

WORKLOADS = EVALUATION_WORKLOADS
LOADS = (1.4, 2.1, 2.8)
#: The manifest item naming the world the episodes were played in.
WORLD = "world version"
#: Columns of an evaluation CSV and their types; a row is keyed by all but the last two.
SCHEMA: dict[str, type] = {
    "agent": str,
    "checkpoint": str,
    "code": str,
    "workload": str,
    "load": float,
    "seed": int,
    "completion_rate": float,
    "decision_ms_per_epoch": float,
}
FIELDS = tuple(SCHEMA)
KEY = FIELDS[:-2]


def label_of(agent: str) -> str:
    """The label an agent's rows carry: a checkpoint's file stem, else the registered name."""
    return Path(agent).stem if agent.endswith(".pt") else agent


#: The harness every evaluation episode runs, whatever its agent.
HARNESS = ("mara_env.agents.evaluation",)


def build_with_manifest(
    agent: str, world_version: int = LATEST_WORLD_VERSION
) -> tuple[str, Scheduler, str, Manifest]:
    """A scheduler for ``world_version`` from a registered name (built with the artifacts
    shipped for that world) or a MARA checkpoint path (``.pt``): its label, the
    scheduler, :func:`weights_digest` of every checkpoint loaded to build it (its policy's and
    its predictor's: a result depends on both) and the digest of everything its results depend
    on: one :class:`~mara_env.benchmarks.common.keys.Manifest` of its code and weights
    (:func:`~mara_env.benchmarks.common.keys.build_agent`, or for a checkpoint file
    :func:`~mara_env.benchmarks.common.keys.class_manifest` and the checkpoints loaded) and the harness's
    code, data and interpreter (:func:`~mara_env.benchmarks.common.keys.code_manifest`), with the
    world."""
    scheduler: Scheduler
    if agent.endswith(".pt"):
        from mara_env.agents.mara.agent import Mara

        with recording_checkpoint_loads() as loads:
            scheduler = Mara.load(agent)
        weights = [load.sha256 for load in loads]
        items = played(class_manifest(scheduler).items, world_version)
        items.update({f"checkpoint:{load.path.name}": load.sha256[:16] for load in loads})
    else:
        built = build_agent(agent, world_version)
        scheduler, items = built.scheduler, dict(built.manifest.items)
        weights = [value for key, value in items.items() if key.startswith("checkpoint:")]
    harness = code_manifest(HARNESS, world_version=world_version).items
    everything = Manifest({**items, **harness, WORLD: str(world_version)})
    return label_of(agent), scheduler, weights_digest(weights), everything


def build(agent: str, world_version: int = LATEST_WORLD_VERSION) -> tuple[str, Scheduler, str, str]:
    """:func:`build_with_manifest` with the manifest's digest: the ``code`` key of the agent's
    rows."""
    label, scheduler, checkpoint, manifest = build_with_manifest(agent, world_version)
    return label, scheduler, checkpoint, manifest.digest


def weights_digest(digests: Sequence[str]) -> str:
    """The first 16 hex digits of the SHA-256 of the loaded checkpoints' SHA-256s, in load
    order ("" when nothing was loaded)."""
    if not digests:
        return ""
    return hashlib.sha256("".join(digests).encode()).hexdigest()[:16]


def open_results(path: Path) -> ResultsStore:
    """The evaluation CSV at ``path`` (:class:`~mara_env.benchmarks.common.store.ResultsStore`: rows
    appended as episodes finish, a file with other columns refused)."""
    try:
        return ResultsStore(path, SCHEMA, key=KEY, advice="Pass another --output.")
    except ResultsFileError as error:
        raise SystemExit(f"mara.evaluate: {error}") from None


def run(
    agents: Sequence[str],
    workloads: Sequence[str],
    loads: Sequence[float],
    seeds: int,
    out: Path,
    progress: bool = True,
    world_version: int = LATEST_WORLD_VERSION,
) -> None:
    """Evaluate every (agent, workload, load) cell of ``world_version`` on ``seeds`` seeds,
    appending to ``out``.

    Raises:
        SystemExit: If ``out`` holds rows of an agent made with another checkpoint or other
            code, or has other columns.
    """
    results = open_results(out)
    for agent in agents:
        label, scheduler, checkpoint, manifest = build_with_manifest(agent, world_version)
        code = manifest.digest
        results.record_manifest(manifest)
        own = results.rows_where(agent=label)
        others = {row["checkpoint"] for row in own} - {checkpoint}
        if others:
            raise SystemExit(
                f"mara.evaluate: {out} holds results of {label!r} from checkpoint "
                f"{sorted(others)}, not the current {checkpoint or 'none'!r}. Finished rows "
                "are kept: pass another --output, or delete that agent's rows to re-evaluate."
            )
        if {row["code"] for row in own} - {code}:
            raise SystemExit(
                f"mara.evaluate: {out} holds results of {label!r} made by other code (its "
                "own, the simulator's or the harness's changed since). Finished rows are "
                "kept: pass another --output, or delete that agent's rows to re-evaluate."
            )
        done = results.done()
        todo = [
            (workload, float(load), seed)
            for workload in workloads
            for load in loads
            for seed in evaluation_seeds(seeds)
            if (label, checkpoint, code, workload, float(load), seed) not in done
        ]
        for workload, load, seed in tqdm(todo, desc=label, unit="episode", disable=not progress):
            config = get_config(
                "evaluation", workload=workload, load=load, world_version=world_version
            )
            (row,) = evaluate(scheduler, config, [seed])
            results.append(  # on disk before the next episode starts
                {
                    "agent": label,
                    "checkpoint": checkpoint,
                    "code": code,
                    "workload": workload,
                    "load": load,
                    "seed": seed,
                    "completion_rate": row["completion_rate"],
                    "decision_ms_per_epoch": row["decision_ms_per_epoch"],
                }
            )


def completion_rates(path: Path) -> Rates:
    """``{agent: {(workload, load, seed): completion rate}}`` from an evaluation CSV."""
    scores: Rates = {}
    for row in open_results(path).rows:
        key = (row["workload"], row["load"], row["seed"])
        scores.setdefault(row["agent"], {})[key] = row["completion_rate"]
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.evaluate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["mara", "lara", "laira", "edf", "clairvoyant"],
        help="registered agent names or MARA checkpoints (.pt) (default: %(default)s)",
    )
    parser.add_argument(
        "--workloads", nargs="+", default=list(WORKLOADS), help="workloads (default: %(default)s)"
    )
    parser.add_argument(
        "--loads",
        nargs="+",
        type=float,
        default=list(LOADS),
        help="arrival loads, each a config's load (default: %(default)s)",
    )
    parser.add_argument("--seeds", type=int, default=10, help="evaluation seeds (from 1000)")
    add_output(
        parser,
        default=None,
        help="results CSV, resumed if it exists (default: evaluation.csv in the world's MARA "
        "results folder, benchmarks/results/v<N>/mara/)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--gap",
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="also tabulate the share of the LOW -> HIGH gap each other agent closes, per load",
    )
    parser.add_argument(
        "--paired-with",
        default=None,
        metavar="AGENT",
        help="also tabulate every agent's paired difference from this agent's label",
    )
    parser.add_argument(
        "--training-seeds",
        nargs="+",
        default=None,
        metavar="LABEL",
        help="the labels of one recipe's training runs (e.g. the stems of its checkpoints): "
        "also tabulate the recipe minus every other agent with intervals over training seeds "
        "and episodes",
    )
    parser.add_argument(
        "--recipe-name",
        default="mara",
        help="what the --training-seeds table calls the recipe (default: %(default)s)",
    )
    parser.add_argument(
        "--versus",
        nargs="+",
        default=[],
        metavar="NAME=LABEL,LABEL,...",
        help="other recipes, each with its training runs' labels: also tabulate the "
        "--training-seeds recipe minus each, with intervals over both recipes' training seeds "
        "and the episodes",
    )
    add_world_version(parser, note="Registered agents use the artifacts shipped for it.")
    args: Any = parser.parse_args(argv)
    versus = {}
    for text in args.versus:
        name, equals, labels = text.partition("=")
        if not equals or not name or not labels or args.training_seeds is None:
            parser.error(
                f"--versus {text!r}: give NAME=LABEL,LABEL,... (the labels of one recipe's "
                "training runs), beside --training-seeds"
            )
        versus[name] = labels.split(",")
    if args.out is None:
        args.out = mara_results(args.world_version) / "evaluation.csv"
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    compared = ([] if args.paired_with is None else [args.paired_with]) + (args.gap or [])
    compared += args.training_seeds or []
    compared += [label for labels in versus.values() for label in labels]
    known = {label_of(agent) for agent in args.agents} | {
        row["agent"] for row in open_results(args.out).rows
    }
    unknown = [name for name in compared if name not in known]
    if unknown:  # before any episode runs
        raise SystemExit(
            f"mara.evaluate: --paired-with/--gap/--training-seeds/--versus name {unknown}, which "
            "has no "
            "rows in "
            f"{args.out} and is not among --agents {sorted(known)}."
        )
    run(
        args.agents,
        args.workloads,
        args.loads,
        args.seeds,
        args.out,
        not args.no_progress,
        args.world_version,
    )
    scores = completion_rates(args.out)
    table = summarise(scores)
    if args.paired_with is not None:
        table += "\n" + paired_differences(scores, args.paired_with)
    if args.gap is not None:
        table += "\n" + gap_closed(scores, *args.gap)
    if args.training_seeds is not None:
        table += "\n" + training_seed_differences(scores, args.training_seeds, args.recipe_name)
    if versus:
        reference = (args.recipe_name, args.training_seeds)
        table += "\n" + differences_table(scores, reference, versus)
    args.out.with_suffix(".md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
