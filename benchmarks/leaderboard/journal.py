"""The results file: every finished cell appended atomically, so no run loses finished work.

``episodes.jsonl`` is a JSON-lines journal (the line kinds and their integrity hash are in
:mod:`mara_env.benchmarks.leaderboard.records`): a header, then one line per finished cell, plus the code
manifests, configs and run summaries those cells refer to. Each line is written with a single
``write`` on a descriptor opened for appending, then ``fsync``-ed. A process killed at any
moment (even with SIGKILL) therefore leaves only whole lines behind, and a re-run skips every
cell whose key is in the file. An interrupted run loses at most the cells that were in flight.

The journal is never silently overwritten or repaired:

- a file whose header is not this format's (someone else's file), whose lines do not parse
  (corruption) or whose line no longer matches its check hash (an edit) raises
  :class:`ResultsFileError`, naming the file and line, and the run stops before touching
  anything;
- only a final line without its newline (a write cut short by a power loss or a full disk) is
  moved aside, into ``episodes.jsonl.partial``, with a message; the cell simply runs again;
- starting afresh (``--no-resume``) renames the old journal to a timestamped backup.

A lock (``flock``) keeps two runs from appending to one journal at the same time.
:func:`read_journal` reads a journal without locking or changing it, noting damaged lines
instead of stopping at them (what ``--validate`` needs).

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

import os
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from mara_env.atomic_files import replace_atomically
from mara_env.benchmarks.common.results_lines import set_aside_cut_line
from mara_env.benchmarks.leaderboard.records import (
    CODE,
    CONFIG,
    EPISODE,
    FORMAT,
    FORMAT_VERSION,
    RUN,
    JournalContents,
    ResultsFileError,
    encode,
    parse,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "JOURNAL",
    "EpisodeJournal",
    "ResultsFileError",
    "read_journal",
]

#: The journal's file name inside a results directory.
JOURNAL = "episodes.jsonl"


class EpisodeJournal:
    """An open journal: what is already in it, and atomic appends of new lines.

    Use :meth:`open` (a context manager that holds the lock).

    Attributes:
        path: The journal file.
        contents: Its header, episode rows, code manifests, configs and runs
            (:class:`~mara_env.benchmarks.leaderboard.records.JournalContents`), kept up to date by the
            appends.
    """

    def __init__(self, path: Path, contents: JournalContents) -> None:
        self.path = path
        self.contents = contents
        self._keys = {row["cell"] for row in contents.rows}
        self._descriptor: int | None = None

    @property
    def header(self) -> dict[str, Any]:
        """The header (written when the file was created)."""
        return self.contents.header

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every episode row in the file, in file order (the first copy of a repeated cell)."""
        return self.contents.rows

    @classmethod
    def open(cls, path: Path, *, header: dict[str, Any], fresh: bool = False) -> EpisodeJournal:
        """Open (or create) the journal at ``path`` and lock it.

        Args:
            path: The ``.jsonl`` file.
            header: Written as the header if the file is created (``format`` and ``version``
                are added).
            fresh: Start a new journal; an existing one is renamed to a timestamped backup.

        Raises:
            ResultsFileError: If the file is foreign, corrupt, edited, or locked by another run.
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
            journal = cls(path, parse(path, _whole_lines(path), strict=True))
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
        self._write({"kind": EPISODE, **row})
        if row["cell"] not in self._keys:
            self._keys.add(row["cell"])
            self.rows.append(row)

    def add_manifest(self, digest: str, items: dict[str, str]) -> None:
        """Record the code manifest of fingerprint ``digest`` (once per digest)."""
        if digest not in self.contents.manifests:
            self._write({"kind": CODE, "digest": digest, "items": items})
            self.contents.manifests[digest] = items

    def add_config(self, key: str, config: dict[str, Any]) -> None:
        """Record a config's fields under its hash ``key`` (once per hash)."""
        if key not in self.contents.configs:
            self._write({"kind": CONFIG, "hash": key, "config": config})
            self.contents.configs[key] = config

    def add_run(self, run: dict[str, Any]) -> None:
        """Record a finished run (its grid, fingerprints, provenance and command)."""
        self._write({"kind": RUN, **run})
        self.contents.runs.append(run)

    def _write(self, record: dict[str, Any]) -> None:
        if self._descriptor is None:
            raise ResultsFileError(f"{self.path} is closed; open the journal again to append.")
        data = encode(record)
        written = 0
        while written < len(data):  # one write() in practice; loop on a short write
            written += os.write(self._descriptor, data[written:])
        os.fsync(self._descriptor)


def read_journal(path: Path) -> JournalContents:
    """Read the journal at ``path`` without locking or changing it; damaged lines (a cut-short
    last line included) are listed in ``problems`` and skipped.

    Raises:
        ResultsFileError: If the file is missing, foreign, or of another format version.
    """
    if not path.is_file():
        raise ResultsFileError(f"{path} does not exist: no leaderboard results there.")
    data = path.read_bytes()
    lines = data.decode("utf-8", errors="replace").split("\n")
    last = lines.pop()  # after the final newline: empty unless the last write was cut short
    contents = parse(path, lines, strict=False)
    if last:
        contents.problems.append(f"line {len(lines) + 1}: cut short (no newline): {last[:60]!r}")
    return contents


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
    replace_atomically(path, lambda handle: handle.write(encode(header)), durable=True)


def _whole_lines(path: Path) -> list[str]:
    """The file's complete lines; an unterminated last one is first moved aside."""
    data = path.read_bytes()
    if data and b"\n" not in data:
        raise ResultsFileError(
            f"{path} holds no complete line; it is not a leaderboard results file. It was "
            "left untouched: use another --output directory.",
            path=path,
        )
    return set_aside_cut_line(path, data).decode("utf-8", errors="replace").split("\n")[:-1]
