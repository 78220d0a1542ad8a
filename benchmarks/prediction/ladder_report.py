"""The information ladder's results: ``ladder.csv``, the page ``README.md`` and ``ladder.png``
(:mod:`mara_env.benchmarks.prediction.ladder` computes the rows).

Example:
    >>> rows = [{"world": "v3", "band": "30-50%", "rung": "observation", "statistic": "AUC",
    ...          "value": 0.8, "low": 0.78, "high": 0.82}]
    >>> cell(rows[0])
    '0.800 [0.780, 0.820]'
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.figures import PlotsUnavailable, pyplot, save_png

Record = dict[str, Any]
FIELDS = ("world", "band", "rung", "statistic", "value", "low", "high")
SEARCH_FIELDS = ("world", "loss_bandwidth", "target_bandwidth", "train_brier", "chosen")


def cell(row: Record | None) -> str:
    """A figure with its interval (``-`` when missing or not finite)."""
    if row is None or not math.isfinite(row["value"]):
        return "-"
    form = "+.3f" if row["statistic"] == "AUC gain" else ".3f"
    return f"{row['value']:{form}} [{row['low']:{form}}, {row['high']:{form}}]"


def csv_text(rows: Sequence[Record], fields: Sequence[str]) -> str:
    """``rows`` as CSV with the columns ``fields``."""
    handle = io.StringIO()
    writer = csv.DictWriter(handle, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows({field: row[field] for field in fields} for row in rows)
    return handle.getvalue()


def markdown(
    rows: Sequence[Record],
    searched: Sequence[Record],
    worlds: Sequence[str],
    rungs: Sequence[str],
    introduction: str,
    verdicts: dict[str, str],
) -> str:
    """The page: the verdicts, then per world a table of bands x rungs (AUC, gain, Brier)."""
    index = {(r["world"], r["band"], r["rung"], r["statistic"]): r for r in rows}
    bands = list(dict.fromkeys(row["band"] for row in rows))
    lines = ["# The information ladder", "", introduction, "", "## Verdicts", ""]
    lines += [f"- `{world}`: {verdicts[world]}." for world in worlds]
    lines += ["", "![AUC of each rung by band, one panel per world](ladder.png)", ""]
    for world in worlds:
        lines += [f"## `{world}`", ""]
        for statistic, title in (
            ("AUC", "AUC for feasible"),
            ("AUC gain", "AUC gain over the observation alone (paired)"),
            ("Brier", "Brier score (lower is better)"),
        ):
            lines += [f"**{title}**", "", "| rung | " + " | ".join(bands) + " |"]
            lines.append("|---|" + "---|" * len(bands))
            for rung in rungs:
                if statistic == "AUC gain" and rung == "observation":
                    continue
                cells = [cell(index.get((world, band, rung, statistic))) for band in bands]
                lines.append(f"| {rung} | " + " | ".join(cells) + " |")
            lines.append("")
        shares = [cell(index.get((world, band, "", "feasible share"))) for band in bands]
        counts = [index.get((world, band, "", "judgements")) for band in bands]
        lines += [
            "| | " + " | ".join(bands) + " |",
            "|---|" + "---|" * len(bands),
            "| feasible share | " + " | ".join(shares) + " |",
            "| judged tasks | "
            + " | ".join("-" if c is None else f"{c['value']:,.0f}" for c in counts)
            + " |",
            "",
        ]
        chosen = [row for row in searched if row["world"] == world and row["chosen"]]
        if chosen:
            lines += [
                f"Posterior bandwidths chosen on the training judgements: reported losses "
                f"{chosen[0]['loss_bandwidth']}, targets {chosen[0]['target_bandwidth']} (log "
                f"loss; training Brier {chosen[0]['train_brier']:.3f}; the search is in "
                "`bandwidths.csv`).",
                "",
            ]
    return "\n".join(lines)


def plot(rows: Sequence[Record], worlds: Sequence[str], rungs: Sequence[str], path: Path) -> None:
    """One panel per world: each rung's AUC (with its interval) against the band."""
    plt = pyplot()
    figure, axes = plt.subplots(1, len(worlds), figsize=(4.2 * len(worlds), 3.8), sharey=True)
    axes = [axes] if len(worlds) == 1 else list(axes)
    bands = list(dict.fromkeys(row["band"] for row in rows))
    for axis, world in zip(axes, worlds, strict=True):
        for rung in rungs:
            found = [
                next(
                    (
                        r
                        for r in rows
                        if (r["world"], r["band"], r["rung"], r["statistic"])
                        == (world, band, rung, "AUC")
                    ),
                    None,
                )
                for band in bands
            ]
            points = [(i, r) for i, r in enumerate(found) if r is not None]
            if not points:
                continue
            x = [i for i, _ in points]
            axis.errorbar(
                x,
                [r["value"] for _, r in points],
                yerr=[
                    [r["value"] - r["low"] for _, r in points],
                    [r["high"] - r["value"] for _, r in points],
                ],
                marker="o",
                capsize=3,
                label=rung,
            )
        axis.set_xticks(range(len(bands)), bands)
        axis.set_xlabel("share of the deadline window elapsed")
        axis.set_title(world)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("AUC for feasible (evaluation seeds)")
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    figure.tight_layout(rect=(0.0, 0.07, 1.0, 1.0))
    save_png(figure, path, dpi=110)


def write_results(
    output: Path,
    rows: Sequence[Record],
    searched: Sequence[Record],
    page: str,
    worlds: Sequence[str],
    rungs: Sequence[str],
) -> list[str]:
    """Write ``ladder.csv``, ``bandwidths.csv``, ``README.md`` and (with matplotlib)
    ``ladder.png`` under ``output``; return the names written."""
    output.mkdir(parents=True, exist_ok=True)
    write_atomically(output / "ladder.csv", csv_text(rows, FIELDS))
    write_atomically(output / "bandwidths.csv", csv_text(searched, SEARCH_FIELDS))
    write_atomically(output / "README.md", page)
    written = ["ladder.csv", "bandwidths.csv", "README.md"]
    try:
        plot(rows, worlds, rungs, output / "ladder.png")
        written.append("ladder.png")
    except PlotsUnavailable as error:
        print(error)
    return written
