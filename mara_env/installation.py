"""Is this mara-env importable as itself? Shadowing folders and clashing distributions.

The ``mara-env`` distribution installs four top-level import packages: ``mara_env``, ``agents``,
``predictors`` and ``benchmarks``. Generic names can be taken by someone else:

- a **folder** named like one of them (with an ``__init__.py``, or a module ``agents.py``) in
  the working directory or another early ``sys.path`` entry is imported instead of ours. The
  ``mara-leaderboard`` command resolves import paths against the working directory (as
  ``python -m`` does), so a local ``agents/`` folder would hide our ``agents`` there;
- another **distribution** with a top-level package of the same name (the openai-agents SDK
  ships one called ``agents``) writes into the same folder of ``site-packages``: pip does not
  arbitrate, the one installed last overwrites the other's files, and uninstalling either leaves
  the other broken.

:func:`installation_problems` lists each such problem as a message naming the folder or
distribution and what to do; :func:`check_installation` raises them as one
:class:`mara_env.InstallationError`. ``mara-leaderboard`` runs the check at start-up.

Example:
    >>> from mara_env import check_installation
    >>> check_installation()  # doctest: +ELLIPSIS
    mara-env ...: mara_env, agents, predictors, benchmarks import from .... The installation is fine.
    >>> installation_problems()
    []
"""

from __future__ import annotations

import importlib.util
import re
import sys
from importlib import metadata
from pathlib import Path

from mara_env.errors import InstallationError

#: The distribution, and the top-level import packages it installs.
DISTRIBUTION = "mara-env"
IMPORT_PACKAGES = ("mara_env", "agents", "predictors", "benchmarks")
#: The folder holding the four packages (site-packages, or the source tree of an editable install).
PACKAGES_ROOT = Path(__file__).resolve().parents[1]


def installation_problems(
    working_directory: str | Path | None = None, *, distributions: bool = True
) -> list[str]:
    """Every reason the four import packages might not be mara-env's, one message each.

    Args:
        working_directory: A directory that will be put first on ``sys.path`` (as ``python -m``
            and ``mara-leaderboard`` do with the working directory): folders in it that would
            hide one of the packages are reported. ``None``: only ``sys.path`` as it is.
        distributions: Also look for other installed distributions that provide one of the
            import names (reads every installed distribution's metadata: about 0.2 s).

    Returns:
        Messages (empty when all is well).
    """
    problems: dict[str, str] = {}
    if working_directory is not None:
        directory = Path(working_directory).resolve()
        for name in IMPORT_PACKAGES:
            found = _shadowing_entry(directory, name)
            if found is not None:
                problems[name] = _shadow_message(name, found)
    for name in IMPORT_PACKAGES:
        origin = _origin(name)
        if name not in problems and origin != PACKAGES_ROOT / name / "__init__.py":
            problems[name] = _shadow_message(name, origin)
    messages = list(problems.values())
    if distributions:
        messages += _clashing_distributions()
    return messages


def check_installation(
    working_directory: str | Path | None = None,
    *,
    distributions: bool = True,
    verbose: bool = True,
) -> None:
    """Raise if one of the four import packages is hidden or shared with another distribution;
    otherwise say where they import from (``verbose``).

    Args:
        working_directory: See :func:`installation_problems`.
        distributions: See :func:`installation_problems`.
        verbose: Print one line saying that all is well, and where the packages are.

    Raises:
        InstallationError: Listing every problem, each with what to do about it.
    """
    problems = installation_problems(working_directory, distributions=distributions)
    if problems:
        raise InstallationError("\n".join(problems))
    if verbose:
        checked = "; no other distribution provides them" if distributions else ""
        print(
            f"mara-env {_version()}: {', '.join(IMPORT_PACKAGES)} import from {PACKAGES_ROOT}"
            f"{checked}. The installation is fine."
        )


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _shadowing_entry(directory: Path, name: str) -> Path | None:
    """A package or module ``name`` in ``directory`` that is not mara-env's own."""
    if directory == PACKAGES_ROOT:
        return None  # the source tree of an editable install: these are ours
    for candidate in (directory / name / "__init__.py", directory / f"{name}.py"):
        if candidate.is_file():
            if candidate.name == "__init__.py" and _same_package(candidate.parent, name):
                return None  # a source checkout of the installed version: the same code
            return candidate
    return None


def _same_package(local: Path, name: str) -> bool:
    """Whether folder ``local`` holds the installed package ``name`` byte for byte: every file
    installed is there, identical, and it has no Python module the installation lacks (a
    checkout may hold more data, such as committed results, which nothing imports)."""
    installed = PACKAGES_ROOT / name
    if not installed.is_dir():
        return False

    def files(root: Path, pattern: str) -> set[Path]:
        return {
            path.relative_to(root)
            for path in root.rglob(pattern)
            if path.is_file() and "__pycache__" not in path.parts
        }

    if not files(local, "*.py") <= files(installed, "*.py"):
        return False
    for relative in files(installed, "*"):
        copy = local / relative
        if not copy.is_file() or copy.read_bytes() != (installed / relative).read_bytes():
            return False
    return True


def _origin(name: str) -> Path | None:
    """The file Python imports (or imported) for top-level package ``name``, without importing."""
    module = sys.modules.get(name)
    if module is not None:
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = None if spec is None else spec.origin
    return None if origin is None else Path(origin).resolve()


def _shadow_message(name: str, found: Path | None) -> str:
    if found is None:
        return (
            f"Python finds no regular package {name!r} (mara-env installs it in {PACKAGES_ROOT}; "
            "a folder of that name without __init__.py may be hiding it). Reinstall mara-env "
            "(pip install mara-env) in this environment."
        )
    folder = found.parent if found.name == "__init__.py" else found
    return (
        f"{folder} is imported as {name!r} instead of mara-env's {name!r} package (in "
        f"{PACKAGES_ROOT}): mara-env installs the import packages {', '.join(IMPORT_PACKAGES)}, "
        f"and a folder or module of the same name that comes first on sys.path (the working "
        f"directory does, for python -m and mara-leaderboard) hides it. Rename {folder.name!r} "
        "(give your own package another name), or run from another directory; if it is a "
        "checkout of mara-env edited since it was installed, reinstall it (pip install . in "
        "it, or pip install -e . to work on the source)."
    )


def _clashing_distributions() -> list[str]:
    owners = metadata.packages_distributions()
    messages = []
    for name in IMPORT_PACKAGES:
        foreign = sorted({d for d in owners.get(name, []) if _normalise(d) != DISTRIBUTION})
        for distribution in foreign:
            messages.append(
                f"The installed distribution {distribution!r} also provides a top-level {name!r} "
                f"package, the import name of mara-env's {name!r}. pip does not arbitrate between "
                "two distributions writing the same folder: the one installed last overwrote the "
                "other's files, and uninstalling either leaves the other broken. Install mara-env "
                "in a virtual environment of its own (python -m venv .venv && . .venv/bin/activate "
                f"&& pip install mara-env), or pip uninstall {distribution} and then reinstall "
                "mara-env."
            )
    return messages


def _normalise(distribution: str) -> str:
    """A distribution name in PEP 503 normal form (``mara_env`` -> ``mara-env``)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()
