"""The lines of a leaderboard journal: their kinds, their integrity hash, and reading them back.

A journal (``episodes.jsonl``, see :mod:`mara_env.benchmarks.leaderboard.journal`) is JSON lines. The
first is the **header** (``format``, ``version``, creation time, provenance); every other line
has a ``kind``:

- ``episode``: one finished cell's row (its ``cell`` key, agent, seed, config hash, the
  fingerprints of the code that played it and every metric);
- ``code``: a :class:`~mara_env.benchmarks.common.keys.Manifest` (``digest`` and
  ``items``), written once per distinct fingerprint that an episode refers to, so that a later
  run can say which module changed;
- ``config``: a full :class:`mara_env.ClusterConfig` by its ``hash`` (what a replay needs);
- ``run``: one finished run: its grid, agent labels and import paths, fingerprints, the
  provenance and command that its tables were written with (what ``--validate`` recomputes).

Every line carries ``check``, the first 16 hex digits of the SHA-256 of the line's other fields
(sorted, compact JSON): a line edited by hand, or damaged, no longer matches. It detects edits;
it does not authenticate (whoever edits a line can recompute it: only a replay catches that).

A NaN metric is written as the ``NaN`` token of Python's json module (not strict JSON), which
reads back exactly.

Example:
    >>> line = encode({"kind": "episode", "cell": "abc", "x": 0.5})
    >>> line  # doctest: +ELLIPSIS
    b'{"kind":"episode","cell":"abc","x":0.5,"check":"..."}\\n'
    >>> decode(line.decode().strip())["x"]
    0.5
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.store import ResultsFileError

#: The header's ``format`` value, and the version of the line layout.
FORMAT = "mara-env-leaderboard-episodes"
FORMAT_VERSION = 2
EPISODE, CODE, CONFIG, RUN = "episode", "code", "config", "run"
#: Fields every record of a kind must have.
REQUIRED = {EPISODE: ("cell",), CODE: ("digest", "items"), CONFIG: ("hash", "config"), RUN: ()}


def check_of(record: dict[str, Any]) -> str:
    """The integrity hash of ``record`` (without its ``check`` field)."""
    fields = {key: value for key, value in record.items() if key != "check"}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode(record: dict[str, Any]) -> bytes:
    """``record`` as one journal line, its ``check`` appended."""
    return (
        json.dumps({**record, "check": check_of(record)}, separators=(",", ":")) + "\n"
    ).encode()


def decode(line: str) -> dict[str, Any]:
    """Parse one line; raises ``ValueError`` saying why it is not a sound journal line."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    return record


@dataclass
class JournalContents:
    """Everything a journal holds, by kind.

    Attributes:
        header: The first line.
        rows: Episode rows (first copy of each cell, without ``kind`` and ``check``).
        manifests: ``{digest: items}`` of the code records.
        configs: ``{config hash: config fields}``.
        runs: The run records, oldest first.
        problems: Damaged lines (``"line N: ..."``), when read leniently; they are skipped.
        suspect: Episode rows of lines that parse but fail their check hash (an edit), when
            read leniently: not in ``rows``, but worth replaying to see what was changed.
        lines: The number of lines read.
    """

    header: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    manifests: dict[str, dict[str, str]] = field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    suspect: list[dict[str, Any]] = field(default_factory=list)
    lines: int = 0


def parse(path: Path, lines: list[str], *, strict: bool) -> JournalContents:
    """Read a journal's lines (without their newlines).

    Args:
        path: The file (for messages).
        lines: Its lines.
        strict: Raise :class:`ResultsFileError` at the first damaged line (resuming); else note
            it in ``problems`` and go on (validating).

    Raises:
        ResultsFileError: For a foreign file or another format version (always), or a damaged
            line (``strict``).
    """
    header = _header(path, lines[0] if lines else "")
    contents = JournalContents(header=header, lines=len(lines))
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        try:
            record = _sound_record(line, header=number == 1)
        except ValueError as error:
            problem = f"line {number}: {error}"
            if strict:
                raise ResultsFileError(
                    f"{path}, {problem}. The file was left untouched: delete or repair that line "
                    "(an episode line deleted just plays again), start afresh with --no-resume "
                    "(the old journal is kept as a backup), or use another --output directory."
                ) from None
            contents.problems.append(problem)
            _keep_suspect(contents, line)
            continue
        record.pop("check")
        kind = record.pop("kind", None)
        if number == 1:
            contents.header = record
        elif kind == EPISODE and record["cell"] not in seen:
            seen.add(record["cell"])
            contents.rows.append(record)
        elif kind == CODE:
            contents.manifests[record["digest"]] = record["items"]
        elif kind == CONFIG:
            contents.configs[record["hash"]] = record["config"]
        elif kind == RUN:
            contents.runs.append(record)
    return contents


def _header(path: Path, line: str) -> dict[str, Any]:
    try:
        header = decode(line)
    except ValueError as error:
        raise ResultsFileError(
            f"{path}, line 1: {error}; the file is corrupt or not a leaderboard results file. "
            "It was left untouched: repair it, or use another --output directory."
        ) from None
    if header.get("format") != FORMAT:
        raise ResultsFileError(
            f"{path} is not a mara-env leaderboard results file (its first line has no "
            f"'format': {FORMAT!r}). It was left untouched: use another --output directory."
        )
    if header.get("version") != FORMAT_VERSION:
        raise ResultsFileError(
            f"{path} has results format version {header.get('version')!r}; this mara-env "
            f"reads version {FORMAT_VERSION}. It was left untouched: run with --no-resume to "
            "start afresh (the old journal is kept as a backup), or use another --output "
            "directory."
        )
    return header


def _sound_record(line: str, *, header: bool = False) -> dict[str, Any]:
    record = decode(line)
    if record.get("check") != check_of(record):
        summary = ", ".join(
            f"{key} {record[key]!r}" for key in ("kind", "agent", "seed", "config") if key in record
        )
        raise ValueError(
            f"its check hash does not match its content ({summary or 'the header'}): the line "
            "was edited or damaged after it was written"
        )
    if header:
        return record
    kind = record.get("kind")
    if kind not in REQUIRED:
        raise ValueError(f"unknown record kind {kind!r}")
    missing = [name for name in REQUIRED[kind] if name not in record]
    if missing:
        raise ValueError(f"{kind} record without {', '.join(repr(m) for m in missing)}")
    return record


def _keep_suspect(contents: JournalContents, line: str) -> None:
    """Keep an edited episode line's row (without ``kind`` and ``check``), if it parses."""
    try:
        record = decode(line)
    except ValueError:
        return
    if record.get("kind") == EPISODE and isinstance(record.get("cell"), str):
        contents.suspect.append(
            {key: value for key, value in record.items() if key not in ("kind", "check")}
        )
