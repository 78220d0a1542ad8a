"""Worker processes that end with the process that started them, even after ``kill -9``.

A SIGKILLed main process runs no clean-up, and a pool worker blocked on its task queue never
notices: it holds both ends of the queue's pipe itself. :func:`end_with_parent`, run in each
worker as it starts, ties the worker's life to its parent's in two ways:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker the moment its
  parent dies;
- everywhere, a daemon thread that checks twice a second whether the parent is still the
  worker's parent (an orphan is re-parented) and ends the worker if not.

Once the workers are gone, multiprocessing's resource tracker (which the workers keep alive by
holding its pipe) sees the end of its input and exits by itself, freeing the semaphores of the
pool's queues that the killed process could not. It would say so ("There appear to be 7 leaked
semaphore objects to clean up at shutdown") although nothing is left behind:
:func:`worker_context` starts the tracker without that warning. Workers must be direct children
of the main process for this (the ``spawn`` start method, not ``forkserver``, whose server would
be their parent).

:func:`start_worker` is the leaderboard's worker initializer. It lives here, in a module that
imports only the standard library and :mod:`mara_env.installation`, because a ``spawn`` worker
imports the initializer's module before running it: a module that imported ``agents`` would
import it before the initializer could put the working directory last.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
import time

from mara_env.installation import put_working_directory_last

#: ``PR_SET_PDEATHSIG`` from ``<linux/prctl.h>``.
_PR_SET_PDEATHSIG = 1
#: Seconds between the watcher thread's checks of the parent.
WATCH_SECONDS = 0.5


#: The warning filter the resource tracker starts with (see the module docstring).
_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def worker_context() -> multiprocessing.context.SpawnContext:
    """The ``spawn`` context of the worker pools, whose resource tracker (started with the first
    pool, with this interpreter's warning options) does not warn about the semaphores it frees
    after the main process was killed."""
    if _QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(_QUIET_TRACKER)
    return multiprocessing.get_context("spawn")


def end_with_parent(parent_pid: int) -> None:
    """End this process as soon as ``parent_pid``, its parent, is gone.

    Args:
        parent_pid: The parent's process id, as the parent saw it (``os.getpid()`` there).
    """
    _set_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    watcher = threading.Thread(
        target=_watch, args=(parent_pid,), name="end-with-parent", daemon=True
    )
    watcher.start()


def _set_parent_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    library = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(library, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no usable libc: the thread remains
        return


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCH_SECONDS)
    os._exit(1)


def start_worker(main_pid: int, directory_last: bool) -> None:
    """Worker initializer: end with the main process (a worker is a fresh ``spawn`` child of it,
    not a fork: a fork of a process in which an agent already ran torch's GNU OpenMP can hang,
    and a ``forkserver`` child would outlive a killed main process); Ctrl-C is the main
    process's business; one BLAS/torch thread; and, when the main process put the working
    directory last on ``sys.path`` (``mara-leaderboard``), the same here
    (:func:`mara_env.installation.put_working_directory_last`).

    Args:
        main_pid: The main process's id, as it saw it.
        directory_last: Whether the main process put the working directory last.
    """
    end_with_parent(main_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(variable, "1")
    if directory_last:
        put_working_directory_last()
