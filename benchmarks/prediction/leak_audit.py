"""The leak audit: does the observation give away what prediction is meant to find out?

The problem this suite poses is that a task's training effort is hidden: a scheduler sees each
task's target, deadline, history and family, never the rest of its loss curve. If an observed
column ranks the true effort (or marks the tasks that can never finish), prediction cannot
matter, because the policy reads the column instead. This script measures that, for a world (a
version of the environment's rules), on episodes played by the random masked scheduler:

**At first sight** (the first epoch a task stands in a visible slot; evaluation preset and
evaluation seeds):

- each observed slot column's **within-family Spearman** correlation with the task's true
  remaining need (node-epochs at one node to reach its target; ``inf`` ranks last for a target
  the curve never reaches), and that of the **deadline window** (``time_left /
  time_left_fraction``: the epochs from arrival to deadline);
- the **most common exact target ratio**: the share of tasks that carry it, and how many of
  those can never reach their target;
- the **target ratio's AUC for "unreachable"** (0.5: it tells nothing; orientation-free).

**Mid-task** (each slotted task once per new loss it reported, from its second; probes fitted on
the training preset's training seeds, scored on the evaluation seeds): a logistic probe's AUC
for "can still reach its target by its deadline with every node it may get", from

- the observation alone,
- the observation and each predictor's features (its success probability with every node, and
  its median remaining need),
- the observation and the **oracle**'s features: a perfect predictor's (privileged), whose
  one sample is the true remaining need, read through the same two features as a predictor's
  (success probability with every node, median need), so that "how much a predictor leaves
  on the table" compares like with like.

The truth is the simulator's privileged view (the clairvoyant reference's exact stepping,
:func:`mara_env.agents.clairvoyant.task_epochs_to_target`); nothing privileged enters the observation or
the predictors' features (:mod:`mara_env.benchmarks.prediction.audit_episodes` plays and records,
:mod:`mara_env.benchmarks.prediction.audit_statistics` measures, with 95% intervals over resampled
episodes). Rows go to ``audit.csv``, the page to ``README.md`` (``--output``).

Run::

    python -m mara_env.benchmarks.prediction.leak_audit            # every world, a minute or two
    python -m mara_env.benchmarks.prediction.leak_audit --quick    # a smoke run

Example:
    >>> settings = AuditSettings(train_seeds=(100,), eval_seeds=(1000,), predictors=("wls",),
    ...                          arrival_horizon=8, resamples=20)
    >>> rows = audit_world(settings, "v1", progress=False)
    >>> sorted({row["moment"] for row in rows})
    ['first sight', 'mid-task']
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.prediction.audit_episodes import (
    DEFAULT_PREDICTORS,
    DRIVER,
    WORLD_DESCRIPTIONS,
    AuditSettings,
    Record,
    add_settings_arguments,
    collect,
    command_line_settings,
)
from mara_env.benchmarks.prediction.audit_statistics import (
    AUC_GAIN,
    COUNTS,
    SPEARMAN,
    world_rows,
)

DEFAULT_OUTPUT = Path("benchmarks/results/leak_audit")


# --------------------------------------------------------------------------- playing


# --------------------------------------------------------------------------- measuring


def audit_world(settings: AuditSettings, world: str, *, progress: bool) -> list[Record]:
    """Every statistic of one world (module docstring), as result rows with their intervals."""
    _, train = collect(settings, world, "training", settings.train_seeds, progress)
    sights, test = collect(settings, world, "evaluation", settings.eval_seeds, progress)
    return world_rows(world, sights, train, test, settings.predictors, settings.resamples)


# --------------------------------------------------------------------------- output
FIELDS = ("world", "moment", "statistic", "column", "value", "low", "high")


def write_results(rows: Sequence[Record], output: Path, settings: AuditSettings, note: str) -> None:
    """``audit.csv`` (every row) and ``README.md`` (the tables, worlds side by side)."""
    output.mkdir(parents=True, exist_ok=True)
    lines = [",".join(FIELDS)]
    for row in rows:
        lines.append(",".join(_csv_field(row[field]) for field in FIELDS))
    write_atomically(output / "audit.csv", "\n".join(lines) + "\n")
    write_atomically(output / "README.md", markdown(rows, settings, note))


def _csv_field(value: Any) -> str:
    text = repr(value) if isinstance(value, float) else str(value)
    return f'"{text}"' if "," in text else text


def markdown(rows: Sequence[Record], settings: AuditSettings, note: str) -> str:
    """The results page: one table per moment, a column per world, each figure with its 95%
    interval over episodes."""
    worlds = list(settings.worlds)
    by_key: dict[tuple[str, str, str], dict[str, Record]] = {}
    for row in rows:
        by_key.setdefault((row["moment"], row["statistic"], row["column"]), {})[row["world"]] = row
    lines = [
        "# Leak audit",
        "",
        "Does the observation give away a task's hidden effort? Written by "
        "`python -m mara_env.benchmarks.prediction.leak_audit` "
        f"(driver `{DRIVER}`; probes fitted on training seeds {settings.train_seeds[0]}-"
        f"{settings.train_seeds[-1]} of the `training` preset, measured on evaluation seeds "
        f"{settings.eval_seeds[0]}-{settings.eval_seeds[-1]} of the `evaluation` preset; "
        f"{settings.n_samples} samples per prediction; brackets: 95% intervals over "
        f"{settings.resamples} resamples of the evaluation episodes). A task's need is the "
        "node-epochs one node still needs to reach its target (never: ranks last); columns "
        "that are the same for every task at first sight have no correlation (-). Worlds: "
        + "; ".join(f"`{world}`, {WORLD_DESCRIPTIONS[world]}" for world in worlds)
        + f". {note}",
        "",
    ]
    for moment in ("first sight", "mid-task"):
        lines += [
            f"## {moment.capitalize()}",
            "",
            "| statistic | column | " + " | ".join(worlds) + " |",
            "|---|---|" + "---|" * len(worlds),
        ]
        for (row_moment, statistic, column), found in by_key.items():
            if row_moment == moment:
                cells = [_shown(found.get(world), statistic) for world in worlds]
                lines.append(f"| {statistic} | {column} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def _shown(row: Record | None, statistic: str) -> str:
    if row is None or not math.isfinite(row["value"]):
        return "-"
    if statistic in COUNTS:
        return f"{row['value']:,.0f}"
    form = "+.3f" if statistic in (SPEARMAN, AUC_GAIN) else ".3f"
    return f"{row['value']:{form}} [{row['low']:{form}}, {row['high']:{form}}]"


# --------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.leak_audit",
        description="Measure what the observation gives away of a task's hidden effort.",
    )
    add_settings_arguments(
        parser, output=DEFAULT_OUTPUT, writes="audit.csv and README.md", quick="wls only"
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=list(DEFAULT_PREDICTORS),
        help=f"Predictors whose features the probes read (default: "
        f"{' '.join(DEFAULT_PREDICTORS)}).",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the audit; returns 0."""
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = command_line_settings(
        parser, args, ("wls",) if args.quick else tuple(args.predictors)
    )
    start = time.perf_counter()
    rows: list[Record] = []
    for world in settings.worlds:
        rows += audit_world(settings, world, progress=not args.no_progress)
    seconds = time.perf_counter() - start
    note = f"Run in {seconds:.0f} s at commit {git_revision()} on {platform_line()}."
    write_results(rows, args.output, settings, note)
    print(markdown(rows, settings, note))
    print(f"Wrote {args.output / 'audit.csv'} and {args.output / 'README.md'}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
