"""A resumable store of raw curves: one ``.npz`` file per finished run, written atomically.

A killed collection loses only the runs in flight; running it again skips every run whose file
exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.atomic_files import replace_atomically, write_atomically
from mara_env.benchmarks.collect.spec import Curve, RunSpec


class CurveStore:
    """Raw curves under ``root/<family>/<run_id>.npz``.

    Args:
        root: The store's folder (created on demand).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, spec: RunSpec) -> Path:
        """Where ``spec``'s curve is stored."""
        return self.root / spec.family / f"{spec.run_id}.npz"

    def has(self, spec: RunSpec) -> bool:
        """Whether ``spec`` already ran."""
        return self.path(spec).is_file()

    def save(self, spec: RunSpec, curve: Curve) -> Path:
        """Store ``curve`` atomically (write a temporary file, then rename)."""
        path = self.path(spec)
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "family": spec.family,
            "params": spec.params,
            "seed": spec.seed,
            "run_id": spec.run_id,
            "work_unit": curve.work_unit,
            "wall_seconds": round(curve.wall_seconds, 3),
            "metadata": curve.metadata,
        }
        replace_atomically(
            path,
            lambda handle: np.savez(
                handle,
                losses=curve.losses,
                work=curve.work,
                record=np.array(json.dumps(record, sort_keys=True)),
            ),
            durable=True,
        )
        return path

    def log_session(self, session: dict[str, Any]) -> None:
        """Append one collection session (families, runs, wall seconds...) to the log."""
        log = self.collection_log()
        log.append(session)
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomically(self.root / "collection.json", json.dumps(log, indent=1))

    def collection_log(self) -> list[dict[str, Any]]:
        """Every logged collection session, oldest first."""
        path = self.root / "collection.json"
        return json.loads(path.read_text()) if path.is_file() else []

    def load_family(self, family: str) -> list[tuple[dict[str, Any], np.ndarray, np.ndarray]]:
        """Every stored run of ``family`` as ``(record, losses, work)``, sorted by run id."""
        runs = []
        for path in sorted((self.root / family).glob("*.npz")):
            with np.load(path, allow_pickle=False) as data:
                record = json.loads(str(data["record"]))
                runs.append((record, data["losses"].copy(), data["work"].copy()))
        return runs
