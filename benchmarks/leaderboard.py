"""The leaderboard: rank schedulers by completion rate over fixed evaluation seeds.

Runs every (agent, seed) cell of one configuration, in parallel worker processes, and prints a
table sorted by mean completion rate with 95% bootstrap confidence intervals.

Usage::

    python -m benchmarks.leaderboard                       # all shipped agents, 10 seeds
    mara-leaderboard --agents edf least_slack mypkg.sched:MyScheduler --seeds 20
    mara-leaderboard --quick --output results/quick        # a fast look, saved to disk

Seeds: evaluation episodes use the environment seeds ``1000, 1001, ...`` (see
:data:`EVALUATION_SEED_BASE`). Training and tuning code in this project uses seeds below 1000, so
no scheduler is ever evaluated on an episode it was trained on.

Output: with ``--output DIR``, every finished cell's episode metrics are appended to
``DIR/episodes.csv`` as soon as the cell ends (flushed), and ``DIR/leaderboard.md`` holds the
final table. Running the same command again reuses the cells already in ``episodes.csv``, so an
interrupted run loses no finished work; ``--no-resume`` starts the file afresh.

Example:
    >>> from benchmarks.leaderboard import main
    >>> main(["--agents", "edf", "random", "--config", "tiny", "--seeds", "2", "--workers", "1",
    ...       "--no-progress"])  # doctest: +ELLIPSIS
    agent ...
    0
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from agents import AgentImportError, UnknownAgentError, evaluate, known_agents, make_agent
from agents.statistics import mean_ci
from mara_env import WORKLOADS, ClusterConfig, ConfigError, get_config

#: Evaluation episodes use environment seeds from here on; training code uses seeds below it.
EVALUATION_SEED_BASE = 1000
#: Seeds per agent by default (``--seeds``) and with ``--quick``.
DEFAULT_SEEDS = 10
QUICK_SEEDS = 3
#: With ``--quick``, tasks arrive during at most this many epochs (shorter episodes).
QUICK_ARRIVAL_HORIZON = 30

#: Columns written before the episode metrics in ``episodes.csv``.
KEY_COLUMNS = ("agent", "config", "config_hash", "seed")

#: The table's columns: (heading, metric, format).
TABLE_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("completed", "completed", ".1f"),
    ("arrived", "arrived", ".1f"),
    ("utilisation", "utilisation", ".3f"),
    ("switches", "switches", ".0f"),
    ("wasted node-epochs", "wasted_node_epochs", ".1f"),
    ("illegal actions", "illegal_actions", ".1f"),
    ("decision ms/epoch", "decision_ms_per_epoch", ".3f"),
)


@dataclass(frozen=True)
class Cell:
    """One episode to run: an agent (name or import path) on one seed of one config."""

    agent: str
    seed: int
    config: ClusterConfig
    config_name: str

    @property
    def key(self) -> tuple[str, str, int]:
        """Identifies the cell's rows in ``episodes.csv``."""
        return (self.agent, config_hash(self.config), self.seed)


def config_hash(config: ClusterConfig) -> str:
    """A short fingerprint of every field of ``config`` (rows of different configs never mix).

    Example:
        >>> from mara_env import get_config
        >>> config_hash(get_config("tiny")) == config_hash(get_config("tiny"))
        True
    """
    return hashlib.sha256(repr(config).encode()).hexdigest()[:12]


def run_cell(cell: Cell) -> list[dict[str, Any]]:
    """Run one cell and return its rows (one per episode), keyed by :data:`KEY_COLUMNS`."""
    rows = evaluate(make_agent(cell.agent), cell.config, [cell.seed])
    keyed = []
    for row in rows:
        metrics = {k: v for k, v in row.items() if k not in KEY_COLUMNS}
        keyed.append(
            {
                "agent": cell.agent,
                "config": cell.config_name,
                "config_hash": config_hash(cell.config),
                "seed": cell.seed,
                **metrics,
            }
        )
    return keyed


def run_cells(
    cells: Sequence[Cell],
    *,
    workers: int,
    on_rows: Callable[[list[dict[str, Any]]], None],
    progress: bool = True,
    description: str = "episodes",
) -> None:
    """Run ``cells`` on ``workers`` processes, calling ``on_rows`` as each cell finishes.

    With ``workers == 1`` the cells run in this process (no pool). A first Ctrl-C stops
    starting new cells, lets the running ones finish (their rows still reach ``on_rows``) and
    then raises ``KeyboardInterrupt``; a second Ctrl-C stops at once.
    """
    bar = tqdm(total=len(cells), desc=description, unit="episode", disable=not progress)
    with _DeferredInterrupt() as interrupt:
        try:
            if workers <= 1 or len(cells) <= 1:
                for cell in cells:
                    if interrupt.requested:
                        break
                    on_rows(run_cell(cell))
                    bar.update()
            else:
                _run_in_pool(cells, min(workers, len(cells)), on_rows, bar, interrupt)
        finally:
            bar.close()
        if interrupt.requested:
            raise KeyboardInterrupt


def _run_in_pool(
    cells: Sequence[Cell],
    workers: int,
    on_rows: Callable[[list[dict[str, Any]]], None],
    bar: tqdm,
    interrupt: _DeferredInterrupt,
) -> None:
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    pending: set[Future[list[dict[str, Any]]]] = set()
    try:
        pending = {pool.submit(run_cell, cell) for cell in cells}
        while pending and not interrupt.requested:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                on_rows(future.result())
                bar.update()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for future in pending:
        if future.done() and not future.cancelled() and future.exception() is None:
            on_rows(future.result())
            bar.update()


def _ignore_interrupts() -> None:
    """Worker initializer: Ctrl-C is the main process's business."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class _DeferredInterrupt:
    """Turns the first SIGINT into a flag (main thread only); the second one interrupts."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _DeferredInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nStopping after the running episodes (Ctrl-C again to abort).", file=sys.stderr)

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)


class ResultsFileError(ValueError):
    """An existing ``episodes.csv`` that this version cannot resume from."""


class EpisodeLog:
    """``episodes.csv``: each finished cell's rows are appended and flushed at once.

    The header is :data:`KEY_COLUMNS` followed by the metrics of the first rows written.

    Args:
        path: The CSV file.
        resume: Keep the rows already in the file; otherwise start it afresh.

    Raises:
        ResultsFileError: If the existing file cannot be read back.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.columns: list[str] = []
        self.rows: list[dict[str, Any]] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume and path.exists() and path.stat().st_size > 0:
            self._read()
        else:
            path.write_text("")

    def _read(self) -> None:
        with self.path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            columns = list(reader.fieldnames or [])
            if columns[: len(KEY_COLUMNS)] != list(KEY_COLUMNS):
                raise ResultsFileError(
                    f"{self.path} does not start with the columns {list(KEY_COLUMNS)}; it was "
                    "not written by this leaderboard. Use another --output directory, or "
                    "--no-resume to start it afresh."
                )
            try:
                self.rows = [_parse_row(row) for row in reader]
            except (TypeError, ValueError) as error:
                raise ResultsFileError(
                    f"{self.path} has a malformed row ({error}); an interrupted write? Delete the "
                    "last line, or use --no-resume to start it afresh."
                ) from error
        self.columns = columns

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Write ``rows`` at the end of the file and flush them to disk."""
        if not rows:
            return
        columns = [*KEY_COLUMNS, *(key for key in rows[0] if key not in KEY_COLUMNS)]
        if self.columns and columns != self.columns:
            raise ResultsFileError(
                f"{self.path} has columns {self.columns}, but episodes now report {columns}. "
                "Use another --output directory, or --no-resume to start the file afresh."
            )
        with self.path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, columns)
            if not self.columns:
                writer.writeheader()
                self.columns = columns
            writer.writerows(rows)
            handle.flush()
            os.fsync(handle.fileno())
        self.rows.extend(rows)

    def done(self) -> set[tuple[str, str, int]]:
        """Keys (agent, config hash, seed) of the cells already in the file."""
        return {_row_key(row) for row in self.rows}


def _row_key(row: dict[str, Any]) -> tuple[str, str, int]:
    return (row["agent"], row["config_hash"], int(row["seed"]))


def _parse_row(row: dict[str, str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("agent", "config", "config_hash"):
            parsed[key] = value
        elif key == "seed":
            parsed[key] = int(value)
        else:
            parsed[key] = float(value)
    return parsed


def summary_rows(rows: Iterable[dict[str, Any]], agents: Sequence[str]) -> list[dict[str, Any]]:
    """One summary per agent (mean of each metric, completion-rate CI), best first."""
    by_agent: dict[str, list[dict[str, Any]]] = {agent: [] for agent in agents}
    for row in rows:
        if row["agent"] in by_agent:
            by_agent[row["agent"]].append(row)
    table = []
    for agent, episodes in by_agent.items():
        if not episodes:
            continue
        summary: dict[str, Any] = {
            "agent": agent,
            "episodes": len(episodes),
            "completion_rate": mean_ci(row["completion_rate"] for row in episodes),
        }
        for _, metric, _ in TABLE_COLUMNS:
            summary[metric] = sum(row[metric] for row in episodes) / len(episodes)
        table.append(summary)
    table.sort(key=lambda summary: -summary["completion_rate"].mean)
    return table


def format_table(table: Sequence[dict[str, Any]], *, markdown: bool = False) -> str:
    """The summary as aligned text (or a Markdown table)."""
    headings = ["agent", "completion rate (95% CI)", *(h for h, _, _ in TABLE_COLUMNS)]
    lines = []
    for summary in table:
        rate = summary["completion_rate"]
        cells = [summary["agent"], f"{rate:.3f}"]
        if markdown:
            cells[1] += f" [{rate.low:.3f}, {rate.high:.3f}]"
        cells += [format(summary[metric], spec) for _, metric, spec in TABLE_COLUMNS]
        lines.append(cells)
    if markdown:
        rule = ["---", *(["---:"] * (len(headings) - 1))]
        return "\n".join("| " + " | ".join(row) + " |" for row in [headings, rule, *lines])
    widths = [max(len(str(row[i])) for row in [headings, *lines]) for i in range(len(headings))]
    text = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in [headings, *lines]
    ]
    return "\n".join(text)


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="mara-leaderboard",
        description="Rank schedulers by completion rate on fixed evaluation seeds "
        f"({EVALUATION_SEED_BASE}, {EVALUATION_SEED_BASE + 1}, ...).",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        default=list(known_agents()),
        metavar="AGENT",
        help="Shipped agent names or import paths 'package.module:ClassName' "
        f"(default: all shipped: {' '.join(known_agents())}).",
    )
    parser.add_argument(
        "--config",
        default="evaluation",
        help="Config preset (default: 'evaluation', the training load on held-out test curves).",
    )
    parser.add_argument(
        "--workload",
        default=None,
        choices=sorted(WORKLOADS),
        help="Task families to draw from (default: the preset's, 'in_distribution').",
    )
    parser.add_argument(
        "--seeds",
        type=_positive_int,
        default=None,
        help=f"Episodes per agent (default {DEFAULT_SEEDS}; {QUICK_SEEDS} with --quick).",
    )
    parser.add_argument(
        "--workers",
        type=_positive_int,
        default=available_cores(),
        help="Worker processes (default: the number of CPU cores; 1 runs in this process).",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"Fewer seeds and arrivals during at most {QUICK_ARRIVAL_HORIZON} epochs.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="Write episodes.csv (appended cell by cell, resumable) and leaderboard.md here.",
    )
    parser.add_argument(
        "--no-resume",
        action="store_true",
        help="Start DIR/episodes.csv afresh instead of reusing its finished cells.",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def available_cores() -> int:
    """CPU cores this process may use (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def resolve_config(name: str, *, quick: bool, workload: str | None = None) -> ClusterConfig:
    """The preset ``name`` on ``workload`` (if given), shortened with ``quick``; raises
    ``ConfigError`` if unknown."""
    config = get_config(name, workload=workload)
    if quick and config.arrival_horizon > QUICK_ARRIVAL_HORIZON:
        config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
    return config


def check_agents(parser: argparse.ArgumentParser, agents: Sequence[str]) -> None:
    """Build each agent once so that a typo fails before any episode runs."""
    for agent in agents:
        try:
            make_agent(agent)
        except (UnknownAgentError, AgentImportError) as error:
            parser.error(str(error))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the leaderboard; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    agents = list(dict.fromkeys(args.agents))
    check_agents(parser, agents)
    try:
        config = resolve_config(args.config, quick=args.quick, workload=args.workload)
    except ConfigError as error:
        parser.error(str(error))
    n_seeds = args.seeds or (QUICK_SEEDS if args.quick else DEFAULT_SEEDS)
    seeds = range(EVALUATION_SEED_BASE, EVALUATION_SEED_BASE + n_seeds)
    label = args.config if args.workload is None else f"{args.config}/{args.workload}"
    cells = [Cell(agent, seed, config, label) for agent in agents for seed in seeds]

    rows: list[dict[str, Any]] = []
    skipped = 0
    on_rows: Callable[[list[dict[str, Any]]], None] = rows.extend
    if args.output is not None:
        try:
            log = EpisodeLog(args.output / "episodes.csv", resume=not args.no_resume)
        except ResultsFileError as error:
            parser.error(str(error))
        done = log.done()
        wanted = {cell.key for cell in cells}
        rows = [row for row in log.rows if _row_key(row) in wanted]
        skipped = sum(cell.key in done for cell in cells)
        cells = [cell for cell in cells if cell.key not in done]

        def on_rows(new: list[dict[str, Any]]) -> None:
            log.append(new)
            rows.extend(new)

    start = time.perf_counter()
    try:
        run_cells(cells, workers=args.workers, on_rows=on_rows, progress=not args.no_progress)
    except KeyboardInterrupt:
        if args.output is None:
            advice = "use --output DIR to keep finished episodes across runs."
        else:
            advice = f"finished episodes are saved in {log.path}; run again to resume."
        print(f"\nInterrupted: {advice}", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - start

    table = summary_rows(rows, agents)
    print(format_table(table))
    reused = f", {skipped} reused from {args.output}" if skipped else ""
    print(
        f"\nconfig {label!r}{' (quick)' if args.quick else ''}, seeds "
        f"{seeds.start}..{seeds.stop - 1}: {len(cells)} episodes run in {elapsed:.1f} s on "
        f"{args.workers} worker(s){reused}."
    )
    if args.output is not None:
        write_markdown(args.output / "leaderboard.md", table, label, args.quick, config, seeds)
        print(f"Wrote {args.output / 'leaderboard.md'} and {args.output / 'episodes.csv'}.")
    return 0


def write_markdown(
    path: Path,
    table: Sequence[dict[str, Any]],
    label: str,
    quick: bool,
    config: ClusterConfig,
    seeds: range,
) -> None:
    """Write the leaderboard as a Markdown page."""
    lines = [
        "# mara-env leaderboard",
        "",
        f"Config `{label}`{' (quick)' if quick else ''} "
        f"(hash `{config_hash(config)}`): {config.n_nodes} nodes, {config.n_slots} slots, load "
        f"{config.load:g}, split `{config.split}`, arrivals during {config.arrival_horizon} "
        f"epochs. Seeds {seeds.start}..{seeds.stop - 1}, one episode each. Completion rate = "
        "completed / arrived: mean ± half-width [95% percentile-bootstrap interval]; other "
        "columns are means per episode.",
        "",
        format_table(table, markdown=True),
        "",
    ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
