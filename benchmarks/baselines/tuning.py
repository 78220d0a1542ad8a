"""Tune every baseline's documented settings the same way, on training seeds only.

Fair comparisons need every scheduler at its best, chosen by one procedure that never sees the
episodes results are reported on. For each baseline of :data:`SEARCH_SPACES`:

1. **Search.** The class defaults and ``budget - 1`` other settings drawn at random (without
   replacement) from the baseline's grid are each played on the *search* episodes: the
   ``training`` preset (train split of the curves) at the training load, the
   ``in_distribution``, ``rl`` and ``vision`` workloads, seeds ``100 ..`` (``--search-seeds``
   per workload).
2. **Confirmation.** The ``finalists`` best by search mean, and the defaults, are played again
   on fresh *confirmation* seeds ``200 ..`` (``--confirm-seeds`` per workload); the best
   confirmation mean wins, so a setting that was merely lucky on the search episodes does not.
3. **Writing.** The winners go to the world's ``agents/worlds/v<N>/tuned_settings.json``, where the registry reads them
   (:mod:`mara_env.agents.tuned`); every episode is in ``DIR/trials.jsonl`` and a summary in
   ``DIR/v<N>.md`` (default ``benchmarks/results/tuning``; one journal holds every world's
   trials).

Every baseline gets the same budget: ``budget`` settings (fewer if its grid is smaller) on the
same episodes. Only training seeds (below 1000, :mod:`mara_env.benchmarks.common.seeds`) and the
train split can be reached: :func:`~mara_env.benchmarks.common.tuning_configs.tuning_configs` and
:func:`tuning_seeds` refuse anything else, so the evaluation seeds (1000 and up) stay untouched.

Trials are appended to the journal as they finish, keyed by what played them (the trials' code, data and
interpreter without the tuned-settings file this script writes: :func:`tuning_manifest`); running again reuses the finished ones, so an interrupted run continues where it
stopped. The settings file records the command that reproduces the choice
(:func:`reproducing_command`), so that rerunning with other progress or output options leaves
its bytes, and the fingerprints of every result keyed by it, unchanged.

Usage::

    python -m mara_env.benchmarks.baselines.tuning                      # every baseline
    python -m mara_env.benchmarks.baselines.tuning --agents laira --budget 8
    python -m mara_env.benchmarks.baselines.tuning --quick --output /tmp/tuning --settings-file /tmp/t.json

Example:
    >>> tuning_seeds(100, 3)
    (100, 101, 102)
    >>> tuning_seeds(999, 2)
    Traceback (most recent call last):
    ...
    ValueError: tuning: seeds 999..1000 reach outside the training seeds 0..999 (1000 and up are the evaluation seeds results are reported on). Pick a lower start or fewer seeds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mara_env import TRAINING_LOAD
from mara_env.agents import mean_ci
from mara_env.agents.tuned import SETTINGS_FILE, tuned_settings_path
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.baselines.search_spaces import (
    SEARCH_SPACES,
    WORKLOADS,
    tuning_seeds,
)
from mara_env.benchmarks.baselines.trial_keys import trial_manifest
from mara_env.benchmarks.baselines.trials import (
    Trial,
    TrialJournal,
    run_trials,
)
from mara_env.benchmarks.common.arguments import add_world_version, positive_int
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.store import ResultsFileError
from mara_env.benchmarks.common.tuning_configs import tuning_configs
from mara_env.benchmarks.common.write_faults import write_faults_end
from mara_env.worlds.world import LATEST_WORLD_VERSION, world

#: First seed of the search and of the confirmation episodes.
SEARCH_SEED_BASE = 100
CONFIRM_SEED_BASE = 200
DEFAULT_OUTPUT = Path("benchmarks/results/tuning")


def settings_key(settings: Mapping[str, Any]) -> str:
    """Canonical JSON of a settings dict (tuples become lists)."""
    return json.dumps(settings, sort_keys=True)


@dataclass
class Outcome:
    """The tuning of one baseline."""

    agent: str
    candidates: int
    search: dict[str, float]
    confirmation: dict[str, list[float]]
    chosen: str
    defaults: str

    def summary(self) -> dict[str, Any]:
        """What ``tuned_settings.json`` records for the baseline."""
        default = self.confirmation[self.defaults]
        chosen = self.confirmation[self.chosen]
        return {
            "settings": json.loads(self.chosen),
            "candidates": self.candidates,
            "search_mean": round(self.search[self.chosen], 4),
            "confirmation_mean": round(float(np.mean(chosen)), 4),
            "defaults_confirmation_mean": round(float(np.mean(default)), 4),
        }


def tune(
    agent: str,
    *,
    budget: int,
    finalists: int,
    search_seeds: Sequence[int],
    confirm_seeds: Sequence[int],
    journal: TrialJournal,
    workers: int,
    quick: bool,
    progress: bool,
    world_version: int = LATEST_WORLD_VERSION,
) -> Outcome:
    """Search, confirm and choose the settings of one baseline in ``world_version`` (see the
    module docstring)."""
    space = SEARCH_SPACES[agent]
    rng = np.random.default_rng(int(hashlib.sha256(agent.encode()).hexdigest()[:8], 16))
    drawn = space.candidates(budget, rng, quick=quick, world_version=world_version)
    candidates = [settings_key(item) for item in drawn]

    configs = tuning_configs(quick=quick, world_version=world_version)

    def trials(keys: Sequence[str], seeds: Sequence[int]) -> list[Trial]:
        made = [
            Trial(
                agent,
                key,
                workload,
                seed,
                world_version=world_version,
                quick=quick,
                searched=True,
            )
            for key in keys
            for workload in WORKLOADS
            for seed in tuning_seeds(min(seeds), len(seeds))
        ]
        if any(trial.config() != configs[trial.workload] for trial in made):
            raise ValueError("A tuning trial's config differs from tuning_configs().")
        return made

    def scores(key: str, seeds: Sequence[int]) -> list[float]:
        return [journal.score(trial) for trial in trials([key], seeds)]

    run_trials(
        trials(candidates, search_seeds),
        journal,
        workers=workers,
        progress=progress,
        label=f"{agent}: search",
    )
    search = {key: float(np.mean(scores(key, search_seeds))) for key in candidates}
    best = sorted(candidates, key=lambda key: (-search[key], candidates.index(key)))
    defaults = candidates[0]
    confirmed = list(dict.fromkeys([*best[:finalists], defaults]))
    run_trials(
        trials(confirmed, confirm_seeds),
        journal,
        workers=workers,
        progress=progress,
        label=f"{agent}: confirm",
    )
    confirmation = {key: scores(key, confirm_seeds) for key in confirmed}
    chosen = max(confirmed, key=lambda key: (np.mean(confirmation[key]), -confirmed.index(key)))
    return Outcome(agent, len(candidates), search, confirmation, chosen, defaults)


def report_name(world_version: int) -> str:
    """The file name of a world's search summary in the output folder, e.g. ``v3.md``."""
    return f"v{world_version}.md"


def write_settings(
    path: Path, outcomes: Sequence[Outcome], command: str, world_version: int
) -> None:
    """Merge the outcomes into the tuned-settings file the registry reads."""
    document: dict[str, Any] = {"agents": {}}
    if path.exists():
        document = json.loads(path.read_text())
    document["command"] = command
    document["note"] = (
        "Chosen by python -m mara_env.benchmarks.baselines.tuning on training seeds (< 1000) and the train "
        f"split; see benchmarks/results/tuning/{report_name(world_version)}. Do not edit by hand."
    )
    for outcome in outcomes:
        document["agents"][outcome.agent] = outcome.summary()
    document["agents"] = dict(sorted(document["agents"].items()))
    write_atomically(path, json.dumps(document, indent=2) + "\n")


def markdown_report(
    outcomes: Sequence[Outcome], settings: Mapping[str, Any], command: str, world_version: int
) -> str:
    """The search log's summary in ``world_version``: per baseline, the winner against its
    defaults, and the ``command`` that made it."""
    lines = [
        f"# Tuning of the baselines on Cluster-v{world_version}",
        "",
        f"Made by `{command}` "
        f"(budget {settings['budget']} settings per baseline, {settings['finalists']} finalists; "
        f"search seeds {settings['search']}, confirmation seeds {settings['confirm']} per "
        f"workload; workloads {', '.join(WORKLOADS)}; `training` preset, train split, load "
        f"{TRAINING_LOAD}). Completion rates are means over the episodes; the last column is "
        "the chosen settings minus the defaults on the same confirmation episodes, with a 95% "
        "bootstrap interval. Every episode is in `trials.jsonl`.",
        "",
        "| baseline | settings tried | chosen settings | search | confirmation | defaults "
        "(confirmation) | chosen - defaults [95% CI] |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for outcome in outcomes:
        summary = outcome.summary()
        chosen = np.array(outcome.confirmation[outcome.chosen])
        default = np.array(outcome.confirmation[outcome.defaults])
        difference = mean_ci(chosen - default)
        searched = {k: v for k, v in summary["settings"].items() if k != "calibration"}
        shown = ", ".join(f"{k}={v}" for k, v in searched.items()) or "defaults"
        if "calibration" in summary["settings"]:
            shown += " (+ look-ahead calibration)"
        lines.append(
            f"| {outcome.agent} | {outcome.candidates} | {shown} | {summary['search_mean']:.3f} "
            f"| {summary['confirmation_mean']:.3f} | {summary['defaults_confirmation_mean']:.3f}"
            f" | {difference.bracketed('+.3f')} |"
        )
    return "\n".join(lines) + "\n"


def tuning_manifest(world_version: int = LATEST_WORLD_VERSION) -> Manifest:
    """What keys the tuning trials: :func:`mara_env.benchmarks.baselines.trial_keys.trial_manifest`
    without the tuned-settings file, which the trials do not read (every candidate is built from
    its own settings) and which is this script's output: keying the trials by it would make
    every run's output invalidate its own trials."""
    tuned = f"file:{world(world_version).shipped}/{SETTINGS_FILE}"
    return trial_manifest(world_version, exclude=[tuned])


def reproducing_command(args: argparse.Namespace) -> str:
    """The command that chooses the same settings: the options that shape the search, where
    they differ from the defaults (progress bars, workers and output paths do not)."""
    parser, words = build_parser(), ["python -m mara_env.benchmarks.baselines.tuning"]
    shaping = ["agents", "budget", "finalists", "search_seeds", "confirm_seeds", "world_version"]
    if args.quick:  # which sets the budget and the seeds
        words.append("--quick")
        shaping = ["agents", "world_version"]
    for name in shaping:
        value, default = getattr(args, name), parser.get_default(name)
        if value != default:
            shown = " ".join(map(str, value)) if isinstance(value, list) else str(value)
            words.append(f"--{name.replace('_', '-')} {shown}")
    return " ".join(words)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.baselines.tuning",
        description="Tune each baseline's settings with the same budget on training seeds "
        "(< 1000) and the train split; write them where the registry reads them.",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(SEARCH_SPACES),
        choices=list(SEARCH_SPACES),
        metavar="AGENT",
        help=f"Baselines to tune (default: all of {' '.join(SEARCH_SPACES)}).",
    )
    parser.add_argument("--budget", type=positive_int, default=24, help="Settings per baseline.")
    parser.add_argument(
        "--finalists", type=positive_int, default=4, help="Best searched settings confirmed."
    )
    parser.add_argument(
        "--search-seeds", type=positive_int, default=4, help="Search seeds per workload."
    )
    parser.add_argument(
        "--confirm-seeds", type=positive_int, default=8, help="Confirmation seeds per workload."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="Smoke run: budget 2, 1 finalist, 1 seed each, arrivals during 20 epochs.",
    )
    parser.add_argument(
        "--workers", type=positive_int, default=os.cpu_count() or 1, help="Worker processes."
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, metavar="DIR", help="Search log folder."
    )
    add_world_version(
        parser,
        note="The settings go to the world's own file, where the registry reads them for it.",
    )
    parser.add_argument(
        "--settings-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="Where the chosen settings go (default: the registry's file for the world, "
        f"agents/worlds/v<N>/{SETTINGS_FILE} for world N).",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bars.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Tune the chosen baselines; returns the process exit code."""
    args = build_parser().parse_args(argv)
    if args.settings_file is None:
        args.settings_file = tuned_settings_path(args.world_version)
    if args.quick:
        args.budget, args.finalists, args.search_seeds, args.confirm_seeds = 2, 1, 1, 1
    try:
        search = tuning_seeds(SEARCH_SEED_BASE, args.search_seeds)
        confirm = tuning_seeds(CONFIRM_SEED_BASE, args.confirm_seeds)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if set(search) & set(confirm):
        print("error: search and confirmation seeds overlap; use fewer seeds.", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        journal = TrialJournal(args.output / "trials.jsonl", tuning_manifest(args.world_version))
    except ResultsFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    def kept() -> str:
        done = len(journal.store.rows_where(code=journal.fingerprint))
        return f"Every finished trial is kept: {done} in {journal.path}"

    with write_faults_end("tuning", kept):
        return _tune_all(args, search, confirm, journal, start)


def _tune_all(
    args: argparse.Namespace,
    search: tuple[int, ...],
    confirm: tuple[int, ...],
    journal: TrialJournal,
    start: float,
) -> int:
    """Tune each agent of ``args``, then write the settings file and the report."""
    outcomes = []
    for agent in dict.fromkeys(args.agents):
        outcome = tune(
            agent,
            budget=args.budget,
            finalists=args.finalists,
            search_seeds=search,
            confirm_seeds=confirm,
            journal=journal,
            workers=args.workers,
            quick=args.quick,
            progress=not args.no_progress,
            world_version=args.world_version,
        )
        outcomes.append(outcome)
        summary = outcome.summary()
        print(
            f"{agent}: {summary['settings'] or 'defaults'} (confirmation "
            f"{summary['confirmation_mean']:.3f}, defaults {summary['defaults_confirmation_mean']:.3f})"
        )
    write_settings(args.settings_file, outcomes, reproducing_command(args), args.world_version)
    ranges = {"budget": args.budget, "finalists": args.finalists}
    ranges["search"] = f"{search[0]}-{search[-1]}"
    ranges["confirm"] = f"{confirm[0]}-{confirm[-1]}"
    report = args.output / report_name(args.world_version)
    write_atomically(
        report, markdown_report(outcomes, ranges, reproducing_command(args), args.world_version)
    )
    print(f"Wrote {args.settings_file} and {report} in {time.perf_counter() - start:.0f} s.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
