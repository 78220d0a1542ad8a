"""Where the committed results of each world live: ``benchmarks/results/v<N>/``.

Every store that plays one world (its leaderboards, MARA's evaluations on it, the studies run on
it) sits in that world's folder, named as the world is (:attr:`mara_env.worlds.world.World.name`);
results that span worlds or play none (the tuning journal, the information ladder, the prediction
benchmark, the timings) sit beside the world folders. Paths are relative to the repository root,
as the scripts' ``--output`` defaults are.

Records written before 0.4.1 (checkpoint cards, training logs) name the folders of the old
layout; :func:`path_now` says where such a path lives now.

Example:
    >>> world_results(1).as_posix(), mara_results(3).as_posix()
    ('benchmarks/results/v1', 'benchmarks/results/v3/mara')
    >>> path_now("benchmarks/results/mara/v2/prediction_value/oracle_seed0.pt")
    'benchmarks/results/v2/mara/prediction_value/oracle_seed0.pt'
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


#: The folders of results before 0.4.1, under :data:`RESULTS`, and where they are now.
BEFORE_0_4_1 = {
    "leaderboard": "v3/leaderboard",
    "leaderboard_quick": "v3/leaderboard_quick",
    "leaderboard_philly": "v3/leaderboard_philly",
    "leaderboard_pollux": "v3/leaderboard_pollux",
    "leaderboard_pollux_recorded": "v3/leaderboard_pollux_recorded",
    "leaderboard_v2": "v2/leaderboard",
    "leaderboard_v1": "v1/leaderboard",
    "mara/v3": "v3/mara",
    "mara/v2": "v2/mara",
    "mara": "v1/mara",
    "generalisation": "v3/generalisation",
    "deviations": "v3/deviations",
}


def path_now(text: str) -> str:
    """Where the results path ``text`` (as a record of 0.4.0 or before wrote it) lives now;
    any other text unchanged."""
    for old in sorted(BEFORE_0_4_1, key=len, reverse=True):
        prefix = (RESULTS / old).as_posix()
        if text == prefix or text.startswith(prefix + "/"):
            return (RESULTS / BEFORE_0_4_1[old]).as_posix() + text[len(prefix) :]
    return text
