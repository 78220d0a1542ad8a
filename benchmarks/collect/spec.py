"""What a collection run is (:class:`RunSpec`) and what it produces (:class:`Curve`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Every curve is recorded at this many points of its work grid, or more.
MIN_POINTS = 100
#: Losses are clipped from below to this floor (the simulator works in log-loss).
LOSS_FLOOR = 1e-4


@dataclass(frozen=True)
class RunSpec:
    """One training run of a grid.

    Attributes:
        family: ``"vision"``, ``"rl"`` or ``"tabular"``.
        params: JSON-serialisable settings: data set, model, hyperparameters.
        seed: Seed of every random generator of the run.
    """

    family: str
    params: dict[str, Any] = field(hash=False)
    seed: int = 0

    @property
    def run_id(self) -> str:
        """A stable identifier: family, a readable summary and a hash of the settings."""
        text = json.dumps({"params": self.params, "seed": self.seed}, sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        return f"{self.family}-{digest}"


@dataclass(frozen=True)
class Curve:
    """The recorded loss of one run.

    Attributes:
        losses: Loss at each point of the work grid (>= ``MIN_POINTS`` values, > 0).
        work: The work done at each point (strictly increasing), in ``work_unit``.
        work_unit: What one unit of ``work`` is (for example "epochs", "env steps").
        wall_seconds: Wall time of the run.
        metadata: JSON-serialisable extra facts (data set sizes, final metrics, ...).
    """

    losses: np.ndarray
    work: np.ndarray
    work_unit: str
    wall_seconds: float
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        losses = np.asarray(self.losses, dtype=np.float64)
        work = np.asarray(self.work, dtype=np.float64)
        if losses.ndim != 1 or losses.size < MIN_POINTS:
            raise ValueError(f"a curve needs >= {MIN_POINTS} points, got shape {losses.shape}")
        if work.shape != losses.shape or np.any(np.diff(work) <= 0):
            raise ValueError("work must have one strictly increasing value per loss")
        if not np.all(np.isfinite(losses)):
            raise ValueError("losses must be finite")
        object.__setattr__(self, "losses", np.maximum(losses, LOSS_FLOOR))
        object.__setattr__(self, "work", work)
