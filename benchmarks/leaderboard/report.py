"""The leaderboard as text: a terminal table, a Markdown page, and CSV / JSON exports.

The main table lists agents by mean completion rate over every episode of the grid, with its
95% stratified-bootstrap interval, the interquartile mean (IQM), the probability of improving
on the reference agent (LARA), and each workload's mean with the agent's rank on it. Ranks are
shared where the intervals do not tell agents apart (:data:`RANK_NOTE`). The
Markdown page adds one table per workload (mean and interval per load), the episode means of
the other metrics, illegal-action counts, the provenance and the command that regenerates it.

Every file is written to a temporary name and renamed into place, so a reader never sees half a
file. The CSV and JSON exports hold every episode of the grid, in grid order.

Example:
    >>> from mara_env.benchmarks.leaderboard.grid import Grid
    >>> from mara_env.benchmarks.leaderboard.summary import build_leaderboard
    >>> grid = Grid(agents=("a", "b"), workloads=("rl",), load_factors=(1.0,), n_seeds=2)
    >>> rows = [{"agent": agent, "workload": "rl", "load_factor": 1.0, "seed": seed,
    ...          "completion_rate": rate} for agent, seed, rate in
    ...         [("a", 1000, 0.5), ("a", 1001, 0.7), ("b", 1000, 0.9), ("b", 1001, 0.9)]]
    >>> print(format_terminal(build_leaderboard(grid, rows, n_resamples=100)))
    rank  agent  completion rate [95% CI]          IQM [95% CI]  rl (rank)
       1  b          0.900 [0.900, 0.900]  0.900 [0.900, 0.900]  0.900 (1)
       2  a          0.600 [0.500, 0.700]  0.600 [0.500, 0.700]  0.600 (2)
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env import TRAINING_LOAD
from mara_env.atomic_files import write_atomically as write_atomically  # re-exported
from mara_env.benchmarks.leaderboard.cells import KEY_COLUMNS
from mara_env.benchmarks.leaderboard.grid import Grid
from mara_env.benchmarks.leaderboard.summary import EPISODE_METRICS, Leaderboard
from mara_env.worlds.config import env_id

#: Marks a privileged agent in the tables (explained in a note below them).
PRIVILEGED_MARK = "(privileged)"
#: What a rank says, under the main table.
RANK_NOTE = (
    "Ranks are shared: an agent's rank is 1 plus the number of agents whose lead over it, paired "
    "on the same episodes, has a 95% bootstrap interval above 0, so agents within noise of each "
    "other share a rank (and one agent can share a rank with two that do not share one). Rows "
    "are in order of the mean."
)


def main_table(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """Headings and rows of the main table (best agent first)."""
    summary = board.summary
    headings = ["rank", "agent", "completion rate [95% CI]", "IQM [95% CI]"]
    if board.reference is not None:
        headings.append(f"P(better than {board.reference}) [95% CI]")
    if summary is None:
        return headings, []
    headings += [f"{workload} (rank)" for workload in summary.workloads]
    lines = []
    for agent in board.ranked:
        a = board.index(agent)
        label = f"{agent} {PRIVILEGED_MARK}" if agent in board.privileged else agent
        rank = summary.overall_shared_rank[a]
        line = [str(rank), label, f"{summary.overall[a]}", f"{summary.iqm[a]}"]
        if board.reference is not None:
            line.append(f"{summary.improvement[a]:.2f}")
        line += [
            f"{interval.estimate:.3f} ({rank})"
            for interval, rank in zip(
                summary.workload[a], summary.workload_shared_rank[a], strict=True
            )
        ]
        lines.append(line)
    return headings, lines


def format_terminal(board: Leaderboard) -> str:
    """The main table, aligned for a terminal, then notes on incomplete agents and illegal
    actions."""
    headings, lines = main_table(board)
    text = _aligned(headings, lines) if lines else "No agent has finished every cell yet."
    ranks = [line[0] for line in lines]
    shared = ["Agents within noise of each other share a rank (leaderboard.md says how)."]
    return "\n".join([text, *(shared if len(set(ranks)) < len(ranks) else []), *_notes(board)])


def _world_changes(grid: Grid) -> str:
    """How the grid's task drawing departs from the preset's (arrivals, durations, hopeless
    tasks' curves), as a clause of the page's first sentence ("" when it does not; the curves'
    file is named in the provenance)."""
    changes = []
    if grid.arrivals != "poisson":
        changes.append(f"`{Path(grid.arrivals).stem}` arrivals")
    if grid.curve_durations != "stretched":
        changes.append(f"{grid.curve_durations} durations (`--durations`)")
    if grid.hopeless_curve_share is not None:
        changes.append(
            f"hopeless tasks on the nearest {grid.hopeless_curve_share:g} of their family's "
            "never-reaching curves (`--hopeless-curves`)"
        )
    return f", with {', '.join(changes)}" if changes else ""


def format_markdown(
    board: Leaderboard,
    *,
    provenance: dict[str, Any],
    command: str,
    plots: Sequence[tuple[str, str]] = (),
) -> str:
    """The leaderboard page: tables, plots (``(title, file name)`` pairs), provenance."""
    grid = board.grid
    seeds = grid.seeds
    loads = ", ".join(f"{f:g}x ({f * TRAINING_LOAD:g})" for f in grid.load_factors)
    lines = [
        "# mara-env leaderboard",
        "",
        f"{len(grid.agents)} agents x {len(grid.workloads)} workloads "
        f"({', '.join(grid.workloads)}) x {len(grid.load_factors)} loads ({loads} of the "
        f"training load) x {grid.n_seeds} evaluation seeds ({seeds.start}..{seeds.stop - 1}), "
        f"one episode each, on the `{grid.base}` preset"
        f"{' shortened by --quick' if grid.quick else ''} of `{env_id(grid.world_version)}`"
        f"{_world_changes(grid)}. "
        "Completion rate = completed / arrived per episode; the mean over all episodes with a "
        "95% stratified-bootstrap interval (seeds resampled within each workload and load), the "
        "interquartile mean (IQM)"
        + (
            f", and the probability that the agent beats `{board.reference}` on an episode of "
            "the same workload and load (ties count half)"
            if board.reference is not None
            else ""
        )
        + ". Workload columns: mean (rank).",
        "",
    ]
    headings, rows = main_table(board)
    lines += [_markdown(headings, rows) if rows else "No agent has finished every cell.", ""]
    if rows:
        lines += [RANK_NOTE, ""]
    notes = _notes(board)
    if notes:
        lines += [*(f"{note}  " for note in notes), ""]
    for title, name in plots:
        lines += [f"![{title}]({name})", ""]
    if board.summary is not None:
        lines += ["## By workload and load", ""]
        lines += _per_workload(board)
        lines += ["## Episode means", ""]
        headings = ["agent", *(heading for heading, _, _ in EPISODE_METRICS)]
        table = [
            [agent, *(format(board.episode_means(agent)[c], f) for _, c, f in EPISODE_METRICS)]
            for agent in board.ranked
        ]
        lines += [_markdown(headings, table), ""]
    lines += ["## Provenance", "", f"Regenerate: `{command}`", ""]
    first = grid.config(*grid.strata[0])
    lines += [
        f"Config of the first column ({grid.label(*grid.strata[0])}); the others differ only "
        "in `family_weights` (the workload) and `load`:",
        "",
        f"    {first!r}",
        "",
    ]
    lines += _provenance_lines(provenance)
    return "\n".join(lines) + "\n"


def _per_workload(board: Leaderboard) -> list[str]:
    summary = board.summary
    grid = board.grid
    lines: list[str] = []
    if summary is None:
        return lines
    for workload in grid.workloads:
        lines += [f"**{workload}**", ""]
        headings = ["agent", *(f"{f:g}x load [95% CI]" for f in grid.load_factors)]
        table = []
        for agent in board.ranked:
            a = board.index(agent)
            table.append(
                [
                    agent,
                    *(
                        f"{summary.stratum[a][grid.strata.index((workload, f))]}"
                        for f in grid.load_factors
                    ),
                ]
            )
        lines += [_markdown(headings, table), ""]
    return lines


def _notes(board: Leaderboard) -> list[str]:
    notes = []
    if board.privileged & set(board.ranked):
        notes.append(
            f"{PRIVILEGED_MARK}: reads the environment's hidden state (true loss "
            "curves or remaining need), which no deployable scheduler sees; a reference, not a "
            "competitor."
        )
    for agent, (illegal, invalid) in board.illegal.items():
        notes.append(
            f"Note: {agent} returned {illegal:.0f} masked and {invalid:.0f} out-of-range actions "
            "(each replaced by idle; the episodes ran on)."
        )
    for agent, count in board.missing.items():
        notes.append(
            f"Note: {agent} is not ranked: {count} of its {_cells_per_agent(board)} episodes "
            "have not finished (failed or not run yet)."
        )
    return notes


def _cells_per_agent(board: Leaderboard) -> int:
    return len(board.grid.strata) * board.grid.n_seeds


def _provenance_lines(facts: dict[str, Any]) -> list[str]:
    checkpoints = facts.get("checkpoints") or {}
    data = facts.get("data", {})
    own = facts.get("traces")
    lines = [f"- mara-env {facts.get('version')}, git revision `{facts.get('git_revision')}`"]
    if own is not None:
        lines.append(
            f"- curves: your own, `{own['file']}` SHA-256 `{own['sha256']}` (families "
            f"{', '.join(own['families'])})"
        )
    else:
        lines.append(
            f"- trace data: fingerprint `{data.get('trace_fingerprint')}`, "
            f"`{data.get('traces_file')}` SHA-256 `{data.get('traces_sha256')}`"
        )
    if checkpoints:
        lines += [
            f"- checkpoint `{name}` SHA-256 `{digest}`" for name, digest in checkpoints.items()
        ]
    else:
        lines.append("- checkpoints: none shipped")
    libraries = ", ".join(f"{name} {version}" for name, version in facts["libraries"].items())
    lines.append(f"- Python {facts.get('python')}, {libraries}; {facts.get('machine')}")
    if "platform" in facts:
        lines.append(f"- platform: {facts['platform']}")
    if "run" in facts:
        lines.append(f"- {facts['run']}")
    return lines


def _aligned(headings: list[str], rows: list[list[str]]) -> str:
    table = [headings, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headings))]
    left = {1}  # the agent column
    return "\n".join(
        "  ".join(
            cell.ljust(width) if i in left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
    )


def _markdown(headings: list[str], rows: list[list[str]]) -> str:
    rule = ["---" if heading in ("agent", "rank") else "---:" for heading in headings]
    return "\n".join("| " + " | ".join(row) + " |" for row in [headings, rule, *rows])


# ------------------------------------------------------------------------------ files
def episode_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """:data:`KEY_COLUMNS` then every other column in order of first appearance."""
    columns = list(KEY_COLUMNS)
    for row in rows:
        columns += [key for key in row if key not in columns]
    return columns


def episodes_csv(rows: Sequence[dict[str, Any]]) -> str:
    """Every episode as CSV (NaN as an empty field)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, episode_columns(rows), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if _is_nan(value) else value for key, value in row.items()})
    return buffer.getvalue()


def episodes_json(rows: Sequence[dict[str, Any]]) -> str:
    """Every episode as a strict JSON list (NaN as null)."""
    lines = [
        json.dumps({key: None if _is_nan(value) else value for key, value in row.items()})
        for row in rows
    ]
    return "[\n" + ",\n".join(lines) + "\n]\n"  # one episode per line


def summary_json(board: Leaderboard, provenance: dict[str, Any], command: str) -> str:
    """The statistics, the grid, the provenance and the command as JSON."""
    grid = board.grid
    agents = []
    summary = board.summary
    for agent in board.ranked:
        if summary is None:
            break
        a = board.index(agent)
        entry: dict[str, Any] = {
            "agent": agent,
            "rank": int(summary.overall_shared_rank[a]),
            "rank_by_mean": int(summary.overall_rank[a]),
            "completion_rate": _interval(summary.overall[a]),
            "iqm": _interval(summary.iqm[a]),
            "workloads": {
                workload: {
                    "completion_rate": _interval(summary.workload[a][w]),
                    "rank": int(summary.workload_shared_rank[a][w]),
                    "rank_by_mean": int(summary.workload_rank[a][w]),
                }
                for w, workload in enumerate(summary.workloads)
            },
            "strata": [
                {"workload": workload, "load_factor": factor, **_interval(summary.stratum[a][s])}
                for s, (workload, factor) in enumerate(grid.strata)
            ],
            "episode_means": board.episode_means(agent),
            "privileged": agent in board.privileged,
        }
        if board.reference is not None:
            entry[f"probability_of_improvement_over_{board.reference}"] = _interval(
                summary.improvement[a]
            )
        agents.append(entry)
    document = {
        "grid": {
            "agents": list(grid.agents),
            "workloads": list(grid.workloads),
            "load_factors": list(grid.load_factors),
            "training_load": TRAINING_LOAD,
            "seeds": list(grid.seeds),
            "base_config": grid.base,
            "world_version": grid.world_version,
            "quick": grid.quick,
            "configs": {
                grid.label(workload, factor): repr(grid.config(workload, factor))
                for workload, factor in grid.strata
            },
        },
        "leaderboard": agents,
        "not_ranked": board.missing,
        "illegal_actions": {a: {"masked": c[0], "invalid": c[1]} for a, c in board.illegal.items()},
        "provenance": provenance,
        "command": command,
    }
    return json.dumps(document, indent=1) + "\n"


def render_tables(
    board: Leaderboard,
    *,
    provenance: dict[str, Any],
    command: str,
    plots: Sequence[tuple[str, str]] = (),
) -> dict[str, str]:
    """Every table file a run derives from its journal, ``{file name: text}`` (the plots aside).

    The leaderboard writes these; ``--validate`` renders them again from the journal and
    compares.
    """
    rows = list(board.rows)
    return {
        "episodes.csv": episodes_csv(rows),
        "episodes.json": episodes_json(rows),
        "leaderboard.json": summary_json(board, provenance, command),
        "leaderboard.md": format_markdown(
            board, provenance=provenance, command=command, plots=plots
        ),
    }


def _interval(interval: Any) -> dict[str, float]:
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high}


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
