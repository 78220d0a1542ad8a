"""``cells.png`` of the prediction benchmark: every reported cell's error and coverage at a glance.

One column per protocol (``test``, ``held_out``, ``shift``). The top row shows each predictor's
median remaining-work error in each cell with at least
:data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases, with its 95% bootstrap interval.
The second row shows the coverage of each predictor's 10-90% interval, against the band
[0.70, 0.90] that the acceptance summary asks of it. Given the paired comparisons
(:mod:`mara_env.benchmarks.prediction.pairs`), a third row shows, in each baseline's colour, the compared
predictor's median error minus the baseline's on the same cases, with its paired interval:
left of the line at 0, the compared predictor errs less. Needs matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.benchmarks.prediction.protocols import Cell
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES

#: The coverage band shaded in the lower panels.
COVERAGE_BAND = (0.70, 0.90)


def reported_cells(
    rows: Mapping[tuple[str, Cell], Mapping[str, Any]], cells: Sequence[Cell]
) -> dict[str, list[Cell]]:
    """Per protocol, in the order given, the cells some predictor has a row for with at least
    :data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases.

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
    pairs: Mapping[tuple[str, str, Cell], Mapping[str, Any]] | None = None,
) -> None:
    """Write ``cells.png`` (see the module docstring) from the benchmark's rows, keyed by
    (predictor, cell), and, if given, its paired comparisons keyed by (predictor, baseline,
    cell) (:mod:`mara_env.benchmarks.prediction.pairs`), drawn in a third row. Needs matplotlib.

    Raises:
        ValueError: If no cell has enough feasible cases to be reported.
    """
    plt = pyplot()
    by_protocol = reported_cells(rows, cells)
    if not by_protocol:
        raise ValueError(
            f"plot_cells: no cell has {MIN_FEASIBLE_CASES} feasible cases; nothing to draw."
        )
    pairs = {} if pairs is None else pairs
    compared = sorted({predictor for predictor, _, _ in pairs})
    panels = [
        ("median_log_error", "median |ln(predicted / true)|"),
        ("coverage_80", "10-90% coverage"),
    ]
    if pairs:
        panels.append(("difference", f"{' / '.join(compared)} minus each baseline (paired)"))
    height = max(len(protocol_cells) for protocol_cells in by_protocol.values())
    figure, axes = plt.subplots(
        len(panels),
        len(by_protocol),
        figsize=(4.6 * len(by_protocol), (0.62 * height + 1.0) * len(panels) / 2 + 1.0),
        squeeze=False,
        sharey="col",
    )
    spacing = 0.7 / len(names) if names else 0.0
    offsets = [spacing * (index - (len(names) - 1) / 2) for index in range(len(names))]
    for column, (protocol, protocol_cells) in enumerate(by_protocol.items()):
        positions = list(range(len(protocol_cells)))[::-1]  # the first cell on top
        for panel, (metric, label) in enumerate(panels):
            axis = axes[panel, column]
            for index, name in enumerate(names):
                if metric == "difference":
                    chosen = {cell: row for (_, baseline, cell), row in pairs.items()
                              if baseline == name}  # fmt: skip
                else:
                    chosen = {cell: row for (predictor, cell), row in rows.items()
                              if predictor == name}  # fmt: skip
                points = [
                    (position + offsets[index], chosen[cell])
                    for position, cell in zip(positions, protocol_cells, strict=True)
                    if cell in chosen
                ]
                if points:
                    _error_bars(axis, points, metric, f"C{index}", name)
            if metric == "coverage_80":
                axis.axvspan(*COVERAGE_BAND, color="0.9", zorder=0)
            if metric == "difference":
                axis.axvline(0.0, color="0.4", lw=1, zorder=0)
            axis.set_yticks(positions)
            axis.set_yticklabels([f"{cell.set} {cell.fraction:.0%}" for cell in protocol_cells])
            axis.set_xlabel(label)
            axis.grid(axis="x", alpha=0.3)
            axis.set_title(protocol, fontsize=10)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), fontsize=9)
    figure.tight_layout(rect=(0.0, 0.05, 1.0, 1.0))
    save_png(figure, path, dpi=90)


def _error_bars(
    axis: Any,
    points: Sequence[tuple[float, Mapping[str, Any]]],
    metric: str,
    color: str,
    label: str,
) -> None:
    """One predictor's ``metric`` with its ``_low`` / ``_high`` interval, at the given heights."""
    values = [row[metric] for _, row in points]
    below = [row[metric] - row[f"{metric}_low"] for _, row in points]
    above = [row[f"{metric}_high"] - row[metric] for _, row in points]
    axis.errorbar(
        values, [y for y, _ in points], xerr=[below, above], fmt="o", ms=4, capsize=2,
        color=color, label=label,
    )  # fmt: skip
