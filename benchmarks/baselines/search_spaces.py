"""What the tuning searches: each baseline's settings grid, on training seeds and configs.

:data:`SEARCH_SPACES` names, per registered baseline, the settings tuned and their candidate values
(:class:`SearchSpace`); LaiRA's candidates are completed by a look-ahead calibration fitted on
training episodes. Every search runs on training seeds (:func:`tuning_seeds`) and the train split
of the training preset (:func:`~mara_env.benchmarks.common.tuning_configs.tuning_configs`), so
evaluation seeds stay untouched.

Example:
    >>> sorted(SEARCH_SPACES)[:2]
    ['laira', 'lara']
    >>> tuning_seeds(100, 3)
    (100, 101, 102)
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from mara_env.agents import Scheduler
from mara_env.agents.laira import Laira, LairaSettings
from mara_env.agents.lara import Lara
from mara_env.agents.least_slack import LeastSlack
from mara_env.agents.successive_halving import SuccessiveHalving
from mara_env.agents.successive_halving_stream import SuccessiveHalvingStream
from mara_env.benchmarks.baselines.lookahead_calibration import calibrate
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.seeds import training_seeds
from mara_env.benchmarks.common.tuning_configs import tuning_configs
from mara_env.worlds.config import LATEST_WORLD_VERSION

#: The workloads the leaderboard reports, each tuned on at the training load.
WORKLOADS = EVALUATION_WORKLOADS


@dataclass(frozen=True)
class SearchSpace:
    """A baseline's tunable settings.

    Attributes:
        factory: Builds the scheduler from keyword settings.
        grid: Candidate values per setting name (the class defaults are always tried too).
        fixed: Settings that define the variant and are never searched.
        prepare: Completes each candidate with settings fitted to training episodes rather
            than searched (LaiRA's look-ahead calibration); called with ``quick``.
    """

    factory: Callable[..., Scheduler]
    grid: Mapping[str, tuple[Any, ...]]
    fixed: Mapping[str, Any] = field(default_factory=dict)
    prepare: Callable[[dict[str, Any], bool, int], dict[str, Any]] | None = None

    def candidates(
        self,
        budget: int,
        rng: np.random.Generator,
        *,
        quick: bool = False,
        world_version: int = LATEST_WORLD_VERSION,
    ) -> list[dict[str, Any]]:
        """The defaults (``{}``) and up to ``budget - 1`` distinct draws from the grid, each
        completed by ``prepare`` (settings fitted to data, e.g. LaiRA's calibration)."""
        names = sorted(self.grid)
        combinations = list(itertools.product(*(self.grid[name] for name in names)))
        count = min(budget - 1, len(combinations))
        picked = rng.choice(len(combinations), size=count, replace=False)
        draws = [dict(zip(names, combinations[int(index)], strict=True)) for index in picked]
        chosen = [{}, *draws]
        if self.prepare is not None:
            chosen = [self.prepare(settings, quick, world_version) for settings in chosen]
        return chosen

    def build(self, settings: Mapping[str, Any]) -> Scheduler:
        """The scheduler with ``settings`` on top of the variant's fixed settings."""
        return self.factory(**{**self.fixed, **settings})


#: First seed of the episodes LaiRA's look-ahead is calibrated on, and their number.
CALIBRATION_SEED_BASE = 300


CALIBRATION_SEEDS = 8


@cache
def _calibration(offset: float, quick: bool, world_version: int) -> str:
    """LaiRA's look-ahead calibration for a work ``offset`` in ``world_version`` (JSON, cached
    per offset and world)."""
    seeds = tuning_seeds(CALIBRATION_SEED_BASE, 1 if quick else CALIBRATION_SEEDS)
    configs = tuning_configs(quick=quick, world_version=world_version).values()
    table = calibrate(LairaSettings(offset=offset), configs, seeds)
    rounded = {family: [round(a, 4), round(b, 4)] for family, (a, b) in table.items()}
    return json.dumps(rounded, sort_keys=True)


def _with_calibration(settings: dict[str, Any], quick: bool, world_version: int) -> dict[str, Any]:
    """``settings`` with the look-ahead calibration fitted for their ``offset`` in
    ``world_version``."""
    offset = float(settings.get("offset", LairaSettings().offset))
    return {**settings, "calibration": json.loads(_calibration(offset, quick, world_version))}


#: What is tuned, per registered name (see each class's settings docstring).
SEARCH_SPACES: Mapping[str, SearchSpace] = {
    "lara": SearchSpace(
        Lara,
        {
            "gamma": (0.8, 0.9, 0.95, 0.99),
            "offset": (1.0, 2.0, 5.0, 10.0),
            "exploration_points": (2, 3, 4, 6),
            "exploration_share": (0.1, 0.25, 0.5),
        },
    ),
    "lara_proportional": SearchSpace(
        Lara,
        {
            "gamma": (0.8, 0.9, 0.95, 0.99),
            "offset": (1.0, 2.0, 5.0, 10.0),
            "exploration_points": (2, 3, 4, 6),
            "stickiness": (0.0, 0.5, 1.0, 2.0),
        },
        fixed={"allocation": "proportional"},
    ),
    "laira": SearchSpace(
        Laira,
        {
            "beta": (0.0, 0.05, 0.1, 0.3, 1.0),
            "offset": (2.0, 5.0, 10.0),
            "success_threshold": (0.1, 0.2, 0.3, 0.4, 0.45),
            "min_reports": (2, 3, 4, 6),
            "ratio_cap": (0.25, 0.5, 1.0, 2.0),
            "max_slice": (2, 4, 8),
            "allocation": ("need", "one_each"),
        },
        prepare=_with_calibration,
    ),
    "successive_halving": SearchSpace(
        SuccessiveHalving, {"eta": (2, 3, 4), "bracket_epochs": (None, 5, 10, 20, 40)}
    ),
    "successive_halving_stream": SearchSpace(
        SuccessiveHalvingStream,
        {
            "rungs": ((2.0, 8.0), (4.0, 16.0), (8.0, 32.0), (4.0,), (8.0,)),
            "window": (8, 16, 32),
            "min_peers": (2, 4, 8),
        },
    ),
    "least_slack": SearchSpace(LeastSlack, {"prior": (0.25, 0.5, 1.0, 2.0, 4.0)}),
}


def tuning_seeds(start: int, count: int) -> tuple[int, ...]:
    """``count`` consecutive training seeds from ``start``
    (:func:`mara_env.benchmarks.common.seeds.training_seeds`).

    Raises:
        ValueError: If any seed would be 1000 or more, or below 0.
    """
    return training_seeds(start, count, where="tuning")
