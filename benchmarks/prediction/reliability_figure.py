"""``reliability.png`` of the prediction benchmark: do the deadline probabilities mean what they say?

Each predictor's probability of reaching the target by the deadline at one node (the one the
Brier score and the calibration error score; :func:`mara_env.predictors.success_scores.success_reliability`)
is binned by value; each point is a bin, at the mean probability predicted in it (x) and the
share of its cases that reached the target in time (y), its area proportional to its cases.
A calibrated predictor's points lie on the diagonal. One panel per reported cell (at least
:data:`mara_env.predictors.metrics.MIN_FEASIBLE_CASES` feasible cases) of the ``pooled`` sets, and of
every set of a protocol without one (``shift``), one row per set and one column per observed
fraction. Needs matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.benchmarks.prediction.cells_figure import reported_cells
from mara_env.benchmarks.prediction.protocols import Cell
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES
from mara_env.predictors.success_scores import (
    RELIABILITY_BINS,
    RELIABILITY_PARTS,
    reliability_column,
)

#: Marker area (points^2) of a bin holding every case of its cell.
FULL_BIN_AREA = 400.0


def reliability_panels(
    rows: Mapping[tuple[str, Cell], Mapping[str, Any]], cells: Sequence[Cell]
) -> dict[tuple[str, str], list[Cell]]:
    """The panels' cells by (protocol, set), in the order given: the reported cells of the
    ``pooled`` set of each protocol that has one, of every set of the others.

    Example:
        >>> rows = {("wls", Cell("test", set, 0.2)): {"feasible_cases": 100.0}
        ...         for set in ("rl", "pooled")}
        >>> list(reliability_panels(rows, [Cell("test", "rl", 0.2), Cell("test", "pooled", 0.2)]))
        [('test', 'pooled')]
    """
    panels: dict[tuple[str, str], list[Cell]] = {}
    for protocol, protocol_cells in reported_cells(rows, cells).items():
        pooled = any(cell.set == "pooled" for cell in protocol_cells)
        for cell in protocol_cells:
            if cell.set == "pooled" or not pooled:
                panels.setdefault((protocol, cell.set), []).append(cell)
    return panels


def bin_points(row: Mapping[str, Any]) -> list[tuple[float, float, float]]:
    """(mean predicted, observed share, cases) of each non-empty bin of a results row.

    Example:
        >>> row = {reliability_column(b, part): value for b in range(5)
        ...        for part, value in (("cases", float(b)), ("predicted", 0.2 * b), ("observed", 0.5))}
        >>> bin_points(row)[0]
        (0.2, 0.5, 1.0)
    """
    points = []
    for index in range(RELIABILITY_BINS):
        cases, predicted, observed = (row[reliability_column(index, p)] for p in RELIABILITY_PARTS)
        if cases > 0:
            points.append((predicted, observed, cases))
    return points


def plot_reliability(
    path: Path,
    rows: Mapping[tuple[str, Cell], Mapping[str, Any]],
    names: Sequence[str],
    cells: Sequence[Cell],
) -> None:
    """Write ``reliability.png`` (see the module docstring) from the benchmark's rows, keyed by
    (predictor, cell). Needs matplotlib.

    Raises:
        ValueError: If no cell has enough feasible cases to be reported.
    """
    plt = pyplot()
    panels = reliability_panels(rows, cells)
    if not panels:
        raise ValueError(
            f"plot_reliability: no cell has {MIN_FEASIBLE_CASES} feasible cases; nothing to draw."
        )
    fractions = sorted({cell.fraction for panel in panels.values() for cell in panel})
    figure, axes = plt.subplots(
        len(panels),
        len(fractions),
        figsize=(3.0 * len(fractions), 3.0 * len(panels) + 0.6),
        squeeze=False,
        sharex=True,
        sharey=True,
    )
    for row_index, ((protocol, set_name), panel_cells) in enumerate(panels.items()):
        by_fraction = {cell.fraction: cell for cell in panel_cells}
        for column, fraction in enumerate(fractions):
            axis = axes[row_index, column]
            axis.plot([0.0, 1.0], [0.0, 1.0], color="0.6", lw=1, ls="--", zorder=0)
            axis.set_xlim(-0.03, 1.03)
            axis.set_ylim(-0.03, 1.03)
            axis.grid(alpha=0.3)
            cell = by_fraction.get(fraction)
            if cell is None:
                axis.set_axis_off()
                continue
            for index, name in enumerate(names):
                row = rows.get((name, cell))
                if row is None:
                    continue
                points = bin_points(row)
                total = sum(cases for _, _, cases in points)
                axis.plot(
                    [x for x, _, _ in points], [y for _, y, _ in points], color=f"C{index}",
                    lw=1, alpha=0.6,
                )  # fmt: skip
                axis.scatter(
                    [x for x, _, _ in points], [y for _, y, _ in points],
                    s=[FULL_BIN_AREA * cases / total for _, _, cases in points],
                    color=f"C{index}", alpha=0.8, label=name,
                )  # fmt: skip
            axis.set_title(f"{protocol}, {set_name}, {fraction:.0%} observed", fontsize=9)
            if row_index == len(panels) - 1:
                axis.set_xlabel("predicted P(in time)")
            if column == 0:
                axis.set_ylabel("share in time")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=max(len(labels), 1), fontsize=9)
    figure.tight_layout(rect=(0.0, 0.6 / (3.0 * len(panels) + 0.6), 1.0, 1.0))
    save_png(figure, path, dpi=80)
