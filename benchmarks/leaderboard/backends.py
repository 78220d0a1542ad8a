"""Where cells run: in this process, in local worker processes, or as Ray tasks.

Every backend runs :func:`~mara_env.benchmarks.leaderboard.cells.execute_cell` on each cell and hands
each outcome to ``on_outcome`` **in the calling process, as soon as the cell finishes**, which
is where the leaderboard appends it to its results file. A cell's result depends only on the
cell, so the numbers are the same on every backend; only the order of completion differs.

- :class:`LocalBackend` (the default): ``workers`` fresh processes (``spawn``) of a
  :class:`concurrent.futures.ProcessPoolExecutor`, or this very process with ``workers=1``.
  The workers end with the main process, even when it is killed with SIGKILL
  (:mod:`mara_env.benchmarks.common.lifeline`). Before the first cell, a worker says where it imports
  mara-env's packages from; a :class:`BackendError` stops the run if that is not where this
  process does (:func:`mara_env.installation.worker_import_problems`).
- :class:`RayBackend`: Ray tasks of one CPU each, on an existing cluster
  (``address="auto"`` or ``"ray://host:10001"``, as for :func:`ray.init`) or on a local Ray
  instance started for the run (``address=None``, ``workers`` CPUs). Ray is optional:
  ``pip install 'mara-env[ray]'``. Import-path agents must be importable on the cluster's
  workers; a local instance passes this process's ``sys.path`` on to them.

:func:`execute_cells` drives a backend with a progress bar (with ETA) and turns a first Ctrl-C
into "stop starting cells, keep the finished ones"; a second Ctrl-C stops at once.
:func:`run_cells` is the short form for scripts that want rows and stop at the first failure.

Example:
    >>> from mara_env import get_config
    >>> from mara_env.benchmarks.leaderboard.grid import Cell
    >>> cells = [Cell("edf", seed, get_config("tiny"), "tiny") for seed in (1000, 1001)]
    >>> outcomes = []
    >>> execute_cells(cells, LocalBackend(workers=1), outcomes.append, progress=False)
    >>> [outcome.row["seed"] for outcome in outcomes]
    [1000, 1001]
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol

from tqdm.auto import tqdm

from mara_env.benchmarks.common.lifeline import start_worker, worker_context
from mara_env.benchmarks.common.machine import available_cores
from mara_env.benchmarks.common.ray_runtime import RayUnavailable, import_ray, start_ray
from mara_env.benchmarks.leaderboard.cells import CellOutcome, execute_cell
from mara_env.benchmarks.leaderboard.grid import Cell
from mara_env.installation import worker_import_problems, working_directory_last

OnOutcome = Callable[[CellOutcome], None]
StopRequested = Callable[[], bool]
#: Seconds between checks for finished cells and for Ctrl-C.
_POLL_SECONDS = 0.2


class BackendError(RuntimeError):
    """A backend that cannot start (Ray missing, cluster unreachable)."""


class Backend(Protocol):
    """Runs cells and reports each outcome in the calling process as it finishes."""

    name: str

    def run(self, cells: Sequence[Cell], on_outcome: OnOutcome, stop: StopRequested) -> None:
        """Run ``cells``; call ``on_outcome`` per finished cell; start no cell once ``stop()``."""
        ...


class LocalBackend:
    """Cells in ``workers`` local processes (``workers=1``: in this process, one by one).

    Args:
        workers: Worker processes (>= 1); default: the available cores.
    """

    def __init__(self, workers: int | None = None) -> None:
        self.workers = available_cores() if workers is None else workers
        if not isinstance(self.workers, int) or self.workers < 1:
            raise ValueError(f"LocalBackend: workers must be an int >= 1, got {workers!r}.")
        self.name = f"local, {self.workers} worker(s)"

    def run(self, cells: Sequence[Cell], on_outcome: OnOutcome, stop: StopRequested) -> None:
        """Run ``cells`` (see :class:`Backend`)."""
        if self.workers == 1 or len(cells) <= 1:
            for cell in cells:
                if stop():
                    return
                on_outcome(execute_cell(cell))
            return
        workers = min(self.workers, len(cells))
        pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=worker_context(),
            initializer=start_worker,
            initargs=(os.getpid(), working_directory_last()),
        )
        pending: set[Future[CellOutcome]] = set()
        try:
            problems = worker_import_problems(pool)
            if problems:
                raise BackendError("\n".join(problems))
            pending = {pool.submit(execute_cell, cell) for cell in cells}
            while pending and not stop():
                done, pending = wait(pending, timeout=_POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in done:
                    on_outcome(future.result())
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
        for future in pending:  # cells that were running when the stop came
            if future.done() and not future.cancelled() and future.exception() is None:
                on_outcome(future.result())


class RayBackend:
    """Cells as Ray tasks (one CPU each) on an existing cluster or a local Ray instance.

    Args:
        address: Cluster address for :func:`ray.init` (``"auto"``, ``"ray://host:10001"``, ...);
            ``None`` starts a local instance for the run and shuts it down afterwards.
        workers: CPUs of the local instance (default: the available cores); ignored with an
            address, where the cluster's resources decide.
    """

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.workers = available_cores() if workers is None else workers
        where = address if address is not None else f"local instance, {self.workers} CPUs"
        self.name = f"ray ({where})"

    def run(self, cells: Sequence[Cell], on_outcome: OnOutcome, stop: StopRequested) -> None:
        """Run ``cells`` (see :class:`Backend`)."""
        try:
            started = start_ray("--backend ray", self.address, self.workers)
        except RayUnavailable as error:
            raise BackendError(str(error)) from error
        ray = import_ray("--backend ray")
        try:
            task = ray.remote(num_cpus=1)(_ray_cell)
            pending = [task.remote(cell) for cell in cells]
            while pending and not stop():
                done, pending = ray.wait(pending, num_returns=1, timeout=_POLL_SECONDS)
                for reference in done:
                    on_outcome(ray.get(reference))
            for reference in pending:
                ray.cancel(reference, force=True)
        finally:
            if started:
                ray.shutdown()


def _ray_cell(cell: Cell) -> CellOutcome:
    """The Ray task: one cell."""
    return execute_cell(cell)


def execute_cells(
    cells: Sequence[Cell],
    backend: Backend,
    on_outcome: OnOutcome,
    *,
    progress: bool = True,
    description: str = "episodes",
) -> None:
    """Run ``cells`` on ``backend`` with a progress bar, calling ``on_outcome`` per cell.

    A first Ctrl-C stops starting new cells, lets the running ones finish (their outcomes still
    reach ``on_outcome``) and then raises ``KeyboardInterrupt``; a second Ctrl-C stops at once.

    Raises:
        KeyboardInterrupt: After a Ctrl-C, once the running cells are done.
        BackendError: If the backend cannot start.
    """
    bar = tqdm(total=len(cells), desc=description, unit="episode", disable=not progress)

    def report(outcome: CellOutcome) -> None:
        on_outcome(outcome)
        bar.update()

    with _DeferredInterrupt() as interrupt:
        try:
            if cells:
                backend.run(cells, report, lambda: interrupt.requested)
        finally:
            bar.close()
        if interrupt.requested:
            raise KeyboardInterrupt


def run_cells(
    cells: Sequence[Cell],
    *,
    workers: int | None = None,
    on_rows: Callable[[list[dict[str, Any]]], None],
    progress: bool = True,
    description: str = "episodes",
    backend: Backend | None = None,
) -> None:
    """Run ``cells`` (default: on ``workers`` local processes), calling ``on_rows`` with each
    finished cell's rows.

    Raises:
        CellError: At the first cell that fails (the running ones are stopped).
        KeyboardInterrupt: After a Ctrl-C, once the running cells are done.
    """

    execute_cells(
        cells,
        backend or LocalBackend(workers),
        lambda outcome: on_rows(outcome.rows()),
        progress=progress,
        description=description,
    )


class _DeferredInterrupt:
    """Turns the first SIGINT into a flag (main thread only); the second one interrupts."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> _DeferredInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nStopping after the running episodes (Ctrl-C again to abort).", file=sys.stderr)

    def __exit__(self, *exc_info: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
