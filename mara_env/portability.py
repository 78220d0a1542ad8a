"""What mara-env promises across machines, and the comparison that checks it.

NumPy's vectorised ``exp``, ``log`` and ``pow``, ``np.geomspace`` and its reductions, Numba's
``**`` (the C library's ``pow``) and torch's kernels may round differently in the last bit on
another CPU instruction set (AVX2, AVX-512) or another NumPy version. So the promise has four
parts:

* **integer outcomes** (completions, expiries, arrivals, actions, masks, statuses, ids) are equal
  on every machine in the declared range;
* **floats of the simulation and the closed-form predictors** (losses, progress, rewards,
  rates, the ``wls`` and ``dkf`` predictions) agree within :data:`MAX_ULPS` units in the last
  place, relative to the larger of the two values;
* **floats of the learned predictors** (``flow_matching``, ``spline_flow``: float32 torch
  networks, whose kernels differ more between instruction sets) agree to about ``1e-6``
  relative, not within :data:`MAX_ULPS` ulps; so do the scores computed from their samples;
* **bit for bit** only on one machine: the same seed plays the same episode, exactly.

:func:`differences` compares two results (scalars, arrays, lists, dicts, dataclasses) by that
rule: two implementations of one rule in the tests, and a replayed leaderboard episode against
the one recorded elsewhere in ``mara-leaderboard --validate``.

Example:
    >>> import numpy as np
    >>> one_ulp = np.nextafter(0.1, 1.0)
    >>> differences({"completed": 3, "loss": 0.1}, {"completed": 3, "loss": float(one_ulp)})
    []
    >>> differences({"completed": 3, "loss": 0.1}, {"completed": 4, "loss": 0.2})
    ["['completed']: 3 != 4", "['loss']: 0.1 != 0.2 (3.6e+15 ulps apart)"]
    >>> int(ulps_apart(0.1, one_ulp))
    1
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Floats computed by two implementations of one rule, or by the same code on two machines,
#: agree within this many units in the last place (of the larger magnitude). One rounding step
#: of a transcendental function differs by one ulp; an episode's sums and interpolations carry a
#: few such differences forward.
MAX_ULPS = 64


def ulps_apart(a: Any, b: Any, scale: float = 0.0) -> np.ndarray:
    """Distance between ``a`` and ``b`` in units in the last place of the larger of their
    magnitudes and ``scale``, in their own precision (float32 ulps for two float32 arrays).

    A value computed as the difference of two larger ones (a shaping reward, the work left)
    carries the rounding of its operands: give their magnitude as ``scale`` to count its
    distance in their ulps.

    Equal values (infinities of one sign included) and two NaNs are 0 apart; a NaN against a
    number, or infinities of opposite sign, are infinitely far apart.

    Example:
        >>> float(ulps_apart(1.0, 1.0 + 2 * np.finfo(float).eps))
        2.0
        >>> float(ulps_apart(1e-3, 1e-3 + np.finfo(float).eps)), float(ulps_apart(1e-3, 1e-3 + np.finfo(float).eps, scale=1.0))
        (1024.0, 1.0)
        >>> float(ulps_apart(float("nan"), float("nan"))), float(ulps_apart(float("nan"), 0.0))
        (0.0, inf)
        >>> float(ulps_apart(np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2.0))))
        1.0
    """
    a, b = np.asarray(a), np.asarray(b)
    both_float = a.dtype.kind == "f" and b.dtype.kind == "f"
    dtype = np.result_type(a, b) if both_float else np.float64
    a, b, floor = a.astype(dtype), b.astype(dtype), np.asarray(scale, dtype=dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        spacing = np.spacing(np.maximum(np.maximum(np.abs(a), np.abs(b)), floor))
        distance = np.abs(a - b) / spacing
    distance = np.where(a == b, 0.0, distance)
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    distance = np.where(both_nan, 0.0, np.where(one_nan | np.isnan(distance), np.inf, distance))
    return np.asarray(distance)


#: The kinds of values compared exactly; an ``int`` equals only an ``int`` (of any width).
_EXACT_KINDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("bool", (bool, np.bool_)),
    ("int", (int, np.integer)),
    ("str", (str,)),
    ("bytes", (bytes,)),
    ("None", (type(None),)),
)


def _is_float(value: Any) -> bool:
    return isinstance(value, (float, np.floating))


def _exact_kind(value: Any) -> str | None:
    """The kind of a value compared exactly (``bool`` before ``int``: a bool is an int)."""
    return next((kind for kind, types in _EXACT_KINDS if isinstance(value, types)), None)


def differences(
    actual: Any, expected: Any, *, max_ulps: float = MAX_ULPS, scale: float = 0.0, where: str = ""
) -> list[str]:
    """Every place where ``actual`` and ``expected`` differ by the portability rule.

    Integers, booleans, strings and ``None`` must be equal and of the same kind (an ``int`` is
    not a ``float``); floats within ``max_ulps`` (:func:`ulps_apart`); arrays must have one shape
    and one kind of dtype, then are compared element by element the same way; lists, tuples,
    dicts and dataclass instances entry by entry.

    Args:
        actual: What was computed now (or by one implementation).
        expected: What it is compared with.
        max_ulps: The float tolerance, in units in the last place.
        scale: Floats are ``max_ulps`` apart at most in ulps of their magnitude or of ``scale``,
            whichever is larger (:func:`ulps_apart`).
        where: A prefix naming the place, for the descriptions.

    Returns:
        One line per difference (the path, both values and, for floats, how far apart); empty
        when they agree.
    """
    if dataclasses.is_dataclass(actual) and not isinstance(actual, type):
        if type(actual) is not type(expected):
            return [f"{where}: {type(actual).__name__} != {type(expected).__name__}"]
        actual = {f.name: getattr(actual, f.name) for f in dataclasses.fields(actual)}
        expected = {f.name: getattr(expected, f.name) for f in dataclasses.fields(expected)}
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            return [f"{where}: keys {sorted(map(str, actual))} != {sorted(map(str, expected))}"]
        found: list[str] = []
        for key in actual:
            found += differences(
                actual[key],
                expected[key],
                max_ulps=max_ulps,
                scale=scale,
                where=f"{where}[{key!r}]",
            )
        return found
    if isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray):
        return _array_differences(np.asarray(actual), np.asarray(expected), max_ulps, scale, where)
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            return [f"{where}: {len(actual)} entries != {len(expected)}"]
        found = []
        for index, (a, b) in enumerate(zip(actual, expected, strict=True)):
            found += differences(a, b, max_ulps=max_ulps, scale=scale, where=f"{where}[{index}]")
        return found
    if _is_float(actual) and _is_float(expected):
        apart = float(ulps_apart(actual, expected, scale))
        if apart <= max_ulps:
            return []
        return [f"{where}: {actual!r} != {expected!r} ({apart:.2g} ulps apart)"]
    kind = _exact_kind(actual)
    if kind is not None and kind == _exact_kind(expected):
        return [] if actual == expected else [f"{where}: {actual!r} != {expected!r}"]
    return [f"{where}: {actual!r} != {expected!r} (values of another kind)"]


def _array_differences(
    actual: np.ndarray, expected: np.ndarray, max_ulps: float, scale: float, where: str
) -> list[str]:
    if actual.shape != expected.shape:
        return [f"{where}: shape {actual.shape} != {expected.shape}"]
    floats = actual.dtype.kind == "f", expected.dtype.kind == "f"
    if floats[0] != floats[1]:
        return [f"{where}: dtype {actual.dtype} != {expected.dtype}"]
    if floats[0]:
        apart = ulps_apart(actual, expected, scale)
        bad = np.flatnonzero(apart > max_ulps)
    else:
        bad = np.flatnonzero(actual.ravel() != expected.ravel())
    if bad.size == 0:
        return []
    first = int(bad[0])
    index = np.unravel_index(first, actual.shape) if actual.ndim else ()
    detail = f" ({float(apart.ravel()[first]):.2g} ulps apart)" if floats[0] else ""
    return [
        f"{where}: {bad.size} of {actual.size} entries differ; first at {tuple(map(int, index))}: "
        f"{actual.ravel()[first]!r} != {expected.ravel()[first]!r}{detail}"
    ]
