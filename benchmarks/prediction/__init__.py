"""Remaining-work prediction: the prediction benchmark and its figures, predictor training,
checkpoint comparison on validation cases, and the predictors' verdicts inside the schedulers.

Run ``python -m mara_env.benchmarks.prediction <command> [options]``; each command is also its own module:

* ``benchmark`` (:mod:`mara_env.benchmarks.prediction.benchmark`): score every predictor's remaining-work
  predictions in and out of distribution.
* ``train`` (:mod:`mara_env.benchmarks.prediction.train`): train a learned predictor on the train split
  and write its checkpoint.
* ``compare`` (:mod:`mara_env.benchmarks.prediction.validation_comparison`): compare two flow-matching
  checkpoints on the train split's validation cases.
* ``leak-audit`` (:mod:`mara_env.benchmarks.prediction.leak_audit`): measure what the observation gives
  away of a task's hidden effort, world by world.
* ``verdicts`` (:mod:`mara_env.benchmarks.prediction.verdicts.cli`): record and score the predictors'
  success verdicts inside LaiRA's episodes.
* ``value-errors`` (:mod:`mara_env.benchmarks.prediction.value_errors`): score the value-of-prediction
  rows' predictors (the oracle included) against the truth.
* ``reach-model`` (:mod:`mara_env.benchmarks.prediction.reach_model`): fit the reach planner's
  model and choose its settings on training seeds; score both.
* ``work-split`` (:mod:`mara_env.benchmarks.prediction.work_split`): split each agent's
  node-epochs by the tasks they went to.
* ``prediction-pays`` (:mod:`mara_env.benchmarks.prediction.prediction_pays`): play the same
  schedulers with and without predictions on every world of the ladder.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "benchmark": (
        "mara_env.benchmarks.prediction.benchmark",
        "Score every predictor's remaining-work predictions in and out of distribution.",
    ),
    "train": (
        "mara_env.benchmarks.prediction.train",
        "Train a learned predictor on the train split and write its checkpoint.",
    ),
    "compare": (
        "mara_env.benchmarks.prediction.validation_comparison",
        "Compare two flow-matching checkpoints on the train split's validation cases.",
    ),
    "leak-audit": (
        "mara_env.benchmarks.prediction.leak_audit",
        "Measure what the observation gives away of a task's hidden effort, world by world.",
    ),
    "ladder": (
        "mara_env.benchmarks.prediction.ladder",
        "Measure how well anything can know which tasks can still finish, rung by rung.",
    ),
    "feature-swaps": (
        "mara_env.benchmarks.prediction.feature_swaps",
        "Play the shipped MARA policy with other predictions swapped in at test time.",
    ),
    "verdicts": (
        "mara_env.benchmarks.prediction.verdicts.cli",
        "Record and score the predictors' success verdicts inside LaiRA's episodes.",
    ),
    "value-errors": (
        "mara_env.benchmarks.prediction.value_errors",
        "Score the value-of-prediction rows' predictors against the truth (Brier, log error).",
    ),
    "reach-model": (
        "mara_env.benchmarks.prediction.reach_model",
        "Fit the reach planner's model and choose its settings on training seeds; score both.",
    ),
    "work-split": (
        "mara_env.benchmarks.prediction.work_split",
        "Split each agent's node-epochs by the tasks they went to (could never finish, ...).",
    ),
    "prediction-pays": (
        "mara_env.benchmarks.prediction.prediction_pays",
        "Play the same schedulers with and without predictions on every world of the ladder.",
    ),
}
