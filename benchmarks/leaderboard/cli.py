"""The ``mara-leaderboard`` command: run the grid, resume, rank, write tables and plots."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import known_agents, make_agent
from benchmarks.arguments import positive_float, positive_int
from benchmarks.leaderboard.backends import (
    Backend,
    BackendError,
    LocalBackend,
    RayBackend,
    available_cores,
    execute_cells,
)
from benchmarks.leaderboard.cells import CellOutcome
from benchmarks.leaderboard.grid import (
    DEFAULT_LOAD_FACTORS,
    DEFAULT_SEEDS,
    DEFAULT_WORKLOADS,
    EVALUATION_SEED_BASE,
    QUICK_ARRIVAL_HORIZON,
    QUICK_SEEDS,
    Grid,
)
from benchmarks.leaderboard.journal import EpisodeJournal, ResultsFileError
from benchmarks.leaderboard.plots import (
    GANTT_PLOT,
    LOAD_PLOT,
    PlotsUnavailable,
    plot_completion_vs_load,
    plot_gantts,
)
from benchmarks.leaderboard.provenance import provenance, results_fingerprint
from benchmarks.leaderboard.report import (
    episodes_csv,
    episodes_json,
    format_markdown,
    format_terminal,
    summary_json,
    write_atomically,
)
from benchmarks.leaderboard.summary import REFERENCE_AGENT, Leaderboard, build_leaderboard
from mara_env import TRAINING_LOAD, WORKLOADS, ConfigError

#: Where results go unless ``--output`` says otherwise (relative to the working directory).
DEFAULT_OUTPUT = Path("leaderboard_results")
#: The resumable results file, and the files derived from it, inside the output directory.
JOURNAL = "episodes.jsonl"
EXPORTS = ("episodes.csv", "episodes.json", "leaderboard.json", "leaderboard.md", "failures.log")


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    registered = known_agents()
    parser = argparse.ArgumentParser(
        prog="mara-leaderboard",
        description="Rank schedulers by completion rate over agents x workloads x loads x "
        f"evaluation seeds ({EVALUATION_SEED_BASE}, {EVALUATION_SEED_BASE + 1}, ...), with "
        "bootstrap confidence intervals, tables, plots and resumable results.",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(registered),
        metavar="AGENT",
        help="The agents to rank: registered names or import paths 'package.module:ClassName' "
        f"(default: every registered agent: {' '.join(registered)}). Import paths resolve "
        "against the working directory, which the command puts first on sys.path as python -m "
        "does: run it from the folder holding my_sched.py to rank my_sched:MyScheduler.",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="IMPORT_PATH",
        help="Add a scheduler of your own beside --agents, e.g. my_pkg.my_module:MyScheduler "
        "(any class following agents.base.Scheduler, importable from the working directory or "
        "installed); repeatable.",
    )
    parser.add_argument(
        "--workloads",
        "--workload",
        nargs="+",
        default=list(DEFAULT_WORKLOADS),
        metavar="WORKLOAD",
        help=f"Workloads (default: {' '.join(DEFAULT_WORKLOADS)}; known: "
        f"{' '.join(sorted(WORKLOADS))}).",
    )
    parser.add_argument(
        "--loads",
        nargs="+",
        type=positive_float,
        default=list(DEFAULT_LOAD_FACTORS),
        metavar="FACTOR",
        help=f"Loads as multiples of the training load {TRAINING_LOAD} (default: "
        f"{' '.join(f'{f:g}' for f in DEFAULT_LOAD_FACTORS)}).",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=None,
        help=f"Evaluation seeds per agent, workload and load (default {DEFAULT_SEEDS}; "
        f"{QUICK_SEEDS} with --quick).",
    )
    parser.add_argument(
        "--config",
        default="evaluation",
        help="Config preset the grid varies (default: 'evaluation', held-out test curves).",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"A fast look: {QUICK_SEEDS} seeds, arrivals during {QUICK_ARRIVAL_HORIZON} epochs.",
    )
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="'local' (default): worker processes on this machine; 'ray': Ray tasks on a "
        "cluster (--ray-address) or a local Ray instance. Same numbers either way.",
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=available_cores(),
        help="Local worker processes, or CPUs of a local Ray instance (default: the available "
        "cores; 1 runs in this process).",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDRESS",
        help="Connect to an existing Ray cluster ('auto' on a cluster node, "
        "'ray://head:10001' from outside); default: start a local instance.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help=f"Results directory (default: ./{DEFAULT_OUTPUT}): {JOURNAL} (every finished "
        "episode, appended as it ends; a re-run resumes from it), episodes.csv/.json, "
        "leaderboard.md/.json and the plots.",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help=f"Start afresh; the old {JOURNAL} is kept as a timestamped backup.",
    )
    parser.add_argument(
        "--reference",
        default=None,
        metavar="AGENT",
        help="Agent that the probability of improvement compares with (default "
        f"{REFERENCE_AGENT}, when it runs).",
    )
    parser.add_argument(
        "--resamples",
        type=positive_int,
        default=5000,
        help="Bootstrap resamples for the confidence intervals (default 5000).",
    )
    parser.add_argument("--no-plots", action="store_true", help="Skip the figures.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def check_agents(parser: argparse.ArgumentParser, agents: Sequence[str]) -> None:
    """Build each agent once so that a typo or a missing dependency fails before any episode."""
    for agent in agents:
        try:
            make_agent(agent)
        except Exception as error:
            message = (
                str(error)
                if isinstance(error, (ImportError, ValueError))
                else (f"Building agent {agent!r} failed: {type(error).__name__}: {error}")
            )
            missing = _missing_module(error)
            own_module = agent.partition(":")[0]
            if missing is not None and not (own_module + ".").startswith(missing + "."):
                message += (
                    f" Agent {agent!r} needs {missing!r}, which is not installed: install it "
                    "(pip install 'mara-env[torch]' for the learned agents) or leave the agent "
                    "out with --agents."
                )
            parser.error(message)


def _missing_module(error: BaseException | None) -> str | None:
    """The module whose absence caused ``error`` (following its causes), if any."""
    while error is not None:
        if isinstance(error, ModuleNotFoundError) and error.name:
            return error.name
        error = error.__cause__ or error.__context__
    return None


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
    """Run the leaderboard; returns the process exit code (1 if some cells failed)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(arguments)
    agents = tuple(dict.fromkeys([*args.agents, *args.agent]))
    check_agents(parser, agents)
    if args.reference is not None and args.reference not in agents:
        parser.error(f"--reference {args.reference!r} is not among the agents {list(agents)}.")
    try:
        grid = Grid(
            agents=agents,
            workloads=tuple(dict.fromkeys(args.workloads)),
            load_factors=tuple(dict.fromkeys(args.loads)),
            n_seeds=args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS),
            base=args.config,
            quick=args.quick,
            fingerprint=results_fingerprint(),
        )
    except ConfigError as error:
        parser.error(str(error))
    backend = _backend(parser, args)
    _check_output(parser, args.output)
    facts = provenance()
    command = shlex.join(["mara-leaderboard", *arguments])
    try:
        journal = EpisodeJournal.open(
            args.output / JOURNAL,
            header={"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "provenance": facts},
            fresh=args.no_resume,
        )
    except ResultsFileError as error:
        parser.error(str(error))
    with journal:
        return _run(grid, journal, backend, args, facts, command)


def _run(
    grid: Grid,
    journal: EpisodeJournal,
    backend: Backend,
    args: argparse.Namespace,
    facts: dict[str, Any],
    command: str,
) -> int:
    cells = grid.cells()
    done = journal.done()
    todo = [cell for cell in cells if cell.key not in done]
    failures: list[CellOutcome] = []

    def on_outcome(outcome: CellOutcome) -> None:
        if outcome.error is None:
            journal.append(outcome.row)
        else:
            failures.append(outcome)

    start = time.perf_counter()
    try:
        execute_cells(
            todo, backend, on_outcome, progress=not args.no_progress, description="leaderboard"
        )
    except KeyboardInterrupt:
        print(
            f"\nInterrupted: finished episodes are saved in {journal.path}; run the same "
            "command again to resume.",
            file=sys.stderr,
        )
        return 130
    except BackendError as error:
        print(f"mara-leaderboard: error: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start

    board = build_leaderboard(
        grid, journal.rows, reference=args.reference or REFERENCE_AGENT, n_resamples=args.resamples
    )
    print(format_terminal(board))
    _report_failures(failures, args.output)
    ran = len(todo) - len(failures)
    reused = len(cells) - len(todo)
    run_fact = (
        f"{ran} episodes run in {elapsed:.1f} s wall on {backend.name}"
        f"{f', {reused} reused from {journal.path}' if reused else ''}"
    )
    print(f"\n{len(cells)} episodes in the grid; {run_fact}.")
    facts = {**facts, "run": run_fact}
    plots = [] if args.no_plots else _plot(board, args.output)
    rows = list(board.rows)
    write_atomically(args.output / "episodes.csv", episodes_csv(rows))
    write_atomically(args.output / "episodes.json", episodes_json(rows))
    write_atomically(args.output / "leaderboard.json", summary_json(board, facts, command))
    markdown = format_markdown(board, provenance=facts, command=command, plots=plots)
    write_atomically(args.output / "leaderboard.md", markdown)
    print(
        f"Wrote {args.output}/: leaderboard.md, leaderboard.json, episodes.csv, episodes.json"
        f"{''.join(f', {name}' for _, name in plots)}."
    )
    return 1 if failures else 0


def _plot(board: Leaderboard, directory: Path) -> list[tuple[str, str]]:
    plots: list[tuple[str, str]] = []
    try:
        if board.summary is not None:
            plot_completion_vs_load(board, directory / LOAD_PLOT)
            plots.append(("Completion rate against load", LOAD_PLOT))
        written, notes = plot_gantts(board, directory / GANTT_PLOT)
        if written:
            plots.append(("One episode per agent", GANTT_PLOT))
    except PlotsUnavailable as error:
        print(f"Note: {error}", file=sys.stderr)
        return plots
    for note in notes:
        print(f"Note: {note}", file=sys.stderr)
    return plots


def _report_failures(failures: Sequence[CellOutcome], directory: Path) -> None:
    if not failures:
        return
    log = directory / "failures.log"
    by_agent: dict[str, list[CellOutcome]] = {}
    for outcome in failures:
        by_agent.setdefault(outcome.cell.agent, []).append(outcome)
    with log.open("a") as handle:
        for outcome in failures:
            cell = outcome.cell
            handle.write(
                f"== {cell.agent} seed {cell.seed} {cell.config_name}\n{outcome.details}\n"
            )
    for agent, outcomes in by_agent.items():
        print(
            f"Error: {agent} failed in {len(outcomes)} episodes (not saved; a re-run retries "
            f"them). First: {outcomes[0].error}. Tracebacks in {log}.",
            file=sys.stderr,
        )
