"""Run the grids of the family collectors over worker processes, into a :class:`CurveStore`.

Runs are independent: each is seeded from its :class:`RunSpec`, so a curve does not depend on
which worker ran it or in what order. Each worker uses one torch thread; ``--workers`` processes
(default: every core) run side by side. Finished curves are stored as they arrive; runs already
in the store are skipped, so a killed collection continues where it stopped.
"""

from __future__ import annotations

import importlib
import os
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from types import ModuleType

from tqdm.auto import tqdm

from mara_env.benchmarks.collect.spec import Curve, RunSpec
from mara_env.benchmarks.collect.store import CurveStore

#: Family name -> collector module (imported lazily: they import torch, SB3, scikit-learn).
COLLECTORS = {
    "rl": "mara_env.benchmarks.collect.rl",
    "vision": "mara_env.benchmarks.collect.vision",
    "tabular": "mara_env.benchmarks.collect.tabular",
}


def collector(family: str) -> ModuleType:
    """The collector module of ``family``, with ``grid(smoke)`` and ``run(spec)``."""
    if family not in COLLECTORS:
        raise ValueError(f"unknown family {family!r}; known: {sorted(COLLECTORS)}")
    return importlib.import_module(COLLECTORS[family])


def _limit_threads() -> None:
    """One thread per worker: runs are small, and two workers share two cores."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
    except (ImportError, RuntimeError):
        pass


def _run(spec: RunSpec) -> Curve:
    return collector(spec.family).run(spec)


@dataclass
class CollectionReport:
    """What a collection did: runs done now, skipped (already stored) and failed."""

    done: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0


def collect(
    families: Sequence[str],
    store: CurveStore,
    *,
    smoke: bool = False,
    workers: int | None = None,
    progress: bool = True,
) -> CollectionReport:
    """Run every not-yet-stored run of ``families``' grids and store the curves.

    Args:
        families: Families to collect.
        store: Where curves go (and which runs are already done).
        smoke: Use each collector's tiny smoke grid.
        workers: Worker processes (default: the cores this process may use); 0 runs inline.
        progress: Show a progress bar.
    """
    start, started_at = time.perf_counter(), time.time()
    specs = [spec for family in families for spec in collector(family).grid(smoke=smoke)]
    todo = [spec for spec in specs if not store.has(spec)]
    report = CollectionReport(skipped=len(specs) - len(todo))
    if workers is None:
        workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    bar = tqdm(total=len(todo), disable=not progress, unit="run", desc="collect")
    try:
        if workers == 0:
            _limit_threads()
            for spec in todo:
                _store_result(store, spec, _attempt(spec), report)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=workers, initializer=_limit_threads) as pool:
                pending: dict[Future[Curve], RunSpec] = {}
                queue = list(reversed(todo))
                while queue or pending:
                    while queue and len(pending) < 2 * workers:
                        spec = queue.pop()
                        pending[pool.submit(_run, spec)] = spec
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        spec = pending.pop(future)
                        error = future.exception()
                        outcome: Curve | str = (
                            future.result()
                            if error is None
                            else "".join(traceback.format_exception(error))
                        )
                        _store_result(store, spec, outcome, report)
                        bar.update()
    finally:
        bar.close()
        report.seconds = time.perf_counter() - start
        store.log_session(
            {
                "families": list(families),
                "smoke": smoke,
                "workers": workers,
                "done": report.done,
                "failed": report.failed,
                "seconds": round(report.seconds, 1),
                "started_at": round(started_at, 1),
                "finished_at": round(time.time(), 1),
            }
        )
    return report


def _attempt(spec: RunSpec) -> Curve | str:
    try:
        return _run(spec)
    except Exception:  # a failed run is reported and the collection goes on
        return traceback.format_exc()


def _store_result(
    store: CurveStore, spec: RunSpec, outcome: Curve | str, report: CollectionReport
) -> None:
    if isinstance(outcome, Curve):
        store.save(spec, outcome)
        report.done += 1
    else:
        report.failed += 1
        tqdm.write(f"run {spec.run_id} ({spec.params}) failed:\n{outcome}")
