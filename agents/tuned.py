"""The baselines' tuned settings, as ``python -m benchmarks.baselines.tuning`` chose them.

``agents/tuned_settings.json`` holds, per agent name, the keyword arguments the tuning script
chose on training seeds (below 1000) and the train split of the curves, with the same search
budget for every baseline; the registry (:mod:`agents.registry`) builds those agents with them.
An agent without an entry is built with its class defaults. The search log is in
``benchmarks/results/tuning/``.

Example:
    >>> from agents.tuned import tuned_settings
    >>> sorted(tuned_settings("lara"))  # doctest: +ELLIPSIS
    [...]
    >>> tuned_settings("edf")
    {}
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

#: Where the tuning script writes the chosen settings and the registry reads them.
TUNED_SETTINGS_PATH = Path(__file__).with_name("tuned_settings.json")


class TunedSettingsError(ValueError):
    """``tuned_settings.json`` is missing a part or is not what the tuning script writes."""


@cache
def _load(path: Path) -> dict[str, dict[str, Any]]:
    if not path.exists():
        return {}
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


def tuned_settings(name: str, path: Path = TUNED_SETTINGS_PATH) -> dict[str, Any]:
    """The tuned keyword arguments of agent ``name`` (``{}`` if it was not tuned).

    Raises:
        TunedSettingsError: If the settings file is corrupt.
    """
    return dict(_load(path).get(name, {}))
