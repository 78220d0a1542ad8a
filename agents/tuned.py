"""The baselines' tuned settings, as ``python -m mara_env.benchmarks.baselines.tuning`` chose them.

Each world has its own file in its shipped folder, since settings tuned on one world's rules are
not the best on another's: ``agents/worlds/v3/tuned_settings.json`` (Cluster-v3, the default),
and those of the older worlds, kept so that their results stay reproducible
(``agents/worlds/v2/tuned_settings.json``, ``agents/worlds/v1/tuned_settings.json``). A file
holds, per agent name, the keyword arguments the tuning script chose on training seeds (below
1000) and the train split of the curves, with the same search budget for every baseline; the
registry (:mod:`mara_env.agents.registry`) builds those agents with them. An agent without an entry is
built with its class defaults. The search log is in ``benchmarks/results/tuning/`` (one page per world, ``v<N>.md``).

Example:
    >>> from mara_env.agents.tuned import tuned_settings
    >>> sorted(tuned_settings("lara"))  # doctest: +ELLIPSIS
    [...]
    >>> tuned_settings("edf")
    {}
    >>> tuned_settings("laira", world_version=1) == tuned_settings("laira")
    False
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from mara_env.errors import ConfigError
from mara_env.worlds.world import LATEST_WORLD_VERSION, world

#: The file in each world's shipped folder (:attr:`mara_env.worlds.world.World.shipped`) where
#: the tuning script writes the chosen settings and the registry reads them. Named literally, so
#: that a result keyed by an agent's source holds the file of the world it played.
SETTINGS_FILE = "tuned_settings.json"


def tuned_settings_path(world_version: int = LATEST_WORLD_VERSION) -> Path:
    """The settings file of ``world_version`` (:data:`mara_env.worlds.world.WORLDS`).

    Raises:
        TunedSettingsError: For a world that does not exist.
    """
    try:
        return world(world_version).folder / SETTINGS_FILE
    except ConfigError as error:
        raise TunedSettingsError(f"No tuned settings: {error}") from None


class TunedSettingsError(ValueError):
    """A tuned settings file is missing a part or is not what the tuning script writes."""


@cache
def _load(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        raise TunedSettingsError(
            f"The tuned settings file {path} is missing, so the baselines would run with other "
            "settings than the published results. It ships with mara-env: reinstall the "
            "package (pip install --force-reinstall --no-deps mara-env, or pip install . in a "
            "clone), or write it again with python -m mara_env.benchmarks.baselines.tuning."
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, or nested too deep
        raise TunedSettingsError(
            f"{path} is not valid JSON in UTF-8 ({error}); restore it from the package or rerun "
            "python -m mara_env.benchmarks.baselines.tuning."
        ) from error
    agents = document.get("agents") if isinstance(document, dict) else None
    if not isinstance(agents, dict) or not all(
        isinstance(entry, dict) and isinstance(entry.get("settings"), dict)
        for entry in agents.values()
    ):
        raise TunedSettingsError(
            f"{path} must hold {{'agents': {{name: {{'settings': {{...}}, ...}}}}}}; restore it "
            "from the package or rerun python -m mara_env.benchmarks.baselines.tuning."
        )
    return {name: dict(entry["settings"]) for name, entry in agents.items()}


def tuned_settings(
    name: str, path: Path | None = None, *, world_version: int = LATEST_WORLD_VERSION
) -> dict[str, Any]:
    """The tuned keyword arguments of agent ``name`` (``{}`` if it was not tuned) in the world
    ``world_version``, or in the settings file ``path``.

    Raises:
        TunedSettingsError: If the settings file is missing or corrupt, or the world has none.
    """
    return dict(_load(path or tuned_settings_path(world_version)).get(name, {}))
