"""What a baseline trial's result depends on besides its own fields: its key's manifest.

A trial (:class:`benchmarks.baselines.trials.Trial`) names its scheduler, settings, workload and
seed; what else shapes its score is the code that builds and plays it (the trial player and the
registry with every agent), the data those modules name (checkpoints, the tuned settings), the
trace data and the interpreter: :func:`trial_manifest`, by the one key recipe of
:mod:`benchmarks.common.keys`. This module is not itself part of that code, so changing how keys
are computed does not replay trials.

Example:
    >>> manifest = trial_manifest()
    >>> "benchmarks.baselines.trials" in manifest.items, "agents.lara" in manifest.items
    (True, True)
    >>> "file:agents/tuned_settings_v2.json" in trial_manifest(
    ...     exclude=("file:agents/tuned_settings_v2.json",)).items
    False
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.common.keys import code_manifest
from benchmarks.common.manifest import Manifest

#: The trials' entry points: the player, and the registry that builds every scheduler.
TRIAL_ROOTS = ("benchmarks.baselines.trials", "agents.registry")


def trial_manifest(exclude: Sequence[str] = ()) -> Manifest:
    """The manifest of :data:`TRIAL_ROOTS` (:func:`benchmarks.common.keys.code_manifest`), less
    the items ``exclude`` names (e.g. the tuned-settings file, for the script that writes it)."""
    return code_manifest(TRIAL_ROOTS, exclude=exclude)
