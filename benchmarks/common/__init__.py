"""Helpers every benchmark script shares: atomic file writes and torch thread limits.

* :mod:`benchmarks.common.atomic`: write a file through a temporary file and a rename, so a
  crash never leaves half a file (:func:`write_atomically`, :func:`replace_atomically`);
* :mod:`benchmarks.common.threads`: keep torch on one thread while small models train or
  predict (:func:`one_torch_thread`, :class:`TorchThreadLimit`, :func:`set_torch_threads`).
"""

from __future__ import annotations

from benchmarks.common.atomic import replace_atomically, write_atomically
from benchmarks.common.threads import (
    TorchThreadLimit,
    one_torch_thread,
    one_torch_thread_if_loaded,
    set_torch_threads,
)

__all__ = [
    "TorchThreadLimit",
    "one_torch_thread",
    "one_torch_thread_if_loaded",
    "replace_atomically",
    "set_torch_threads",
    "write_atomically",
]
