"""Synthetic learning curves: a power law and Domhan et al. (2015) parametric families with noise.

Each curve is ``floor + scale * shape(t)`` for a decreasing shape drawn from :data:`SHAPES`
(``t`` = 1, 2, ... curve steps), multiplied by log-normal noise that is correlated over time
(AR(1)), with occasional loss spikes. All randomness comes from one seeded generator, so the pool
and its train/test split are the same on every machine.

Example:
    >>> source = SyntheticTraceSource(n_curves=50, length=120)
    >>> pool = source.pool("synthetic", "train")
    >>> pool.n_curves, pool.losses.shape[1]
    (40, 120)
    >>> bool((pool.losses > 0).all())
    True
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cached_property

import numpy as np

from mara_env.curves.traces import CurvePool, check_split
from mara_env.errors import TraceError

ShapeFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def _pow3(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    exponent = rng.uniform(0.3, 1.2)
    return t ** (-exponent)


def _pow4(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    a, b, exponent = rng.uniform(0.02, 0.3), rng.uniform(0.5, 2.0), rng.uniform(0.4, 1.5)
    return ((a * t + b) / (a + b)) ** (-exponent)


def _log_power(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    scale, exponent = rng.uniform(2.0, 40.0), rng.uniform(0.8, 3.0)
    return 1.0 / (1.0 + (t / scale) ** exponent)


def _exp3(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.exp(-rng.uniform(0.005, 0.06) * (t - 1))


def _janoschek(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    rate, power = rng.uniform(0.002, 0.05), rng.uniform(0.6, 1.4)
    return np.exp(-rate * (t - 1) ** power)


def _mmf(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    kappa, delta = rng.uniform(0.01, 0.2), rng.uniform(0.8, 2.5)
    return 1.0 / (1.0 + (kappa * (t - 1)) ** delta)


def _ilog2(t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    shift = rng.uniform(0.5, 3.0)
    return np.log(1.0 + shift) / np.log(t + shift)


#: The parametric shapes, each decreasing from 1 at t = 1.
SHAPES: dict[str, ShapeFn] = {
    "pow3": _pow3,
    "pow4": _pow4,
    "log_power": _log_power,
    "exp3": _exp3,
    "janoschek": _janoschek,
    "mmf": _mmf,
    "ilog2": _ilog2,
}


def synthetic_curve(length: int, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """Draw one noisy synthetic loss curve of ``length`` points and return it with its shape."""
    shape_name = list(SHAPES)[int(rng.integers(len(SHAPES)))]
    t = np.arange(1, length + 1, dtype=np.float64)
    initial = rng.uniform(0.5, 3.0)
    floor = initial * rng.uniform(0.005, 0.4)
    clean = floor + (initial - floor) * SHAPES[shape_name](t, rng)
    sigma = rng.uniform(0.005, 0.06)
    innovations = rng.normal(0.0, sigma, size=length)
    noise = np.empty(length)
    noise[0] = innovations[0]
    for step in range(1, length):
        noise[step] = 0.6 * noise[step - 1] + innovations[step]
    spikes = rng.random(length) < 0.01
    noise[spikes] += rng.uniform(0.1, 0.5, size=int(spikes.sum()))
    return clean * np.exp(noise), shape_name


class SyntheticTraceSource:
    """A trace source of synthetic curves (family ``"synthetic"``) from a fixed seed.

    Args:
        n_curves: Number of curves in the pool (both splits).
        length: Points per curve.
        test_share: Share of curves held out as the test split.
        seed: Seed of the generator that draws the pool and the split.
    """

    families: tuple[str, ...] = ("synthetic",)

    def __init__(
        self, n_curves: int = 600, length: int = 200, test_share: float = 0.2, seed: int = 0
    ) -> None:
        if n_curves < 2 or length < 2:
            raise TraceError(
                f"SyntheticTraceSource needs n_curves >= 2 and length >= 2, got "
                f"{n_curves} and {length}."
            )
        if not 0.0 < test_share < 1.0:
            raise TraceError(
                f"SyntheticTraceSource.test_share must be in (0, 1), got {test_share}."
            )
        self.n_curves, self.length, self.test_share, self.seed = n_curves, length, test_share, seed

    def __repr__(self) -> str:
        return (
            f"SyntheticTraceSource(n_curves={self.n_curves}, length={self.length}, "
            f"test_share={self.test_share}, seed={self.seed})"
        )

    def __getstate__(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in ("n_curves", "length", "test_share", "seed")}

    def __setstate__(self, state: dict[str, int | float]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    @cached_property
    def _pools(self) -> dict[str, CurvePool]:
        rng = np.random.default_rng(self.seed)
        curves = [synthetic_curve(self.length, rng)[0] for _ in range(self.n_curves)]
        n_test = max(1, min(self.n_curves - 1, round(self.test_share * self.n_curves)))
        is_test = np.zeros(self.n_curves, dtype=bool)
        is_test[rng.permutation(self.n_curves)[:n_test]] = True
        ids = np.arange(self.n_curves)
        return {
            split: CurvePool.from_curves(
                "synthetic", [curves[i] for i in ids[mask]], curve_ids=ids[mask]
            )
            for split, mask in (("train", ~is_test), ("test", is_test))
        }

    @property
    def fingerprint(self) -> str:
        text = repr(self).encode()
        return hashlib.sha256(text).hexdigest()[:16]

    def pool(self, family: str, split: str) -> CurvePool:
        check_split(split)
        if family != "synthetic":
            raise TraceError(
                f"SyntheticTraceSource provides only the 'synthetic' family, not {family!r}."
            )
        return self._pools[split]
