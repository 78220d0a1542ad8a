"""Where the committed results of each world live: ``benchmarks/results/v<N>/``.

Every store that plays one world (its leaderboards, MARA's evaluations on it, the studies run on
it) sits in that world's folder, named as the world is (:attr:`mara_env.worlds.world.World.name`);
results that span worlds or play none (the tuning journal, the information ladder, the prediction
benchmark, the timings) sit beside the world folders. Paths are relative to the repository root,
as the scripts' ``--output`` defaults are.

Example:
    >>> world_results(1).as_posix(), mara_results(3).as_posix()
    ('benchmarks/results/v1', 'benchmarks/results/v3/mara')
"""

from __future__ import annotations

from pathlib import Path

from mara_env.worlds.world import world

#: The folder of every committed result, relative to the repository root.
RESULTS = Path("benchmarks/results")


def world_results(world_version: int) -> Path:
    """The folder of the results played on ``world_version``.

    Raises:
        mara_env.errors.ConfigError: For a world that does not exist.
    """
    return RESULTS / world(world_version).name


def mara_results(world_version: int) -> Path:
    """The folder of MARA's trainings and evaluations on ``world_version``."""
    return world_results(world_version) / "mara"
