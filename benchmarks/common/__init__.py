"""Helpers every group of benchmark scripts shares, one home each; this package imports no group.

Results and their keys:

* :mod:`~mara_env.benchmarks.common.store`: the resumable results file, rows appended and ``fsync``-ed as
  they finish, typed by a column schema, keyed by what produced them, able to say why rows are
  stale and to prune them (:class:`ResultsStore`, :class:`ResultsFileError`);
* :mod:`~mara_env.benchmarks.common.results_lines`: a results file's column types, formats and the
  recovery of a line cut short (shared with the leaderboard's journal);
* :mod:`~mara_env.benchmarks.common.keys`, :mod:`~mara_env.benchmarks.common.manifest`,
  :mod:`~mara_env.benchmarks.common.source_closure`: the one key recipe (a manifest of the code's syntax
  trees without docstrings, data, settings and Python version) and what changed between two;
* :mod:`~mara_env.benchmarks.common.provenance`, :mod:`~mara_env.benchmarks.common.machine`: what produced a result
  (versions, git revision, checkpoints, the platform line, the cores);
* :mod:`~mara_env.atomic_files`: write a file through a temporary file and a rename.

The protocol and the runs:

* :mod:`~mara_env.benchmarks.common.protocol` and :mod:`~mara_env.benchmarks.common.seeds`: the evaluation
  workloads, training seeds below 1000 and evaluation seeds from 1000;
* :mod:`~mara_env.benchmarks.common.statistics`: the leaderboard's stratified bootstrap, IQM and ranks;
  rank correlations, AUC and the bootstrap over whole episodes;
* :mod:`~mara_env.benchmarks.common.seed_intervals`: a learned agent's interval over training seeds and
  episodes (the two-level bootstrap);
* :mod:`~mara_env.benchmarks.common.probes`: a linear (logistic) probe of what some columns predict;
* :mod:`~mara_env.benchmarks.common.random_policy`: the random masked policy;
* :mod:`~mara_env.benchmarks.common.threads`, :mod:`~mara_env.benchmarks.common.workers`,
  :mod:`~mara_env.benchmarks.common.lifeline`: torch threads, worker processes that end with their parent;
* :mod:`~mara_env.benchmarks.common.arguments`, :mod:`~mara_env.benchmarks.common.subcommands`,
  :mod:`~mara_env.benchmarks.common.figures`: command-line types, ``python -m mara_env.benchmarks.<group>
  <command>``, and matplotlib on a file backend.
"""

from __future__ import annotations

from mara_env.atomic_files import replace_atomically, write_atomically
from mara_env.benchmarks.common.seeds import (
    EVALUATION_SEED_START,
    TRAINING_SEEDS,
    evaluation_seeds,
    is_training_seed,
    require_training_seeds,
    training_seeds,
)
from mara_env.benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env.benchmarks.common.threads import (
    TorchThreadLimit,
    one_torch_thread,
    one_torch_thread_if_loaded,
    set_torch_threads,
)

__all__ = [
    "EVALUATION_SEED_START",
    "TRAINING_SEEDS",
    "ResultsFileError",
    "ResultsStore",
    "TorchThreadLimit",
    "evaluation_seeds",
    "is_training_seed",
    "one_torch_thread",
    "one_torch_thread_if_loaded",
    "replace_atomically",
    "require_training_seeds",
    "set_torch_threads",
    "training_seeds",
    "write_atomically",
]
