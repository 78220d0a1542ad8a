"""One resumable results store: finished rows appended to a CSV or JSON-lines file.

A benchmark script plays many independent pieces of work (episodes, predictor x cell rows) and
keeps each result the moment it ends, so that an interrupted run loses only the work in flight
and a second run skips what is already done. :class:`ResultsStore` is that file:

* **a column schema** (name -> ``str``, ``int``, ``float`` or ``bool``) fixes what a row holds;
  rows are parsed to those types on reading and converted to them on appending, so a row in
  memory is exactly the row a later run reads back;
* **key columns** say what identifies a row; :meth:`ResultsStore.done` returns the keys already
  in the file. One of them carries the digest of what produced the row
  (:mod:`mara_env.benchmarks.common.keys`): a row made by other code then has another key and is never
  reused; the manifests kept beside the file (:meth:`ResultsStore.record_manifest`) say what
  changed (:meth:`ResultsStore.stale`), and :meth:`ResultsStore.prune` drops such rows;
* **appends only**: every append is one ``write`` of whole lines, flushed and ``fsync``-ed, so a
  finished row survives any later interruption; an interrupted last line is set aside
  (:func:`~mara_env.benchmarks.common.results_lines.set_aside_cut_line`) and its work runs again;
* **a foreign or older file** (other CSV columns, JSON lines with other fields, a line that
  does not parse to the schema) is refused with :class:`ResultsFileError`, naming the file, the
  line and what to do, and left untouched.

Formats, by suffix: ``.csv`` (a header, then one line per row; floats as ``repr``, so they read
back exactly) and ``.jsonl`` (one JSON object per row, keys sorted; fields checked per line).

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "runs.csv"
    >>> columns = {"agent": str, "seed": int, "code": str, "score": float}
    >>> store = ResultsStore(path, columns, key=("agent", "seed", "code"))
    >>> store.append({"agent": "edf", "seed": 3, "code": "abc", "score": 1})
    >>> print(path.read_text(), end="")
    agent,seed,code,score
    edf,3,abc,1.0
    >>> again = ResultsStore(path, columns, key=("agent", "seed", "code"))
    >>> again.done(), again.get(("edf", 3, "abc"))["score"]
    ({('edf', 3, 'abc')}, 1.0)
    >>> ("edf", 3, "new code") in again.done()  # another fingerprint: runs again
    False
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.manifest import Manifest, describe_changes
from mara_env.benchmarks.common.results_lines import (
    check_schema,
    convert,
    format_of,
    from_text,
    set_aside_cut_line,
)

#: A parsed row: column name -> typed value.
Row = dict[str, Any]
#: The values of a row's key columns, in the order of ``key``.
Key = tuple[Any, ...]
#: What the errors advise when the caller gives no advice of its own.
DEFAULT_ADVICE = "Write to another output directory, or start afresh (e.g. --no-resume)."
#: Suffix of the file beside a store that keeps the manifests of the keys its rows carry.
MANIFESTS_SUFFIX = ".manifests.json"
#: What says which manifest a row should carry now (:meth:`ResultsStore.stale`).
CurrentManifest = Callable[[Row], Manifest]


class ResultsFileError(ValueError):
    """An existing results file a script cannot resume from: foreign, older, corrupt or locked.

    The one error of every results file (this store's, and the leaderboard's journal).

    Attributes:
        path: The file (``None`` when the message alone says it).
        line: The offending line (1-based), ``None`` for the whole file.
        found: The columns (CSV header or JSON fields) found there, if that was the problem.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        line: int | None = None,
        found: tuple[str, ...] | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.found = found


class ResultsStore:
    """An append-only CSV or JSON-lines file of typed rows, resumed by key (module docstring).

    Args:
        path: The file (``.csv`` or ``.jsonl``); it and its folder are created on the first
            append.
        columns: Column name -> type (``str``, ``int``, ``float`` or ``bool``), in file order.
        key: The columns that identify a row, fingerprints of code and weights included.
        fresh: Ignore the file's rows; the first append replaces the file (a run that appends
            nothing leaves it as it was).
        advice: What the errors tell the user to do with a file that cannot be resumed.

    Raises:
        ValueError: For an unknown suffix, an unknown column type, or key columns that are not
            columns.
        ResultsFileError: If the existing file is foreign, older or has a malformed line
            (unless ``fresh``).
    """

    def __init__(
        self,
        path: Path | str,
        columns: Mapping[str, type],
        *,
        key: Sequence[str],
        fresh: bool = False,
        advice: str = DEFAULT_ADVICE,
    ) -> None:
        self.path = Path(path)
        self.columns = dict(columns)
        self.key = tuple(key)
        self.advice = advice
        self.format: Literal["csv", "jsonl"] = format_of(self.path)
        check_schema(self.columns, self.key)
        self.rows: list[Row] = []
        self._index: dict[Key, Row] = {}
        self._replace = fresh and self.path.exists()
        if not fresh and self.path.exists():
            for row in self._read():
                self._remember(row)

    # ------------------------------------------------------------------------------ reading
    def done(self) -> set[Key]:
        """The keys of the rows in the file (and appended since)."""
        return set(self._index)

    def get(self, key: Key) -> Row:
        """The row with ``key`` (the first one, if the file repeats a key).

        Raises:
            KeyError: If no row has that key.
        """
        return self._index[tuple(key)]

    def rows_where(self, **values: Any) -> list[Row]:
        """The rows whose columns have the given values, in file order.

        Example:
            >>> import tempfile
            >>> from pathlib import Path
            >>> store = ResultsStore(Path(tempfile.mkdtemp()) / "r.jsonl", {"a": str, "b": int},
            ...                      key=("a", "b"))
            >>> store.extend([{"a": "x", "b": 1}, {"a": "y", "b": 2}])
            >>> store.rows_where(a="y")
            [{'a': 'y', 'b': 2}]
        """
        return [row for row in self.rows if all(row[k] == v for k, v in values.items())]

    def key_of(self, row: Mapping[str, Any]) -> Key:
        """The key of a row."""
        return tuple(row[column] for column in self.key)

    def _remember(self, row: Row) -> None:
        self.rows.append(row)
        self._index.setdefault(self.key_of(row), row)

    def _read(self) -> list[Row]:
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        try:
            text = complete.decode()
        except UnicodeDecodeError:
            raise ResultsFileError(
                f"{self.path} is not a text file of results; it was left untouched. {self.advice}",
                path=self.path,
            ) from None
        if self.format == "csv":
            rows = self._parse_csv(text)
        else:
            lines = enumerate(text.split("\n")[:-1], start=1)
            rows = [self._parse_json(line, number) for number, line in lines]
        if complete != data:  # only once the finished rows are known to be this store's
            set_aside_cut_line(self.path, data)
        return rows

    def _parse_csv(self, text: str) -> list[Row]:
        reader = csv.reader(io.StringIO(text))
        try:
            header = next(reader, None)
            if header is None:
                return []
            if tuple(header) != tuple(self.columns):
                raise self._foreign("the columns", tuple(header), list(self.columns), None)
            return [self._csv_row(fields, reader.line_num) for fields in reader]
        except csv.Error as error:
            raise self._malformed(reader.line_num, error) from None

    def _csv_row(self, fields: list[str], number: int) -> Row:
        try:
            if len(fields) != len(self.columns):
                raise ValueError(f"{len(fields)} fields, not {len(self.columns)}")
            pairs = zip(self.columns.items(), fields, strict=True)
            return {name: from_text(kind, value) for (name, kind), value in pairs}
        except ValueError as error:
            raise self._malformed(number, error) from None

    def _parse_json(self, line: str, number: int) -> Row:
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            raise self._malformed(number, error) from None
        if set(record) != set(self.columns):
            found = tuple(sorted(record))
            raise self._foreign("a row with the fields", found, sorted(self.columns), number)
        try:
            return {name: convert(kind, record[name]) for name, kind in self.columns.items()}
        except ValueError as error:
            raise self._malformed(number, error) from None

    def _foreign(
        self, what: str, found: tuple[str, ...], expected: list[str], line: int | None
    ) -> ResultsFileError:
        where = str(self.path) if line is None else f"{self.path}, line {line}"
        return ResultsFileError(
            f"{where}: {what} {list(found)}, not {expected}: it was written by another script "
            f"or an older version, so none of its rows can be reused. The file was left "
            f"untouched. {self.advice}",
            path=self.path,
            line=line,
            found=found,
        )

    def _malformed(self, line: int, error: Exception) -> ResultsFileError:
        return ResultsFileError(
            f"{self.path}, line {line}: malformed row ({error}). Fix or delete the line (its "
            f"work then runs again); the file was left untouched. {self.advice}",
            path=self.path,
            line=line,
        )

    # --------------------------------------------------------------------------- keys
    @property
    def manifests_path(self) -> Path:
        """``<file>.manifests.json``: the manifests of the keys its rows carry."""
        return self.path.with_name(self.path.name + MANIFESTS_SUFFIX)

    def recorded_manifests(self) -> dict[str, dict[str, str]]:
        """``{digest: manifest items}`` kept beside the file (empty if none were).

        Raises:
            ResultsFileError: If the manifests file is not a JSON object of objects.
        """
        if not self.manifests_path.is_file():
            return {}
        try:
            recorded = json.loads(self.manifests_path.read_text())
            if not isinstance(recorded, dict) or not all(
                isinstance(items, dict) for items in recorded.values()
            ):
                raise ValueError("not a JSON object of manifests")
        except ValueError as error:
            raise ResultsFileError(
                f"{self.manifests_path}: {error}. Delete it (what changed can then no longer "
                "be told) or restore it.",
                path=self.manifests_path,
            ) from None
        return recorded

    def record_manifest(self, manifest: Manifest) -> None:
        """Keep ``manifest`` beside the file (once per digest), so that a later run can say
        what changed for rows that carry its digest (:meth:`stale`)."""
        recorded = self.recorded_manifests()
        if recorded.get(manifest.digest) == dict(manifest.items):
            return
        recorded[manifest.digest] = dict(manifest.items)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(recorded, indent=1, sort_keys=True) + "\n"
        write_atomically(self.manifests_path, text, durable=True)

    def stale(self, column: str, current: CurrentManifest) -> dict[str, int]:
        """``{why: rows}`` for the rows whose ``column`` is not the digest of the manifest
        ``current`` gives them now: each reason names what changed since the manifest recorded
        for the row's digest (:func:`~mara_env.benchmarks.common.manifest.describe_changes`).

        Example:
            >>> import tempfile
            >>> store = ResultsStore(Path(tempfile.mkdtemp()) / "r.csv", {"code": str, "x": int},
            ...                      key=("code", "x"))
            >>> old = Manifest({"mara_env.agents.lara": "1"})
            >>> store.record_manifest(old)
            >>> store.extend([{"code": old.digest, "x": 1}, {"code": old.digest, "x": 2}])
            >>> store.stale("code", lambda row: Manifest({"mara_env.agents.lara": "2"}))
            {'mara_env.agents.lara changed': 2}
            >>> store.stale("code", lambda row: old)
            {}
        """
        recorded = self.recorded_manifests()
        found: dict[str, int] = {}
        for row in self.rows:
            manifest = current(row)
            if row[column] != manifest.digest:
                reason = describe_changes(manifest, recorded, row[column])
                found[reason] = found.get(reason, 0) + 1
        return found

    def prune(self, column: str, current: CurrentManifest) -> int:
        """Drop the rows whose ``column`` is not their current digest (see :meth:`stale`), and
        the manifests no kept row carries; the file is rewritten atomically.

        Returns:
            How many rows were dropped.
        """
        kept = [row for row in self.rows if row[column] == current(row).digest]
        dropped = len(self.rows) - len(kept)
        if dropped:
            text = self._header() + "".join(self._line(row) for row in kept)
            write_atomically(self.path, text, durable=True)
            self.rows, self._index = [], {}
            for row in kept:
                self._remember(row)
        recorded = self.recorded_manifests()
        used = {row[column] for row in kept}
        if set(recorded) - used:
            kept_manifests = {k: v for k, v in recorded.items() if k in used}
            text = json.dumps(kept_manifests, indent=1, sort_keys=True)
            write_atomically(self.manifests_path, text + "\n", durable=True)
        return dropped

    # ------------------------------------------------------------------------------ writing
    def append(self, row: Mapping[str, Any]) -> None:
        """Write one finished row to disk (flushed and ``fsync``-ed) before returning.

        ``row`` may hold more keys than the columns: only the columns are stored.

        Raises:
            ValueError: If a column is missing or its value does not have the column's type.
        """
        self.extend([row])

    def extend(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write several finished rows in one write (all of them survive, or none).

        Raises:
            ValueError: As :meth:`append`; then nothing is written.
        """
        typed = [self._typed(row) for row in rows]
        if not typed:
            return
        lines = "".join(self._line(row) for row in typed)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._replace:
            write_atomically(self.path, self._header() + lines, durable=True)
            self._replace = False
        else:
            new = not self.path.exists() or self.path.stat().st_size == 0
            with self.path.open("a", encoding="utf-8", newline="") as handle:
                handle.write((self._header() if new else "") + lines)
                handle.flush()
                os.fsync(handle.fileno())
        for row in typed:
            self._remember(row)

    def _typed(self, row: Mapping[str, Any]) -> Row:
        missing = [name for name in self.columns if name not in row]
        if missing:
            raise ValueError(f"{self.path}: a row to append lacks the columns {missing}.")
        try:
            return {name: convert(kind, row[name]) for name, kind in self.columns.items()}
        except ValueError as error:
            raise ValueError(f"{self.path}: cannot append {dict(row)!r}: {error}") from None

    def _header(self) -> str:
        return self._line({name: name for name in self.columns}) if self.format == "csv" else ""

    def _line(self, row: Row) -> str:
        if self.format == "jsonl":
            return json.dumps(row, sort_keys=True) + "\n"
        buffer = io.StringIO()
        # The writer leaves a lone carriage return unquoted, which its reader refuses.
        cut = any(isinstance(value, str) and "\r" in value for value in row.values())
        if cut:
            writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
        else:
            writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(row[name] for name in self.columns)
        return buffer.getvalue()
