"""The user's text files (curve tables, submission times) opened as UTF-8, with one message for a
file that is not: :func:`utf8_text`.

A byte that does not decode is reported by the reader's own error type, naming the file, the
byte and its position, and what the file should be; no ``UnicodeDecodeError`` escapes.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mara_env.errors import TraceError
    >>> path = Path(tempfile.mkdtemp()) / "curves.csv"
    >>> _ = path.write_bytes(b"\\x88run,step")
    >>> with utf8_text(path, "a curves CSV", TraceError) as handle:
    ...     handle.read()
    Traceback (most recent call last):
    ...
    mara_env.errors.TraceError: .../curves.csv: not UTF-8 text (byte 0x88 at position 0); a curves CSV is UTF-8 text, in the format docs/curves.md describes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def utf8_text(path: str | Path, what: str, error: type[Exception]) -> Iterator[TextIO]:
    """``path`` open for reading as UTF-8 text (for :mod:`csv`: no newline translation); a byte
    read inside the block that does not decode raises ``error`` saying so, with ``what`` the
    file should be (e.g. ``"a curves CSV"``)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            yield handle
    except UnicodeDecodeError as problem:
        raise error(
            f"{path}: not UTF-8 text (byte {problem.object[problem.start]:#04x} at position "
            f"{problem.start}); {what} is UTF-8 text, in the format docs/curves.md describes."
        ) from None
