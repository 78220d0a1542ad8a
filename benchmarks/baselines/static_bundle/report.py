"""The static bundles' tables: tasks completed per agent beside LaiRA's paper, and results.md.

Example:
    >>> rows = [{"agent": "laira", "completed": c, "completion_rate": c / 10, "switches": 4.0}
    ...         for c in (5.0, 7.0)]
    >>> print(markdown_table(rows, ["laira", "edf"]).splitlines()[2])
    | laira | 2 | 6.00 [5.00, 7.00] | 6 | 0.600 | 4.0 |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mara_env.agents import mean_ci
from mara_env.benchmarks.baselines.static_bundle.bundles import N_TASKS

#: Tasks completed of 10 on LaiRA's mixed bundle, as its paper reports them (PAPERS.md §3b),
#: by the name of the matching agent here.
PAPER_MIXED_BUNDLE: Mapping[str, int] = {
    "laira": 6,
    "lara": 3,
    "uniform": 3,
    "round_robin": 3,
    "sta": 2,
    "successive_halving": 1,
}


def markdown_table(rows: Sequence[dict[str, Any]], agents: Sequence[str]) -> str:
    """Tasks completed per bundle (mean, 95% bootstrap interval), the paper's count, completion
    rate and switches per agent, best first."""
    lines = [
        f"| agent | seeds | completed of {N_TASKS} (95% CI) | paper (mixed bundle) | "
        "completion rate | switches |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    summaries = []
    for agent in agents:
        mine = [row for row in rows if row["agent"] == agent]
        if mine:
            completed = mean_ci(row["completed"] for row in mine)
            rate = float(np.mean([row["completion_rate"] for row in mine]))
            switches = float(np.mean([row["switches"] for row in mine]))
            summaries.append((agent, len(mine), completed, rate, switches))
    summaries.sort(key=lambda item: -item[2].mean)
    for agent, seeds, completed, rate, switches in summaries:
        paper = PAPER_MIXED_BUNDLE.get(agent)
        lines.append(
            f"| {agent} | {seeds} | {completed.mean:.2f} [{completed.low:.2f}, "
            f"{completed.high:.2f}] | {'—' if paper is None else paper} | {rate:.3f} | "
            f"{switches:.1f} |"
        )
    return "\n".join(lines)


def side_by_side(
    rows_by_bundle: Mapping[str, Sequence[dict[str, Any]]], agents: Sequence[str]
) -> str:
    """Every bundle's tasks completed (95% CI) and switches per agent, beside the paper's count;
    ordered by the first bundle (the README's table)."""
    bundles = list(rows_by_bundle)
    header = ["agent"]
    for bundle in bundles:
        header += [f"`{bundle}`: completed of {N_TASKS}", "switches"]
    lines = [
        "| " + " | ".join([*header, "LaiRA's paper (mixed bundle)"]) + " |",
        "| --- |" + " ---: |" * (2 * len(bundles) + 1),
    ]
    table = []
    for agent in agents:
        cells, key = [f"`{agent}`"], None
        for bundle in bundles:
            mine = [row for row in rows_by_bundle[bundle] if row["agent"] == agent]
            if not mine:
                cells += ["—", "—"]
                continue
            completed = mean_ci(row["completed"] for row in mine)
            switches = float(np.mean([row["switches"] for row in mine]))
            cells += [f"{completed.mean:.1f} [{completed.low:.1f}, {completed.high:.1f}]"]
            cells += [f"{switches:.1f}"]
            key = completed.mean if key is None else key
        if key is not None:
            cells.append(str(PAPER_MIXED_BUNDLE.get(agent, "—")))
            table.append((-key, "| " + " | ".join(cells) + " |"))
    return "\n".join(lines + [line for _, line in sorted(table, key=lambda item: item[0])])


def results_markdown(sections: Mapping[str, tuple[str, str]], overview: str = "") -> str:
    """``results.md``: ``overview`` (e.g. :func:`side_by_side`), then one section per bundle,
    ``{bundle: (description, table)}``."""
    parts = [
        "# Static bundles",
        "",
        "Written by `python -m mara_env.benchmarks.baselines.static_bundle --bundle BUNDLE` from the rows of "
        "`bundle.csv` that the current code produced. The paper column is LaiRA's mixed bundle "
        "(its paper's counts, PAPERS.md §3b), a different set of tasks: compare orders, not "
        "counts.",
    ]
    if overview:
        parts += ["", overview]
    for bundle, (description, table) in sections.items():
        parts += ["", f"## `{bundle}`", "", description, "", table]
    return "\n".join(parts) + "\n"
