"""``results.md`` of the prediction benchmark: an acceptance summary, then one section per protocol.

**Small cells.** A cell with fewer than :data:`MIN_FEASIBLE_CASES` feasible cases gets no figures:
every score of it reads ``too small (n=K)``, ``K`` its feasible cases (:func:`too_small`). Its
cases are not lost: the ``pooled`` set of its protocol at the same fraction holds them together
with the other families' cases, and is the merged cell (itself held to the same rule; each
``shift`` set already pools every family). The same
rule applies to the "never" shares of the ``shift`` protocol, with the cases each share is over.
Latency is shown for every cell.

**Acceptance summary.** For every cell at :data:`ACCEPTANCE_FRACTIONS`: whether
:data:`ACCEPTANCE_PREDICTOR`'s median error is below every predictor of :data:`BASELINES`
(point estimates; the intervals are beside them), whether its whole interval lies below theirs
(the upper end of its 95% interval below the lower end of each of theirs), its median error
minus each baseline's with the paired interval of :mod:`mara_env.benchmarks.prediction.pairs`, and
whether its 10-90% coverage lies in :data:`COVERAGE_BAND`.

Example:
    >>> too_small({"feasible_cases": 29.0}), too_small({"feasible_cases": 30.0})
    (True, False)
    >>> format_interval(0.5, 0.4, 0.61, ".2f")
    '0.50 [0.40, 0.61]'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mara_env.benchmarks.prediction.protocols import PROTOCOL_TITLES, Cell
from mara_env.predictors.metrics import MIN_FEASIBLE_CASES
from mara_env.predictors.shifted_curves import SHIFTS
from mara_env.predictors.success_scores import RELIABILITY_BINS

#: The observed fractions of the acceptance summary.
ACCEPTANCE_FRACTIONS = (0.1, 0.2, 0.4)
#: The predictor the acceptance summary judges, and what it must beat.
ACCEPTANCE_PREDICTOR = "flow_matching"
BASELINES = ("wls", "dkf")
#: Where a calibrated 10-90% interval's coverage should lie.
COVERAGE_BAND = (0.70, 0.90)

Rows = Mapping[tuple[str, Cell], Mapping[str, Any]]
#: ``(predictor, baseline, cell)`` -> ``pairs.csv`` row.
Pairs = Mapping[tuple[str, str, Cell], Mapping[str, Any]]


@dataclass(frozen=True)
class Table:
    """One metric table: a ``results.csv`` column, its heading and what it is."""

    column: str
    heading: str
    meaning: str
    spec: str
    interval: bool = False
    small_rule: bool = True


TABLES = (
    Table("median_log_error", "Remaining-work error", "median |ln(pred / true)| on feasible cases, with its 95% bootstrap interval (curves resampled, with all their cases); lower is better", ".2f", interval=True),
    Table("median_log_ratio", "Remaining-work bias", "median ln(pred / true) on feasible cases: above 0 the median predicts more work than was needed (pessimistic), below 0 less (optimistic)", "+.2f"),
    Table("coverage_80", "80% interval coverage", "share of outcomes inside the 10-90% sample interval, with its 95% bootstrap interval (curves resampled); nominal 0.785 at 64 samples", ".2f", interval=True),
    Table("below_80", "Outcomes below the interval", "share of outcomes under the 10% sample quantile (less work was needed than the interval allowed); nominal 0.108 at 64 samples", ".3f"),
    Table("above_80", "Outcomes above the interval", "share of outcomes over the 90% sample quantile (more work was needed, or the target was never reached though the interval said it would be); nominal 0.108 at 64 samples", ".3f"),
    Table("crps_log", "CRPS", "of ln(1 + min(work, cap)), mean over cases; lower is better", ".3f"),
    Table("infeasibility_auc", "Infeasibility AUC", "ROC AUC of P(never) for infeasible tasks; 0.5 is chance", ".3f"),
    Table("brier", "Deadline Brier score", "of P(target reached by the deadline at one node); lower is better", ".3f"),
    Table("success_calibration_error", "Deadline calibration error", f"of the same probability: the gap between the mean prediction and the share that came true in each of {RELIABILITY_BINS} bins of predicted probability, weighted by the bins' cases (0: calibrated, though chance alone scores above 0), with its 95% bootstrap interval (curves resampled); `reliability.png` shows the bins; lower is better", ".3f", interval=True),
    Table("latency_ms", "Latency (ms)", "median time of one predict call for one epoch's tasks (torch models on one thread)", ".2f", small_rule=False),
)  # fmt: skip
#: The tables by the column they show.
TABLE_OF: Mapping[str, Table] = {table.column: table for table in TABLES}

PROTOCOL_TEXT: Mapping[str, str] = {
    "test": "Test-split tasks, scored by the shipped predictors. `pooled` is every family's "
    "tasks together (the `in_distribution` workload).",
    "held_out": "The test-split tasks of each family, scored by predictor versions trained "
    "without that family; histories name the family `unknown`. Predictors fitted to each "
    "task alone (WLS, DKF) are their shipped selves (DKF's few default settings were chosen on "
    "the train split of every family). `pooled`: every family, each scored by its own "
    "held-out version.",
    "shift": "Every test-split task on its curve resampled to twice the points (linear in "
    "log-loss; `predictors/shifted_curves.py`), target loss unchanged: "
    + "; ".join(f"`{shift.name}`: {shift.description}" for shift in SHIFTS.values())
    + ". An ideal predictor's remaining work doubles.",
}


def too_small(row: Mapping[str, Any]) -> bool:
    """Whether a row's cell has fewer than :data:`MIN_FEASIBLE_CASES` feasible cases."""
    return bool(row["feasible_cases"] < MIN_FEASIBLE_CASES)


def small_label(count: float) -> str:
    """What a too-small cell shows instead of a figure."""
    return f"too small (n={count:.0f})"


def format_value(value: float, spec: str) -> str:
    """``value`` in ``spec``, or ``n/a`` for NaN."""
    return "n/a" if math.isnan(value) else format(value, spec)


def format_interval(estimate: float, low: float, high: float, spec: str) -> str:
    """``estimate [low, high]`` in ``spec`` (``n/a`` for a NaN estimate)."""
    if math.isnan(estimate):
        return "n/a"
    return f"{estimate:{spec}} [{format_value(low, spec)}, {format_value(high, spec)}]"


def format_metric(row: Mapping[str, Any] | None, table: Table) -> str:
    """One table cell: the figure (with its interval), ``too small (n=..)`` or empty."""
    if row is None:
        return ""
    if table.small_rule and too_small(row):
        return small_label(row["feasible_cases"])
    value = row[table.column]
    if table.interval:
        return format_interval(
            value, row[f"{table.column}_low"], row[f"{table.column}_high"], table.spec
        )
    return format_value(value, table.spec)


def format_share(share: float, count: float) -> str:
    """A "never" share over ``count`` cases, held to the small-cell rule."""
    if count < MIN_FEASIBLE_CASES:
        return small_label(count)
    return f"{share:.2f} (n={count:.0f})"


def _table(header: Sequence[str], body: Sequence[Sequence[str]], numeric_from: int) -> list[str]:
    rule = ["---" if i < numeric_from else "---:" for i in range(len(header))]
    return ["| " + " | ".join(cells) + " |" for cells in [header, rule, *body]]


def _cell_row(rows: Rows, cell: Cell) -> Mapping[str, Any] | None:
    return next((row for (_, c), row in rows.items() if c == cell), None)


def _cell_head(cell: Cell) -> list[str]:
    return [cell.set, f"{cell.fraction:.0%}"]


# --------------------------------------------------------------------------------- sections
def format_difference(pair: Mapping[str, Any] | None) -> str:
    """A paired difference with its interval (``-`` when the pair was not compared).

    Example:
        >>> format_difference({"difference": -0.5, "difference_low": -0.7, "difference_high": 0.01})
        '-0.50 [-0.70, +0.01]'
    """
    if pair is None:
        return "-"
    return format_interval(
        pair["difference"], pair["difference_low"], pair["difference_high"], "+.2f"
    )


def acceptance_summary(rows: Rows, cells: Sequence[Cell], pairs: Pairs) -> list[str]:
    """The acceptance section (see the module docstring)."""
    lines = ["## Acceptance summary", ""]
    chosen = [cell for cell in cells if cell.fraction in ACCEPTANCE_FRACTIONS]
    judged = [cell for cell in chosen if (ACCEPTANCE_PREDICTOR, cell) in rows]
    if not judged:
        return [*lines, f"`{ACCEPTANCE_PREDICTOR}` was not scored at 10, 20 or 40% observed.", ""]
    lo, hi = COVERAGE_BAND
    header = ["cell", "feasible", ACCEPTANCE_PREDICTOR, *BASELINES, "below both",
              "intervals apart", *(f"minus {name} (paired)" for name in BASELINES),
              f"{ACCEPTANCE_PREDICTOR} coverage", f"in [{lo:.2f}, {hi:.2f}]"]  # fmt: skip
    error_table, coverage_table = TABLE_OF["median_log_error"], TABLE_OF["coverage_80"]
    body, wins, clear_wins, covered, sized = [], 0, 0, 0, 0
    paired_below = dict.fromkeys(BASELINES, 0)
    paired_above = dict.fromkeys(BASELINES, 0)
    for cell in judged:
        main = rows[ACCEPTANCE_PREDICTOR, cell]
        others = [rows.get((name, cell)) for name in BASELINES]
        errors = [format_metric(row, error_table) or "not run" for row in others]
        if too_small(main):
            label = small_label(main["feasible_cases"])
            no_pairs = ["-"] * len(BASELINES)
            body.append(
                [cell.label, f"{main['feasible_cases']:.0f}", label, *errors, "-", "-",
                 *no_pairs, label, "-"]
            )  # fmt: skip
            continue
        differences = [pairs.get((ACCEPTANCE_PREDICTOR, name, cell)) for name in BASELINES]
        for name, pair in zip(BASELINES, differences, strict=True):
            if pair is not None:
                paired_below[name] += pair["difference_high"] < 0.0
                paired_above[name] += pair["difference_low"] > 0.0
        sized += 1
        below = all(row is not None and main["median_log_error"] < row["median_log_error"]
                    for row in others)  # fmt: skip
        apart = all(row is not None
                    and main["median_log_error_high"] < row["median_log_error_low"]
                    for row in others)  # fmt: skip
        in_band = lo <= main["coverage_80"] <= hi
        wins += below
        clear_wins += apart
        covered += in_band
        body.append(
            [cell.label, f"{main['feasible_cases']:.0f}", format_metric(main, error_table),
             *errors, "yes" if below else "no", "yes" if apart else "no",
             *map(format_difference, differences), format_metric(main, coverage_table),
             "yes" if in_band else "no"]
        )  # fmt: skip
    lines += _table(header, body, numeric_from=1)
    paired = "; ".join(
        f"against {name} it is below 0 in {paired_below[name]} and above 0 in "
        f"{paired_above[name]}" for name in BASELINES
    )  # fmt: skip
    lines += [
        "",
        f"Of {sized} cells with at least {MIN_FEASIBLE_CASES} feasible cases, "
        f"`{ACCEPTANCE_PREDICTOR}`'s median error is below {' and '.join(BASELINES)} in {wins} "
        f"(with its whole interval below theirs in {clear_wins}) and its coverage lies in "
        f"[{lo:.2f}, {hi:.2f}] in {covered}. The paired columns give its median error minus each "
        "baseline's on the same cases, with a 95% interval that resamples the same curves for "
        f"both (`pairs.csv`, `benchmarks/prediction/pairs.py`): {paired} (elsewhere the "
        "interval holds 0: the cell does not tell them apart).",
        "",
    ]
    return lines


def protocol_section(
    protocol: str,
    rows: Rows,
    predictors: Sequence[str],
    cells: Sequence[Cell],
    notes: Sequence[str] = (),
) -> list[str]:
    """One protocol's section: its description, notes, case counts and metric tables."""
    lines = [
        f"## Protocol `{protocol}`: {PROTOCOL_TITLES[protocol]}",
        "",
        PROTOCOL_TEXT[protocol],
        "",
    ]
    lines += [f"- {note}" for note in notes] + ([""] if notes else [])
    scored = [name for name in predictors if any((name, cell) in rows for cell in cells)]
    counts = []
    for cell in cells:
        row = _cell_row(rows, cell)
        if row is not None:
            figures = (row["cases"], row["feasible_cases"], row["infeasible_cases"])
            counts.append([*_cell_head(cell), *(f"{value:.0f}" for value in figures)])
    lines += ["### Cases", ""]
    lines += _table(["set", "observed", "cases", "feasible", "infeasible"], counts, numeric_from=2)
    for table in TABLES:
        body = [
            [*_cell_head(cell), *(format_metric(rows.get((name, cell)), table) for name in scored)]
            for cell in cells
        ]
        lines += [
            "",
            f"### {table.heading}",
            "",
            f"{table.meaning[0].upper()}{table.meaning[1:]}.",
            "",
        ]
        lines += _table(["set", "observed", *scored], body, numeric_from=2)
    if protocol in ("test", "shift"):
        lines += ["", *never_section(rows, scored, cells, protocol)]
    return [*lines, ""]


def never_section(
    rows: Rows, predictors: Sequence[str], cells: Sequence[Cell], protocol: str
) -> list[str]:
    """Shares of reachable targets whose predicted median is "never", before and after the
    second half of the job begins (:attr:`mara_env.predictors.cases.PredictionTask.crossed_late`)."""
    where = (
        "the recorded curve's last point (step 99 for rl and tabular, 119 for vision, in steps of "
        "the resampled curve): past every shipped curve of the family"
        if protocol == "shift"
        else "the curve's middle, the point of the job where the shift sets' split falls: the "
        "control for that split on the curves the predictors were trained on"
    )
    lines = [
        '### "Never" on reachable targets',
        "",
        'Share of feasible cases whose median prediction is "never", with the number of cases, '
        f"by whether the target is first reached at or before {where}, or after it. A predictor "
        "that does not hinge on the shipped curves' lengths rises no more between the two on "
        "the shift sets than on the test split.",
        "",
    ]
    body = []
    for cell in cells:
        for name in predictors:
            row = rows.get((name, cell))
            if row is not None:
                before = format_share(row["never_before"], row["never_before_cases"])
                after = format_share(row["never_after"], row["never_after_cases"])
                body.append([*_cell_head(cell), name, before, after])
    return lines + _table(["set", "observed", "predictor", "before", "after"], body, numeric_from=3)


def format_markdown(
    rows: Rows,
    predictors: Sequence[str],
    cells: Sequence[Cell],
    *,
    settings: str,
    notes: Mapping[str, Sequence[str]] | None = None,
    pairs: Pairs | None = None,
) -> str:
    """``results.md``: the acceptance summary, then one section per protocol of ``cells``.

    Args:
        rows: ``(predictor, cell)`` -> ``results.csv`` row.
        predictors: Predictor names in column order.
        cells: The cells, in report order.
        settings: A sentence on the run's settings and machine.
        notes: Per protocol, lines shown under its heading (e.g. predictors not scored).
        pairs: The paired comparisons of the acceptance summary (none by default).
    """
    notes = {} if notes is None else notes
    protocols = list(dict.fromkeys(cell.protocol for cell in cells))
    lines = [
        "# Prediction benchmark",
        "",
        f"{settings} Generated by `python -m mara_env.benchmarks.prediction.benchmark`; definitions in "
        "`benchmarks/prediction/protocols.py`, `predictors/cases.py`, "
        "`predictors/shifted_curves.py`, `predictors/metrics.py` and `predictors/bootstrap.py`.",
        "",
        f"Intervals are 95%. A cell with fewer than {MIN_FEASIBLE_CASES} feasible cases reads "
        "`too small (n=..)`; its cases are merged into the `pooled` set of its protocol at the "
        "same fraction (each `shift` set already pools every family).",
        "",
        *acceptance_summary(rows, cells, {} if pairs is None else pairs),
    ]
    for protocol in protocols:
        chosen = [cell for cell in cells if cell.protocol == protocol]
        lines += protocol_section(protocol, rows, predictors, chosen, notes.get(protocol, ()))
    return "\n".join(lines).rstrip("\n") + "\n"
