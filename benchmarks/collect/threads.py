"""Keep torch on one thread while a collector trains (see :mod:`mara_env.benchmarks.common.threads`).

The runner's workers already use one thread each; collectors also use this when :func:`run` is
called directly, because these models are too small to gain from more threads, and on a busy
machine idle-spinning threads slow them down many times over.
"""

from __future__ import annotations

from mara_env.benchmarks.common.threads import one_torch_thread, one_torch_thread_if_loaded

__all__ = ["one_torch_thread", "one_torch_thread_if_loaded"]
