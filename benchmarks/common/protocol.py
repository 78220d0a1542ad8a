"""The evaluation protocol every benchmark shares: which workloads a result is reported on.

A scheduler is reported on :data:`EVALUATION_WORKLOADS`: the training mix of families
(``in_distribution``) and two mixes that lean on one family (``rl``, ``vision``;
:mod:`mara_env.curves.workloads` defines them). Its episodes use evaluation seeds and every setting is
chosen on training seeds (:mod:`mara_env.benchmarks.common.seeds`). The leaderboard, MARA's training
and evaluation, and the baselines' tuning and deviations all read these names from here.

Example:
    >>> from mara_env.curves.workloads import WORKLOADS
    >>> set(EVALUATION_WORKLOADS) <= set(WORKLOADS)
    True
"""

from __future__ import annotations

#: The workloads every benchmark reports a scheduler on.
EVALUATION_WORKLOADS = ("in_distribution", "rl", "vision")
