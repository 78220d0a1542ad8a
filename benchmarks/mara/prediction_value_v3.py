"""The value of prediction on Cluster-v3: MARA trained with each prediction feature source.

What is a perfect prediction worth to MARA on the default world, and how much of that worth do
its shipped features capture? Every **row** is MARA's full recipe (the clairvoyant-taught
imitation warm start, then 200 PPO updates: the commands on the v3 MARA page) trained with one
source of prediction features, over its training seeds:

* ``oracle``: the true remaining need (``--predictor oracle``, privileged), checkpoints
  ``value_oracle*.pt``;
* ``denoised_oracle``: the need along the trend of the task's own curve, its noise unknown
  (privileged), ``value_denoised_oracle*.pt``;
* ``curve_posterior``: the loss-history posterior over the train split's curves,
  ``value_curve_posterior*.pt``;
* ``reach_model``: the reach model's probabilities in place of a predictor's features,
  ``value_reach_model*.pt``;
* ``flow_matching_without_target``: the shipped recipe, ``mara_ppo*.pt``;
* ``no_predictions``: the features held constant (``--ablation no_predictions``),
  ``ablation_no_predictions*.pt``.

Seed 0's checkpoint carries no suffix, seed N's ``_seed<N>``; each run's imitation warm start is
the same name with ``_imitation`` before the suffix (the recipe's: ``mara_imitation*.pt``). A row holds the seeds whose checkpoints are
committed, so the study grows as runs land.

``python -m mara_env.benchmarks.mara.prediction_value_v3`` plays every present checkpoint, its
warm start, LARA with its own predictor and told the truth (``lara_oracle``), EDF, the reach
planner and the clairvoyant reference on the evaluation protocol of
:mod:`mara_env.benchmarks.mara.evaluate` (evaluation preset, seeds from 1000, 3 workloads x
3 loads) into ``value_of_prediction.csv``, a resumable journal beside the checkpoints, and
writes ``value_of_prediction.md``: each row's value and share of the ``oracle`` minus
``no_predictions`` gap after PPO and after imitation alone, how the rows stand against the
baselines, and what the truth gives LARA. Intervals resample training seeds and episodes
(:mod:`mara_env.benchmarks.mara.prediction_value_table`).

Example:
    >>> [row.name for row in ROWS][:2], ROWS[-1].name
    (['oracle', 'denoised_oracle'], 'no_predictions')
    >>> ROWS[0].labels(Path("no/such/folder"))
    []
    >>> ROWS[0].checkpoint_name(2, imitation=True), ROWS[-2].checkpoint_name(1, imitation=True)
    ('value_oracle_imitation_seed2', 'mara_imitation_seed1')
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mara_env.benchmarks.common.figures import PlotsUnavailable, pyplot, save_png
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.world_results import mara_results
from mara_env.benchmarks.mara.evaluate import LOADS, WORKLOADS, completion_rates
from mara_env.benchmarks.mara.evaluate import run as play_evaluation
from mara_env.benchmarks.mara.evaluation_tables import Rates
from mara_env.benchmarks.mara.prediction_value_table import (
    NONE,
    ORACLE,
    budget_ranking,
    difference,
    differences_table,
    gains_over_none,
    value_table,
)

#: The world the rows were trained for and are evaluated in.
WORLD_VERSION = 3
#: Where the checkpoints are, and where the journal, tables and plot go.
RESULTS = mara_results(WORLD_VERSION)
#: The training seeds a row may hold.
SEEDS = (0, 1, 2)
#: The agents played beside the rows.
BASELINES = ("lara", "lara_oracle", "edf", "reach_planner", "clairvoyant")
#: The journal, the tables and the plot, in the results folder.
EVALUATION, TABLES, PLOT = (
    "value_of_prediction.csv",
    "value_of_prediction.md",
    "value_of_prediction.png",
)


@dataclass(frozen=True)
class Row:
    """One source of MARA's prediction features and the prefix of its checkpoints.

    Attributes:
        name: The row's name in the tables.
        prefix: Its checkpoints' file stem for training seed 0.
        warm_start: Its imitation warm starts' stem for training seed 0 (by default the
            prefix followed by ``_imitation``).
    """

    name: str
    prefix: str
    warm_start: str = ""

    def checkpoint_name(self, seed: int, *, imitation: bool = False) -> str:
        """The stem of the checkpoint of training seed ``seed`` (its warm start's with
        ``imitation``)."""
        stem = (self.warm_start or f"{self.prefix}_imitation") if imitation else self.prefix
        return f"{stem}{'' if seed == 0 else f'_seed{seed}'}"

    def labels(self, results: Path, *, imitation: bool = False) -> list[str]:
        """The stems of its committed runs in ``results``: the training seeds whose PPO
        checkpoint and warm start both exist."""
        return [
            self.checkpoint_name(seed, imitation=imitation)
            for seed in SEEDS
            if all(
                (results / f"{self.checkpoint_name(seed, imitation=stage)}.pt").is_file()
                for stage in (False, True)
            )
        ]


#: The rows, from the most informed features to none.
ROWS = (
    Row(ORACLE, "value_oracle"),
    Row("denoised_oracle", "value_denoised_oracle"),
    Row("curve_posterior", "value_curve_posterior"),
    Row("reach_model", "value_reach_model"),
    Row("flow_matching_without_target", "mara_ppo", warm_start="mara_imitation"),
    Row(NONE, "ablation_no_predictions"),
)


def tables(
    results: Path = RESULTS,
    seeds: int = 10,
    progress: bool = True,
    workloads: Sequence[str] = WORKLOADS,
    loads: Sequence[float] = LOADS,
) -> str:
    """Evaluate what is not evaluated yet (``seeds`` per workload and load) and return the
    tables.

    Raises:
        ValueError: Before the ``oracle`` and ``no_predictions`` rows have a committed run.
    """
    after_ppo = {row.name: row.labels(results) for row in ROWS}
    imitation = {row.name: row.labels(results, imitation=True) for row in ROWS}
    if not after_ppo[ORACLE] or not after_ppo[NONE]:
        raise ValueError(
            f"The tables need committed {ORACLE!r} and {NONE!r} runs in {results}; found "
            f"{after_ppo}. Train them first (the commands are on the v3 MARA page)."
        )
    after_ppo = {name: labels for name, labels in after_ppo.items() if labels}
    imitation = {name: labels for name, labels in imitation.items() if labels}
    checkpoints = [
        str(results / f"{label}.pt")
        for rows in (after_ppo, imitation)
        for labels in rows.values()
        for label in labels
    ]
    journal = results / EVALUATION
    play_evaluation(
        [*checkpoints, *BASELINES], workloads, loads, seeds, journal, progress, WORLD_VERSION
    )
    scores = completion_rates(journal)
    plotted = f"![Each row minus no_predictions, after imitation and after PPO]({PLOT})"
    try:
        plot_rows(scores, {"imitation only": imitation, "after PPO": after_ppo}, results / PLOT)
    except PlotsUnavailable as error:
        plotted = f"(No plot: {error})"
    return "\n".join(
        [
            "# The value of prediction to MARA on Cluster-v3",
            "",
            "Generated by `python -m mara_env.benchmarks.mara.prediction_value_v3` at git "
            f"revision `{git_revision()}` on {platform_line()}. Every learned row is MARA's full "
            "recipe (imitation warm start, then 200 PPO updates) trained with one source of "
            "prediction features; intervals resample training seeds and episodes.",
            "",
            "## What each source of features is worth, after PPO",
            "",
            value_table(scores, after_ppo),
            "## The same rows after imitation alone (their warm starts)",
            "",
            value_table(scores, imitation),
            plotted,
            "",
            "## Does imitation alone rank the rows as the full recipe does?",
            "",
            budget_ranking(scores, {"imitation only": imitation, "after PPO": after_ppo}),
            "## The rows against the baselines",
            "",
            "Each row (after PPO) minus each baseline, on the same episodes; intervals resample "
            "the row's training seeds and the episodes:",
            "",
            baseline_table(scores, after_ppo, BASELINES),
            "## LARA told the true remaining need",
            "",
            differences_table(scores, ("lara_oracle", ["lara_oracle"]), {"lara": ["lara"]}),
        ]
    )


def baseline_table(scores: Rates, rows: dict[str, list[str]], baselines: Sequence[str]) -> str:
    """One line per row: its mean minus each baseline's, ``+d [low, high]``."""
    lines = [
        "| features from | " + " | ".join(f"minus {name}" for name in baselines) + " |",
        "|---|" + "---|" * len(baselines),
    ]
    for name, labels in rows.items():
        cells = [difference(scores, labels, [baseline])[0] for baseline in baselines]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_rows(scores: Rates, budgets: dict[str, dict[str, list[str]]], path: Path) -> None:
    """Each row's completion minus the ``no_predictions`` row's at the same budget, paired on
    the episodes, with its 95% interval over training seeds and episodes; one marker per
    budget (``{budget: {row: labels}}``).

    Raises:
        mara_env.benchmarks.common.figures.PlotsUnavailable: Without matplotlib.
    """
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7.2, 3.8))
    names = [row.name for row in ROWS if any(row.name in rows for rows in budgets.values())]
    offsets = np.linspace(-0.12, 0.12, len(budgets))
    for index, (budget, rows) in enumerate(budgets.items()):
        gains = gains_over_none(scores, rows)
        for position, name in enumerate(names):
            if name in gains:
                gain = gains[name]
                axis.errorbar(
                    gain.mean,
                    position + offsets[index],
                    xerr=[[gain.mean - gain.low], [gain.high - gain.mean]],
                    fmt="os"[index % 2],
                    color=f"C{index}",
                    capsize=3,
                    label=budget if position == 0 else None,
                )
    axis.axvline(0.0, color="grey", linestyle=":")
    axis.set_yticks(range(len(names)), names)
    axis.invert_yaxis()
    axis.set_xlabel(f"completion rate minus {NONE} (95% CI: training seeds, episodes)")
    axis.set_title("MARA on Cluster-v3: what its prediction features are worth")
    axis.grid(alpha=0.3, axis="x")
    axis.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    save_png(figure, path, dpi=110)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.prediction_value_v3",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--seeds", type=int, default=10, help="evaluation seeds per cell")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="folder of the checkpoints and the outputs"
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}.")
    try:
        text = tables(args.results, args.seeds, not args.no_progress)
    except ValueError as error:
        raise SystemExit(f"prediction_value_v3: {error}") from None
    (args.results / TABLES).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
