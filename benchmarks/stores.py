# long: the catalogue of every group's committed stores, one entry each, with how to open and key them
"""The committed results stores: does every row still follow from the code, and why not.

Every resumable result under ``benchmarks/results`` carries the digest of the manifest of what
produced it (:mod:`mara_env.benchmarks.common.keys`). :data:`STORES` names each store, how to read it,
which column holds that digest, what the digest should be now for a given row, and the command
that regenerates it. Then:

- ``python -m mara_env.benchmarks.stores`` says, store by store, how many rows are current and, for the
  others, what changed since their manifest was recorded (the modules, files or settings), with
  the command that replays them; it exits 1 if any row is stale;
- ``python -m mara_env.benchmarks.stores --prune`` drops the rows of old keys (and their manifests) from
  the resumable stores, so a file holds only what the current code would write.

A docstring, comment or layout edit changes no digest, so it leaves every store current.

Example:
    >>> [store.name for store in STORES][:3]
    ['leaderboard', 'leaderboard on Cluster-v2', 'leaderboard on Cluster-v1']
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mara_env.benchmarks.common.manifest import Manifest, describe_changes
from mara_env.benchmarks.common.provenance import SOURCE_ROOT
from mara_env.benchmarks.common.store import ResultsStore, Row
from mara_env.benchmarks.common.world_results import mara_results, world_results
from mara_env.worlds.world import LATEST_WORLD_VERSION, WORLDS, World

#: Where the committed results live.
RESULTS = SOURCE_ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class CommittedStore:
    """One committed results store.

    Attributes:
        name: A short name.
        path: The file.
        column: The column holding the digest of what produced the row.
        command: The command that regenerates (or resumes) it.
        open: Reads the file as a :class:`~mara_env.benchmarks.common.store.ResultsStore` (``None`` for
            the leaderboard's journal, which :func:`leaderboard_status` reads).
        current: The manifest a row should carry now.
    """

    name: str
    path: Path
    column: str
    command: str
    open: Callable[[Path], ResultsStore] | None
    current: Callable[[Row], Manifest]

    def status(self) -> tuple[int, dict[str, int]]:
        """``(rows, {why: stale rows})``."""
        if self.open is None:
            return leaderboard_status(self.path)
        store = self.open(self.path)
        return len(store.rows), store.stale(self.column, self.current)

    def prune(self) -> int:
        """Drop the stale rows; how many were dropped (the leaderboard's journal is rewritten
        only by a fresh run, ``--no-resume``, so it is left as it is)."""
        if self.open is None:
            return 0
        return self.open(self.path).prune(self.column, self.current)


# ------------------------------------------------------------------------------ the stores
def _trial_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.baselines.trials import TrialJournal

    return TrialJournal(path, Manifest({})).store


@functools.cache
def _tuning(world_version: int) -> Manifest:
    from mara_env.benchmarks.baselines.tuning import tuning_manifest

    return tuning_manifest(world_version)


@functools.cache
def _trials(world_version: int) -> Manifest:
    from mara_env.benchmarks.baselines.trial_keys import trial_manifest

    return trial_manifest(world_version)


def _prediction_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.prediction.pairs import PairsTable
    from mara_env.benchmarks.prediction.results import ResultsTable

    table = ResultsTable if path.name == "results.csv" else PairsTable
    return table(path, resume=True).store


@functools.cache
def _scored() -> Manifest:
    from mara_env.benchmarks.prediction.runs import scored_manifest

    return scored_manifest()


def _pays_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.prediction.prediction_pays import store_of

    return store_of(path.parent)


@functools.cache
def _pays() -> Manifest:
    from mara_env.benchmarks.prediction.prediction_pays import default_manifest

    return default_manifest()


def _ladder_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.ceiling.ladder_episodes import COLUMNS, KEY

    return ResultsStore(path, COLUMNS, key=KEY)


@functools.cache
def _ladder(rung: str) -> Manifest:
    from mara_env.benchmarks.ceiling.ladder_episodes import TIME_LIMIT, rung_manifest

    return rung_manifest(rung, TIME_LIMIT)


def _bundle_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.baselines.static_bundle import BundleLog

    return BundleLog(path, resume=True).store


@functools.cache
def _bundle(name: str) -> Manifest:
    from mara_env import default_trace_source
    from mara_env.benchmarks.baselines.static_bundle import setup_manifest
    from mara_env.benchmarks.baselines.static_bundle.bundles import BUNDLES, bundle_config

    if name not in BUNDLES:
        return Manifest({"bundle": "no longer defined"})
    return setup_manifest(BUNDLES[name], bundle_config(), default_trace_source())


def _evaluation_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.mara.evaluate import open_results

    return open_results(path)


@functools.cache
def _evaluated(folder: Path, label: str, world_version: int) -> Manifest:
    from mara_env.benchmarks.mara.evaluate import build_with_manifest

    checkpoint = folder / f"{label}.pt"
    agent = str(checkpoint) if checkpoint.exists() else label
    return build_with_manifest(agent, world_version)[3]


def _mara_evaluations(entry: World) -> tuple[CommittedStore, ...]:
    """MARA's evaluations on one world: every CSV with its manifests under the world's MARA
    folder, replayed by the command on the README beside it."""
    folder = SOURCE_ROOT / mara_results(entry.version)
    return tuple(
        CommittedStore(
            f"MARA {path.relative_to(RESULTS).as_posix()}",
            path,
            "code",
            "python -m mara_env.benchmarks.mara.evaluate (see "
            f"{path.parent.relative_to(SOURCE_ROOT).as_posix()}/README.md)",
            _evaluation_store,
            functools.partial(
                lambda folder, world, row: _evaluated(folder, row["agent"], world),
                path.parent,
                entry.version,
            ),
        )
        for path in sorted(folder.rglob("*.csv"))
        if path.with_name(f"{path.name}.manifests.json").exists()
    )


def _leaderboard(entry: World) -> CommittedStore:
    """A world's leaderboard, played on its defaults."""
    name = (
        "leaderboard"
        if entry.version == LATEST_WORLD_VERSION
        else f"leaderboard on {entry.env_id.split('/')[-1]}"
    )
    flag = "" if entry.version == LATEST_WORLD_VERSION else f" --world-version {entry.version}"
    folder = world_results(entry.version) / "leaderboard"
    return CommittedStore(
        name,
        SOURCE_ROOT / folder / "episodes.jsonl",
        "cell",
        f"python -m mara_env.benchmarks.leaderboard{flag} --no-resume --output {folder.as_posix()}",
        None,
        lambda row: Manifest({}),
    )


def _generalisation_store(path: Path) -> ResultsStore:
    from mara_env.benchmarks.leaderboard.generalisation import open_episodes

    return open_episodes(path)


@functools.cache
def _generalised(agent: str) -> Manifest:
    from mara_env.benchmarks.leaderboard.generalisation import agent_manifests

    return agent_manifests([agent])[agent]


#: The agents of the example leaderboards (your own arrivals, your own curves).
EXAMPLE_AGENTS = "mara reach_planner lara laira edf clairvoyant"

#: The folder of the studies played on Cluster-v3 (its example boards, generalisation, deviations).
_V3 = SOURCE_ROOT / world_results(3)

#: Every committed results store, in the order of the README's results.
STORES: tuple[CommittedStore, ...] = (
    *(_leaderboard(entry) for entry in reversed(WORLDS)),
    CommittedStore(
        "leaderboard with the Philly arrivals",
        _V3 / "leaderboard_philly" / "episodes.jsonl",
        "cell",
        f"python -m mara_env.benchmarks.leaderboard --arrivals philly --agents {EXAMPLE_AGENTS} "
        "--no-resume --output benchmarks/results/v3/leaderboard_philly",
        None,
        lambda row: Manifest({}),
    ),
    CommittedStore(
        "leaderboard on the Pollux curves",
        _V3 / "leaderboard_pollux" / "episodes.jsonl",
        "cell",
        "python -m mara_env.benchmarks.leaderboard --traces docs/examples/pollux/curves.csv "
        f"--own-families recommendation=0.6 speech=0.8 --agents {EXAMPLE_AGENTS} --no-resume "
        "--output benchmarks/results/v3/leaderboard_pollux",
        None,
        lambda row: Manifest({}),
    ),
    CommittedStore(
        "leaderboard on the Pollux curves with their recorded durations",
        _V3 / "leaderboard_pollux_recorded" / "episodes.jsonl",
        "cell",
        "python -m mara_env.benchmarks.leaderboard --traces docs/examples/pollux/curves.csv "
        f"--own-families recommendation=0.6 speech=0.8 --durations recorded --agents "
        f"{EXAMPLE_AGENTS} --no-resume --output benchmarks/results/v3/leaderboard_pollux_recorded",
        None,
        lambda row: Manifest({}),
    ),
    CommittedStore(
        "quick leaderboard",
        _V3 / "leaderboard_quick" / "episodes.jsonl",
        "cell",
        "python -m mara_env.benchmarks.leaderboard --quick --no-resume --output "
        "benchmarks/results/v3/leaderboard_quick",
        None,
        lambda row: Manifest({}),
    ),
    CommittedStore(
        "generalisation",
        _V3 / "generalisation" / "episodes.csv",
        "code",
        "python -m mara_env.benchmarks.leaderboard.generalisation",
        _generalisation_store,
        lambda row: _generalised(row["agent"]),
    ),
    CommittedStore(
        "tuning",
        RESULTS / "tuning" / "trials.jsonl",
        "code",
        "python -m mara_env.benchmarks.baselines.tuning",
        _trial_store,
        lambda row: _tuning(int(row["world_version"])),
    ),
    CommittedStore(
        "deviations",
        _V3 / "deviations" / "trials.jsonl",
        "code",
        "python -m mara_env.benchmarks.baselines.deviations",
        _trial_store,
        lambda row: _trials(int(row["world_version"])),
    ),
    *(
        CommittedStore(
            f"prediction {name}",
            RESULTS / "predictors" / name,
            "code",
            "python -m mara_env.benchmarks.prediction.benchmark",
            _prediction_store,
            lambda row: _scored(),
        )
        for name in ("results.csv", "pairs.csv")
    ),
    CommittedStore(
        "when does loss prediction pay",
        RESULTS / "prediction_pays" / "episodes.csv",
        "code",
        "python -m mara_env.benchmarks.prediction.prediction_pays",
        _pays_store,
        lambda row: _pays(),
    ),
    CommittedStore(
        "static bundle",
        RESULTS / "static_bundle" / "bundle.csv",
        "setup",
        "python -m mara_env.benchmarks.baselines.static_bundle --bundle paper (and --bundle tight)",
        _bundle_store,
        lambda row: _bundle(row["bundle"]),
    ),
    *(store for entry in reversed(WORLDS) for store in _mara_evaluations(entry)),
    CommittedStore(
        "the ceiling's ladder",
        _V3 / "ceiling" / "ladder.csv",
        "code",
        "python -m mara_env.benchmarks.ceiling.ladder",
        _ladder_store,
        lambda row: _ladder(row["rung"]),
    ),
)


def leaderboard_status(path: Path) -> tuple[int, dict[str, int]]:
    """``(episodes, {why: stale episodes})`` of a leaderboard journal: an episode is stale when
    its agent's or the shared manifest's digest is not the one the installed code gives."""
    from mara_env.benchmarks.common.keys import build_agent
    from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
    from mara_env.benchmarks.leaderboard.journal import read_journal

    contents = read_journal(path)
    shared_of = functools.cache(shared_manifest)  # by the episodes' own curves (--traces)
    agents: dict[tuple[str, int], Manifest] = {}
    found: dict[str, int] = {}
    for row in contents.rows:
        spec = row["agent_spec"]
        world = int(contents.configs[row["config_hash"]].get("world_version", 1))
        if (spec, world) not in agents:
            agents[spec, world] = build_agent(spec, world).manifest
        reasons = [
            f"{what}: {describe_changes(manifest, contents.manifests, row[column])}"
            for what, manifest, column in (
                (spec, agents[spec, world], "agent_code"),
                ("shared", shared_of(row.get("traces")), "shared_code"),
            )
            if row[column] != manifest.digest
        ]
        if reasons:
            reason = "; ".join(reasons)
            found[reason] = found.get(reason, 0) + 1
    return len(contents.rows), found


# ------------------------------------------------------------------------------ command line
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.stores [--prune]``; returns 1 if a row is stale (and not pruned)."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.stores",
        description="Say whether every committed result follows from the current code, and "
        "why not; optionally drop the rows of old keys.",
    )
    parser.add_argument(
        "--prune", action="store_true", help="Drop the rows of old keys from the resumable stores."
    )
    args = parser.parse_args(argv)
    from mara_env.predictors.checkpoint import CheckpointError

    stale_stores = 0
    for store in STORES:
        where = store.path.relative_to(SOURCE_ROOT)
        if not store.path.exists():
            print(f"{store.name}: no file {where}; run `{store.command}`.")
            stale_stores += 1
            continue
        try:
            rows, stale = store.status()
        except CheckpointError as error:
            stale_stores += 1
            print(f"{store.name}: its current key needs a checkpoint that does not load ({where}):")
            print(f"  {error}")
            print(f"  restore the checkpoint, or replay the rows with `{store.command}`.")
            continue
        if not stale:
            print(f"{store.name}: all {rows} rows current ({where}).")
            continue
        count = sum(stale.values())
        if args.prune and store.open is not None:
            print(f"{store.name}: dropped {store.prune()} of {rows} rows of old keys ({where}).")
            continue
        stale_stores += 1
        print(f"{store.name}: {count} of {rows} rows were produced by other code ({where}):")
        for reason, rows_of_reason in stale.items():
            print(f"  {rows_of_reason} rows: {reason}")
        print(f"  replay them with `{store.command}`.")
    return 1 if stale_stores else 0


if __name__ == "__main__":
    sys.exit(main())
