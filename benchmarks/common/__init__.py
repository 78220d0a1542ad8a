"""Helpers every benchmark script shares, one home each.

* :mod:`benchmarks.common.store`: the resumable results file, rows appended and ``fsync``-ed as
  they finish, typed by a column schema and keyed by what produced them
  (:class:`ResultsStore`);
* :mod:`benchmarks.common.seeds`: the seed policy, training seeds below 1000 and evaluation
  seeds from 1000 (:func:`require_training_seeds`, :func:`training_seeds`,
  :func:`evaluation_seeds`);
* :mod:`benchmarks.common.atomic`: write a file through a temporary file and a rename, so a
  crash never leaves half a file (:func:`write_atomically`, :func:`replace_atomically`);
* :mod:`benchmarks.common.threads`: keep torch on one thread while small models train or
  predict (:func:`one_torch_thread`, :class:`TorchThreadLimit`, :func:`set_torch_threads`);
* :mod:`benchmarks.common.workers`: one worker process beside the main one, ending with it
  (:func:`~benchmarks.common.workers.worker_pool`).
"""

from __future__ import annotations

from benchmarks.common.atomic import replace_atomically, write_atomically
from benchmarks.common.seeds import (
    EVALUATION_SEED_START,
    TRAINING_SEEDS,
    evaluation_seeds,
    is_training_seed,
    require_training_seeds,
    training_seeds,
)
from benchmarks.common.store import ResultsFileError, ResultsStore
from benchmarks.common.threads import (
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
