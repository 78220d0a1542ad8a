"""The results file: every finished cell appended atomically, so no run loses finished work.

``episodes.jsonl`` is a JSON-lines journal. Its first line is a header naming the format and the
run's provenance; every further line is one finished cell's row, written with a single
``write`` on a descriptor opened for appending, then ``fsync``-ed. A process killed at any
moment (even with SIGKILL) therefore leaves only whole lines behind, and a re-run skips every
cell whose key is in the file. An interrupted run loses at most the cells that were in flight.

A NaN metric is written as the ``NaN`` token of Python's json module (not strict JSON), which
it reads back exactly; the CSV and JSON exports are strict.

The journal is never silently overwritten or repaired:

- a file whose header is not this format's (someone else's file) or whose lines do not parse
  (corruption) raises :class:`ResultsFileError`, naming the file and line, and the run stops
  before touching anything;
- only a final line without its newline (a write cut short by a power loss or a full disk) is
  moved aside, into ``episodes.jsonl.partial``, with a message; the cell simply runs again;
- starting afresh (``--no-resume``) renames the old journal to a timestamped backup.

A lock (``flock``) keeps two runs from appending to one journal at the same time.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "episodes.jsonl"
    >>> with EpisodeJournal.open(path, header={"note": "example"}) as journal:
    ...     journal.append({"cell": "abc", "agent": "edf", "completion_rate": 0.5})
    >>> with EpisodeJournal.open(path, header={}) as journal:
    ...     sorted(journal.done()), journal.rows[0]["completion_rate"]
    (['abc'], 0.5)
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]

#: The header's ``format`` value, and the version of the line layout.
FORMAT = "mara-env-leaderboard-episodes"
FORMAT_VERSION = 1


class ResultsFileError(ValueError):
    """A results file this leaderboard cannot resume from (foreign, corrupt or locked)."""


class EpisodeJournal:
    """An open journal: the rows already in it, and atomic appends of new ones.

    Use :meth:`open` (a context manager that holds the lock).

    Attributes:
        path: The journal file.
        header: Its header (written when the file was created).
        rows: Every row in the file, in file order (the first copy of a repeated cell).
    """

    def __init__(self, path: Path, header: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        self.path = path
        self.header = header
        self.rows = rows
        self._keys = {row["cell"] for row in rows}
        self._descriptor: int | None = None

    @classmethod
    def open(cls, path: Path, *, header: dict[str, Any], fresh: bool = False) -> EpisodeJournal:
        """Open (or create) the journal at ``path`` and lock it.

        Args:
            path: The ``.jsonl`` file.
            header: Written as the header if the file is created (``format`` and ``version``
                are added).
            fresh: Start a new journal; an existing one is renamed to a timestamped backup.

        Raises:
            ResultsFileError: If the file is foreign, corrupt, or locked by another run.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        full_header = {"format": FORMAT, "version": FORMAT_VERSION, **header}
        if not path.exists():
            _create(path, full_header)
        descriptor = _lock(path)
        if fresh:
            backup = path.with_name(f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}.bak")
            os.replace(path, backup)
            os.close(descriptor)
            print(f"Started afresh: the previous results are in {backup}.", file=sys.stderr)
            _create(path, full_header)
            descriptor = _lock(path)
        try:
            journal = cls(path, *_read(path))
        except BaseException:
            os.close(descriptor)
            raise
        journal._descriptor = descriptor
        return journal

    def __enter__(self) -> EpisodeJournal:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release the lock and the file."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def done(self) -> set[str]:
        """Keys of the cells already in the journal."""
        return set(self._keys)

    def append(self, row: dict[str, Any]) -> None:
        """Append one finished cell's row (with its ``cell`` key) as one line, durably.

        Raises:
            ValueError: If ``row`` has no ``cell`` key.
        """
        if "cell" not in row:
            raise ValueError(f"EpisodeJournal.append: the row has no 'cell' key: {row!r}.")
        if self._descriptor is None:
            raise ResultsFileError(f"{self.path} is closed; open the journal again to append.")
        data = (json.dumps(row, separators=(",", ":")) + "\n").encode()
        written = 0
        while written < len(data):  # one write() in practice; loop on a short write
            written += os.write(self._descriptor, data[written:])
        os.fsync(self._descriptor)
        if row["cell"] not in self._keys:
            self._keys.add(row["cell"])
            self.rows.append(row)


def _lock(path: Path) -> int:
    """An append descriptor of ``path`` holding an exclusive lock on it."""
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
    if fcntl is None:
        return descriptor
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        raise ResultsFileError(
            f"{path} is in use by another leaderboard run. Wait for it to finish, or use "
            "another --output directory."
        ) from None
    return descriptor


def _create(path: Path, header: dict[str, Any]) -> None:
    """Write a journal holding only ``header``, atomically (a crash leaves no half file)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("w") as handle:
        handle.write(json.dumps(header, separators=(",", ":")) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def _read(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = _set_aside_partial_line(path, data)
    lines = data.decode("utf-8", errors="replace").split("\n")[:-1]
    header = _parse_line(path, lines[0] if lines else "", 1)
    if header.get("format") != FORMAT:
        raise ResultsFileError(
            f"{path} is not a mara-env leaderboard results file (its first line has no "
            f"'format': {FORMAT!r}). It was left untouched: use another --output directory."
        )
    if header.get("version") != FORMAT_VERSION:
        raise ResultsFileError(
            f"{path} has results format version {header.get('version')!r}; this mara-env "
            f"reads version {FORMAT_VERSION}. Use another --output directory."
        )
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(lines[1:], start=2):
        row = _parse_line(path, line, number)
        if not isinstance(row.get("cell"), str):
            raise ResultsFileError(
                f"{path}, line {number}: a row without a 'cell' key; the file is corrupt. It "
                "was left untouched: repair it, or use another --output directory."
            )
        if row["cell"] not in seen:
            seen.add(row["cell"])
            rows.append(row)
    return header, rows


def _parse_line(path: Path, line: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise ResultsFileError(
            f"{path}, line {number}: not valid JSON ({error.msg}); the file is corrupt or not "
            "a leaderboard results file. It was left untouched: repair it, or use another "
            "--output directory."
        ) from None
    if not isinstance(value, dict):
        raise ResultsFileError(
            f"{path}, line {number}: expected a JSON object, got {type(value).__name__}. It "
            "was left untouched: use another --output directory."
        )
    return value


def _set_aside_partial_line(path: Path, data: bytes) -> bytes:
    """Move an unterminated last line (a cut-short write) to ``<path>.partial``; keep the rest."""
    cut = data.rfind(b"\n") + 1
    if cut == 0:
        raise ResultsFileError(
            f"{path} holds no complete line; it is not a leaderboard results file. It was "
            "left untouched: use another --output directory."
        )
    partial = path.with_name(path.name + ".partial")
    with partial.open("ab") as handle:
        handle.write(data[cut:] + b"\n")
    with path.open("r+b") as handle:
        handle.truncate(cut)
    print(
        f"{path}: its last line was cut short (an interrupted write); moved it to {partial}. "
        "That cell runs again.",
        file=sys.stderr,
    )
    return data[:cut]
