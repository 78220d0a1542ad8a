"""The baselines' tuned settings, as ``python -m benchmarks.baselines.tuning`` chose them.

Each world has its own file, since settings tuned on one world's rules are not the best on
another's: ``agents/tuned_settings_v3.json`` (Cluster-v3, the default), and those of the older
worlds, kept so that their results stay reproducible (``tuned_settings_v2.json``,
``tuned_settings_v1.json``). A file
holds, per agent name, the keyword arguments the tuning script chose on training seeds (below
1000) and the train split of the curves, with the same search budget for every baseline; the
registry (:mod:`agents.registry`) builds those agents with them. An agent without an entry is
built with its class defaults. The search log is in ``benchmarks/results/tuning/`` (one page per world, ``v<N>.md``).

Example:
    >>> from agents.tuned import tuned_settings
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

from mara_env.config import LATEST_WORLD_VERSION

#: Where the tuning script writes the chosen settings and the registry reads them, per world.
#: Each file is named literally, so that the results keyed by an agent's source name it too.
TUNED_SETTINGS_PATHS: dict[int, Path] = {
    1: Path(__file__).with_name("tuned_settings_v1.json"),
    2: Path(__file__).with_name("tuned_settings_v2.json"),
    3: Path(__file__).with_name("tuned_settings_v3.json"),
}


def tuned_settings_path(world_version: int = LATEST_WORLD_VERSION) -> Path:
    """The settings file of ``world_version`` (:data:`mara_env.config.WORLD_VERSIONS`).

    Raises:
        TunedSettingsError: For a world without a settings file.
    """
    path = TUNED_SETTINGS_PATHS.get(world_version)
    if path is None:
        raise TunedSettingsError(
            f"No tuned settings for world_version {world_version!r}; the worlds with settings "
            f"are {sorted(TUNED_SETTINGS_PATHS)}."
        )
    return path


class TunedSettingsError(ValueError):
    """A tuned settings file is missing a part or is not what the tuning script writes."""


@cache
def _load(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        raise TunedSettingsError(
            f"The tuned settings file {path} is missing, so the baselines would run with other "
            "settings than the published results. It ships with mara-env: reinstall the "
            "package (pip install --force-reinstall --no-deps mara-env, or pip install . in a "
            "clone), or write it again with python -m benchmarks.baselines.tuning."
        )
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise TunedSettingsError(
            f"{path} is not valid JSON ({error}); restore it from the package or rerun "
            "python -m benchmarks.baselines.tuning."
        ) from error
    agents = document.get("agents") if isinstance(document, dict) else None
    if not isinstance(agents, dict) or not all(
        isinstance(entry, dict) and isinstance(entry.get("settings"), dict)
        for entry in agents.values()
    ):
        raise TunedSettingsError(
            f"{path} must hold {{'agents': {{name: {{'settings': {{...}}, ...}}}}}}; restore it "
            "from the package or rerun python -m benchmarks.baselines.tuning."
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
