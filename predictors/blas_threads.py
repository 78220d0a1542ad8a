"""One BLAS thread for NumPy's small matrix products.

An epoch's flow-matching batch is a few hundred rows. At that size OpenBLAS's worker threads
cost more than they save, and on a machine whose cores are busy (parallel evaluation workers,
a training beside them) they make each product wait for a core: on this project's 2-core
machine with other jobs running, MARA's decisions took 39-43 ms per epoch with NumPy's default
two BLAS threads and 9-10 ms with one. So sampling runs inside :func:`one_blas_thread`, which
limits the BLAS libraries NumPy loaded to one thread for the block (through ``threadpoolctl``)
and restores them afterwards; it costs about 30 microseconds per call.

Example:
    >>> import numpy as np
    >>> with one_blas_thread():
    ...     product = np.ones((64, 64)) @ np.ones((64, 8))
    >>> float(product[0, 0])
    64.0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from threadpoolctl import ThreadpoolController


@lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with one BLAS thread, then restore the previous limits."""
    with _controller().limit(limits=1, user_api="blas"):
        yield
