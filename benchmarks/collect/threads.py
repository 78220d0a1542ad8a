"""Keep torch on one thread while a collector trains.

The runner's workers already use one thread each; collectors also use this when :func:`run` is
called directly, because these models are too small to gain from more threads, and on a busy
machine idle-spinning threads slow them down many times over.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
