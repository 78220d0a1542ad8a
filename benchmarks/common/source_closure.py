"""The source code a module runs: its static import closure, and a hash of each module in it.

:func:`import_closure` starts from some modules and follows their ``import`` statements
(including those inside functions, and ``if TYPE_CHECKING`` blocks) to every module a
``follow`` predicate accepts, and returns ``{module name: hash of its source}``. It reads files
and never runs them; it imports nothing except, while resolving names, parent packages of
followed modules (which the code being fingerprinted imports anyway).

The rules, and what they cannot see:

- ``import a.b`` adds ``a.b``; ``from a.b import c`` adds the submodule ``a.b.c`` if there is
  one, else ``a.b``. When ``a.b`` is a package, ``c`` is traced through the package's
  ``__init__`` re-exports (``from a.b.impl import c``) to the module that defines it, so that
  ``from mara_env.agents import EpochScheduler`` adds ``mara_env.agents.base``, not everything ``mara_env.agents``
  exports.
  A package's ``__init__`` itself joins the closure only when something is taken from it that
  it defines, or when it is imported as such (``import mara_env.agents``); merely being the parent of a
  followed module does not count (on the assumption that ``__init__`` modules re-export).
- A module's hash is its behaviour's (:func:`behaviour_hash`): the syntax tree without its
  docstrings, so an edit to a docstring, a comment or the layout changes nothing, while any
  change to a statement, a default or a literal does. A compiled module is hashed as bytes.
- Data files a module names also join the closure (as ``file:<path>``): a string literal that is
  a file name (``"tuned_settings.json"``, ``"data/traces.npz"``) of a file beside the module, or,
  for a module of a package, anywhere in that package's folder. Python files are left to the
  import rules Results the scripts write (:data:`OUTPUT_FOLDERS`)
  are outputs, never data.
- Not seen: code reached without an ``import`` statement (``importlib.import_module`` with a
  computed name, ``getattr`` on a module, plugins), modules ``follow`` rejects (third-party
  libraries: their versions are recorded in the provenance instead), and files whose names are
  computed rather than written out (the leaderboard records checkpoint loads separately).

Example:
    >>> ours = lambda name: name.split(".")[0] == "mara_env"
    >>> files = import_closure(["mara_env.agents.least_slack"], ours)
    >>> "mara_env.agents.least_slack" in files and "mara_env.worlds.config" in files
    True
    >>> "mara_env.agents.lara" in files  # not imported by least slack
    False
    >>> len(files["mara_env.agents.least_slack"])
    16
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mara_env.installation import SOURCE_FOLDERS, data_label, package_folder

Follow = Callable[[str], bool]
#: The hash recorded for a followed module that cannot be found (a change if it appears).
MISSING = "missing"
#: How many re-export hops a name is traced through before its package counts as its home.
_MAX_HOPS = 16


def import_closure(
    roots: Iterable[str], follow: Follow, *, skip: Collection[str] = ()
) -> dict[str, str]:
    """``{module: source hash}`` of ``roots`` and every module they import that ``follow`` takes.

    Args:
        roots: Module names to start from (always included, followed or not).
        follow: Which imported module names to include and follow further.
        skip: Module names never to include (the roots excepted).

    Returns:
        The closure, sorted by module name; a missing module's hash is :data:`MISSING`.
    """
    resolver = _Resolver(follow)
    found: dict[str, str] = {}
    queue = deque(roots)
    while queue:
        name = queue.popleft()
        if name in found:
            continue
        path = module_file(name)
        if path is None:
            found[name] = MISSING
            continue
        source = read_source(path)
        if path.suffix != ".py":
            found[name] = source_hash(source)
            continue  # a compiled module: hashed as bytes, no imports to read
        found[name] = behaviour_hash(source)
        for imported in resolver.imports(name, source, path.name == "__init__.py"):
            if imported not in found and imported not in skip and follow(imported):
                queue.append(imported)
        found.update(resolver.data_files(name, path, source))
    return dict(sorted(found.items()))


def read_source(path: Path) -> bytes:
    """The bytes of a module's file, as the closure reads them (one place to read them from)."""
    return path.read_bytes()


def imports_of_source(source: str, module: str, follow: Follow) -> list[str]:
    """The modules a piece of source (e.g. one function's) imports, as if it were in ``module``.

    Example:
        >>> imports_of_source("from mara_env.agents.mara.agent import Mara", "mara_env.agents.registry",
        ...                   lambda name: name.startswith("mara_env.agents"))
        ['mara_env.agents.mara.agent']
    """
    resolver = _Resolver(follow)
    imported = resolver.imports(module, source.encode(), False)
    return sorted(name for name in imported if follow(name))


def behaviour_hash(source: bytes) -> str:
    """A short SHA-256 of a module's syntax tree without its docstrings.

    Comments, blank lines, line breaks inside brackets and docstrings (of the module, its classes
    and functions) leave it unchanged; every other edit changes it. Trees differ between Python
    minor versions, so a key holding this hash also names the interpreter's.

    Raises:
        SyntaxError: If ``source`` is not valid Python.

    Example:
        >>> code = b"def f(x=1):\\n    'Add one.'\\n    return x + 1\\n"
        >>> edited = b"def f(x=1):  # a comment\\n    'Add one, said otherwise.'\\n\\n    return x+1\\n"
        >>> behaviour_hash(code) == behaviour_hash(edited)
        True
        >>> behaviour_hash(code) == behaviour_hash(code.replace(b"x=1", b"x=2"))
        False
    """
    return hashlib.sha256(ast.dump(_without_docstrings(ast.parse(source))).encode()).hexdigest()[
        :16
    ]


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` with the docstring of the module and of every class and function removed."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


def source_hash(source: bytes) -> str:
    """A short SHA-256 of source text, the same for ``\\n`` and ``\\r\\n`` line ends."""
    return hashlib.sha256(source.replace(b"\r\n", b"\n")).hexdigest()[:16]


def module_file(name: str) -> Path | None:
    """The file module ``name`` is loaded from, or ``None`` (not found, built in, namespace).

    Submodules of regular packages are looked up in their package's folder, so nothing is
    imported; only a top-level name goes through the import system's finders (which locate it
    without running it). mara-env's own packages are where the installation keeps them
    (:func:`mara_env.installation.package_folder`).
    """
    if name in SOURCE_FOLDERS:
        own = package_folder(name) / "__init__.py"
        return own if own.is_file() else None
    parent, _, last = name.rpartition(".")
    if not parent:
        return _found_file(name)
    package = module_file(parent)
    if package is None or package.name != "__init__.py":
        return None  # a plain module has no submodules; namespace packages are not followed
    for candidate in (package.parent / f"{last}.py", package.parent / last / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _found_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.has_location or spec.origin is None:
        return None
    path = Path(spec.origin)
    return path if path.is_file() else None


class _Resolver:
    """Turns import statements into module names, tracing names through package re-exports."""

    def __init__(self, follow: Follow) -> None:
        self._follow = follow
        self._files: dict[str, Path | None] = {}
        self._package_files: dict[Path, dict[str, list[Path]]] = {}

    def imports(self, module: str, source: bytes, is_package: bool) -> Iterator[str]:
        """Every module an import statement anywhere in ``source`` (of ``module``) names."""
        for statement in _parse(source).statements:
            if statement.module is None and statement.level == 0:
                yield from (name for name, _ in statement.names)
                continue
            base = _absolute(statement, module, is_package)
            if base is None:
                continue
            for name, _ in statement.names:
                yield self._home(base, name) if self._follow(base) else base

    def _home(self, base: str, attribute: str, hops: int = 0) -> str:
        """The module that defines what ``from base import attribute`` binds."""
        path = self._file(base)
        if attribute == "*" or path is None or path.name != "__init__.py" or hops > _MAX_HOPS:
            return base
        if self._file(f"{base}.{attribute}") is not None:
            return f"{base}.{attribute}"
        for statement in _parse(path.read_bytes()).statements:
            if not statement.top_level:
                continue
            for name, alias in statement.names:
                bound = alias or (name if statement.is_from else name.split(".")[0])
                if bound != attribute:
                    continue
                if not statement.is_from:
                    return name if alias else attribute
                source = _absolute(statement, base, True)
                if source is None or not self._follow(source):
                    return base
                return self._home(source, name, hops + 1)
        return base  # defined in the package's __init__ itself

    def _file(self, name: str) -> Path | None:
        if name not in self._files:
            self._files[name] = module_file(name)
        return self._files[name]

    def data_files(self, module: str, path: Path, source: bytes) -> dict[str, str]:
        """``{"file:<path>": hash}`` of the data files ``module``'s string literals name.

        A file of mara-env's packages is named by its source-tree path (``agents/...``), the same
        whether the packages run from a clone or from an installed wheel (``mara_env/agents/...``);
        another module's, relative to the ``sys.path`` entry it was found in."""
        home = _our_package(module)
        package: Path | None
        label: Callable[[Path], str | None]
        if home is not None:
            package, label = package_folder(home), data_label
            others = (package_folder(name) for name in SOURCE_FOLDERS if name != home)
            nested = tuple(folder for folder in others if folder.is_relative_to(package))
        else:
            parts = module.split(".")
            depth = len(parts) if path.name == "__init__.py" else len(parts) - 1
            root = path.parents[depth]  # the sys.path entry the module was found in
            package = root / parts[0] if len(parts) > 1 or path.name == "__init__.py" else None
            nested = ()

            def label(candidate: Path) -> str | None:
                return candidate.relative_to(root).as_posix()

        found = {}
        for literal in _parse(source).file_names:
            for candidate in self._candidates(path.parent, package, nested, literal):
                name = label(candidate)
                if name is None or _is_output(name):
                    continue
                found[f"file:{name}"] = source_hash(read_source(candidate))
        return found

    def _candidates(
        self, folder: Path, package: Path | None, nested: tuple[Path, ...], literal: str
    ) -> list[Path]:
        beside = folder / literal
        if beside.is_file():
            return [beside]
        if package is None or "/" in literal:
            return [package / literal] if package and (package / literal).is_file() else []
        if package not in self._package_files:
            files: dict[str, list[Path]] = {}
            for file in sorted(package.rglob("*")):
                if (
                    file.is_file()
                    and file.suffix not in _CODE_SUFFIXES
                    and not any(file.is_relative_to(inner) for inner in nested)
                ):
                    files.setdefault(file.name, []).append(file)
            self._package_files[package] = files
        return self._package_files[package].get(literal, [])


def _our_package(module: str) -> str | None:
    """The import package of mara-env that holds ``module`` (the innermost), if one does."""
    homes = [name for name in SOURCE_FOLDERS if module == name or module.startswith(f"{name}.")]
    return max(homes, key=len, default=None)


@dataclass(frozen=True)
class _Statement:
    """One ``import`` or ``from ... import`` statement.

    Attributes:
        is_from: A ``from ... import`` statement.
        module: Its module (``None`` for ``import x`` and ``from . import x``).
        level: Its number of leading dots.
        names: ``(name, alias or None)`` pairs.
        top_level: Outside any function or class (it binds names of the module).
    """

    is_from: bool
    module: str | None
    level: int
    names: tuple[tuple[str, str | None], ...]
    top_level: bool


@dataclass(frozen=True)
class _Parsed:
    """What the closure reads from a module's source.

    Attributes:
        statements: Its import statements, in order.
        file_names: Its string literals that look like file names (not Python files).
    """

    statements: tuple[_Statement, ...]
    file_names: tuple[str, ...]


@functools.lru_cache(maxsize=4096)
def _parse(source: bytes) -> _Parsed:
    """The import statements and file-name literals of a module (a pure function of its text)."""
    found: list[_Statement] = []
    tree = ast.parse(source)
    pending: list[tuple[ast.AST, bool]] = [(tree, True)]
    while pending:
        node, top_level = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            is_from = isinstance(node, ast.ImportFrom)
            found.append(
                _Statement(
                    is_from,
                    node.module if isinstance(node, ast.ImportFrom) else None,
                    node.level if isinstance(node, ast.ImportFrom) else 0,
                    tuple((alias.name, alias.asname) for alias in node.names),
                    top_level,
                )
            )
            continue
        inner = top_level and not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        )
        for name in _BLOCKS:  # statements only: imports never hide inside expressions
            children = getattr(node, name, None)
            if isinstance(children, list):
                pending.extend((child, inner) for child in reversed(children))
    found.reverse()
    names = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _FILE_NAME.fullmatch(node.value)
        and Path(node.value).suffix not in _CODE_SUFFIXES
    }
    return _Parsed(tuple(found), tuple(sorted(names)))


#: A string literal that may name a data file: a relative path with an extension.
_FILE_NAME = re.compile(r"(?:[\w-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8}")
#: Folders of results the scripts write: never data a result depends on (a script naming its
#: output file must not key its rows by that file).
OUTPUT_FOLDERS = ("benchmarks/results",)
#: Files the import rules cover (or that are not source at all).
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pyd")
#: The fields of compound statements that hold statements (or handlers and match cases).
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _is_output(label: str) -> bool:
    """Whether a file (its source-tree path) lies in one of :data:`OUTPUT_FOLDERS`."""
    return any(label.startswith(folder + "/") for folder in OUTPUT_FOLDERS)


def _absolute(statement: _Statement, module: str, is_package: bool) -> str | None:
    """The absolute module name ``from ... import`` reads from, or ``None`` if unresolvable."""
    if statement.level == 0:
        return statement.module
    package = module if is_package else module.rpartition(".")[0]
    try:
        return importlib.util.resolve_name(
            "." * statement.level + (statement.module or ""), package
        )
    except ImportError:
        return None
