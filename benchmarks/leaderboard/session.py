"""One leaderboard run: play the cells a journal lacks, then rank and write every output.

:func:`run_grid` records in the journal what the episodes depend on (the code manifests of the
shared code and of each agent, and the full config of each stratum), says how many finished
episodes were invalidated by changed code and why, plays the missing cells, writes the tables
and plots, and ends with a ``run`` record holding everything the tables were made from, which
is what ``--validate`` checks them against.

Example:
    See :mod:`mara_env.benchmarks.leaderboard` (``main`` is the way in).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.figures import PlotsUnavailable
from mara_env.benchmarks.common.keys import Manifest
from mara_env.benchmarks.leaderboard.backends import Backend, BackendError, execute_cells
from mara_env.benchmarks.leaderboard.cells import CellOutcome
from mara_env.benchmarks.leaderboard.grid import Cell, Grid, config_fields, config_hash
from mara_env.benchmarks.leaderboard.invalidation import format_invalidations, invalidations
from mara_env.benchmarks.leaderboard.journal import EpisodeJournal
from mara_env.benchmarks.leaderboard.plots import (
    GANTT_PLOT,
    LOAD_PLOT,
    plot_completion_vs_load,
    plot_gantts,
)
from mara_env.benchmarks.leaderboard.report import format_terminal, render_tables, write_atomically
from mara_env.benchmarks.leaderboard.summary import Leaderboard, build_leaderboard

#: Where a run writes the tracebacks of the cells that failed in it (removed when none did).
FAILURES_LOG = "failures.log"


@dataclass(frozen=True)
class RunSettings:
    """How a run ranks and reports.

    Attributes:
        output: The results directory.
        reference: The agent probabilities of improvement compare with.
        resamples: Bootstrap resamples.
        plots: Draw the figures.
        progress: Show the progress bar.
        command: The command line that regenerates the results (shown in the tables).
        provenance: The provenance facts of this run.
    """

    output: Path
    reference: str
    resamples: int
    plots: bool
    progress: bool
    command: str
    provenance: dict[str, Any]


def run_grid(
    grid: Grid,
    journal: EpisodeJournal,
    backend: Backend,
    manifests: dict[str, Manifest],
    settings: RunSettings,
) -> int:
    """Play what ``journal`` lacks of ``grid``, then rank and write; returns the exit code.

    Args:
        grid: The grid (its fingerprints are the installed code's).
        journal: The open journal.
        backend: Where cells run.
        manifests: ``{digest: manifest}`` of the shared code and of every agent of the grid.
        settings: Ranking and reporting settings.

    Returns:
        0, 1 if some cells failed, 2 if the backend could not start.

    Raises:
        KeyboardInterrupt: After a Ctrl-C (once the running cells are saved).
    """
    for digest, manifest in manifests.items():
        journal.add_manifest(digest, dict(manifest.items))
    for stratum in grid.strata:
        config = grid.config(*stratum)
        journal.add_config(config_hash(config), config_fields(config))
    cells = grid.cells()
    done = journal.done()
    todo = longest_first([cell for cell in cells if cell.key not in done], journal.rows)
    current = {digest: manifest.items for digest, manifest in manifests.items()}
    found = invalidations(todo, journal.rows, current, journal.contents.manifests)
    for line in format_invalidations(found):
        print(line)
    failures: list[CellOutcome] = []

    def on_outcome(outcome: CellOutcome) -> None:
        if outcome.error is None:
            journal.append(outcome.row)
        else:
            failures.append(outcome)

    start = time.perf_counter()
    try:
        execute_cells(
            todo, backend, on_outcome, progress=settings.progress, description="leaderboard"
        )
    except BackendError as error:
        print(f"mara-leaderboard: error: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - start

    board = build_leaderboard(
        grid, journal.rows, reference=settings.reference, n_resamples=settings.resamples
    )
    print(format_terminal(board))
    _report_failures(failures, settings.output)
    ran = len(todo) - len(failures)
    reused = len(cells) - len(todo)
    played = {cell.key for cell in todo}
    busy = sum(row.get("episode_seconds", 0.0) for row in journal.rows if row["cell"] in played)
    efficiency = busy / max(elapsed * getattr(backend, "workers", 1), 1e-9)
    run_fact = (
        f"{ran} episodes run in {elapsed:.1f} s wall on {backend.name}"
        + (
            f", parallel efficiency {efficiency:.2f} (episode-seconds / (wall x workers))"
            if ran
            else ""
        )
        + (f", {reused} reused from {journal.path}" if reused else "")
    )
    print(f"\n{len(cells)} episodes in the grid; {run_fact}.")
    facts = {**settings.provenance, "run": run_fact}
    plots = _plot(board, settings.output) if settings.plots else []
    tables = render_tables(board, provenance=facts, command=settings.command, plots=plots)
    for name, text in tables.items():
        write_atomically(settings.output / name, text)
    journal.add_run(run_record(grid, settings, facts, plots))
    print(f"Wrote {settings.output}/: {', '.join([*tables, *(name for _, name in plots)])}.")
    return 1 if failures else 0


def longest_first(cells: Sequence[Cell], rows: Sequence[dict[str, Any]]) -> list[Cell]:
    """``cells`` with the longest expected first, so that the run does not end waiting on one
    slow episode: an episode's expected seconds are its agent's mean on its config in ``rows``
    (a journal's earlier episodes), else its agent's mean over every config times the load
    factor's share, else the load factor (more load, more tasks). Ties keep grid order.

    Example:
        >>> from mara_env import get_config
        >>> cells = [Cell("edf", 1000, get_config("tiny"), "tiny", load_factor=f) for f in (1, 2)]
        >>> [cell.load_factor for cell in longest_first(cells, [])]
        [2, 1]
    """
    on_config: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        if "episode_seconds" in row:
            on_config.setdefault((row["agent"], row["config"]), []).append(row["episode_seconds"])
    by_agent: dict[str, list[float]] = {}
    for (agent, _), seconds in on_config.items():
        by_agent.setdefault(agent, []).extend(seconds)

    def expected(cell: Cell) -> float:
        factor = cell.load_factor or 1.0
        seconds = on_config.get((cell.name, cell.config_name))
        if seconds:
            return sum(seconds) / len(seconds)
        seconds = by_agent.get(cell.name)
        return factor * (sum(seconds) / len(seconds) if seconds else 1.0)

    return sorted(cells, key=expected, reverse=True)


def run_record(
    grid: Grid, settings: RunSettings, facts: dict[str, Any], plots: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """What a run's tables were made from: enough to render them again from the journal."""
    return {
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "grid": {
            "agents": list(grid.agents),
            "workloads": list(grid.workloads),
            "load_factors": list(grid.load_factors),
            "n_seeds": grid.n_seeds,
            "first_seed": grid.first_seed,
            "base": grid.base,
            "world_version": grid.world_version,
            "quick": grid.quick,
            "traces": grid.traces,
            "arrivals": grid.arrivals,
            "own_families": [list(pair) for pair in grid.own_families],
            "curve_durations": grid.curve_durations,
            "hopeless_curve_share": grid.hopeless_curve_share,
        },
        "specs": {agent: grid.spec(agent) for agent in grid.agents},
        "fingerprints": {"shared": grid.fingerprint, "agents": dict(grid.agent_fingerprints)},
        "configs": {grid.label(*s): config_hash(grid.config(*s)) for s in grid.strata},
        "reference": settings.reference,
        "resamples": settings.resamples,
        "command": settings.command,
        "provenance": facts,
        "plots": [list(plot) for plot in plots],
    }


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
    """Write this run's failures to the log (replacing an older run's), or remove the log."""
    log = directory / FAILURES_LOG
    if not failures:
        log.unlink(missing_ok=True)  # the cells that failed before have now run
        return
    by_agent: dict[str, list[CellOutcome]] = {}
    for outcome in failures:
        by_agent.setdefault(outcome.cell.name, []).append(outcome)
    text = "".join(
        f"== {outcome.cell.name} seed {outcome.cell.seed} {outcome.cell.config_name}\n"
        f"{outcome.details}\n"
        for outcome in failures
    )
    write_atomically(log, text)
    for agent, outcomes in by_agent.items():
        print(
            f"Error: {agent} failed in {len(outcomes)} episodes (not saved; a re-run retries "
            f"them). First: {str(outcomes[0].error).rstrip('.')}. Tracebacks in {log}.",
            file=sys.stderr,
        )
