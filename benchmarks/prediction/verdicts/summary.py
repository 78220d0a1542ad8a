"""Error rates of "infeasible" verdicts by number of reports, with cluster-bootstrap intervals.

A verdict is **infeasible** when the predicted success probability is below the threshold.
Per predictor and bucket of reports (:data:`BUCKETS`):

* **false-negative rate**: the share of truly feasible judgements that said infeasible (a
  scheduler that drops on such a verdict drops a task it could have completed);
* **false-positive rate**: the share of truly infeasible judgements that said feasible (it
  keeps spending on a hopeless task);
* **wrong drops**: the share of infeasible verdicts that were truly feasible (of the tasks a
  scheduler would drop, how many it should have kept).

A task is judged at every report, so its judgements are not independent: intervals are 95%
percentile-bootstrap intervals that resample **tasks** (:func:`mara_env.agents.statistics.ratio_ci`),
and the tables give both the judgements and the tasks they come from.

Example:
    >>> from mara_env.benchmarks.prediction.verdicts.record import VerdictRecord
    >>> records = [VerdictRecord(100, 0, 1, True, {"wls": 0.2}),
    ...            VerdictRecord(100, 1, 1, False, {"wls": 0.1})]
    >>> row = summarise(records, {"wls": 0.5})[0]
    >>> row.bucket, row.false_negative.mean, row.false_positive.mean
    ('1', 1.0, 0.0)
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mara_env.agents.statistics import Summary, ratio_ci
from mara_env.benchmarks.prediction.verdicts.record import VerdictRecord

#: Buckets of reports since arrival: (label, fewest, most).
BUCKETS: tuple[tuple[str, int, float], ...] = (
    ("1", 1, 1),
    ("2", 2, 2),
    ("3-4", 3, 4),
    ("5-8", 5, 8),
    ("9+", 9, float("inf")),
)
#: Bootstrap resamples per interval.
RESAMPLES = 2000


@dataclass(frozen=True)
class Rates:
    """One predictor's verdict errors in one bucket of reports.

    Attributes:
        predictor: The predictor's name.
        bucket: The bucket's label.
        feasible: Judgements of truly feasible tasks, and the tasks they come from.
        infeasible: Judgements of truly infeasible tasks, and their tasks.
        dropped: Infeasible verdicts, and their tasks.
        false_negative, false_positive, wrong_drops: The rates (``None``: nothing to count).
    """

    predictor: str
    bucket: str
    feasible: tuple[int, int]
    infeasible: tuple[int, int]
    dropped: tuple[int, int]
    false_negative: Summary | None
    false_positive: Summary | None
    wrong_drops: Summary | None


def bucket_of(reports: int) -> str | None:
    """The label of the bucket holding ``reports`` (``None`` below the first).

    Example:
        >>> [bucket_of(n) for n in (0, 1, 4, 9, 30)]
        [None, '1', '3-4', '9+', '9+']
    """
    for label, low, high in BUCKETS:
        if low <= reports <= high:
            return label
    return None


def _rate(
    cases: list[tuple[tuple[int, int], bool, bool]],
) -> tuple[tuple[int, int], Summary | None]:
    """``(judgements, tasks)`` and the share of ``cases`` that are errors, clustered by task.

    ``cases`` holds ``(task key, counted, error)`` with only ``counted`` ones in the rate.
    """
    judgements: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for key, counted, error in cases:
        if counted:
            judgements[key][0] += error
            judgements[key][1] += 1
    total = sum(count for _, count in judgements.values())
    if not judgements:
        return (0, 0), None
    errors, counts = zip(*judgements.values(), strict=True)
    return (total, len(judgements)), ratio_ci(errors, counts, n_resamples=RESAMPLES)


def summarise(records: Sequence[VerdictRecord], thresholds: Mapping[str, float]) -> list[Rates]:
    """The :class:`Rates` of every judge (name -> its threshold) in every bucket, judge-major."""
    rows = []
    for name, threshold in thresholds.items():
        for label, _, _ in BUCKETS:
            mine = [record for record in records if bucket_of(record.reports) == label]
            verdicts = [((r.seed, r.task), r.feasible, r.success[name] < threshold) for r in mine]
            feasible, false_negative = _rate(verdicts)
            infeasible, false_positive = _rate([(k, not f, not d) for k, f, d in verdicts])
            dropped, wrong_drops = _rate([(k, d, f) for k, f, d in verdicts])
            rows.append(
                Rates(
                    name,
                    label,
                    feasible,
                    infeasible,
                    dropped,
                    false_negative,
                    false_positive,
                    wrong_drops,
                )
            )
    return rows


def _interval(summary: Summary | None) -> str:
    if summary is None:
        return "—"
    return summary.bracketed(".2f")


def markdown_table(rows: Sequence[Rates]) -> str:
    """The rates as a Markdown table: counts are judgements (tasks)."""
    lines = [
        "| predictor | reports | feasible (tasks) | false-negative rate | infeasible (tasks) | "
        "false-positive rate | judged infeasible (tasks) | wrong drops |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row.predictor} | {row.bucket} | {row.feasible[0]} ({row.feasible[1]}) | "
            f"{_interval(row.false_negative)} | {row.infeasible[0]} ({row.infeasible[1]}) | "
            f"{_interval(row.false_positive)} | {row.dropped[0]} ({row.dropped[1]}) | "
            f"{_interval(row.wrong_drops)} |"
        )
    return "\n".join(lines)


def compact_table(rows: Sequence[Rates]) -> str:
    """False-negative / false-positive rates, predictors by buckets, under the counts of
    judgements (tasks) of each kind: the README's table."""
    labels = [label for label, _, _ in BUCKETS]
    first = [row for row in rows if row.predictor == rows[0].predictor] if rows else []
    lines = [
        "| false-negative / false-positive rate | "
        + " | ".join(f"{label} report{'s' * (label != '1')}" for label in labels)
        + " |",
        "| --- |" + " ---: |" * len(labels),
        "| truly feasible: judgements (tasks) | "
        + " | ".join(f"{r.feasible[0]} ({r.feasible[1]})" for r in first)
        + " |",
        "| truly infeasible: judgements (tasks) | "
        + " | ".join(f"{r.infeasible[0]} ({r.infeasible[1]})" for r in first)
        + " |",
    ]
    for name in dict.fromkeys(row.predictor for row in rows):
        cells = []
        for row in (r for r in rows if r.predictor == name):
            pair = (row.false_negative, row.false_positive)
            cells.append(" / ".join("—" if s is None else f"{s.mean:.2f}" for s in pair))
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def csv_text(rows: Sequence[Rates]) -> str:
    """The rates as CSV: one line per predictor and bucket, empty cells for no count."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["predictor", "reports"]
    for kind in ("feasible", "infeasible", "dropped"):
        header += [f"{kind}_judgements", f"{kind}_tasks"]
    for rate in ("false_negative", "false_positive", "wrong_drops"):
        header += [f"{rate}_rate", f"{rate}_low", f"{rate}_high"]
    writer.writerow(header)
    for row in rows:
        line: list[object] = [row.predictor, row.bucket, *row.feasible, *row.infeasible]
        line += list(row.dropped)
        for summary in (row.false_negative, row.false_positive, row.wrong_drops):
            line += ["", "", ""] if summary is None else [summary.mean, summary.low, summary.high]
        writer.writerow(line)
    return buffer.getvalue()
