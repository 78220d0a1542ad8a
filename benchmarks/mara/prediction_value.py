"""The value of prediction: MARA trained on Cluster-v2 with each predictor, at one common budget.

How much is a perfect prediction worth to MARA, and how much of that worth does each predictor
capture? This script trains the policy once per row of the plan and training seed
(:mod:`mara_env.benchmarks.mara.prediction_value_plan`: the rows, the common budget, the stages and the
budget check), and evaluates the finished runs.

``run`` plays the stages not done yet (``--jobs 2``: two runs at once, one core each) and
leaves finished ones alone, so an interrupted plan resumes where it stopped.

**The table** (``table``): every finished run's checkpoints, LARA and LaiRA with their own
predictors and with the oracle (``lara_oracle``, ``laira_oracle``), EDF and the clairvoyant
reference play the evaluation protocol of :mod:`mara_env.benchmarks.mara.evaluate` (evaluation preset,
seeds from 1000, 3 workloads x 3 loads) into ``evaluation.csv`` beside the checkpoints, its
journal (resumed: finished episodes are never replayed); the tables
(:mod:`mara_env.benchmarks.mara.prediction_value_table`) go to ``value_of_prediction.md``: the value of
each predictor's features, LARA and LaiRA told the truth, the recipe's ablations, whether
imitation alone ranks the rows as imitation plus PPO does, and the budget check.

Run ``python -m mara_env.benchmarks.mara.prediction_value plan`` (the runs and their state), ``run``, or
``table``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mara_env.benchmarks.common.figures import PlotsUnavailable
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.mara.evaluate import LOADS, WORKLOADS, completion_rates
from mara_env.benchmarks.mara.evaluate import run as play_evaluation
from mara_env.benchmarks.mara.evaluation_tables import Rates
from mara_env.benchmarks.mara.prediction_value_plan import (
    CHECK_UPDATES,
    RECIPE_PREDICTOR,
    RESULTS,
    ROWS,
    UPDATES,
    Run,
    finished_checks,
    finished_runs,
    planned_runs,
    stage_done,
)
from mara_env.benchmarks.mara.prediction_value_table import (
    NONE,
    ORACLE,
    budget_ranking,
    differences_table,
    error_table,
    gap_by_budget,
    plot_value_against_error,
    row_summaries,
    value_table,
)

#: The agents beside the plan's checkpoints in the table's evaluation.
BASELINES = ("lara", "lara_oracle", "laira", "laira_oracle", "edf", "clairvoyant")
#: The table's evaluation journal, its tables and its plot, in the results folder.
EVALUATION, TABLES = "evaluation.csv", "value_of_prediction.md"
PLOT = "completion_vs_prediction_error.png"
#: The predictors' errors (written by ``python -m mara_env.benchmarks.prediction.value_errors``).
ERRORS = "prediction_errors.json"
#: The rows the value table compares (the others are ablations of the recipe).
PREDICTION_ROWS = (
    "oracle", "oracle_noise_0.5", "oracle_noise_1", "flow_matching", RECIPE_PREDICTOR, "wls",
    NONE,
)  # fmt: skip


def tables(
    results: Path = RESULTS,
    seeds: int = 10,
    progress: bool = True,
    workloads: Sequence[str] = WORKLOADS,
    loads: Sequence[float] = LOADS,
) -> str:
    """Evaluate what is not evaluated yet (module docstring: ``seeds`` per workload and load)
    and return the tables.

    Raises:
        ValueError: Before the ``oracle`` and ``no_predictions`` rows have a finished run.
    """
    runs = finished_runs(results)
    if not any(run.row.name == ORACLE for run in runs) or not any(
        run.row.name == NONE for run in runs
    ):
        raise ValueError(
            f"The table needs finished {ORACLE!r} and {NONE!r} runs; finished: "
            f"{[run.name for run in runs]}. Run the plan first."
        )
    checks = finished_checks(runs, results)
    checkpoints = [str(checkpoint) for run in runs for _, checkpoint in run.stages(results)[:2]]
    checkpoints += [str(run.check_checkpoint(results)) for run in checks]
    out = results / EVALUATION
    play_evaluation(
        [*checkpoints, *BASELINES], workloads, loads, seeds, out, progress, world_version=2
    )
    scores = completion_rates(out)

    def labels(row: str, suffix: str = "") -> list[str]:
        return [f"{run.name}{suffix}" for run in runs if run.row.name == row]

    present = [row.name for row in ROWS if labels(row.name)]
    value_rows = {name: labels(name) for name in PREDICTION_ROWS if name in present}
    recipe = (RECIPE_PREDICTOR, labels(RECIPE_PREDICTOR))
    ablations = {name: labels(name) for name in present if name not in PREDICTION_ROWS}
    ablations[NONE] = labels(NONE)
    ablations["without PPO (imitation only)"] = labels(RECIPE_PREDICTOR, "_imitation")
    budgets = {
        "imitation only": {name: labels(name, "_imitation") for name in value_rows},
        f"imitation + {UPDATES} PPO updates": value_rows,
    }
    errors = _errors(results, list(value_rows))
    plotted = f"![Completion against prediction error]({PLOT})"
    try:
        plot_value_against_error(row_summaries(scores, value_rows), errors, results / PLOT)
    except PlotsUnavailable as error:
        plotted = f"(No plot: {error})"
    sections = [
        "# The value of prediction to MARA on Cluster-v2",
        "",
        f"Generated by `python -m mara_env.benchmarks.mara.prediction_value table` at git revision "
        f"`{git_revision()}` on {platform_line()}. Every learned row is MARA trained with "
        "the plan's common budget (module docstring of `mara_env.benchmarks.mara.prediction_value_plan`); "
        "intervals resample training seeds and episodes.",
        "",
        "## What each predictor's features are worth",
        "",
        value_table(scores, value_rows),
        "How far each predictor is from the truth (`python -m "
        f"mara_env.benchmarks.prediction.value_errors`, `{ERRORS}`: episodes of the evaluation preset at its default workload "
        "and load, played by a random scheduler):",
        "",
        error_table(errors),
        plotted,
        "",
        "## LARA and LaiRA told the true remaining need",
        "",
        differences_table(scores, ("lara_oracle", ["lara_oracle"]), {"lara": ["lara"]}),
        differences_table(scores, ("laira_oracle", ["laira_oracle"]), {"laira": ["laira"]}),
        "## The recipe's ablations",
        "",
        differences_table(scores, recipe, {k: v for k, v in ablations.items() if v}),
        "## Does a shorter budget rank the rows the same way?",
        "",
        budget_ranking(scores, budgets),
        *_check_section(scores, checks),
    ]
    return "\n".join(sections)


def _check_section(scores: Rates, checks: Sequence[Run]) -> list[str]:
    """The oracle - no_predictions gap at the common budget and at :data:`CHECK_UPDATES`
    updates, on the training seed both check runs share (nothing until both are done)."""
    by_row = {run.row.name: run for run in checks}
    if set(by_row) != {ORACLE, NONE}:
        return []
    oracle, none = by_row[ORACLE].name, by_row[NONE].name
    longer = f"_{CHECK_UPDATES}_updates"
    return [
        f"The budget check: {ORACLE} minus {NONE} on training seed {by_row[ORACLE].seed}, "
        f"after the common budget and after the shipped recipe's {CHECK_UPDATES} PPO updates "
        "(the same imitation warm start):",
        "",
        gap_by_budget(
            scores,
            {
                f"{UPDATES} PPO updates": (oracle, none),
                f"{CHECK_UPDATES} PPO updates": (oracle + longer, none + longer),
            },
        ),
    ]


def _errors(results: Path, rows: Sequence[str]) -> dict[str, dict[str, float]]:
    """The rows' predictor errors from :data:`ERRORS` in ``results``.

    Raises:
        ValueError: If the file is missing or lacks a row.
    """
    path = results / ERRORS
    if not path.is_file():
        raise ValueError(
            f"No {path}: write it first with python -m mara_env.benchmarks.prediction.value_errors."
        )
    found = json.loads(path.read_text())["rows"]
    missing = [row for row in rows if row not in found]
    if missing:
        raise ValueError(f"{path} has no errors of the rows {missing}; write it again.")
    return {row: found[row] for row in rows}


def _train(run: Run, results: Path) -> str:
    """Play ``run``'s stages not done yet, one after the other; a line saying how it went."""
    for arguments, checkpoint in run.stages(results):
        if stage_done(arguments, checkpoint):
            continue
        start = time.perf_counter()
        command = [sys.executable, "-m", "mara_env.benchmarks.mara.train", *arguments]
        finished = subprocess.run(command, capture_output=True, text=True, check=False)
        if finished.returncode != 0:
            return f"{run.name}: {checkpoint.name} failed:\n{finished.stderr[-2000:]}"
        minutes = (time.perf_counter() - start) / 60.0
        print(f"{run.name}: wrote {checkpoint} in {minutes:.1f} min", flush=True)
    return f"{run.name}: done"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.prediction_value",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "command",
        choices=("plan", "run", "table"),
        help="show the plan, run it, or evaluate the finished runs and write the tables",
    )
    parser.add_argument("--seeds", type=int, default=10, help="table: evaluation seeds per cell")
    parser.add_argument("--no-progress", action="store_true", help="table: no progress bars")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (one core each)")
    parser.add_argument("--only", nargs="+", default=None, metavar="RUN", help="these runs only")
    parser.add_argument("--results", type=Path, default=RESULTS, help="output folder")
    args = parser.parse_args(argv)
    runs = planned_runs()
    if args.only is not None:
        unknown = sorted(set(args.only) - {run.name for run in runs})
        if unknown:
            parser.error(f"--only: unknown run(s) {unknown}; see the plan command.")
        runs = [run for run in runs if run.name in args.only]
    if args.jobs < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}.")
    if args.command == "plan":
        for run in runs:
            done = [stage_done(*stage) for stage in run.stages(args.results)]
            check = f" ppo x{CHECK_UPDATES} {'done' if done[2] else '-'}" if done[2:] else ""
            print(f"{run.name:32s} imitation {'done' if done[0] else '-':5s} ppo "
                  f"{'done' if done[1] else '-':5s}{check}")  # fmt: skip
        return 0
    if args.command == "table":
        try:
            text = tables(args.results, args.seeds, not args.no_progress)
        except ValueError as error:
            raise SystemExit(f"prediction_value table: {error}") from None
        (args.results / TABLES).write_text(text)
        print(text)
        return 0
    args.results.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        outcomes = list(pool.map(lambda run: _train(run, args.results), runs))
    failed = [outcome for outcome in outcomes if not outcome.endswith("done")]
    for outcome in failed:
        print(outcome, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
