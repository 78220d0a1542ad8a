"""``cells.png`` of the prediction benchmark: every reported cell's error and coverage at a glance.

One column per protocol (``test``, ``held_out``, ``shift``). The top row shows each predictor's
median remaining-work error in each cell with at least
:data:`predictors.metrics.MIN_FEASIBLE_CASES` feasible cases, with its 95% bootstrap interval.
The bottom row shows the coverage of each predictor's 10-90% interval, against the band
[0.70, 0.90] that the acceptance summary asks of it. Needs matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common.figures import pyplot, save_png
from benchmarks.prediction_protocols import Cell
from predictors.metrics import MIN_FEASIBLE_CASES

#: The coverage band shaded in the lower panels.
COVERAGE_BAND = (0.70, 0.90)


def reported_cells(
    rows: Mapping[tuple[str, Cell], Mapping[str, Any]], cells: Sequence[Cell]
) -> dict[str, list[Cell]]:
    """Per protocol, in the order given, the cells some predictor has a row for with at least
    :data:`predictors.metrics.MIN_FEASIBLE_CASES` feasible cases.

    Example:
        >>> cell = Cell("test", "rl", 0.2)
        >>> small = Cell("test", "rl", 0.8)
        >>> rows = {("wls", cell): {"feasible_cases": 186.0}, ("wls", small): {"feasible_cases": 4.0}}
        >>> reported_cells(rows, [cell, small])
        {'test': [Cell(protocol='test', set='rl', fraction=0.2)]}
    """
    reported: dict[str, list[Cell]] = {}
    for cell in cells:
        counts = [row["feasible_cases"] for (_, at), row in rows.items() if at == cell]
        if counts and max(counts) >= MIN_FEASIBLE_CASES:
            reported.setdefault(cell.protocol, []).append(cell)
    return reported


def plot_cells(
    path: Path,
    rows: Mapping[tuple[str, Cell], Mapping[str, Any]],
    names: Sequence[str],
    cells: Sequence[Cell],
) -> None:
    """Write ``cells.png`` (see the module docstring) from the benchmark's rows, keyed by
    (predictor, cell). Needs matplotlib.

    Raises:
        ValueError: If no cell has enough feasible cases to be reported.
    """
    plt = pyplot()
    by_protocol = reported_cells(rows, cells)
    if not by_protocol:
        raise ValueError(
            f"plot_cells: no cell has {MIN_FEASIBLE_CASES} feasible cases; nothing to draw."
        )
    height = max(len(protocol_cells) for protocol_cells in by_protocol.values())
    figure, axes = plt.subplots(
        2,
        len(by_protocol),
        figsize=(4.6 * len(by_protocol), 0.62 * height + 2.0),
        squeeze=False,
        sharey="col",
    )
    spacing = 0.7 / len(names) if names else 0.0
    offsets = [spacing * (index - (len(names) - 1) / 2) for index in range(len(names))]
    for column, (protocol, protocol_cells) in enumerate(by_protocol.items()):
        positions = list(range(len(protocol_cells)))[::-1]  # the first cell on top
        for panel, (metric, label) in enumerate(
            (
                ("median_log_error", "median |ln(predicted / true)|"),
                ("coverage_80", "10-90% coverage"),
            )
        ):
            axis = axes[panel, column]
            for index, name in enumerate(names):
                points = [
                    (position + offsets[index], rows[name, cell])
                    for position, cell in zip(positions, protocol_cells, strict=True)
                    if (name, cell) in rows
                ]
                if not points:
                    continue
                ys = [y for y, _ in points]
                xs = [row[metric] for _, row in points]
                low = [row[metric] - row[f"{metric}_low"] for _, row in points]
                high = [row[f"{metric}_high"] - row[metric] for _, row in points]
                axis.errorbar(
                    xs, ys, xerr=[low, high], fmt="o", ms=4, capsize=2, color=f"C{index}",
                    label=name,
                )  # fmt: skip
            if metric == "coverage_80":
                axis.axvspan(*COVERAGE_BAND, color="0.9", zorder=0)
            axis.set_yticks(positions)
            axis.set_yticklabels([f"{cell.set} {cell.fraction:.0%}" for cell in protocol_cells])
            axis.set_xlabel(label)
            axis.grid(axis="x", alpha=0.3)
            axis.set_title(protocol, fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), fontsize=9)
    figure.tight_layout(rect=(0.0, 0.05, 1.0, 1.0))
    save_png(figure, path, dpi=90)
