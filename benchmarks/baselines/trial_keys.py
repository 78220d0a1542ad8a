"""What a baseline trial's result depends on besides its own fields: its key's manifest.

A trial (:class:`mara_env.benchmarks.baselines.trials.Trial`) names its scheduler, settings, workload and
seed; what else shapes its score is the code that builds and plays it (the trial player and the
registry with every agent), the data those modules name (checkpoints, the tuned settings), the
trace data and the interpreter: :func:`trial_manifest`, by the one key recipe of
:mod:`mara_env.benchmarks.common.keys`. This module is not itself part of that code, so changing how keys
are computed does not replay trials.

Example:
    >>> manifest = trial_manifest()
    >>> "mara_env.benchmarks.baselines.trials" in manifest.items, "mara_env.agents.lara" in manifest.items
    (True, True)
    >>> "file:agents/worlds/v2/tuned_settings.json" in trial_manifest(2).items
    True
    >>> "file:agents/worlds/v2/tuned_settings.json" in trial_manifest(3).items  # another world's
    False
"""

from __future__ import annotations

from collections.abc import Sequence

from mara_env.benchmarks.common.keys import code_manifest
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.worlds.world import LATEST_WORLD_VERSION

#: The trials' entry points: the player, and the registry that builds every scheduler.
TRIAL_ROOTS = ("mara_env.benchmarks.baselines.trials", "mara_env.agents.registry")


def trial_manifest(
    world_version: int = LATEST_WORLD_VERSION, exclude: Sequence[str] = ()
) -> Manifest:
    """The manifest of :data:`TRIAL_ROOTS` (:func:`mara_env.benchmarks.common.keys.code_manifest`)
    for trials played in the world ``world_version`` (the files of no other world), less the
    items ``exclude`` names (e.g. the tuned-settings file, for the script that writes it)."""
    return code_manifest(TRIAL_ROOTS, world_version=world_version, exclude=exclude)
