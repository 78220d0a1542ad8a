"""The worlds, each declared once: its version, how its rules differ, its defaults, its folders.

A world is a version of the simulated cluster's rules (``ClusterConfig.world_version``, the
environment id ``mara_env/Cluster-v<N>``). Everything that differs between worlds is read from
its :class:`World` entry in :data:`WORLDS`: the configuration's checks and defaults, how tasks
are drawn, the registered environment ids, the command-line choices. What a world ships (its
tuned baseline settings, its MARA checkpoints) lives in one folder of its own,
``agents/worlds/v<N>/``, and what is measured on it under ``benchmarks/results/``; a result's key
holds the files of the world it played and no other world's (:func:`world_of_file`).

Adding a world is one entry here, plus the runs that fill its folder (tuning, MARA training).

Example:
    >>> world(3).env_id, world(3).hides_effort, world(1).hides_effort
    ('mara_env/Cluster-v3', True, False)
    >>> world_of_file("agents/worlds/v1/mara.pt"), world_of_file("mara_env/data/traces.npz")
    (1, None)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mara_env.errors import ConfigError
from mara_env.installation import data_path

#: The folder (a source-tree path) holding one folder of shipped files per world.
SHIPPED_WORLDS = "agents/worlds"


@dataclass(frozen=True)
class World:
    """One version of the world's rules.

    Attributes:
        version: Its number (``ClusterConfig.world_version``; ids ``mara_env/Cluster-v<N>``).
        summary: What its rules are, as the results pages say it ("Cluster-v<N>'s rules: ...").
        hides_effort: Whether a task's target and deadline hide its effort (Cluster-v2 on:
            the terms of :mod:`mara_env.sim.hidden_effort`); otherwise the terms of
            :func:`mara_env.sim.rules.draw_task_terms`, and the fields of later worlds are
            refused.
        hopeless_curve_share: ``ClusterConfig.hopeless_curve_share`` when a config leaves it
            ``None`` (``None`` in a world without hopeless tasks' curves).
    """

    version: int
    summary: str
    hides_effort: bool
    hopeless_curve_share: float | None

    @property
    def name(self) -> str:
        """``v<N>``: the name of its folders (shipped files, results)."""
        return f"v{self.version}"

    @property
    def env_id(self) -> str:
        """The registered environment id of this world."""
        return f"mara_env/Cluster-{self.name}"

    @property
    def shipped(self) -> str:
        """The source-tree path of the folder of its shipped files (settings, checkpoints)."""
        return f"{SHIPPED_WORLDS}/{self.name}"

    @property
    def folder(self) -> Path:
        """Where that folder is in this installation."""
        return data_path(self.shipped)


#: Every world, oldest first.
WORLDS: tuple[World, ...] = (
    World(
        version=1,
        summary="deadlines from the true demand",
        hides_effort=False,
        hopeless_curve_share=None,
    ),
    World(
        version=2,
        summary="deadlines from the submitter's estimate, hopeless targets drawn as feasible "
        "ones are",
        hides_effort=True,
        hopeless_curve_share=1.0,
    ),
    World(
        version=3,
        summary="Cluster-v2's, with every hopeless task on one of the nearest tenth of its "
        "family's never-reaching curves, so it stalls just short of its target",
        hides_effort=True,
        hopeless_curve_share=0.1,
    ),
)
#: The world versions, oldest first.
WORLD_VERSIONS = tuple(entry.version for entry in WORLDS)
#: The version every config, environment id and shipped result uses unless told otherwise.
LATEST_WORLD_VERSION = WORLD_VERSIONS[-1]


def world(version: int) -> World:
    """The world of ``version``.

    Raises:
        ConfigError: If there is no such world (naming those there are).
    """
    for entry in WORLDS:
        if entry.version == version and not isinstance(version, bool):
            return entry
    raise ConfigError(
        f"There is no world version {version!r}: the worlds are {WORLD_VERSIONS} (Cluster-v1 "
        f"to Cluster-v{LATEST_WORLD_VERSION}). Use {LATEST_WORLD_VERSION}, the latest, or an "
        "older one to reproduce its results."
    )


def world_of_file(label: str) -> int | None:
    """The version of the world whose shipped folder holds the file ``label`` (a source-tree
    path, as keys name files), or ``None`` for a file every world shares."""
    for entry in WORLDS:
        if label.startswith(f"{entry.shipped}/"):
            return entry.version
    return None
