"""Module paths that moved in 0.4.0, still importable under their old names for one release.

mara-env 0.4.0 grouped the flat ``mara_env`` package into sub-packages (:mod:`mara_env.sim`,
:mod:`mara_env.envs`, :mod:`mara_env.curves`, :mod:`mara_env.worlds`). Importing a module by its
old path (``import mara_env.config``, ``from mara_env.simulator import ClusterSimulator``) or
reading it as an attribute (``mara_env.config``) still works: it returns the module at its new
path and warns, with a :class:`DeprecationWarning`, where it now lives. The old paths go in 0.5.0.
``mara_env.parallel_env`` is, as before, the function; its module is now
``mara_env.envs.parallel_env``.

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

#: Each sub-package and the modules it took from the flat ``mara_env`` of 0.3.
_GROUPS = {
    "sim": "core dynamics simulator epoch rules layout task_fields observation observation_kernel",
    # (not parallel_env: ``mara_env.parallel_env`` is the function, and importing a module by
    # that path would put the module in its place)
    "envs": "aec_env gym_env vector_env batched_nodes sb3_vec_env env_base order_enforcing "
    "actions infos render registration",
    "curves": "traces sources curve_tables synthetic families workload workloads arrivals "
    "recorded_durations file_cache",
    "worlds": "config hidden_effort",
}

#: ``{old module path: new module path}``.
MOVED: dict[str, str] = {
    f"mara_env.{name}": f"mara_env.{group}.{name}"
    for group, names in _GROUPS.items()
    for name in names.split()
}


def moved_module(old: str, stacklevel: int = 3) -> ModuleType:
    """The module that lived at ``old``, imported from its new path, with a deprecation warning."""
    new = MOVED[old]
    warnings.warn(
        f"{old} moved to {new} in mara-env 0.4.0; import it from there (the old path goes in "
        "0.5.0)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return importlib.import_module(new)


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
