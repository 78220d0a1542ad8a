"""Doctests of every module of the four packages, each imported by its import name.

The source tree keeps ``mara_env.agents``, ``mara_env.predictors`` and ``mara_env.benchmarks`` in
the folders ``agents/``, ``predictors/`` and ``benchmarks/`` (``pyproject.toml`` maps them), so
pytest's own ``--doctest-modules`` would import ``agents/registry.py`` as a second module
``agents.registry``. Here each file is imported as the module the installation makes of it
(``mara_env.agents.registry``), the one every other module imports.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from _pytest.doctest import DoctestModule

from mara_env.installation import PACKAGES_ROOT, SOURCE_FOLDERS


def import_name(path: Path) -> str | None:
    """The module name the installation gives the source file ``path`` (``None`` outside the
    packages' folders, and for their results)."""
    try:
        relative = path.resolve().relative_to(PACKAGES_ROOT)
    except ValueError:
        return None
    folder, *rest = relative.with_suffix("").parts
    package = next((name for name, source in SOURCE_FOLDERS.items() if source == folder), None)
    if package is None or "results" in rest or not rest:
        return None
    if rest[-1] == "__init__":
        rest = rest[:-1]
    return ".".join([package, *rest])


class ImportedDoctestModule(DoctestModule):
    """A module's doctests, run on the module imported by its import name."""

    def _getobj(self) -> ModuleType:
        name = import_name(self.path)
        assert name is not None  # collected only for files that have one
        return importlib.import_module(name)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    if file_path.suffix != ".py" or file_path.name in ("__main__.py", "conftest.py"):
        return None
    if import_name(file_path) is None:
        return None
    return ImportedDoctestModule.from_parent(parent, path=file_path)
