"""One worker process beside the main one, for episodes played while training goes on.

Example:
    >>> pool = worker_pool()
    >>> pool.submit(pow, 2, 5).result()
    32
    >>> pool.shutdown()
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

from mara_env.benchmarks.common.lifeline import end_with_parent, worker_context
from mara_env.benchmarks.common.threads import set_torch_threads


def _set_up(parent_pid: int) -> None:
    end_with_parent(parent_pid)
    set_torch_threads(1)


def worker_pool() -> ProcessPoolExecutor:
    """A pool of one ``spawn`` worker process that ends with this process and runs torch on
    one thread (the jobs' functions and arguments must pickle)."""
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=worker_context(),
        initializer=_set_up,
        initargs=(os.getpid(),),
    )
