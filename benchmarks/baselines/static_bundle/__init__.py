"""LaiRA-style static bundles: ten tasks arriving at once on one node.

LaiRA's headline experiment (PAPERS.md §3b) schedules a bundle of 10 mixed tasks that all start
together on one unit of compute and counts how many reach their target by their deadlines. This
package builds that setting from the shipped curves and runs the shipped schedulers on it:

* **bundles** (:mod:`mara_env.benchmarks.baselines.static_bundle.bundles`): ``paper`` (the default), with one
  unreachable target, one deadline too short even alone, and deadlines scaled so that the
  clairvoyant reference completes about 7 of 10 (calibrated on seeds 500-549 by
  :mod:`mara_env.benchmarks.baselines.static_bundle.calibration`); ``tight``, the original setup, where every
  target is reachable but the deadlines are each task's time alone times its slack;
* **cluster**: one node, a slot for every task, the default switch cost;
* **agents**: those of :data:`BUNDLE_AGENTS` that are registered (a missing one is skipped
  with a note); seeds ``0 .. N-1`` (``--seeds``), one bundle each, the same bundle for every
  agent.

Each finished seed's rows (one per agent) are appended to ``DIR/bundle.csv`` in one write and
flushed, so an interrupted run loses at most the seed in progress; running again skips the
(agent, seed) pairs already there for the same bundle and code (:mod:`~.log`; ``--no-resume``
starts afresh). The summary is a Markdown table of tasks completed (mean and 95% bootstrap
interval, :func:`mara_env.agents.statistics.mean_ci`) beside LaiRA's paper's counts, printed and written
to ``DIR/results.md`` with a section per bundle.

Usage::

    python -m mara_env.benchmarks.baselines.static_bundle                  # paper bundle, seeds 0-9
    python -m mara_env.benchmarks.baselines.static_bundle --bundle tight   # the original setup
    python -m mara_env.benchmarks.baselines.static_bundle --calibrate      # the paper bundle's deadline scale
    python -m mara_env.benchmarks.baselines.static_bundle --quick --output /tmp/bundle

Example:
    >>> sorted(BUNDLES), DEFAULT_BUNDLE
    (['paper', 'tight'], 'paper')
    >>> BUNDLES["paper"].unreachable, BUNDLES["paper"].too_short, PAPER_DEADLINE_SCALE
    (1, 1, 2.0)
"""

from __future__ import annotations

from mara_env.benchmarks.baselines.static_bundle.bundles import (
    BUNDLES,
    DEFAULT_BUNDLE,
    N_TASKS,
    PAPER_DEADLINE_SCALE,
    BundleSpec,
    bundle_config,
    draw_bundle,
)
from mara_env.benchmarks.baselines.static_bundle.calibration import (
    CALIBRATION_SEEDS,
    Calibration,
    calibrate,
)
from mara_env.benchmarks.baselines.static_bundle.cli import BUNDLE_AGENTS, main
from mara_env.benchmarks.baselines.static_bundle.log import (
    COLUMNS,
    BundleLog,
    setup_fingerprint,
    setup_manifest,
)
from mara_env.benchmarks.baselines.static_bundle.play import play
from mara_env.benchmarks.baselines.static_bundle.report import PAPER_MIXED_BUNDLE, markdown_table

__all__ = [
    "BUNDLES",
    "BUNDLE_AGENTS",
    "CALIBRATION_SEEDS",
    "COLUMNS",
    "DEFAULT_BUNDLE",
    "N_TASKS",
    "PAPER_DEADLINE_SCALE",
    "PAPER_MIXED_BUNDLE",
    "BundleLog",
    "BundleSpec",
    "Calibration",
    "bundle_config",
    "calibrate",
    "draw_bundle",
    "main",
    "markdown_table",
    "play",
    "setup_fingerprint",
    "setup_manifest",
]
