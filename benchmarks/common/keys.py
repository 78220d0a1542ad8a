"""One key recipe: what a result depends on, as a :class:`Manifest`, and its digest.

Every resumable result (a leaderboard cell, a tuning trial, a prediction benchmark row, a MARA
evaluation episode, a static-bundle episode) is keyed by the digest of a :class:`Manifest`, a
mapping from what was hashed to its hash:

- the **code**: the static import closure of the result's entry points within mara-env's four
  packages (:func:`mara_env.benchmarks.common.source_closure.import_closure`), each module hashed by its
  behaviour (:func:`~mara_env.benchmarks.common.source_closure.behaviour_hash`: its syntax tree without
  docstrings, so a docstring, comment or layout edit changes no key) and the data files its
  string literals name (by content: checkpoints, tuned settings);
- the **data**: the trace data's fingerprint;
- the **settings** that shape the run (:func:`code_manifest`'s ``settings``), as JSON;
- the **interpreter**: Python's minor version (syntax trees differ between minor versions).

For an agent (:func:`build_agent`) the code is its registry entry (the factory's source or name
and arguments), the modules that define its class and its bases and those its factory uses, with
everything they import; or, for an import path ``pkg.module:Class``, the module and what it
imports from its own package (or folder) and mara-env's. Add the SHA-256 of every checkpoint
loaded while the agent is built (:mod:`mara_env.predictors.loaded_checkpoints`) and the scheduler's
optional ``fingerprint`` string attribute, for a scheduler that reads weights or settings of its
own in another way.

Not seen: code reached without an ``import`` statement, files read without
:func:`mara_env.predictors.checkpoint.load_checkpoint` whose names are computed, and library versions
(recorded in the provenance, :mod:`mara_env.benchmarks.common.provenance`, not in keys).

Example:
    >>> edf = build_agent("edf")
    >>> "mara_env.agents.priority" in edf.manifest.items, "mara_env.agents.lara" in edf.manifest.items
    (True, False)
    >>> edf.manifest.digest == build_agent("edf").manifest.digest
    True
    >>> manifest = code_manifest(["mara_env.benchmarks.common.seeds"], settings={"seeds": 3})
    >>> sorted(manifest.items)
    ['mara_env.benchmarks.common.seeds', 'python', 'settings', 'trace data']
    >>> len(manifest.digest)
    16
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import sys
import textwrap
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mara_env.agents import Scheduler, make_agent, registry
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.provenance import data_hashes
from mara_env.benchmarks.common.source_closure import (
    Follow,
    behaviour_hash,
    import_closure,
    imports_of_source,
    module_file,
)
from mara_env.installation import TOP_LEVEL, data_label
from mara_env.predictors.loaded_checkpoints import recording_checkpoint_loads
from mara_env.worlds.world import LATEST_WORLD_VERSION, world_of_file

#: Never part of a closure: the registry imports every agent (an agent's entry is hashed instead).
REGISTRY_MODULES = ("mara_env.agents.registry",)
#: Manifest items that are not modules (module names never contain a space or a colon).
TRACE_DATA = "trace data"
PYTHON = "python"
SETTINGS = "settings"
ATTRIBUTE = "fingerprint attribute"


@dataclass(frozen=True)
class BuiltAgent:
    """A scheduler built from its name or import path, with the manifest of what it runs.

    Attributes:
        spec: The registered name, import path or trained policy's file
            (:data:`mara_env.agents.registry.POLICY_LOADERS`) it was built from.
        scheduler: The scheduler.
        manifest: Its code, registry entry, checkpoints and ``fingerprint`` attribute.
    """

    spec: str
    scheduler: Scheduler
    manifest: Manifest


def build_agent(spec: str, world_version: int = LATEST_WORLD_VERSION) -> BuiltAgent:
    """Build the agent ``spec`` for the world ``world_version`` (as :func:`mara_env.agents.make_agent`
    does) and fingerprint it.

    Raises:
        Whatever :func:`mara_env.agents.make_agent` raises for ``spec``.
    """
    with recording_checkpoint_loads() as loads:
        scheduler = make_agent(spec, world_version=world_version)
    registered = ":" not in spec  # a name of the registry, not an import path
    prefix = spec.partition(":")[0]
    loader = None if registered else registry.POLICY_LOADERS.get(prefix)  # "sb3:model.zip"
    follow = _own_packages if registered or loader else _project_of(prefix)
    roots = [cls.__module__ for cls in type(scheduler).__mro__ if follow(cls.__module__)]
    items: dict[str, str] = {}
    if registered:
        entry, entry_roots = _registry_entry(spec, follow)
        items[f"registry:{spec}"] = _hash(entry)
        roots += [root for root in entry_roots if root not in REGISTRY_MODULES]
    else:  # the import path's module, or the loader's (the file: its fingerprint attribute)
        roots.insert(0, (loader or spec).partition(":")[0])
    items.update(import_closure(dict.fromkeys(roots), follow, skip=REGISTRY_MODULES))
    for load in loads:
        items[f"checkpoint:{_file_label(load.path)}"] = load.sha256[:16]
    extra = getattr(scheduler, "fingerprint", None)
    if isinstance(extra, str):
        items[ATTRIBUTE] = _hash(extra)
    return BuiltAgent(spec, scheduler, Manifest(dict(sorted(played(items, world_version).items()))))


def played(items: Mapping[str, str], world_version: int) -> dict[str, str]:
    """``items`` without the files of the worlds other than ``world_version``: a module that
    names a world's file by its name (``"mara.pt"``, ``"tuned_settings.json"``) names that file
    of every world, while a result depends only on the world it played
    (:func:`mara_env.worlds.world.world_of_file`).

    Example:
        >>> played({"file:agents/worlds/v1/mara.pt": "a", "file:agents/worlds/v3/mara.pt": "b",
        ...         "file:mara_env/data/traces.npz": "c", "mara_env.sim.core": "d"}, 3)
        {'file:agents/worlds/v3/mara.pt': 'b', 'file:mara_env/data/traces.npz': 'c', 'mara_env.sim.core': 'd'}
    """
    kept = {}
    for name, digest in items.items():
        kind, _, label = name.partition(":")
        owner = world_of_file(label) if kind in ("file", "checkpoint") else None
        if owner is None or owner == world_version:
            kept[name] = digest
    return kept


def class_manifest(scheduler: Scheduler) -> Manifest:
    """The source of the modules in mara-env's packages that define ``scheduler``'s class and
    its bases, with everything they import from those packages: the code of a scheduler built
    other than by :func:`build_agent` (e.g. MARA loaded from a checkpoint file)."""
    roots = [cls.__module__ for cls in type(scheduler).__mro__ if _own_packages(cls.__module__)]
    items = import_closure(dict.fromkeys(roots), _own_packages, skip=REGISTRY_MODULES)
    return Manifest(dict(sorted(items.items())))


def code_manifest(
    roots: Sequence[str],
    *,
    world_version: int | None = None,
    settings: Any = None,
    exclude: Collection[str] = (),
) -> Manifest:
    """The manifest of a result produced by the modules ``roots`` with ``settings``.

    Args:
        roots: The entry points: module names of mara-env's packages.
        world_version: The world the result played: the files of the other worlds are left
            out (:func:`played`). ``None``: a result of no one world, keyed by every world's.
        settings: What else shapes the run (JSON-serialisable; ``None``: nothing), e.g. a
            script's grid of workloads and seeds.
        exclude: Items left out, e.g. ``"file:agents/worlds/v2/tuned_settings.json"`` for the script that
            writes that file, whose rows must not be keyed by their own output.

    Raises:
        TypeError: If ``settings`` is not JSON-serialisable.
    """
    items = import_closure(roots, _own_packages, skip=REGISTRY_MODULES)
    if world_version is not None:
        items = played(items, world_version)
    items = {name: digest for name, digest in items.items() if name not in exclude}
    items[TRACE_DATA] = data_hashes()["trace_fingerprint"]
    items[PYTHON] = python_version()
    if settings is not None:
        items[SETTINGS] = _hash(json.dumps(settings, sort_keys=True, separators=(",", ":")))
    return Manifest(dict(sorted(items.items())))


def python_version() -> str:
    """The interpreter's ``major.minor`` version, as keys hold it."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _own_packages(module: str) -> bool:
    return module.split(".")[0] == TOP_LEVEL


def _project_of(module: str) -> Follow:
    """What an import-path agent's closure follows: its package (or folder) and mara-env's."""
    top = module.split(".")[0]
    path = module_file(top)
    folder = None
    if path is not None and path.name != "__init__.py" and not _in_site_packages(path):
        folder = path.parent  # a single-file module: its sibling modules are its project
    homes: dict[str, bool] = {}

    def follow(name: str) -> bool:
        first = name.split(".")[0]
        if first in (top, TOP_LEVEL):
            return True
        if folder is None:
            return False
        if first not in homes:
            found = module_file(first)
            homes[first] = found is not None and folder in (found.parent, found.parent.parent)
        return homes[first]

    return follow


def _in_site_packages(path: Path) -> bool:
    return any(part in ("site-packages", "dist-packages") for part in path.parts)


def _registry_entry(name: str, follow: Follow) -> tuple[str, list[str]]:
    """A text standing for the registry's entry ``name``, and the modules it uses itself."""
    factory = _registered_factory(name)
    if isinstance(factory, functools.partial):
        values = (*factory.args, *factory.keywords.values())
        text = f"partial {_describe(factory.func)} {[_stable(v) for v in factory.args]} "
        text += f"{sorted((k, _stable(v)) for k, v in factory.keywords.items())}"
        roots = [_module_of(value) for value in values if callable(value)]
        if inspect.isfunction(factory.func):
            source, used = _function_entry(factory.func, follow)
            text, roots = f"{text}\n{source}", [*roots, *used]
        return text, [root for root in roots if root is not None and follow(root)]
    if inspect.isfunction(factory):
        return _function_entry(factory, follow)
    return _describe(factory), []


def _registered_factory(name: str) -> Any:
    """The factory :func:`mara_env.agents.make_agent` builds ``name`` with, from whichever of the
    registry's name maps holds it (:data:`agents.AGENTS`, or another map of names it keeps)."""
    for value in vars(registry).values():
        if isinstance(value, Mapping) and name in value and callable(value[name]):
            return value[name]
    return None


def _function_entry(function: Any, follow: Follow) -> tuple[str, list[str]]:
    """A factory function's behaviour (the hash of its syntax tree without docstrings, or its
    source where that does not parse alone), and the modules it uses: its own, those it
    imports, and those that define the globals it reads (``tuned_settings`` -> ``mara_env.agents.tuned``)."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except OSError:
        return _describe(function), []
    roots: list[str | None] = [function.__module__]  # (the registry's is left out later)
    behaviour = source
    with contextlib.suppress(SyntaxError):  # a lambda inside a larger expression
        roots += imports_of_source(source, function.__module__, follow)
        behaviour = behaviour_hash(source.encode())
    used = inspect.getclosurevars(function)
    roots += [_module_of(value) for value in (*used.globals.values(), *used.nonlocals.values())]
    return behaviour, [root for root in roots if root is not None and follow(root)]


def _module_of(value: Any) -> str | None:
    """The module a function, class or module comes from (``None`` for other values)."""
    if inspect.ismodule(value):
        return value.__name__
    module = getattr(value, "__module__", None)
    return module if isinstance(module, str) and callable(value) else None


def _stable(value: Any) -> str:
    """``repr`` without memory addresses: callables by their qualified name."""
    return _describe(value) if callable(value) else repr(value)


def _describe(factory: Any) -> str:
    module = getattr(factory, "__module__", type(factory).__module__)
    name = getattr(factory, "__qualname__", type(factory).__qualname__)
    return f"{module}.{name}"


def _file_label(path: Path) -> str:
    """``path`` as its source-tree path if it is one of the packages' files (the same on every
    machine and in either layout), else as it is."""
    return data_label(path) or str(path)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
