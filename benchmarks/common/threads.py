"""Torch thread limits, in one place.

The models trained and evaluated here are small: on a busy machine, torch's idle-spinning worker
threads slow them down many times over, so collectors, leaderboard cells and scripts keep torch
on one thread (or the count a script's ``--threads`` asks for).

Example:
    >>> with one_torch_thread_if_loaded():
    ...     pass
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def set_torch_threads(threads: int) -> None:
    """Set torch's intra-op thread count for the rest of a script (imports torch).

    Raises:
        ValueError: If ``threads`` is not a whole number >= 1.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"set_torch_threads: threads must be an int >= 1, got {threads!r}.")
    import torch

    torch.set_num_threads(threads)


@contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)``, restoring the caller's setting."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextmanager
def one_torch_thread_if_loaded() -> Iterator[None]:
    """:func:`one_torch_thread` if something (a predictor) has imported torch; else nothing."""
    if "torch" not in sys.modules:
        yield
        return
    with one_torch_thread():
        yield


class TorchThreadLimit:
    """Puts torch, once something has imported it, on one thread; restores the count after.

    For loops that import torch lazily (an agent loaded mid-run): call :meth:`limit` before each
    piece of work, :meth:`restore` at the end.
    """

    def __init__(self) -> None:
        self._before: int | None = None

    def limit(self) -> None:
        """Limit torch to one thread if it is loaded and not limited yet."""
        torch = sys.modules.get("torch")
        if torch is not None and self._before is None:
            self._before = torch.get_num_threads()
            torch.set_num_threads(1)

    def restore(self) -> None:
        """Give torch back the thread count it had before :meth:`limit`."""
        torch = sys.modules.get("torch")
        if torch is not None and self._before is not None:
            torch.set_num_threads(self._before)
            self._before = None
