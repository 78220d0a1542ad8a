"""A folder laid out as the wheel installs mara-env's modules, copied from the source tree, for
tools that find a package by walking folders (mypy, Griffe for the documentation site).

The source tree keeps ``mara_env.agents``, ``mara_env.predictors`` and ``mara_env.benchmarks`` in
the folders ``agents/``, ``predictors/`` and ``benchmarks/`` beside ``mara_env/``
(:data:`mara_env.installation.SOURCE_FOLDERS`; ``pyproject.toml`` maps them). Python's import
system follows that mapping; a tool that looks for ``mara_env/agents/`` on disk does not. The
tree holds a copy of every module (``.py``, and the ``py.typed`` markers) at its import path;
data files and results are left out. Copies rather than links, since a tool walking the tree
need not follow a linked folder.

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as where:
    ...     top = import_path_tree(Path(where) / "tree")
    ...     (top / "agents" / "registry.py").is_file(), (top / "worlds" / "config.py").is_file()
    (True, True)
"""

from __future__ import annotations

import shutil
from pathlib import Path

from mara_env.installation import PACKAGES_ROOT, SOURCE_FOLDERS, TOP_LEVEL, installed_layout

#: Where the documentation site's build keeps its tree (``mkdocs.yml`` names it; git ignores it).
SITE_TREE = Path("build") / "import-tree"


def import_path_tree(where: Path, source: Path = PACKAGES_ROOT) -> Path:
    """Make (or remake) the tree under ``where`` for the source tree ``source``; returns its
    ``mara_env`` folder. An installed layout is already such a tree: its folder is returned."""
    if installed_layout(source):
        return source / TOP_LEVEL
    if where.exists():
        shutil.rmtree(where)
    for name, folder in SOURCE_FOLDERS.items():
        inner = [other for other in SOURCE_FOLDERS.values() if other != folder]
        for path in (source / folder).rglob("*"):
            relative = path.relative_to(source / folder)
            if path.suffix not in (".py", ".typed") or {"__pycache__", "results"} & set(
                relative.parts
            ):
                continue
            if folder == SOURCE_FOLDERS[TOP_LEVEL] and relative.parts[0] in inner:
                continue
            target = where.joinpath(*name.split("."), relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return where / TOP_LEVEL
