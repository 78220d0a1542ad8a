"""Verdict diagnostics: how often predictors call feasible tasks infeasible, and the reverse.

A scheduler that drops tasks it believes hopeless (LaiRA's look-ahead, LARA's exclusions) is only
as good as those beliefs: a feasible task dropped is a completion lost, a hopeless task kept is
compute wasted. This benchmark measures both errors for any registered predictor, against the
privileged truth, as a function of how many losses the task has reported:

* **episodes** (:mod:`~.record`): the ``training`` preset at the training load on training
  seeds 100-109 (train split; never the evaluation seeds), played by the fixed driver
  ``round_robin`` so that every visible task is reported on regularly;
* **verdicts**: after each new report, each predictor's probability that the task reaches its
  target by its deadline with all the nodes from now on; "infeasible" below ``--threshold``
  (0.5); and the shipped LaiRA's own look-ahead verdict at its own tuned threshold
  (:mod:`~.laira_judge`, ``--no-laira`` leaves it out);
* **truth**: whether it could, from the clairvoyant reference's exact epochs to target
  (:func:`mara_env.agents.clairvoyant.task_epochs_to_target`);
* **output** (:mod:`~.summary`, :mod:`~.figure`): false-negative rate, false-positive rate and the
  share of wrong drops per bucket of reports (1, 2, 3-4, 5-8, 9+) with counts and 95%
  task-bootstrap intervals, as ``DIR/verdicts.md``, ``DIR/verdicts.csv`` and
  ``DIR/verdicts.png``.

The three default predictors take about a minute and a half per ten episodes on one core, so
the script does not resume; ``--quick`` plays one short episode.

Usage::

    python -m mara_env.benchmarks.prediction.verdicts                         # wls, dkf, flow_matching; seeds 100-109
    python -m mara_env.benchmarks.prediction.verdicts --quick --output /tmp/verdicts
    python -m mara_env.benchmarks.prediction.verdicts --predictors dkf --threshold 0.2

Example:
    >>> from mara_env.benchmarks.prediction.verdicts import VerdictSettings, record_episode, summarise
    >>> from mara_env.predictors.registry import make_predictor
    >>> settings = VerdictSettings(seeds=(100,), predictors=("wls",), arrival_horizon=5)
    >>> records = record_episode(settings, 100, {"wls": make_predictor("wls")})
    >>> [row.bucket for row in summarise(records, {"wls": 0.5})]
    ['1', '2', '3-4', '5-8', '9+']
"""

from __future__ import annotations

from mara_env.benchmarks.prediction.verdicts.cli import main
from mara_env.benchmarks.prediction.verdicts.record import (
    DRIVER,
    VerdictRecord,
    VerdictSettings,
    build_predictors,
    record_episode,
)
from mara_env.benchmarks.prediction.verdicts.summary import (
    BUCKETS,
    Rates,
    bucket_of,
    markdown_table,
    summarise,
)

__all__ = [
    "BUCKETS",
    "DRIVER",
    "Rates",
    "VerdictRecord",
    "VerdictSettings",
    "bucket_of",
    "build_predictors",
    "main",
    "markdown_table",
    "record_episode",
    "summarise",
]
