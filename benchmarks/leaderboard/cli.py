"""The ``mara-leaderboard`` command: run the grid, resume, rank, write tables and plots."""

from __future__ import annotations

import argparse
import hashlib
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mara_env import ConfigError
from mara_env.benchmarks.common.keys import Manifest
from mara_env.benchmarks.common.provenance import provenance
from mara_env.benchmarks.common.write_faults import write_faults_end
from mara_env.benchmarks.leaderboard.backends import (
    Backend,
    LocalBackend,
    RayBackend,
)
from mara_env.benchmarks.leaderboard.building import build_agents
from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
from mara_env.benchmarks.leaderboard.grid import (
    DEFAULT_SEEDS,
    QUICK_SEEDS,
    Grid,
    parse_seeds,
)
from mara_env.benchmarks.leaderboard.journal import JOURNAL, EpisodeJournal, ResultsFileError
from mara_env.benchmarks.leaderboard.labels import agent_labels
from mara_env.benchmarks.leaderboard.options import build_parser
from mara_env.benchmarks.leaderboard.own_workloads import (
    check_arrivals_file,
    check_workloads,
    traces_and_workloads,
)
from mara_env.benchmarks.leaderboard.session import FAILURES_LOG, RunSettings, run_grid
from mara_env.benchmarks.leaderboard.summary import REFERENCE_AGENT
from mara_env.benchmarks.leaderboard.validate import validate_results
from mara_env.curves.sources import resolve_trace_source

#: The files derived from the journal, inside the output directory.
EXPORTS = ("episodes.csv", "episodes.json", "leaderboard.json", "leaderboard.md", FAILURES_LOG)


def _backend(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Backend:
    if args.backend == "local":
        if args.ray_address is not None:
            parser.error("--ray-address needs --backend ray.")
        return LocalBackend(args.workers)
    try:
        import ray  # noqa: F401 - only checking that it is there
    except ImportError:
        parser.error(
            "--backend ray needs Ray, which is not installed: pip install 'mara-env[ray]' (or "
            "use the default --backend local)."
        )
    return RayBackend(args.ray_address, args.workers)


def _check_output(parser: argparse.ArgumentParser, directory: Path) -> None:
    """Refuse a directory holding leaderboard outputs without their journal (never overwrite)."""
    if directory.exists() and not directory.is_dir():
        parser.error(f"--output {directory} is a file; give a directory.")
    if (directory / JOURNAL).exists():
        return
    clashes = [name for name in EXPORTS if (directory / name).exists()]
    if clashes:
        parser.error(
            f"{directory} holds {', '.join(clashes)} but no {JOURNAL}: results of another "
            "version or tool. They were left untouched; use another --output directory or "
            "move them away."
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the leaderboard (or ``--validate`` a results folder); returns the exit code.

    Returns:
        0 on success; 1 if some cells failed or some agents could not be built (the others are
        ranked; each failure is one line on stderr) or, validating, something differs; 2 for
        bad arguments or unusable results (raised as ``SystemExit``, as is a full disk while
        writing); 3 validating, when an agent cannot be imported here
        and nothing else differs; 130 after Ctrl-C.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    if args.validate is not None:
        try:
            return validate_results(
                args.validate,
                backend=_backend(parser, args),
                sample=args.sample,
                seed=args.sample_seed,
                progress=not args.no_progress,
            )
        except ResultsFileError as error:
            parser.error(str(error))
    requested = tuple(dict.fromkeys([*args.agents, *args.agent]))
    built, failed = build_agents(parser, requested, args.world_version)
    for agent, why in failed.items():
        print(f"mara-leaderboard: agent {agent!r} cannot be built: {why}", file=sys.stderr)
    if not built:
        parser.error("no agent could be built (see above).")
    specs = tuple(spec for spec in requested if spec in built)
    labels, notes = agent_labels({spec: agent.scheduler for spec, agent in built.items()})
    for note in notes:
        print(f"Note: {note}", file=sys.stderr)
    reference = labels.get(args.reference, args.reference)
    if args.reference is not None and reference not in labels.values():
        parser.error(
            f"--reference {args.reference!r} is not among the agents {list(labels.values())}."
        )
    traces, workloads = traces_and_workloads(parser, args)
    check_arrivals_file(parser, args.arrivals)
    shared = shared_manifest(traces)
    try:
        seeds = parse_seeds(args.seeds or [str(QUICK_SEEDS if args.quick else DEFAULT_SEEDS)])
    except ValueError as error:
        parser.error(str(error))
    try:
        grid = Grid(
            agents=tuple(labels[spec] for spec in specs),
            workloads=workloads,
            load_factors=tuple(dict.fromkeys(args.loads)),
            n_seeds=len(seeds),
            first_seed=seeds.start,
            base=args.config,
            world_version=args.world_version,
            quick=args.quick,
            fingerprint=shared.digest,
            specs={labels[spec]: spec for spec in specs if labels[spec] != spec},
            agent_fingerprints={labels[s]: built[s].manifest.digest for s in specs},
            traces=traces,
            arrivals=args.arrivals,
            own_families=tuple(args.own_families),
            curve_durations=args.durations,
            hopeless_curve_share=args.hopeless_curves,
        )
    except ConfigError as error:
        parser.error(str(error))
    check_workloads(parser, grid)
    backend = _backend(parser, args)
    _check_output(parser, args.output)
    facts = provenance()
    if traces is not None:
        facts["traces"] = {
            "file": traces,
            "sha256": hashlib.sha256(Path(traces).read_bytes()).hexdigest(),
            "families": list(resolve_trace_source(traces).families),
        }
    settings = RunSettings(
        output=args.output,
        reference=reference or REFERENCE_AGENT,
        resamples=args.resamples,
        plots=not args.no_plots,
        progress=not args.no_progress,
        command=shlex.join(["mara-leaderboard", *arguments]),
        provenance=facts,
    )
    nothing = "No episode was played"
    with write_faults_end("mara-leaderboard", lambda: nothing, "or give another --output"):
        try:
            journal = EpisodeJournal.open(
                args.output / JOURNAL,
                header={"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "provenance": facts},
                fresh=args.no_resume,
            )
        except ResultsFileError as error:
            parser.error(str(error))
    manifests: dict[str, Manifest] = {shared.digest: shared}
    manifests.update({agent.manifest.digest: agent.manifest for agent in built.values()})

    def kept() -> str:
        return f"Every finished episode is kept: {len(journal.rows)} in {journal.path}"

    rerun = "it reuses them and writes the tables"
    with journal, write_faults_end("mara-leaderboard", kept, rerun):
        try:
            code = run_grid(grid, journal, backend, manifests, settings)
            for agent, why in failed.items():
                print(
                    f"mara-leaderboard: agent {agent!r} was left out, it cannot be built: {why}",
                    file=sys.stderr,
                )
            return max(code, 1) if failed else code
        except KeyboardInterrupt:  # before or after the episodes (during them it is deferred)
            print(
                f"\nInterrupted: finished episodes are saved in {journal.path}; run the same "
                "command again to resume.",
                file=sys.stderr,
            )
            return 130
