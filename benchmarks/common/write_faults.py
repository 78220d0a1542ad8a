"""A full disk or a denied permission while a command writes its results: one line that says what
could not be written, what was kept and how to go on, then exit code 2 (:func:`write_faults_end`).

Every long command writes as it goes (a journal line per finished episode or trial, a file per
collected curve, a checkpoint at the end of each stage), each write whole or not at all, so a
write that fails loses only the work in flight. The line tells the user that, instead of a
traceback from deep inside a writer.

Example:
    >>> import contextlib, errno, io
    >>> said = io.StringIO()
    >>> with contextlib.redirect_stderr(said), contextlib.suppress(SystemExit):
    ...     with write_faults_end("pack", lambda: "Nothing else changed", "it packs again"):
    ...         raise OSError(errno.ENOSPC, "No space left on device", "x.npz")
    >>> print(said.getvalue(), end="")  # doctest: +NORMALIZE_WHITESPACE
    pack: error: could not write x.npz: No space left on device. Nothing else changed. Free
    space (or allow writing) and run the same command again; it packs again.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: The errors of writing, as opposed to reading a file that is not there: no space, no quota,
#: no permission, a read-only file system, a file too large, an I/O error.
WRITE_FAULTS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS, errno.EFBIG, errno.EIO}
)

#: What a command that writes whole files (no journal) keeps.
UNCHANGED = "Each file is written whole or not at all: none was left half-written"

#: How every such line ends, with what the rerun does after it.
RUN_AGAIN = "Free space (or allow writing) and run the same command again"


def is_write_fault(error: BaseException) -> bool:
    """Whether ``error`` is an ``OSError`` of writing (:data:`WRITE_FAULTS`)."""
    return isinstance(error, OSError) and error.errno in WRITE_FAULTS


def write_fault_line(command: str, error: OSError, kept: str, rerun: str) -> str:
    """``command: error: could not write FILE: REASON. KEPT. Free space ... again; RERUN.``"""
    where = f"could not write {error.filename or 'a result'}: {error.strerror or error}"
    return f"{command}: error: {where}. {kept}. {RUN_AGAIN}; {rerun}."


@contextmanager
def write_faults_end(
    command: str, kept: Callable[[], str], rerun: str = "it reuses that work"
) -> Iterator[None]:
    """Inside the block, a write fault prints :func:`write_fault_line` to stderr and raises
    ``SystemExit(2)``; any other error passes through.

    Args:
        command: The command's name, as its other messages start.
        kept: Says what was kept, called when the fault happens (e.g. how many episodes).
        rerun: What running the command again does.
    """
    try:
        yield
    except OSError as error:
        if not is_write_fault(error):
            raise
        print(write_fault_line(command, error, kept(), rerun), file=sys.stderr)
        raise SystemExit(2) from None
