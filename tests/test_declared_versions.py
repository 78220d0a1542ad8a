"""The versions pyproject.toml declares are the ones tested.

``.ci/run`` runs the tests twice: with what the default install resolves, and (its second leg)
with the oldest versions of ``.ci/oldest-versions.txt``. Each of those must be the lower bound
that ``pyproject.toml`` declares, so that a declared range is a tested one.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
OLDEST = {
    name: version
    for line in (ROOT / ".ci" / "oldest-versions.txt").read_text().splitlines()
    if line and not line.startswith("#")
    for name, version in [line.split("==")]
}


def lower_bound(distribution: str) -> str:
    """The ``>=`` bound ``pyproject.toml`` gives ``distribution`` (dependencies or extras)."""
    project = PYPROJECT["project"]
    requirements = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += extra
    for requirement in requirements:
        match = re.fullmatch(rf"{re.escape(distribution)}\s*>=\s*([\w.]+)(,.*)?", requirement)
        if match:
            return match.group(1)
    raise AssertionError(f"pyproject.toml gives {distribution} no lower bound")


def release(version: str) -> tuple[int, ...]:
    numbers = tuple(int(part) for part in version.split("."))
    return numbers + (0,) * (3 - len(numbers))


@pytest.mark.parametrize("distribution", ["numpy", "numba", "gymnasium", "pettingzoo", "torch"])
def test_the_oldest_tested_version_is_the_declared_lower_bound(distribution: str) -> None:
    assert release(OLDEST[distribution]) == release(lower_bound(distribution)), (
        f"pyproject.toml declares {distribution}>={lower_bound(distribution)} but .ci/run's "
        f"second leg tests {distribution}=={OLDEST[distribution]}"
    )


def test_the_declared_python_is_the_one_tested() -> None:
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    assert sys.version_info >= (3, 11)
