"""Lint and type checks run as tests, so the one test command enforces them.

mypy reads modules by their place in a folder tree, while the source tree keeps the sub-packages
``mara_env.agents``, ``mara_env.predictors`` and ``mara_env.benchmarks`` in folders beside
``mara_env/`` (``pyproject.toml`` maps them). The test therefore checks a tree of links laid out
as the wheel installs the packages
(:func:`mara_env.benchmarks.reference.import_tree.import_path_tree`). Run it alone with
``python -m pytest tests/test_code_quality.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mara_env.benchmarks.reference.import_tree import import_path_tree

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        ["mypy", "--config-file", str(ROOT / "pyproject.toml")],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_code_quality(command: list[str], tmp_path: Path) -> None:
    """ruff and mypy (configured in pyproject.toml) report nothing."""
    executable = shutil.which(command[0]) or str(Path(sys.executable).parent / command[0])
    arguments, where = command[1:], ROOT
    if command[0] == "mypy":
        tree = import_path_tree(tmp_path / "tree")
        arguments += ["--cache-dir", str(ROOT / ".mypy_cache"), str(tree)]
        where = tmp_path
    result = subprocess.run(
        [executable, *arguments], cwd=where, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
