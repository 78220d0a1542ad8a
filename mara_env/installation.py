"""Is this mara-env complete and importable as itself? Data files, shadowing folders, workers
and clashing distributions.

The ``mara-env`` distribution installs one top-level import package, ``mara_env``, whose
sub-packages ``mara_env.agents``, ``mara_env.predictors`` and ``mara_env.benchmarks`` the source
tree keeps in the folders ``agents/``, ``predictors/`` and ``benchmarks/`` beside ``mara_env/``
(``pyproject.toml`` maps them; the wheel installs each at its import path). Data files ship beside
the code. Four things can make an installation play other numbers than the published results:

- a **data file** is missing or changed: a tuned settings file, a checkpoint, the curves. The
  manifest ``mara_env/data/shipped_files.json`` lists every shipped data file with its SHA-256
  (written by ``python -m mara_env.benchmarks.reference.shipped_files``);
  :func:`shipped_file_problems` checks each file against it, and each checkpoint against its card;
- a **folder** named ``mara_env`` (with an ``__init__.py``, or a module ``mara_env.py``) in the
  working directory or another early ``sys.path`` entry is imported instead of ours. Under
  ``python -m`` the working directory comes first, so a clone of this repository is imported
  instead of the installed package (:func:`imported_instead_of_installed` says so);
- **worker processes** import from elsewhere than the process that starts them
  (:func:`worker_import_problems` starts one, as the leaderboard does, and compares);
- another **distribution** with a top-level package named ``mara_env`` writes into the same
  folder of ``site-packages``: pip does not arbitrate, the one installed last overwrites the
  other's files, and uninstalling either leaves the other broken.

:func:`installation_problems` lists each such problem as a message naming the file, folder or
distribution and what to do; :func:`check_installation` raises them as one
:class:`mara_env.InstallationError`. ``mara-leaderboard`` runs the checks at start-up.

Example:
    >>> from mara_env import check_installation
    >>> check_installation()  # doctest: +ELLIPSIS
    mara-env ...: mara_env, mara_env.agents, mara_env.predictors, mara_env.benchmarks import from ..., in worker processes too; ... shipped data files as listed. The installation is fine.
    >>> installation_problems()
    []
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import multiprocessing
import os
import re
import sys
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from importlib import metadata
from pathlib import Path
from types import ModuleType
from urllib.parse import unquote, urlparse

from mara_env.errors import InstallationError

#: The distribution.
DISTRIBUTION = "mara-env"
#: Each import package it installs, and the folder of the source tree that holds it.
SOURCE_FOLDERS = {
    "mara_env": "mara_env",
    "mara_env.agents": "agents",
    "mara_env.predictors": "predictors",
    "mara_env.benchmarks": "benchmarks",
}
IMPORT_PACKAGES = tuple(SOURCE_FOLDERS)
#: The only top-level import name (the one another distribution or a folder could take).
TOP_LEVEL = "mara_env"
#: The folder holding ``mara_env`` (site-packages, or the source tree of an editable install).
PACKAGES_ROOT = Path(__file__).resolve().parents[1]
#: The manifest of the shipped data files, a source-tree path (:func:`data_path` locates one).
MANIFEST = "mara_env/data/shipped_files.json"
#: How to get the shipped data files back, ending every message about one.
RESTORE = (
    "Reinstall mara-env to restore it (pip install --force-reinstall --no-deps mara-env, or pip "
    "install . in a clone). In a clone where you changed it on purpose (a retrained checkpoint, "
    "new tuned settings), write the manifest again: python -m mara_env.benchmarks.reference.shipped_files."
)


def installed_layout(root: Path = PACKAGES_ROOT) -> bool:
    """Whether ``root`` holds the packages at their import paths (an installed wheel:
    ``mara_env/agents/``) rather than in the source tree's folders (``agents/``)."""
    return (root / "mara_env" / "agents" / "__init__.py").is_file()


def package_folder(name: str, root: Path = PACKAGES_ROOT) -> Path:
    """The folder of import package ``name`` (one of :data:`IMPORT_PACKAGES`) under ``root``.

    Example:
        >>> package_folder("mara_env.agents").name
        'agents'
    """
    if installed_layout(root):
        return root.joinpath(*name.split("."))
    return root / SOURCE_FOLDERS[name]


def installed_path(label: str) -> str:
    """The path at which a wheel installs the source-tree path ``label``.

    Example:
        >>> installed_path("agents/worlds/v3/tuned_settings.json")
        'mara_env/agents/worlds/v3/tuned_settings.json'
    """
    folder, _, rest = label.partition("/")
    package = next((name for name, source in SOURCE_FOLDERS.items() if source == folder), None)
    return label if package is None else f"{package.replace('.', '/')}/{rest}"


def data_path(label: str, root: Path = PACKAGES_ROOT) -> Path:
    """Where the data file ``label`` (a source-tree path, as the manifest and the keys name it:
    ``agents/worlds/v3/tuned_settings.json``) is under ``root``, in either layout."""
    return root / (installed_path(label) if installed_layout(root) else label)


def data_label(path: Path, root: Path = PACKAGES_ROOT) -> str | None:
    """The source-tree path naming ``path`` (the inverse of :func:`data_path`), or ``None`` for a
    file outside the packages."""
    path = path.resolve()
    for name, folder in sorted(SOURCE_FOLDERS.items(), key=lambda item: -len(item[0])):
        home = package_folder(name, root).resolve()
        if path.is_relative_to(home):
            return f"{folder}/{path.relative_to(home).as_posix()}"
    return None


def installation_problems(
    working_directory: str | Path | None = None,
    *,
    distributions: bool = True,
    data: bool = True,
    workers: bool = False,
) -> list[str]:
    """Every reason the import packages might not be mara-env's as shipped, one message each.

    Args:
        working_directory: A directory that will be put first on ``sys.path`` (as ``python -m``
            does with the working directory): folders in it that would hide one of the packages
            are reported. ``None``: only ``sys.path`` as it is.
        distributions: Also look for other installed distributions that provide one of the
            import names (reads every installed distribution's metadata: about 0.2 s).
        data: Also check every shipped data file against the manifest and the checkpoints'
            cards (:func:`shipped_file_problems`; reads about 7 MB).
        workers: Also start a ``spawn`` worker process, as the leaderboard does, and check that
            it imports the packages from where this process does (:func:`worker_import_problems`;
            about a second).

    Returns:
        Messages (empty when all is well).
    """
    problems: dict[str, str] = {}
    if working_directory is not None:
        directory = Path(working_directory).resolve()
        found = _shadowing_entry(directory, TOP_LEVEL)
        if found is not None:
            problems[TOP_LEVEL] = _shadow_message(TOP_LEVEL, found)
    for name in IMPORT_PACKAGES:
        origin = _origin(name)
        if TOP_LEVEL not in problems and origin != package_folder(name) / "__init__.py":
            problems[name] = _shadow_message(name, origin)
    messages = list(problems.values())
    if distributions:
        messages += _clashing_distributions()
    if data:
        messages += shipped_file_problems()
    if workers and not messages:
        messages += worker_import_problems()
    return messages


def check_installation(
    working_directory: str | Path | None = None,
    *,
    distributions: bool = True,
    data: bool = True,
    workers: bool = True,
    verbose: bool = True,
) -> None:
    """Raise if one of the import packages is hidden, shared with another distribution or
    imported from elsewhere by worker processes, or if a shipped data file is missing or
    changed; otherwise say where the packages import from (``verbose``).

    Args:
        working_directory: See :func:`installation_problems`.
        distributions: See :func:`installation_problems`.
        data: See :func:`installation_problems`.
        workers: See :func:`installation_problems`.
        verbose: Print one line saying that all is well, and where the packages are.

    Raises:
        InstallationError: Listing every problem, each with what to do about it.
    """
    problems = installation_problems(
        working_directory, distributions=distributions, data=data, workers=workers
    )
    if problems:
        raise InstallationError("\n".join(problems))
    if verbose:
        checked = "; no other distribution provides them" if distributions else ""
        in_workers = ", in worker processes too" if workers else ""
        files = f"; the {len(read_manifest())} shipped data files as listed" if data else ""
        print(
            f"mara-env {installed_version()}: {', '.join(IMPORT_PACKAGES)} import from {PACKAGES_ROOT}"
            f"{in_workers}{checked}{files}. The installation is fine."
        )


# ------------------------------------------------------------------------------ data files
def file_sha256(path: Path) -> str:
    """The SHA-256 of the file ``path``, in hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(root: Path = PACKAGES_ROOT) -> dict[str, str]:
    """The manifest of the shipped data files under ``root``: ``{source-tree path: SHA-256}``.

    Raises:
        FileNotFoundError: If the manifest is missing.
        ValueError: If it is not the JSON object ``python -m mara_env.benchmarks.reference
            shipped-files`` writes.
    """
    path = data_path(MANIFEST, root)
    try:
        document = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error})") from None
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in files.items()
    ):
        raise ValueError(f"{path} must hold {{'files': {{path: sha256}}}}")
    return files


def card_problems(root: Path, files: Iterable[str]) -> list[str]:
    """One message for each checkpoint among ``files`` (source-tree paths under ``root``: a
    ``.pt`` with its ``.json`` card beside it) whose SHA-256 is not the one its card records."""
    problems = []
    for relative in sorted(files):
        weights = data_path(relative, root)
        card = weights.with_suffix(".json")
        if weights.suffix != ".pt" or not weights.is_file() or not card.is_file():
            continue
        try:
            recorded = json.loads(card.read_text()).get("sha256")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            recorded = None
        if recorded != file_sha256(weights):
            problems.append(
                f"The checkpoint {weights} does not match its card {card} (which records "
                f"SHA-256 {str(recorded)[:12]}...)."
            )
    return problems


def shipped_file_problems(root: Path | None = None) -> list[str]:
    """Every shipped data file under ``root`` (default: :data:`PACKAGES_ROOT`) that is missing,
    differs from the manifest or (a checkpoint) from its card, one message each naming the file
    and how to restore it.

    Example:
        >>> shipped_file_problems()
        []
    """
    root = PACKAGES_ROOT if root is None else root
    manifest_path = data_path(MANIFEST, root)
    try:
        manifest = read_manifest(root)
    except FileNotFoundError:
        return [f"The manifest of mara-env's data files, {manifest_path}, is missing. {RESTORE}"]
    except ValueError as error:
        return [f"The manifest of mara-env's data files is unreadable: {error}. {RESTORE}"]
    problems = []
    for relative, expected in sorted(manifest.items()):
        path = data_path(relative, root)
        if not path.is_file():
            problems.append(f"The shipped data file {path} is missing. {RESTORE}")
        elif file_sha256(path) != expected:
            problems.append(
                f"The shipped data file {path} differs from the one mara-env ships (SHA-256 "
                f"{expected[:12]}... in {manifest_path}). {RESTORE}"
            )
    problems += [f"{problem} {RESTORE}" for problem in card_problems(root, manifest)]
    return problems


# ------------------------------------------------------------------------------ where code runs
def package_origins() -> dict[str, str]:
    """``{import package: the file Python imports for it}`` in this process (``"none"`` for a
    package it cannot find)."""
    return {name: str(_origin(name) or "none") for name in IMPORT_PACKAGES}


def worker_import_problems(pool: Executor | None = None) -> list[str]:
    """Ask a worker process of ``pool`` (default: one ``spawn`` worker started for the
    question, the leaderboard's kind) where it imports the packages from, and report each
    that differs from this process.

    A ``spawn`` worker starts with this process's ``sys.path`` and imports the main module again
    before anything else: a folder named like one of the packages early on that path (the
    working directory, under ``python -m``) can give the workers other code than the parent.
    """
    ours = package_origins()
    try:
        if pool is None:
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as own:
                theirs = own.submit(package_origins).result()
        else:
            theirs = pool.submit(package_origins).result()
    except (BrokenProcessPool, ImportError):
        return [
            "A worker process could not import mara-env's packages (or ended while starting, "
            "its traceback above). A folder named like one of them early on sys.path (the "
            "working directory, under python -m) is the usual cause: run from another directory."
        ]
    return [
        f"Worker processes import {name!r} from {theirs[name]}, this process from {ours[name]}: "
        "they would run other code than the one checked and keyed. A folder of that name "
        "early on sys.path (the working directory, under python -m) is the usual cause: run "
        "from another directory, or use mara-leaderboard."
        for name in IMPORT_PACKAGES
        if theirs[name] != ours[name]
    ]


def working_directory_last() -> bool:
    """Whether :func:`put_working_directory_last` ran in this process."""
    return _working_directory_last


def put_working_directory_last() -> None:
    """Import the packages with the working directory off ``sys.path``, then let Python look
    there last of all: a user's module there (``my_sched.py``) can then be imported, while a
    folder there named ``mara_env`` (a clone of this repository) hides nothing, whichever way
    mara-env is installed. The directory is searched by a finder placed after every other one,
    an editable install's import hook included, rather than from ``sys.path`` (whose entries
    all come before such a hook, in this process and in the ``spawn`` workers that inherit the
    path). ``mara-leaderboard`` runs it at start, and its worker processes too."""
    global _working_directory_last
    directory = os.getcwd()
    sys.path[:] = [entry for entry in sys.path if entry not in ("", directory)]
    for name in IMPORT_PACKAGES:
        importlib.import_module(name)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _WorkingDirectoryFinder)]
    sys.meta_path.append(_WorkingDirectoryFinder(directory))
    _working_directory_last = True


class _WorkingDirectoryFinder(importlib.abc.MetaPathFinder):
    """Finds top-level modules in one directory, after every other finder."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None or fullname == TOP_LEVEL:
            return None  # submodules are found through their package's __path__
        return importlib.machinery.PathFinder.find_spec(fullname, [self.directory], target)


_working_directory_last = False


def find_source_tree_packages() -> None:
    """Let ``mara_env.agents``, ``mara_env.predictors`` and ``mara_env.benchmarks`` import from
    their source-tree folders when ``mara_env`` itself was imported from a source tree without
    its editable install (a clone in the working directory under ``python -m``, beside a
    non-editable install): :func:`imported_instead_of_installed` then says which tree runs,
    instead of a ``ModuleNotFoundError``. A finder placed after every other one, so an editable
    install's import hook still finds them first; nothing happens in an installed layout."""
    if installed_layout() or any(isinstance(f, _SourceTreeFinder) for f in sys.meta_path):
        return
    sys.meta_path.append(_SourceTreeFinder())


class _SourceTreeFinder(importlib.abc.MetaPathFinder):
    """Finds the sub-packages kept beside ``mara_env/`` in the source tree (:data:`SOURCE_FOLDERS`)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        folder = SOURCE_FOLDERS.get(fullname)
        if folder is None or fullname == TOP_LEVEL:
            return None
        init = PACKAGES_ROOT / folder / "__init__.py"
        if not init.is_file():
            return None
        return importlib.util.spec_from_file_location(
            fullname, init, submodule_search_locations=[str(init.parent)]
        )


def installed_root() -> Path | None:
    """The folder that holds the installed distribution's packages: its source tree for an
    editable install, else its ``site-packages``; ``None`` if mara-env is not installed. The
    working directory's metadata (a clone's ``mara_env.egg-info``, left by a build) is not an
    installation and is not read."""
    here = {"", os.getcwd()}
    installed = metadata.distributions(
        name=DISTRIBUTION, path=[entry for entry in sys.path if entry not in here]
    )
    distribution = next(iter(installed), None)
    if distribution is None:
        return None
    direct_url = distribution.read_text("direct_url.json")
    if direct_url:
        try:
            source = json.loads(direct_url)
        except json.JSONDecodeError:
            source = {}
        if source.get("dir_info", {}).get("editable") and source.get("url", "").startswith("file:"):
            return Path(unquote(urlparse(source["url"]).path)).resolve()
    return Path(str(distribution.locate_file(""))).resolve()


def imported_instead_of_installed() -> str | None:
    """A message when the packages import from elsewhere than the installed distribution (a
    clone in the working directory under ``python -m``, say), else ``None``."""
    installed = installed_root()
    if installed is None or installed == PACKAGES_ROOT:
        return None
    return (
        f"note: this run imports mara-env's packages from {PACKAGES_ROOT}, not from the "
        f"installed mara-env {installed_version()} in {installed} (under python -m, the working directory "
        "comes first on sys.path): it runs that tree's code and data. To run the installed "
        "package, run from another directory or use mara-leaderboard; to run this tree, "
        "install it (pip install -e .)."
    )


def installed_version() -> str:
    """The installed distribution's version (``pyproject.toml`` holds it; this reads the
    installation's metadata)."""
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
    installed = package_folder(name)
    if not installed.is_dir():
        return False
    nested = {package_folder(other) for other in IMPORT_PACKAGES if other != name}

    def files(root: Path, pattern: str) -> set[Path]:
        return {
            path.relative_to(root)
            for path in root.rglob(pattern)
            if path.is_file()
            and "__pycache__" not in path.parts
            and not any(path.is_relative_to(folder) for folder in nested)
        }

    if not files(local, "*.py") <= files(installed, "*.py"):
        return False
    for relative in files(installed, "*"):
        copy = local / relative
        if not copy.is_file() or copy.read_bytes() != (installed / relative).read_bytes():
            return False
    return True


def _origin(name: str) -> Path | None:
    """The file Python imports (or imported) for package ``name``, without importing it (its
    parent package is imported to find a sub-package)."""
    module = sys.modules.get(name)
    if module is not None:
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError, AttributeError):
            spec = None
        origin = None if spec is None else spec.origin
    return None if origin is None else Path(origin).resolve()


def _shadow_message(name: str, found: Path | None) -> str:
    if found is None:
        return (
            f"Python finds no regular package {name!r} (mara-env installs it in "
            f"{package_folder(name)}; "
            "a folder of that name without __init__.py may be hiding it). Reinstall mara-env "
            "(pip install mara-env) in this environment."
        )
    folder = found.parent if found.name == "__init__.py" else found
    return (
        f"{folder} is imported as {name!r} instead of mara-env's {name!r} package (in "
        f"{package_folder(name)}): mara-env installs the import package {TOP_LEVEL}, "
        f"and a folder or module of the same name that comes first on sys.path (the working "
        f"directory does, for python -m and mara-leaderboard) hides it. Rename {folder.name!r} "
        "(give your own package another name), or run from another directory; if it is a "
        "checkout of mara-env edited since it was installed, reinstall it (pip install . in "
        "it, or pip install -e . to work on the source)."
    )


def _clashing_distributions() -> list[str]:
    owners = metadata.packages_distributions()
    messages = []
    for name in (TOP_LEVEL,):
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
