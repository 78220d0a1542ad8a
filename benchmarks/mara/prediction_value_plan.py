"""The value-of-prediction plan: its rows, their training seeds, and each run's stages.

Every **row** trains MARA on Cluster-v2 with the same recipe and budget, differing only in what
feeds the prediction features:

* ``oracle``, ``oracle_noise_0.5``, ``oracle_noise_1`` (privileged, :mod:`mara_env.predictors.oracle`):
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
instead of the shipped 200, so that all 19 runs fit a 2-core machine. Budgets are counts of
rounds and updates, never minutes (the wall-clock caps are set far above what a run needs), so
a run gives the same checkpoint however busy the machine is.

Each run is two stages, each a ``python -m mara_env.benchmarks.mara.train`` command writing a checkpoint
under :data:`RESULTS`: ``<run>_imitation.pt``, then ``<run>.pt`` (PPO from it). A stage is done
when its checkpoint's card records exactly the planned command (:func:`stage_done`), so an
interrupted plan resumes where it stopped.

**The budget check**: imitation alone and imitation plus 60 PPO updates rank the rows alike but
for one adjacent pair, so (as the plan fixed in advance for a disagreement) the ends of the
value table, ``oracle`` and ``no_predictions`` with training seed 0 (:data:`CHECK_RUNS`), also
train with the shipped recipe's :data:`CHECK_UPDATES` updates from the same imitation warm
start, a third stage ``<run>_200_updates.pt``: does the oracle's gap hold at the longer budget?

Example:
    >>> [run.name for run in planned_runs()][:3]
    ['oracle_seed0', 'oracle_noise_0.5_seed0', 'oracle_noise_1_seed0']
    >>> len(planned_runs()), planned_runs()[0].stages()[1][0][-2:]
    (19, ['--output', 'benchmarks/results/v2/mara/prediction_value/oracle_seed0.pt'])
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mara_env.benchmarks.common.world_results import path_now

#: Where the checkpoints, cards and training logs go.
RESULTS = Path("benchmarks/results/v2/mara/prediction_value")
#: Training seeds of every row but the shipped recipe's.
SEEDS = (0, 1)
#: Training seeds of the shipped recipe's row.
RECIPE_SEEDS = (0, 1, 2)
#: The shipped recipe's predictor.
RECIPE_PREDICTOR = "flow_matching_without_target"
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
        """``(arguments of mara_env.benchmarks.mara.train, checkpoint)`` of its stages, in order: the
        imitation, its PPO, and for the :data:`CHECK_RUNS` the budget check's PPO."""
        imitation = results / f"{self.name}_imitation.pt"
        row = [
            "--seed", str(self.seed), "--predictor", self.row.predictor,
            "--ablation", self.row.ablation, *COMMON_FLAGS,
        ]  # fmt: skip

        def ppo(updates: int, checkpoint: Path) -> tuple[list[str], Path]:
            flags = ppo_flags(updates)
            return [*row, *flags, "--init", str(imitation), "--output", str(checkpoint)], checkpoint

        stages = [
            ([*row, *IMITATION_FLAGS, "--output", str(imitation)], imitation),
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
    """Whether ``checkpoint``'s card records exactly this stage's command (so it finished).

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     weights = Path(folder) / "run.pt"
        ...     _ = weights.write_bytes(b"")
        ...     _ = weights.with_suffix(".json").write_text(
        ...         '{"facts": {"command": ["python", "-m", "benchmarks.mara.train", "--seed", "0", '
        ...         '"--out", "run.pt"]}}')
        ...     stage_done(["--seed", "0", "--output", "run.pt"], weights)
        True
    """
    card = checkpoint.with_suffix(".json")
    if not (checkpoint.is_file() and card.is_file()):
        return False
    try:
        command = json.loads(card.read_text())["facts"]["command"]
    except (ValueError, KeyError):
        return False
    # a card written before 0.4.0 spells the output option --out; before 0.4.1 it names the
    # results folders of the old layout
    recorded = ["--output" if word == "--out" else path_now(word) for word in command]
    return bool(recorded[-len(arguments) :] == list(arguments))


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
