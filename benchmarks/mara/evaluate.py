"""Evaluate MARA and the baselines it must beat: completion rates with 95% CIs, resumable CSV.

Every agent plays the ``evaluation`` preset (test split of the curves) through
:func:`agents.evaluation.evaluate` at each workload and load, on environment seeds 1000 and up
(training used seeds below 1000). Rows already in the CSV are skipped, so an interrupted run
resumes. Each row names what produced it: ``checkpoint``, a digest of the SHA-256 of every
checkpoint loaded to build the agent (its predictor's included; empty for agents without one),
and ``code``, a digest of the agent's code, weights and the code every episode shares (the
leaderboard's manifests, :mod:`benchmarks.leaderboard.fingerprints`). A CSV holding an agent's
rows from other weights or other code is refused rather than mixed or overwritten, so an edited
scheduler never reuses its old results. A Markdown table of means and 95% bootstrap CIs
(:func:`agents.statistics.mean_ci`) is written beside the CSV.

Run::

    python -m benchmarks.mara.evaluate --agents mara lara laira edf clairvoyant
    python -m benchmarks.mara.evaluate --loads 1.4 --seeds 20 --paired-with mara \\
        --out benchmarks/results/mara/ablations.csv \\
        --agents mara mara_imitation benchmarks/results/mara/ablation_*.pt

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

import numpy as np
from tqdm.auto import tqdm

from agents import evaluate, mean_ci
from agents.base import Scheduler
from benchmarks.common.keys import Manifest, build_agent, class_manifest, code_manifest
from benchmarks.common.protocol import EVALUATION_WORKLOADS
from benchmarks.common.seed_intervals import two_level_bootstrap
from benchmarks.common.seeds import evaluation_seeds
from benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env import get_config
from mara_env.config import LATEST_WORLD_VERSION, WORLD_VERSIONS
from predictors.loaded_checkpoints import recording_checkpoint_loads

WORKLOADS = EVALUATION_WORKLOADS
LOADS = (1.4, 2.1, 2.8)
#: The manifest item naming the world the episodes were played in.
WORLD = "world version"
#: ``{agent: {(workload, load, seed): completion rate}}``.
Rates = dict[str, dict[tuple[str, float, int], float]]
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
HARNESS = ("agents.evaluation",)


def build_with_manifest(
    agent: str, world_version: int = LATEST_WORLD_VERSION
) -> tuple[str, Scheduler, str, Manifest]:
    """A scheduler for ``world_version`` from a registered name (built with the artifacts
    shipped for that world) or a MARA checkpoint path (``.pt``): its label, the
    scheduler, :func:`weights_digest` of every checkpoint loaded to build it (its policy's and
    its predictor's: a result depends on both) and the digest of everything its results depend
    on: one :class:`~benchmarks.common.keys.Manifest` of its code and weights
    (:func:`~benchmarks.common.keys.build_agent`, or for a checkpoint file
    :func:`~benchmarks.common.keys.class_manifest` and the checkpoints loaded) and the harness's
    code, data and interpreter (:func:`~benchmarks.common.keys.code_manifest`), with the
    world."""
    scheduler: Scheduler
    if agent.endswith(".pt"):
        from agents.mara.agent import Mara

        with recording_checkpoint_loads() as loads:
            scheduler = Mara.load(agent)
        weights = [load.sha256 for load in loads]
        items = dict(class_manifest(scheduler).items)
        items.update({f"checkpoint:{load.path.name}": load.sha256[:16] for load in loads})
    else:
        built = build_agent(agent, world_version)
        scheduler, items = built.scheduler, dict(built.manifest.items)
        weights = [value for key, value in items.items() if key.startswith("checkpoint:")]
    everything = Manifest({**items, **code_manifest(HARNESS).items, WORLD: str(world_version)})
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
    """The evaluation CSV at ``path`` (:class:`~benchmarks.common.store.ResultsStore`: rows
    appended as episodes finish, a file with other columns refused)."""
    try:
        return ResultsStore(path, SCHEMA, key=KEY, advice="Pass another --out.")
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
                "are kept: pass another --out, or delete that agent's rows to re-evaluate."
            )
        if {row["code"] for row in own} - {code}:
            raise SystemExit(
                f"mara.evaluate: {out} holds results of {label!r} made by other code (its "
                "own, the simulator's or the harness's changed since). Finished rows are "
                "kept: pass another --out, or delete that agent's rows to re-evaluate."
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


def summarise(scores: Rates) -> str:
    """Markdown table: mean completion rate and 95% CI per agent, workload and load
    (``scores``: :func:`completion_rates` of an evaluation CSV)."""
    cells: dict[tuple[str, str, float], list[float]] = {}
    for agent, rates in scores.items():
        for (workload, load, _), rate in rates.items():
            cells.setdefault((agent, workload, load), []).append(rate)
    lines = [
        "| agent | workload | load | seeds | completion rate | 95% CI |",
        "|---|---|---|---|---|---|",
    ]
    averages: dict[tuple[str, float], list[float]] = {}
    for (agent, workload, load), values in sorted(cells.items()):
        summary = mean_ci(values)
        lines.append(
            f"| {agent} | {workload} | {load} | {len(values)} | {summary.mean:.3f} | "
            f"[{summary.low:.3f}, {summary.high:.3f}] |"
        )
        averages.setdefault((agent, load), []).append(summary.mean)
    lines += ["", "| agent | load | mean over workloads |", "|---|---|---|"]
    for (agent, load), means in sorted(averages.items()):
        lines.append(
            f"| {agent} | {load} | {sum(means) / len(means):.3f} ({len(means)} workloads) |"
        )
    return "\n".join(lines) + "\n"


def completion_rates(path: Path) -> Rates:
    """``{agent: {(workload, load, seed): completion rate}}`` from an evaluation CSV."""
    scores: Rates = {}
    for row in open_results(path).rows:
        key = (row["workload"], row["load"], row["seed"])
        scores.setdefault(row["agent"], {})[key] = row["completion_rate"]
    return scores


def _require(scores: Rates, names: Sequence[str]) -> None:
    missing = [name for name in names if name not in scores]
    if missing:
        raise ValueError(f"No rows of {missing}; agents with rows: {sorted(scores)}.")


def paired_differences(scores: Rates, reference: str) -> str:
    """Markdown table: each agent's mean paired difference from ``reference`` with a 95% CI, at
    each load and, when there are several, over all of them.

    Episodes pair up by workload, load and seed; only pairs where both agents have a row count.

    Args:
        scores: :func:`completion_rates` of an evaluation CSV.
        reference: The agent every other one is compared with.

    Raises:
        ValueError: If ``reference`` has no rows.

    Example:
        >>> scores = {
        ...     "a": {("rl", 1.4, 1000): 0.5, ("rl", 1.4, 1001): 0.7, ("rl", 2.1, 1000): 0.2},
        ...     "b": {("rl", 1.4, 1000): 0.4, ("rl", 1.4, 1001): 0.5, ("rl", 2.1, 1000): 0.3},
        ... }
        >>> print(paired_differences(scores, "b").splitlines()[2])
        | a | 1.4 | 2 | +0.150 | [+0.100, +0.200] |
    """
    _require(scores, [reference])
    base = scores[reference]
    lines = [
        f"| agent | load | paired episodes | difference from {reference} | 95% CI |",
        "|---|---|---|---|---|",
    ]
    for agent, values in sorted(scores.items()):
        if agent == reference:
            continue
        shared = sorted(set(values) & set(base))
        loads = sorted({load for _, load, _ in shared})
        groups = [(f"{load:g}", [key for key in shared if key[1] == load]) for load in loads]
        if len(loads) > 1:
            groups.append(("all", shared))
        for label, keys in groups:
            summary = mean_ci([values[key] - base[key] for key in keys])
            lines.append(
                f"| {agent} | {label} | {len(keys)} | {summary.mean:+.3f} | "
                f"[{summary.low:+.3f}, {summary.high:+.3f}] |"
            )
    return "\n".join(lines) + "\n"


def training_seed_differences(scores: Rates, runs: Sequence[str], name: str) -> str:
    """Markdown table: a learned recipe, trained from several seeds (``runs``: the labels of
    its training runs), minus each other agent, with a 95% interval over training seeds and
    episodes (:func:`benchmarks.common.seed_intervals.two_level_bootstrap`), at each load and
    over all of them. Only episodes every run and the other agent played count.

    Raises:
        ValueError: If a run has no rows.

    Example:
        >>> scores = {
        ...     "a0": {("rl", 1.4, 1000): 0.5, ("rl", 1.4, 1001): 0.7},
        ...     "a1": {("rl", 1.4, 1000): 0.6, ("rl", 1.4, 1001): 0.6},
        ...     "b": {("rl", 1.4, 1000): 0.4, ("rl", 1.4, 1001): 0.5},
        ... }
        >>> print(training_seed_differences(scores, ["a0", "a1"], "a").splitlines()[2])
        | a (2 training seeds) - b | 1.4 | 2 | +0.150 | [+0.100, +0.200] |
    """
    _require(scores, list(runs))
    lines = [
        f"| {name} minus | load | paired episodes | difference | 95% CI (training seeds and "
        "episodes) |",
        "|---|---|---|---|---|",
    ]
    shared_by_runs = set.intersection(*(set(scores[run]) for run in runs))
    for agent, values in sorted(scores.items()):
        if agent in runs:
            continue
        shared = sorted(shared_by_runs & set(values))
        loads = sorted({load for _, load, _ in shared})
        groups = [(f"{load:g}", [key for key in shared if key[1] == load]) for load in loads]
        if len(loads) > 1:
            groups.append(("all", shared))
        for label, keys in groups:
            differences = np.array(
                [[scores[run][key] - values[key] for key in keys] for run in runs]
            )
            summary = two_level_bootstrap(differences)
            lines.append(
                f"| {name} ({len(runs)} training seeds) - {agent} | {label} | {len(keys)} | "
                f"{summary.mean:+.3f} | [{summary.low:+.3f}, {summary.high:+.3f}] |"
            )
    return "\n".join(lines) + "\n"


def gap_closed(scores: Rates, low: str, high: str, n_resamples: int = 10_000, seed: int = 0) -> str:
    """Markdown table: the share of the ``low`` -> ``high`` gap each agent closes, per load.

    At each load, each agent's completion rate is the mean over workloads of its mean over
    seeds; the share is ``(agent - low) / (high - low)``. Its 95% interval resamples the seeds
    within each workload (the same resample for all three agents, since they played the same
    episodes). Only seeds that all three agents played count.

    Args:
        scores: :func:`completion_rates` of an evaluation CSV.
        low: The agent at 0 (e.g. ``"lara"``).
        high: The agent at 1 (e.g. ``"clairvoyant"``).
        n_resamples: Bootstrap resamples.
        seed: Seed of the resampling generator.

    Raises:
        ValueError: If ``low`` or ``high`` has no rows.
    """
    _require(scores, [low, high])
    rng = np.random.default_rng(seed)
    lines = [
        f"| agent | load | share of the {low} -> {high} gap closed | 95% CI |",
        "|---|---|---|---|",
    ]
    for agent in sorted(set(scores) - {low, high}):
        keys = set(scores[agent]) & set(scores[low]) & set(scores[high])
        for load in sorted({key[1] for key in keys}):
            cells = [
                sorted(key for key in keys if key[0] == workload and key[1] == load)
                for workload in sorted({key[0] for key in keys if key[1] == load})
            ]
            # Per row (the estimate, then each resample): the agent's, low's and high's sums
            # over workloads of their mean over seeds; sums give the same share as means.
            totals = np.zeros((n_resamples + 1, 3))
            for cell in cells:
                table = np.array(
                    [[scores[name][key] for key in cell] for name in (agent, low, high)]
                )
                picks = rng.integers(len(cell), size=(n_resamples, len(cell)))
                totals[0] += table.mean(axis=1)
                totals[1:] += table[:, picks].mean(axis=2).T
            share = (totals[:, 0] - totals[:, 1]) / (totals[:, 2] - totals[:, 1])
            interval = np.percentile(share[1:], [2.5, 97.5])
            lines.append(
                f"| {agent} | {load} | {share[0]:.3f} | [{interval[0]:.3f}, {interval[1]:.3f}] |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mara.evaluate", description=__doc__.split("\n\n")[0]
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
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("benchmarks/results/mara/evaluation.csv"),
        help="results CSV, resumed if it exists (default: %(default)s)",
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
        "--world-version",
        type=int,
        choices=WORLD_VERSIONS,
        default=LATEST_WORLD_VERSION,
        help="the world's rules; registered agents use the artifacts shipped for it "
        "(default: %(default)s)",
    )
    args: Any = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    compared = ([] if args.paired_with is None else [args.paired_with]) + (args.gap or [])
    compared += args.training_seeds or []
    known = {label_of(agent) for agent in args.agents} | {
        row["agent"] for row in open_results(args.out).rows
    }
    unknown = [name for name in compared if name not in known]
    if unknown:  # before any episode runs
        raise SystemExit(
            f"mara.evaluate: --paired-with/--gap/--training-seeds name {unknown}, which has no "
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
    args.out.with_suffix(".md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
