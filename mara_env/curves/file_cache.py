"""Files read once per process while they are unchanged.

Every episode of a leaderboard worker asks for the same trace file or arrival trace; reading
it again each time would dominate short episodes. :func:`read_unchanged` caches what a reader
returns under the file's resolved path, modification time and size, so an edited file is read
again.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = path.write_text("one")
    >>> read_unchanged(path, Path.read_text)
    'one'
    >>> read_unchanged(path, Path.read_text) is read_unchanged(path, Path.read_text)
    True
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def read_unchanged(path: Path, read: Callable[[Path], T]) -> T:
    """``read(path)``, from this process's cache while the file is unchanged (its path,
    modification time and size; up to 16 files and readers)."""
    facts = path.stat()
    return _read(read, str(path.resolve()), facts.st_mtime_ns, facts.st_size)


@lru_cache(maxsize=16)
def _read(read: Callable[[Path], Any], path: str, modified: int, size: int) -> Any:
    return read(Path(path))
