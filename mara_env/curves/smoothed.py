"""Curves as practitioners judge convergence: each recorded run's loss smoothed by an exponential
moving average (EMA), the smoothing TensorBoard's slider applies.

:class:`SmoothedTraceSource` wraps any trace source and serves its curves smoothed, point by point
along the work grid: ``s[0] = loss[0]`` and ``s[t] = weight * s[t-1] + (1 - weight) * loss[t]``,
over each curve's recorded points only (the padding repeats the last smoothed value). Everything
the world takes from a curve then comes from the smoothed one: the loss a task reports each epoch,
its target (drawn on the smoothed curve, a hopeless one below its smoothed minimum) and the first
step at or below it that completes the task. A task is judged on the trend of its run, not on the
noisy dip of one step, and the scheduler sees what it is judged on.

It is a world option beside the registered worlds, off by default (a ``weight`` of 0 serves the
curves unchanged): pass it as ``trace_source`` to any env form or simulator, e.g.
``gym.make("mara_env/Cluster-v3", trace_source=SmoothedTraceSource(default_trace_source(), 0.9))``.
The information ladder and the leak audit play it as the world ``v3-smoothed``
(:mod:`mara_env.benchmarks.prediction.audit_worlds`).

Example:
    >>> import numpy as np
    >>> from mara_env.curves.traces import CurvePool
    >>> smoothed_losses(np.array([[4.0, 2.0, 3.0, 3.0]]), np.array([3]), 0.5).tolist()
    [[4.0, 3.0, 3.0, 3.0]]
    >>> from mara_env.curves.synthetic import SyntheticTraceSource
    >>> raw = SyntheticTraceSource(n_curves=20, length=50)
    >>> pool = SmoothedTraceSource(raw, 0.9).pool("synthetic", "train")
    >>> pool.lengths.tolist() == raw.pool("synthetic", "train").lengths.tolist()
    True
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from mara_env.curves.traces import CurvePool, TraceSource
from mara_env.errors import TraceError


def smoothed_losses(losses: np.ndarray, lengths: np.ndarray, weight: float) -> np.ndarray:
    """The EMA of each row of ``losses`` over its first ``lengths[i]`` points, each later point
    the last smoothed value.

    Args:
        losses: ``(n, width)`` losses, one curve per row.
        lengths: ``(n,)`` recorded points of each curve (1 to ``width``).
        weight: The weight of the previous smoothed value, in ``[0, 1)``; 0 returns the losses.

    Returns:
        A new ``(n, width)`` float64 array.
    """
    smoothed = np.array(losses, dtype=np.float64, copy=True)
    for step in range(1, smoothed.shape[1]):
        recorded = step < lengths
        smoothed[recorded, step] = (
            weight * smoothed[recorded, step - 1] + (1.0 - weight) * smoothed[recorded, step]
        )
        smoothed[~recorded, step] = smoothed[~recorded, step - 1]
    return smoothed


class SmoothedTraceSource:
    """The curves of ``source``, each smoothed by an EMA of weight ``weight``
    (:func:`smoothed_losses`).

    Args:
        source: Any trace source (families, ``pool(family, split)``, fingerprint).
        weight: The EMA's weight on the previous smoothed point, in ``[0, 1)``: 0.9 averages
            over about the last ten recorded points; 0 serves the curves unchanged.

    Raises:
        TraceError: For a weight outside ``[0, 1)`` or not a number, or a source that is not a
            trace source.
    """

    def __init__(self, source: TraceSource, weight: float) -> None:
        if not isinstance(source, TraceSource):
            raise TraceError(
                "SmoothedTraceSource: source must be a trace source (families, pool(family, "
                f"split), fingerprint), got {type(source).__name__}. Pass e.g. "
                "mara_env.default_trace_source()."
            )
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or not 0.0 <= weight < 1.0
        ):
            raise TraceError(
                f"SmoothedTraceSource: weight must be a number in [0, 1), got {weight!r}. "
                "0.9 averages over about the last ten recorded points; 0 smooths nothing."
            )
        self.source = source
        self.weight = float(weight)
        self._pools: dict[tuple[str, str], CurvePool] = {}

    def __repr__(self) -> str:
        return f"SmoothedTraceSource({self.source!r}, weight={self.weight})"

    @property
    def families(self) -> tuple[str, ...]:
        return self.source.families

    @property
    def fingerprint(self) -> str:
        joined = f"ema{self.weight!r}:{self.source.fingerprint}"
        return hashlib.sha256(joined.encode()).hexdigest()[:16]

    def pool(self, family: str, split: str) -> CurvePool:
        key = (family, split)
        if key not in self._pools:
            raw = self.source.pool(family, split)
            self._pools[key] = CurvePool(
                family,
                smoothed_losses(raw.losses, raw.lengths, self.weight),
                raw.lengths,
                raw.curve_ids,
                raw.work,
            )
        return self._pools[key]
