"""MARA's training and evaluation: imitation then PPO, validation beside training, evaluation
with intervals, paired checkpoint comparisons and decision timing.

Run ``python -m mara_env.benchmarks.mara <command> [options]``; each command is also its own module:

* ``train`` (:mod:`mara_env.benchmarks.mara.train`): train the MARA policy (imitation warm start, then
  PPO) and write its checkpoint and card.
* ``evaluate`` (:mod:`mara_env.benchmarks.mara.evaluate`): evaluate MARA checkpoints and the baselines on
  evaluation seeds, resumable, with 95% intervals.
* ``compare`` (:mod:`mara_env.benchmarks.mara.compare`): compare MARA checkpoints paired on training
  episodes no run chose with.
* ``timing`` (:mod:`mara_env.benchmarks.mara.timing`): time MARA's decisions per epoch: prediction
  features against the policy alone.
* ``trust-region`` (:mod:`mara_env.benchmarks.mara.trust_region`): how far PPO let the joint policy move,
  from training logs.
* ``prediction-value`` (:mod:`mara_env.benchmarks.mara.prediction_value`): train MARA with each
  predictor (the oracle included) and each ablation on Cluster-v2, at one common budget.
* ``prediction-value-v3`` (:mod:`mara_env.benchmarks.mara.prediction_value_v3`): MARA's full recipe
  trained with each source of prediction features on Cluster-v3, evaluated with intervals over
  training seeds.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "train": (
        "mara_env.benchmarks.mara.train",
        "Train the MARA policy (imitation warm start, then PPO) and write its checkpoint and card.",
    ),
    "evaluate": (
        "mara_env.benchmarks.mara.evaluate",
        "Evaluate MARA checkpoints and baselines on evaluation seeds, with 95% intervals.",
    ),
    "compare": (
        "mara_env.benchmarks.mara.compare",
        "Compare MARA checkpoints paired on training episodes no run chose with.",
    ),
    "timing": (
        "mara_env.benchmarks.mara.timing",
        "Time MARA's decisions per epoch: prediction features against the policy alone.",
    ),
    "trust-region": (
        "mara_env.benchmarks.mara.trust_region",
        "How far PPO let the joint policy move, from training logs (joint KL, warm-up, stops).",
    ),
    "prediction-value": (
        "mara_env.benchmarks.mara.prediction_value",
        "Train MARA with each predictor and ablation on Cluster-v2 at one common budget.",
    ),
    "prediction-value-v3": (
        "mara_env.benchmarks.mara.prediction_value_v3",
        "Evaluate MARA trained with each source of prediction features on Cluster-v3.",
    ),
}
