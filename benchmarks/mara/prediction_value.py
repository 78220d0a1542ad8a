"""The value of prediction: MARA trained on Cluster-v2 with each predictor, at one common budget.

How much is a perfect prediction worth to MARA, and how much of that worth does each predictor
capture? This script trains the policy once per **row** and training seed, every row with the
same recipe and budget, differing only in what feeds the prediction features:

* ``oracle``, ``oracle_noise_0.5``, ``oracle_noise_1`` (privileged, :mod:`predictors.oracle`):
  the true remaining need, exact or with calibrated log-normal noise of that sigma;
* ``flow_matching`` (reads the target), ``flow_matching_without_target`` (the shipped recipe's
  predictor), ``wls`` (LARA's power law);
* ``no_predictions``: the features held constant (the ablation of the same name);

and the recipe's other ablations, with its predictor: ``independent`` (no autoregression) and
``no_shaping`` (completion reward only); the recipe without PPO is every run's own imitation
warm start. The shipped recipe's row gets :data:`RECIPE_SEEDS` training seeds, every other row
:data:`SEEDS`.

**The common budget** (:data:`IMITATION_FLAGS`, :data:`PPO_FLAGS`): the shipped recipe's
imitation (14 DAgger rounds with the clairvoyant teacher) and its PPO settings with 60 updates
instead of the shipped 200, so that all 19 runs fit a 2-core machine. Budgets are counts of rounds and updates, never minutes (the wall-clock caps are set
far above what a run needs), so a run gives the same checkpoint however busy the machine is.

Each run is two stages, each a ``python -m benchmarks.mara.train`` command writing a checkpoint
under :data:`RESULTS`: ``<run>_imitation.pt``, then ``<run>.pt`` (PPO from it). A stage is done
when its checkpoint's card records exactly the planned command; ``run`` plays the stages not
done yet (``--jobs 2``: two runs at once, one core each) and leaves finished ones alone, so an
interrupted plan resumes where it stopped.

**The table** (``table``): every finished run's two checkpoints, LARA and LaiRA with their own
predictors and with the oracle (``lara_oracle``, ``laira_oracle``), EDF and the clairvoyant
reference play the evaluation protocol of :mod:`benchmarks.mara.evaluate` (evaluation preset,
seeds from 1000, 3 workloads x 3 loads) into ``evaluation.csv`` beside the checkpoints, its
journal (resumed: finished episodes are never replayed); the tables
(:mod:`benchmarks.mara.prediction_value_table`) go to ``value_of_prediction.md``: the value of
each predictor's features, LARA and LaiRA told the truth, the recipe's ablations, and whether
imitation alone ranks the rows as imitation plus PPO does, and the budget check.

**The budget check**: the two rankings above agree but for one adjacent pair, so (as the plan
fixed in advance for a disagreement) the ends of the value table, ``oracle`` and
``no_predictions`` with training seed 0 (:data:`CHECK_RUNS`), also train with the shipped
recipe's :data:`CHECK_UPDATES` updates from the same imitation warm start, a third stage
``<run>_200_updates.pt``: does the oracle's gap hold at the longer budget?

Run ``python -m benchmarks.mara.prediction_value plan`` (the runs and their state), ``run``, or
``table``.

Example:
    >>> [run.name for run in planned_runs()][:3]
    ['oracle_seed0', 'oracle_noise_0.5_seed0', 'oracle_noise_1_seed0']
    >>> len(planned_runs()), planned_runs()[0].stages()[1][0][-2:]
    (19, ['--out', 'benchmarks/results/mara/v2/prediction_value/oracle_seed0.pt'])
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.figures import PlotsUnavailable
from benchmarks.common.machine import platform_line
from benchmarks.common.provenance import git_revision
from benchmarks.mara.evaluate import LOADS, WORKLOADS, completion_rates
from benchmarks.mara.evaluate import run as play_evaluation
from benchmarks.mara.evaluation_tables import Rates
from benchmarks.mara.prediction_value_table import (
    NONE,
    ORACLE,
    budget_ranking,
    differences_table,
    error_table,
    plot_value_against_error,
    row_summaries,
    value_table,
)

#: Where the checkpoints, cards and training logs go.
RESULTS = Path("benchmarks/results/mara/v2/prediction_value")
#: Training seeds of every row but the shipped recipe's.
SEEDS = (0, 1)
#: Training seeds of the shipped recipe's row.
RECIPE_SEEDS = (0, 1, 2)
#: The shipped recipe's predictor.
RECIPE_PREDICTOR = "flow_matching_without_target"
#: The agents beside the plan's checkpoints in the table's evaluation.
BASELINES = ("lara", "lara_oracle", "laira", "laira_oracle", "edf", "clairvoyant")
#: The table's evaluation journal, its tables and its plot, in the results folder.
EVALUATION, TABLES = "evaluation.csv", "value_of_prediction.md"
PLOT = "completion_vs_prediction_error.png"
#: The predictors' errors (written by ``python -m benchmarks.prediction value-errors``).
ERRORS = "prediction_errors.json"
#: The rows the value table compares (the others are ablations of the recipe).
PREDICTION_ROWS = (
    "oracle", "oracle_noise_0.5", "oracle_noise_1", "flow_matching", RECIPE_PREDICTOR, "wls",
    NONE,
)  # fmt: skip
#: Every stage's flags: the world, and wall-clock caps far above a run's need.
COMMON_FLAGS = ("--world-version", "2", "--validation-workers", "0", "--no-progress")
#: The imitation stage (the shipped recipe's DAgger, 14 rounds).
IMITATION_FLAGS = ("--updates", "0", "--imitation-minutes", "120")
#: PPO updates of the common budget, and of the budget check's runs (the shipped recipe's).
UPDATES, CHECK_UPDATES = 60, 200
#: The runs the budget check also trains with :data:`CHECK_UPDATES` updates from their own
#: imitation warm start: the two ends of the value table.
CHECK_RUNS = ("oracle_seed0", "no_predictions_seed0")


def ppo_flags(updates: int) -> tuple[str, ...]:
    """The PPO stage's flags: the shipped recipe's settings with ``updates`` updates."""
    return (
        "--dagger-rounds", "0", "--rollout-lag", "0", "--lr", "2.5e-4", "--lr-schedule", "linear",
        "--kl-coef", "0.02", "--value-warmup", "10", "--value-warmup-loss", "0.1",
        "--trust-region", "per_node", "--updates", str(updates), "--minutes", "240",
    )  # fmt: skip


#: The PPO stage of the common budget.
PPO_FLAGS = ppo_flags(UPDATES)


@dataclass(frozen=True)
class Row:
    """One row of the table: a predictor, or an ablation of the recipe.

    Attributes:
        name: The row's name (and its runs' file prefix).
        predictor: The predictor behind the features.
        ablation: The part taken away (``none``: the full recipe).
    """

    name: str
    predictor: str = RECIPE_PREDICTOR
    ablation: str = "none"

    @property
    def seeds(self) -> tuple[int, ...]:
        """Its training seeds: three for the shipped recipe's row, two otherwise."""
        recipe = self.predictor == RECIPE_PREDICTOR and self.ablation == "none"
        return RECIPE_SEEDS if recipe else SEEDS


#: The rows, in the order their first seeds run.
ROWS = (
    Row("oracle", "oracle"),
    Row("oracle_noise_0.5", "oracle_noise_0.5"),
    Row("oracle_noise_1", "oracle_noise_1"),
    Row("flow_matching", "flow_matching"),
    Row(RECIPE_PREDICTOR),
    Row("wls", "wls"),
    Row("no_predictions", ablation="no_predictions"),
    Row("independent", ablation="independent"),
    Row("no_shaping", ablation="no_shaping"),
)


@dataclass(frozen=True)
class Run:
    """One training run: a row with one training seed."""

    row: Row
    seed: int

    @property
    def name(self) -> str:
        """``<row>_seed<seed>``, the prefix of its files."""
        return f"{self.row.name}_seed{self.seed}"

    def stages(self, results: Path = RESULTS) -> list[tuple[list[str], Path]]:
        """``(arguments of benchmarks.mara.train, checkpoint)`` of its stages, in order: the
        imitation, its PPO, and for the :data:`CHECK_RUNS` the budget check's PPO."""
        imitation = results / f"{self.name}_imitation.pt"
        row = [
            "--seed", str(self.seed), "--predictor", self.row.predictor,
            "--ablation", self.row.ablation, *COMMON_FLAGS,
        ]  # fmt: skip

        def ppo(updates: int, checkpoint: Path) -> tuple[list[str], Path]:
            flags = ppo_flags(updates)
            return [*row, *flags, "--init", str(imitation), "--out", str(checkpoint)], checkpoint

        stages = [
            ([*row, *IMITATION_FLAGS, "--out", str(imitation)], imitation),
            ppo(UPDATES, results / f"{self.name}.pt"),
        ]
        if self.name in CHECK_RUNS:
            stages.append(ppo(CHECK_UPDATES, self.check_checkpoint(results)))
        return stages

    def check_checkpoint(self, results: Path = RESULTS) -> Path:
        """Where the budget check's run (:data:`CHECK_UPDATES` updates) writes its checkpoint."""
        return results / f"{self.name}_{CHECK_UPDATES}_updates.pt"


def planned_runs() -> list[Run]:
    """Every run, seed by seed: each row's first seed before any row's second."""
    most = max(len(row.seeds) for row in ROWS)
    return [
        Run(row, row.seeds[index])
        for index in range(most)
        for row in ROWS
        if index < len(row.seeds)
    ]


def stage_done(arguments: Sequence[str], checkpoint: Path) -> bool:
    """Whether ``checkpoint``'s card records exactly this stage's command (so it finished)."""
    card = checkpoint.with_suffix(".json")
    if not (checkpoint.is_file() and card.is_file()):
        return False
    try:
        command = json.loads(card.read_text())["facts"]["command"]
    except (ValueError, KeyError):
        return False
    return bool(command[-len(arguments) :] == list(arguments))


def finished_runs(results: Path = RESULTS) -> list[Run]:
    """The planned runs whose imitation and common-budget PPO are done."""
    return [
        run
        for run in planned_runs()
        if all(stage_done(*stage) for stage in run.stages(results)[:2])
    ]


def finished_checks(runs: Sequence[Run], results: Path = RESULTS) -> list[Run]:
    """Those of ``runs`` whose budget check's run is done too."""
    return [run for run in runs if run.name in CHECK_RUNS and stage_done(*run.stages(results)[2])]


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
        f"Generated by `python -m benchmarks.mara.prediction_value table` at git revision "
        f"`{git_revision()}` on {platform_line()}. Every learned row is MARA trained with "
        "the plan's common budget (module docstring of `benchmarks.mara.prediction_value`); "
        "intervals resample training seeds and episodes.",
        "",
        "## What each predictor's features are worth",
        "",
        value_table(scores, value_rows),
        "How far each predictor is from the truth (`python -m benchmarks.prediction "
        f"value-errors`, `{ERRORS}`: episodes of the evaluation preset at its default workload "
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
    oracle, none = by_row[ORACLE], by_row[NONE]
    longer = f"_{CHECK_UPDATES}_updates"
    return [
        f"With the shipped recipe's {CHECK_UPDATES} PPO updates (the same imitation warm start; "
        f"training seed {oracle.seed} only), the gap is:",
        "",
        differences_table(
            scores,
            (f"{ORACLE} after {CHECK_UPDATES} updates", [oracle.name + longer]),
            {f"{NONE} after {CHECK_UPDATES} updates": [none.name + longer]},
        ),
        "and at the common budget, on the same training seed:",
        "",
        differences_table(
            scores,
            (f"{ORACLE} after {UPDATES} updates", [oracle.name]),
            {f"{NONE} after {UPDATES} updates": [none.name]},
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
            f"No {path}: write it first with python -m benchmarks.prediction value-errors."
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
        command = [sys.executable, "-m", "benchmarks.mara.train", *arguments]
        finished = subprocess.run(command, capture_output=True, text=True, check=False)
        if finished.returncode != 0:
            return f"{run.name}: {checkpoint.name} failed:\n{finished.stderr[-2000:]}"
        minutes = (time.perf_counter() - start) / 60.0
        print(f"{run.name}: wrote {checkpoint} in {minutes:.1f} min", flush=True)
    return f"{run.name}: done"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mara.prediction_value", description=__doc__.split("\n\n")[0]
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
