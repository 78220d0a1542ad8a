"""The house: four packages in one order, each module saying what it holds, no module too long.

Read from the source with :mod:`ast` (nothing is imported). ``mara_env`` (the environment: its
sub-packages ``sim``, ``envs``, ``curves``, ``worlds``) imports none of the other three;
``mara_env.predictors`` imports only ``mara_env``; ``mara_env.agents`` the two before it; and
``mara_env.benchmarks`` all three.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from source_imports import imported

from mara_env.installation import SOURCE_FOLDERS

ROOT = Path(__file__).resolve().parents[1]
#: The packages, each allowed to import only those before it.
ORDER = ("mara_env", "mara_env.predictors", "mara_env.agents", "mara_env.benchmarks")
#: ``mara_env``'s sub-packages, each allowed to import only those before it: curves and the data
#: they come from; the worlds declared; the simulation by their rules; the environment forms.
SUB_PACKAGES = ("mara_env.curves", "mara_env.worlds", "mara_env.sim", "mara_env.envs")
#: The most lines a module may have.
MAX_LINES = 600


def modules() -> dict[Path, str]:
    """Every module of the four packages (their results left out) and its package."""
    found = {}
    for package, folder in SOURCE_FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "results" not in relative.parts and package in ORDER:
                found.setdefault(path, package)
    return found


def package_of(module: str, order: tuple[str, ...] = ORDER) -> str | None:
    """Which of ``order`` holds the module ``module`` (``None``: none of them)."""
    homes = [name for name in order if module == name or module.startswith(f"{name}.")]
    return max(homes, key=len, default=None)


def upward_imports(found: dict[Path, str], order: tuple[str, ...] = ORDER) -> list[str]:
    wrong = []
    for path, package in found.items():
        for name in imported(path):
            target = package_of(name, order)
            if target is not None and order.index(target) > order.index(package):
                wrong.append(f"{path.name} imports {name}")
    return wrong


def test_the_packages_import_only_those_before_them() -> None:
    found = modules()
    assert len(found) > 200
    assert not upward_imports(found), upward_imports(found)


def test_the_sub_packages_of_mara_env_import_only_those_before_them() -> None:
    found = {
        path: package
        for package in SUB_PACKAGES
        for path in sorted((ROOT / package.replace(".", "/")).glob("*.py"))
    }
    assert len(found) > 30
    assert not upward_imports(found, SUB_PACKAGES), upward_imports(found, SUB_PACKAGES)


def test_the_order_check_sees_an_upward_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from mara_env.agents import make_agent\n")
    problems = upward_imports({module.resolve(): "mara_env.predictors"})
    assert problems and all(p.startswith("bad.py imports mara_env.agents") for p in problems)


@pytest.mark.parametrize("path", sorted(modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_says_first_what_it_holds(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    assert docstring and docstring.splitlines()[0].strip(), (
        f"{path.relative_to(ROOT)} needs a docstring whose first line says what it holds"
    )


def test_no_module_is_longer_than_the_limit() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): len(path.read_text().splitlines())
        for path in modules()
        if len(path.read_text().splitlines()) > MAX_LINES
    }
    assert not long, f"split these modules (lines each, limit {MAX_LINES}): {long}"


def test_every_moved_module_still_imports_by_its_old_path_with_a_warning() -> None:
    import importlib
    import sys

    from mara_env.moved import MOVED

    # every module of 0.3.0 but __init__, the three that stayed and parallel_env (the function),
    # the three modules 0.4.1 moved, and the atomic writer 0.4.2 moved into mara_env
    assert len(MOVED) == 36
    import mara_env

    def forget(old: str) -> None:  # as in a fresh process
        sys.modules.pop(old, None)
        vars(mara_env).pop(old.rpartition(".")[2], None)

    assert callable(mara_env.parallel_env)
    for old, (new, release) in MOVED.items():
        forget(old)
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new} in mara-env {release}"):
            module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert module.__spec__ is not None and module.__spec__.name == new  # its own spec kept
        forget(old)
    with pytest.warns(DeprecationWarning, match="mara_env.simulator moved"):
        from mara_env.simulator import ClusterSimulator  # noqa: F401
    forget("mara_env.simulator")
    with pytest.warns(DeprecationWarning, match="mara_env.config moved to mara_env.worlds.config"):
        assert mara_env.config.ClusterConfig is mara_env.ClusterConfig
    assert callable(mara_env.parallel_env)


def test_every_moved_name_still_reads_from_its_old_module_with_a_warning() -> None:
    import importlib

    from mara_env.moved import MOVED_NAMES

    for (module, name), (home, release) in MOVED_NAMES.items():
        with pytest.warns(
            DeprecationWarning, match=f"{module}.{name} moved to {home} in mara-env {release}"
        ) as caught:
            value = getattr(importlib.import_module(module), name)
        assert value is getattr(importlib.import_module(home), name)
        assert caught[0].filename == __file__  # the warning points at the reader
    with pytest.warns(DeprecationWarning, match="get_config moved"):
        from mara_env.worlds.config import get_config  # noqa: F401
    with pytest.raises(AttributeError, match="has no attribute 'nonsense'"):
        importlib.import_module("mara_env.worlds.config").nonsense  # noqa: B018
