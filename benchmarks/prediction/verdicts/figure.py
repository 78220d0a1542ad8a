"""The verdict diagnostics' figure: error rates against reports, one line per predictor.

matplotlib is imported only here, when the figure is drawn (``pip install 'mara-env[plot]'``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.figures import pyplot
from mara_env.benchmarks.prediction.verdicts.summary import BUCKETS, Rates

#: The panels: (attribute of :class:`Rates`, title).
PANELS = (
    ("false_negative", "false-negative rate\n(feasible tasks judged infeasible)"),
    ("false_positive", "false-positive rate\n(infeasible tasks judged feasible)"),
    ("wrong_drops", "wrong drops\n(infeasible verdicts on feasible tasks)"),
)


def plot_rates(rows: Sequence[Rates], path: Path, *, title: str) -> None:
    """The three rates against the bucket of reports, with 95% intervals, as a PNG.

    Raises:
        mara_env.benchmarks.common.figures.PlotsUnavailable: Without matplotlib.
    """
    plt = pyplot()

    labels = [label for label, _, _ in BUCKETS]
    predictors = list(dict.fromkeys(row.predictor for row in rows))
    figure, axes = plt.subplots(1, len(PANELS), figsize=(13, 4), sharey=True)
    for axis, (attribute, panel) in zip(axes, PANELS, strict=True):
        for offset, name in enumerate(predictors):
            xs, ys, low, high = [], [], [], []
            for position, label in enumerate(labels):
                match = [r for r in rows if r.predictor == name and r.bucket == label]
                summary = getattr(match[0], attribute) if match else None
                if summary is not None:
                    xs.append(position + 0.08 * (offset - (len(predictors) - 1) / 2))
                    ys.append(summary.mean)
                    low.append(summary.mean - summary.low)
                    high.append(summary.high - summary.mean)
            axis.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=name)
        axis.set_xticks(range(len(labels)), labels)
        axis.set_xlabel("reports since arrival")
        axis.set_title(panel, fontsize=10)
        axis.set_ylim(0.0, 1.0)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("rate (95% task-bootstrap interval)")
    axes[-1].legend(loc="upper right")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    write_atomically(path, buffer.getvalue())
