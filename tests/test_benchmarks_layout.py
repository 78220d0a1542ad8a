"""The layout of ``benchmarks/``: groups of scripts over one shared ``common`` package.

Read from the source with :mod:`ast` (nothing is imported): ``mara_env.benchmarks.common`` imports no
group; a group imports only ``common``, itself and mara-env's packages; every group runs as
``python -m mara_env.benchmarks.<group>``; and no file is longer than :data:`MAX_LINES` unless its first
lines say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from source_imports import imported

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: The groups of scripts, each a package ``benchmarks.<group>``.
GROUPS = (
    "leaderboard",
    "prediction",
    "mara",
    "baselines",
    "perf",
    "collect",
    "reference",
    "ceiling",
)
#: Modules of ``benchmarks`` that belong to no group: shared helpers, the console scripts, the
#: catalogue of committed results stores (which reads every group's stores) and the reliability
#: checks (which feed every group's readers and kill its commands).
SHARED = ("common", "commands", "stores", "reliability")
#: The longest a file may be without a comment near its top saying why (``# long: ...``).
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = ("mara_env", *path.relative_to(BENCHMARKS.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def benchmark_imports(path: Path) -> set[str]:
    """The ``mara_env.benchmarks.*`` modules ``path`` imports, anywhere in it."""
    return {name for name in imported(path) if name.startswith("mara_env.benchmarks.")}


def group_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else None


MODULES = sorted(BENCHMARKS.rglob("*.py"))


def test_every_module_is_in_a_group_or_shared() -> None:
    loose = [
        module_name(path)
        for path in MODULES
        if group_of(module_name(path)) not in (*GROUPS, *SHARED) and path.name != "__init__.py"
    ]
    assert not loose, f"modules of benchmarks/ outside its groups: {loose}"


def test_common_imports_no_group() -> None:
    wrong = {
        module_name(path): sorted(
            name for name in benchmark_imports(path) if group_of(name) in GROUPS
        )
        for path in (BENCHMARKS / "common").rglob("*.py")
    }
    wrong = {module: names for module, names in wrong.items() if names}
    assert not wrong, f"mara_env.benchmarks.common must not import the groups: {wrong}"


def test_no_group_imports_another_group() -> None:
    wrong = {}
    for path in MODULES:
        own = group_of(module_name(path))
        if own not in GROUPS:
            continue
        others = sorted(
            name for name in benchmark_imports(path) if group_of(name) not in (own, *SHARED)
        )
        if others:
            wrong[module_name(path)] = others
    assert not wrong, f"a group imports only mara_env.benchmarks.common and itself: {wrong}"


@pytest.mark.parametrize("group", GROUPS)
def test_every_group_runs_as_a_module(group: str) -> None:
    assert (BENCHMARKS / group / "__main__.py").is_file()


def test_no_file_is_long_without_saying_why() -> None:
    long = []
    for path in MODULES:
        lines = path.read_text().splitlines()
        if len(lines) > MAX_LINES and not any(line.startswith("# long: ") for line in lines[:40]):
            long.append(f"{path.relative_to(BENCHMARKS.parent)} ({len(lines)} lines)")
    assert not long, f"files above {MAX_LINES} lines without a '# long: <why>' comment: {long}"


def test_the_checks_see_a_violation() -> None:
    source = BENCHMARKS / "common" / "seeds.py"
    assert group_of("mara_env.benchmarks.mara.train") == "mara"
    assert "mara_env.benchmarks.common.store" not in benchmark_imports(source)
    assert benchmark_imports(BENCHMARKS / "mara" / "__main__.py") >= {"mara_env.benchmarks.mara"}
