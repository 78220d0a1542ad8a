"""Atomic file writes: a temporary file beside the target, then ``os.replace``. Every file the
suite writes for keeps (a trace file, an arrival trace, a checkpoint, a results table) is written
this way, so a kill or a full disk leaves the old file or the new one, never half of one.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "table.md", "| a |\\n")
    >>> (folder / "table.md").read_text()
    '| a |\\n'
    >>> replace_atomically(folder / "data.bin", lambda handle: handle.write(b"\\x00"), durable=True)
    >>> (folder / "data.bin").read_bytes()
    b'\\x00'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def replace_atomically(
    path: Path, write: Callable[[IO[bytes]], Any], *, durable: bool = False
) -> None:
    """Write ``path`` with ``write(handle)`` on a temporary file, then rename it into place.

    Args:
        path: The file to (re)write.
        write: Writes the contents to a binary file handle.
        durable: Also ``fsync`` the file before the rename (survives a power cut, not only a
            crash of the process).
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("wb") as handle:
            write(handle)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        if temporary.exists():
            temporary.unlink()


def write_atomically(path: Path, data: str | bytes, *, durable: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically (see :func:`replace_atomically`)."""
    payload = data.encode() if isinstance(data, str) else data
    replace_atomically(path, lambda handle: handle.write(payload), durable=durable)
