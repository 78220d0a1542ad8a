"""SiLU, ``x * sigmoid(x)``, on float32 arrays: the sampling network's activation, compiled.

NumPy's float32 ``exp`` costs about 1.8 ns per value on the 2-core machine the benchmarks run on,
and a SiLU over NumPy ufuncs makes four passes over the array. :func:`silu` makes two compiled
passes whose ``exp`` is range reduction plus a polynomial (no library call), which the compiler
turns into vector instructions: about a third of the time on the flow-matching sampler's
``(rows, 128)`` batches (``mara_env.benchmarks.perf.wrapper_throughput`` measures what sampling adds to an
epoch).

Accuracy: within 1e-6 of the exact value relative to it, or within 1e-30 of it where the exact
value is tinier still (``x`` below about -80), for every finite float32; tested against a float64
reference over the whole range (``tests/test_silu.py``).

Example:
    >>> import numpy as np
    >>> [round(float(value), 5) for value in silu(np.array([-2.0, 0.0, 3.0], dtype=np.float32))]
    [-0.23841, 0.0, 2.85772]
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: ``exp(-x)`` is formed for ``-x`` clipped to ``[-EXP_LIMIT, EXP_LIMIT]`` (within float32).
EXP_LIMIT = 88.0
_LOG2_E = np.float32(1.4426950408889634)
# ln 2 split so that k * _LN2_HIGH is exact for the k that occur (Cody and Waite)
_LN2_HIGH = np.float32(0.693359375)
_LN2_LOW = np.float32(-2.12194440e-4)
# the minimax polynomial of (exp(r) - 1 - r) / r**2 on |r| <= ln(2) / 2 (Cephes' expf)
_EXP_COEFFICIENTS = tuple(
    np.float32(value)
    for value in (
        1.9875691500e-4,
        1.3981999507e-3,
        8.3334519073e-3,
        4.1665795894e-2,
        1.6666665459e-1,
        5.0000001201e-1,
    )
)


def silu(x: np.ndarray) -> np.ndarray:
    """``x * sigmoid(x)`` of a float32 array, in a new C-contiguous float32 array.

    Meant for finite values (a network's activations): for NaN or infinities the result is
    unspecified.

    Raises:
        TypeError: If ``x`` is not a float32 array.
    """
    _check_float32("silu", x)
    values = np.ascontiguousarray(x)
    out = np.empty(values.shape, np.float32)
    flat = out.reshape(-1)
    _silu_row(values.reshape(-1), flat, np.empty(flat.size, np.int32))
    return out


def add_and_silu(
    hidden: np.ndarray,
    bias: np.ndarray,
    addend: np.ndarray | None = None,
    rows_per_bias: int | None = None,
) -> np.ndarray:
    """Add ``addend`` and ``bias`` to ``hidden`` in place, then return the SiLU of the sum.

    A layer's bias, a residual branch and the next activation in one compiled call:
    ``hidden += addend + bias`` then :func:`silu` of ``hidden``, with the same float32
    arithmetic as those NumPy operations. It runs on every pass of the sampling network, so
    its checks are few and cheap, most of them compiled.

    Args:
        hidden: ``(rows, width)`` C-contiguous float32 array, updated in place.
        bias: ``(n, width)`` C-contiguous float32 array: row ``r // rows_per_bias`` is added to
            row ``r`` of ``hidden`` (one row, with the default ``rows_per_bias``: every row).
        addend: Optional C-contiguous float32 array of ``hidden``'s shape, added first.
        rows_per_bias: Rows of ``hidden`` per row of ``bias`` (default: all of them).

    Returns:
        A new ``(rows, width)`` float32 array.

    Raises:
        TypeError: If an array is not float32, 2-D and C-contiguous.
        ValueError: If the shapes do not fit together.

    Example:
        >>> hidden = np.zeros((2, 3), dtype=np.float32)
        >>> per_task = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
        >>> [[round(float(v), 4) for v in row] for row in add_and_silu(hidden, per_task, rows_per_bias=2)]
        [[0.7311, 1.7616, 2.8577], [0.7311, 1.7616, 2.8577]]
        >>> hidden.tolist()
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    activated = np.empty(hidden.shape, np.float32)
    try:
        _add_and_silu_compiled(
            hidden,
            _NO_ADDEND if addend is None else addend,
            bias,
            len(hidden) if rows_per_bias is None else rows_per_bias,
            activated,
        )
    except TypeError:
        arrays = {"hidden": hidden, "bias": bias, "addend": addend}
        described = ", ".join(
            f"{name} {array.dtype} {array.shape} (C-contiguous: {array.flags.c_contiguous})"
            for name, array in arrays.items()
            if isinstance(array, np.ndarray)
        )
        raise TypeError(
            f"add_and_silu takes 2-D C-contiguous float32 arrays, got {described}; convert "
            "them with np.ascontiguousarray(x, dtype=np.float32)."
        ) from None
    return activated


#: The ``addend`` of :func:`add_and_silu` when there is none.
_NO_ADDEND = np.empty((0, 0), np.float32)


def _check_float32(name: str, x: object) -> None:
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        raise TypeError(
            f"{name} takes a float32 NumPy array, got {getattr(x, 'dtype', type(x).__name__)}; "
            "convert it with np.asarray(x, dtype=np.float32)."
        )


#: Floating-point freedoms the compiler may take: none that reorders arithmetic (the reduction
#: below depends on its order), only those that let it use vector instructions.
_FASTMATH = {"nnan", "ninf", "nsz", "contract"}


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _silu_row(values: np.ndarray, out: np.ndarray, scale_bits: np.ndarray) -> None:
    """Write SiLU of the 1-D float32 ``values`` into ``out`` as ``x / (1 + exp(-x))``, with
    ``-x`` clipped to ``[-EXP_LIMIT, EXP_LIMIT]`` and ``exp(v) = 2**k * exp(r)``, ``k`` the
    integer nearest ``v / ln 2``; the numerator is clipped at ``-EXP_LIMIT`` too, so that the
    far negative side gives (nearly) 0 as it should, not ``x / exp(EXP_LIMIT)``. ``scale_bits``
    is int32 scratch space of the same length. Two passes, each free of calls and branches, so
    that both run on vector instructions."""
    c0, c1, c2, c3, c4, c5 = _EXP_COEFFICIENTS
    one, half, limit = np.float32(1.0), np.float32(0.5), np.float32(EXP_LIMIT)
    for index in range(values.size):
        exponent = min(max(-values[index], -limit), limit)
        k = np.floor(exponent * _LOG2_E + half)
        r = exponent - k * _LN2_HIGH - k * _LN2_LOW
        poly = ((((c0 * r + c1) * r + c2) * r + c3) * r + c4) * r + c5
        out[index] = poly * r * r + r + one  # exp(r)
        # the float32 bits of 2**k (k = -127 gives 0: exp(-88) is below float32's normal range)
        scale_bits[index] = (np.int32(k) + np.int32(127)) << 23
    scale = scale_bits.view(np.float32)
    for index in range(values.size):
        out[index] = max(values[index], -limit) / (one + out[index] * scale[index])


_MATRIX = "float32[:, ::1]"


@njit(
    f"void({_MATRIX}, {_MATRIX}, {_MATRIX}, intp, {_MATRIX})",
    cache=True,
    fastmath=_FASTMATH,
    error_model="numpy",
)
def _add_and_silu_compiled(
    hidden: np.ndarray,
    addend: np.ndarray,
    bias: np.ndarray,
    rows_per_bias: int,
    activated: np.ndarray,
) -> None:
    """:func:`add_and_silu`: the sums row by row, then one SiLU pass over the whole array (an
    ``addend`` with no rows is none)."""
    rows, width = hidden.shape
    with_addend = addend.shape[0] > 0
    if with_addend and (addend.shape[0] != rows or addend.shape[1] != width):
        raise ValueError("add_and_silu: addend must have hidden's shape.")
    if (
        bias.shape[1] != width
        or rows_per_bias < 1
        or (rows > 0 and (rows - 1) // rows_per_bias >= bias.shape[0])
    ):
        raise ValueError(
            "add_and_silu: bias must have hidden's width and a row for every rows_per_bias "
            "rows of hidden."
        )
    for row in range(rows):
        values, shift = hidden[row], bias[row // rows_per_bias]
        if with_addend:
            extra = addend[row]
            for column in range(width):
                values[column] += extra[column] + shift[column]
        else:
            for column in range(width):
                values[column] += shift[column]
    flat = hidden.reshape(-1)
    _silu_row(flat, activated.reshape(-1), np.empty(flat.size, np.int32))
