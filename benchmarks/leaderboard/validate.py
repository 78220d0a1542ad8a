"""``mara-leaderboard --validate DIR``: are these results what the installed code produces?

Results are worth publishing only if they follow from the code, as CompilerGym checks
leaderboard submissions by replaying them. :func:`validate_results` runs four checks on a
results folder and prints every difference it finds:

1. **Integrity**: every line of ``episodes.jsonl`` parses and matches its check hash
   (:mod:`mara_env.benchmarks.leaderboard.records`): any line edited by hand, or damaged, is reported.
2. **Tables**: the last finished run recorded in the journal is rendered again, from the journal
   alone (its episodes, configs, labels, fingerprints, provenance and command): the statistics,
   ranks and intervals of ``leaderboard.json`` and ``leaderboard.md`` and every row of
   ``episodes.csv`` and ``episodes.json`` must equal the files, but for numbers with a fraction
   that agree within :data:`mara_env.portability.MAX_ULPS` (a statistic recomputed on another
   machine may differ in its last bits; whole numbers such as ranks must be equal). The plots
   are not compared.
3. **Fingerprints**: the recorded fingerprints of the shared code and of each agent's code and
   weights must equal the installed ones (a difference names the modules or checkpoints that
   changed), and each recorded config must equal what the installed preset gives.
4. **Replay**: a sample of the run's episodes is played again from scratch with the installed
   code (on the chosen backend), and every recorded metric is compared (wall-time columns
   aside): counts (:data:`mara_env.sim.epoch_report.COUNT_METRICS`) and every other integer or text exactly,
   float metrics (rates, means) within :data:`mara_env.portability.MAX_ULPS` units in the last
   place, since another CPU or NumPy version may round differently in the last bit. The check
   also says how many replayed episodes matched bit for bit (all of them, on the machine that
   made the run). The default sample is one episode per agent, workload and load, drawn at
   random; ``--sample all`` replays every episode, ``--sample N`` that many.

What the default catches: any edit of a journal line that leaves its check hash alone (check 1,
with certainty), any table that does not follow from the journal (check 2), and any change of
code or weights since the run (check 3). An episode altered *and* given a recomputed check hash
is caught only by the replay, with probability (sample size) / (episodes) per validation; each
validation draws a fresh sample (its seed is printed; ``--sample-seed`` repeats one).

Exit code 0 when nothing differs, 1 otherwise; 3 when nothing differs but some agents could not
be checked (a scheduler of the user's, given by an import path whose module cannot be imported
where the validation runs: ``cannot check`` names it); a folder without a readable journal is a
usage error (2).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mara_env import ConfigError
from mara_env.benchmarks.common.keys import Manifest, build_agent
from mara_env.benchmarks.leaderboard.backends import Backend, execute_cells
from mara_env.benchmarks.leaderboard.cells import TIMING_COLUMNS, CellOutcome
from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
from mara_env.benchmarks.leaderboard.grid import (
    Cell,
    Grid,
    config_from_fields,
)
from mara_env.benchmarks.leaderboard.journal import JOURNAL, read_journal
from mara_env.benchmarks.leaderboard.records import JournalContents
from mara_env.benchmarks.leaderboard.table_check import check_tables
from mara_env.portability import MAX_ULPS, differences
from mara_env.sim.epoch_report import COUNT_METRICS
from mara_env.worlds.config import LATEST_WORLD_VERSION

#: Exit code of a validation that passed but could not check everything (an agent that cannot be
#: imported here).
CANNOT_CHECK = 3
#: ``--sample`` values: a count, every episode, or one per agent, workload and load.
ALL = "all"
DEFAULT_SAMPLE = None
Sample = int | str | None


def parse_sample(text: str) -> int | str:
    """``--sample``: ``all`` or a whole number >= 1.

    Raises:
        argparse.ArgumentTypeError: For anything else.
    """
    if text == ALL:
        return ALL
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected 'all' or a whole number >= 1, got {text!r}")
    return count


@dataclass
class Findings:
    """What a validation found: differences (each fails it), what could not be checked here
    (an agent that cannot be imported) and notes (informative)."""

    differences: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    def check(self, title: str, found: Sequence[str], passed: str) -> None:
        """Print one check's outcome and keep its differences."""
        if found:
            print(f"  {title}: {len(found)} difference(s):")
            for difference in found:
                print(f"    DIFFERS: {difference}")
        else:
            print(f"  {title}: {passed}")
        self.differences += found


def validate_results(
    directory: Path,
    *,
    backend: Backend,
    sample: Sample = None,
    seed: int | None = None,
    progress: bool = True,
) -> int:
    """Validate the results folder ``directory``; prints every check; returns the exit code.

    Args:
        directory: A leaderboard ``--output`` folder.
        backend: Where replayed episodes run.
        sample: Episodes to replay: a count, :data:`ALL`, or ``None`` for one per agent,
            workload and load.
        seed: Seed of the sample (default: fresh entropy, printed).
        progress: Show a progress bar over the replays.

    Raises:
        mara_env.benchmarks.leaderboard.journal.ResultsFileError: If there is no readable journal.
    """
    contents = read_journal(directory / JOURNAL)
    findings = Findings()
    run = contents.runs[-1] if contents.runs else None
    print(
        f"Validating {directory / JOURNAL}: {len(contents.rows)} episodes, {contents.lines} lines."
    )
    findings.check(
        "integrity",
        [f"{JOURNAL} {problem}" for problem in contents.problems],
        f"every one of the {contents.lines} lines matches its check hash.",
    )
    if run is None:
        findings.check("tables", ["the journal records no finished run: no tables to check"], "")
        grid, rows = None, contents.rows
    unimportable = _unimportable_agents(contents.rows)
    for agent, why in unimportable.items():
        findings.unchecked.append(f"{agent}: {why}")
        print(f"  cannot check: {agent}: {why}")
    if run is not None:
        grid, rows = check_tables(directory, run, contents, findings)
        findings.check(
            "fingerprints",
            _compare_fingerprints(run, contents, grid, skip=set(unimportable)),
            f"the shared code and the code and weights of {len(run['grid']['agents'])} agents "
            "equal the installed ones.",
        )
        revision = str(run["provenance"].get("git_revision", ""))
        if revision.endswith("+dirty"):
            findings.notes.append(
                f"the run's source tree had uncommitted changes (git revision {revision}); the "
                "fingerprints identify its code."
            )
    rows = [row for row in rows if row["agent"] not in unimportable]
    chosen, how = _sample(rows, sample, seed)
    if contents.suspect:
        how += f"; and the {len(contents.suspect)} edited line(s)"
    suspect = [row for row in contents.suspect if row.get("agent") not in unimportable]
    replayed, identical = _replay([*chosen, *suspect], contents, backend, progress)
    findings.check(
        "replay",
        replayed,
        f"{len(chosen)} of {len(rows)} episodes ({how}) replayed from scratch: every count equal, "
        f"every float within {MAX_ULPS} ulps; {identical} of them equal bit for bit.",
    )
    if sample != ALL and rows:
        findings.notes.append(
            f"an episode altered with a recomputed check hash is caught by this replay with "
            f"probability {len(chosen)}/{len(rows)} = {len(chosen) / len(rows):.1%}; "
            "--sample all replays every one."
        )
    for note in findings.notes:
        print(f"  note: {note}")
    if findings.differences:
        print(f"Not valid: {len(findings.differences)} difference(s), listed above.")
        return 1
    if findings.unchecked:
        print(
            f"Not checked in full: {len(findings.unchecked)} agent(s) cannot be imported here "
            "(listed above); everything else passed."
        )
        return CANNOT_CHECK
    print("Valid: every check passed.")
    return 0


def _unimportable_agents(rows: list[dict[str, Any]]) -> dict[str, str]:
    """``{agent: why}`` for the recorded agents given by an import path whose module cannot be
    found here (a user's scheduler, validated from a folder where it is not importable)."""
    found: dict[str, str] = {}
    for row in rows:
        agent, spec = row.get("agent"), str(row.get("agent_spec", ""))
        module = spec.partition(":")[0]
        if ":" not in spec or agent in found or not module:
            continue
        try:
            missing = importlib.util.find_spec(module) is None
        except (ImportError, ValueError):
            missing = True
        if missing:
            found[str(agent)] = (
                f"cannot import {module} (its spec {spec!r}); run the validation where that "
                "module is importable (from the folder that holds it, or with it installed)"
            )
    return found


def _compare_fingerprints(
    run: dict[str, Any], contents: JournalContents, grid: Grid | None, skip: set[str]
) -> list[str]:
    problems = []
    recorded = run["fingerprints"]
    shared = shared_manifest(grid.traces if grid is not None else None)
    if shared.digest != recorded["shared"]:
        problems.append(
            "the code, trace data or version every agent shares changed since the run: "
            + _changes(shared, contents.manifests.get(recorded["shared"]))
        )
    for agent, spec in run["specs"].items():
        if agent in skip:
            continue
        try:
            world_version = grid.world_version if grid is not None else LATEST_WORLD_VERSION
            installed = build_agent(spec, world_version).manifest
        except Exception as error:  # an agent that no longer builds is a difference
            problems.append(f"{agent} ({spec}) cannot be built: {type(error).__name__}: {error}")
            continue
        digest = recorded["agents"].get(agent)
        if installed.digest != digest:
            problems.append(
                f"{agent}: its code or weights changed since the run: "
                + _changes(installed, contents.manifests.get(digest or ""))
            )
    if grid is not None:
        try:
            installed_grid = dataclasses.replace(grid, configs={})  # built from the presets
        except ConfigError as error:
            return [*problems, f"the installed presets cannot build the run's grid: {error}"]
        for stratum in grid.strata:
            used, now = grid.config(*stratum), installed_grid.config(*stratum)
            if now != used:
                problems.append(
                    f"config {grid.label(*stratum)}: the installed {grid.base!r} preset now "
                    f"gives {now!r}; the run used {used!r}"
                )
    return problems


def _changes(installed: Manifest, recorded: dict[str, str] | None) -> str:
    if recorded is None:
        return "the journal has no manifest of the recorded code"
    return ", ".join(installed.changes_since(recorded))


def _sample(rows: list[dict[str, Any]], sample: Sample, seed: int | None) -> tuple[list, str]:
    """The episodes to replay, and how they were chosen."""
    if sample == ALL:
        return list(rows), "all"
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    rng = np.random.default_rng(seed)
    if sample is None:
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault((row["agent"], row["workload"], row["load_factor"]), []).append(row)
        chosen = [group[int(rng.integers(len(group)))] for group in groups.values()]
        return chosen, f"one per agent, workload and load; --sample-seed {seed}"
    picks = sorted(rng.choice(len(rows), size=min(int(sample), len(rows)), replace=False))
    return [rows[i] for i in picks], f"at random; --sample-seed {seed}"


def _replay(
    rows: list[dict[str, Any]], contents: JournalContents, backend: Backend, progress: bool
) -> tuple[list[str], int]:
    """Play ``rows`` again from their recorded cells: every metric that differs, and how many
    episodes came out bit for bit equal."""
    problems: list[str] = []
    identical = 0
    cells: dict[str, tuple[Cell, dict[str, Any]]] = {}
    for row in rows:
        try:
            cell = Cell(
                row["agent_spec"],
                row["seed"],
                config_from_fields(contents.configs[row["config_hash"]]),
                row["config"],
                workload=row["workload"],
                load_factor=row["load_factor"],
                fingerprint=row["shared_code"],
                agent_fingerprint=row["agent_code"],
                label=row["agent"],
                traces=row.get("traces"),
            )
        except (KeyError, ConfigError) as error:
            problems.append(f"{_where(row)}: cannot be replayed ({type(error).__name__}: {error})")
            continue
        cells[cell.key] = (cell, row)

    def compare(outcome: CellOutcome) -> None:
        nonlocal identical
        recorded = cells[outcome.cell.key][1]
        if outcome.error is not None:
            problems.append(f"{_where(recorded)}: the replay failed: {outcome.error}")
            return
        exact = True
        for key, value in recorded.items():
            if key in TIMING_COLUMNS:
                continue
            again = outcome.row.get(key, "(missing)")
            exact = exact and not differences(again, value, max_ulps=0)
            found = differences(again, value, max_ulps=0 if key in COUNT_METRICS else MAX_ULPS)
            if found:
                problems.append(f"{_where(recorded)}: {key} recorded {value!r}, replayed {again!r}")
        identical += exact

    execute_cells(
        [cell for cell, _ in cells.values()],
        backend,
        compare,
        progress=progress,
        description="replay",
    )
    return problems, identical


def _where(row: dict[str, Any]) -> str:
    return f"{row.get('agent')} {row.get('config')} seed {row.get('seed')}"
