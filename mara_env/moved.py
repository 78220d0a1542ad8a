"""Module paths and names that moved, still importable under their old names for one release.

mara-env 0.4.0 grouped the flat ``mara_env`` package into sub-packages (:mod:`mara_env.sim`,
:mod:`mara_env.envs`, :mod:`mara_env.curves`, :mod:`mara_env.worlds`); 0.4.1 moved three modules
between them and a few names between modules (:data:`MOVED_NAMES`). Importing a module by its
old path (``import mara_env.config``, ``from mara_env.simulator import ClusterSimulator``),
reading it as an attribute (``mara_env.config``) or reading a moved name from its old module
still works: it returns what now lives elsewhere and warns, with a :class:`DeprecationWarning`,
where. The old paths go in 0.5.0. ``mara_env.parallel_env`` is, as before, the function; its
module is now ``mara_env.envs.parallel_env``.

Example:
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     import mara_env.config as old
    >>> import mara_env.worlds.config as new
    >>> old is new, "mara_env.worlds.config" in str(caught[0].message)
    (True, True)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: The release after which the old paths no longer import.
REMOVED_IN = "0.5.0"

#: Each sub-package and the modules it took from the flat ``mara_env`` of 0.3.
_GROUPS = {
    "sim": "core dynamics simulator rules layout task_fields observation observation_kernel "
    "workload hidden_effort",
    # (not parallel_env: ``mara_env.parallel_env`` is the function, and importing a module by
    # that path would put the module in its place)
    "envs": "aec_env gym_env vector_env batched_nodes sb3_vec_env env_base order_enforcing "
    "actions infos render registration epoch",
    "curves": "traces sources curve_tables synthetic families workloads arrivals "
    "recorded_durations file_cache",
    "worlds": "config",
}

#: ``{old module path: (new module path, the release that moved it)}``.
MOVED: dict[str, tuple[str, str]] = {
    **{
        f"mara_env.{name}": (f"mara_env.{group}.{name}", "0.4.0")
        for group, names in _GROUPS.items()
        for name in names.split()
    },
    # 0.4.1 put the sub-packages in one order (curves, worlds, sim, envs): the epoch (advance,
    # reward, info) is what the env forms run; drawing an episode's tasks by the world's rules,
    # the hidden effort of Cluster-v3 included, is the simulation's
    "mara_env.sim.epoch": ("mara_env.envs.epoch", "0.4.1"),
    "mara_env.curves.workload": ("mara_env.sim.workload", "0.4.1"),
    "mara_env.worlds.hidden_effort": ("mara_env.sim.hidden_effort", "0.4.1"),
    # 0.4.2: the environment writes its files atomically too (trace files, arrival traces,
    # checkpoints), so the one atomic writer lives where every package can import it
    "mara_env.benchmarks.common.atomic": ("mara_env.atomic_files", "0.4.2"),
}

#: ``{(module, name): (the module that now holds it, the release that moved it)}``.
MOVED_NAMES: dict[tuple[str, str], tuple[str, str]] = {
    ("mara_env.worlds.config", name): ("mara_env.worlds.presets", "0.4.1")
    for name in ("PRESETS", "TRAINING_LOAD", "get_config")
}


def moved_module(old: str, stacklevel: int = 3) -> ModuleType:
    """The module that lived at ``old``, imported from its new path, with a deprecation warning."""
    new, release = MOVED[old]
    _warn(f"{old} moved to {new} in mara-env {release}; import it from there", stacklevel)
    return importlib.import_module(new)


def moved_name(module: str, name: str) -> Any:
    """``name`` read from ``module``, where it lived before it moved (:data:`MOVED_NAMES`), with a
    deprecation warning; a module's ``__getattr__`` returns this.

    Raises:
        AttributeError: If ``name`` never lived in ``module``, as Python says it.
    """
    if (module, name) not in MOVED_NAMES:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    home, release = MOVED_NAMES[module, name]
    _warn(
        f"{module}.{name} moved to {home} in mara-env {release}; import it from there", stacklevel=3
    )
    return getattr(importlib.import_module(home), name)


def _warn(message: str, stacklevel: int) -> None:
    warnings.warn(
        f"{message} (the old path goes in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path and loads it as the module at its new path (whose own spec is
    kept: the import system stamps the old one on the module it is given, and it is put back)."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = moved_module(spec.name, stacklevel=8)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__spec__.name if module.__spec__ is not None else module.__name__
        module.__spec__ = self._specs.pop(old, module.__spec__)


def install() -> None:
    """Let the old module paths import (once per process)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
