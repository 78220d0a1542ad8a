"""Realism statistics of a set of loss curves (reported in the data card).

* **non-monotone share**: share of curves that rebound, i.e. some point's loss exceeds the lowest
  loss seen before it by more than :data:`REBOUND` (10%). Plain minibatch noise rarely does;
  RL returns and unstable optimisers do.
* **power-law predictability**: share of curves whose final loss is predicted within 10% by a
  power law ``ln loss = a + b ln work`` fitted by least squares to the first 30% of the work axis
  and extrapolated to the final work. Low values mean plateaus, rebounds or late drops that a
  simple extrapolator misses: what makes prediction (and scheduling) hard.
* **final-loss spread**: the 10/50/90% quantiles of final loss / initial loss.

Example:
    >>> import numpy as np
    >>> work = np.arange(1.0, 101.0)
    >>> stats = realism_statistics([(2.0 * work**-0.5, work)])
    >>> stats["non_monotone_share"], stats["power_law_within_10pct_share"]
    (0.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

REBOUND = 0.10
FIT_FRACTION = 0.30
TOLERANCE = 0.10


def rebounds(losses: np.ndarray) -> bool:
    """Whether some loss exceeds the best earlier loss by more than :data:`REBOUND`."""
    best_before = np.minimum.accumulate(losses)[:-1]
    return bool(np.any(losses[1:] > (1.0 + REBOUND) * best_before))


def power_law_final_error(losses: np.ndarray, work: np.ndarray) -> float:
    """Relative error of the final loss predicted from the first 30% of the work axis."""
    cutoff = work[0] + FIT_FRACTION * (work[-1] - work[0])
    head = (work <= cutoff) & (work > 0)
    if head.sum() < 3:
        head[np.flatnonzero(work > 0)[:3]] = True
    slope, intercept = np.polyfit(np.log(work[head]), np.log(losses[head]), deg=1)
    predicted = float(np.exp(intercept + slope * np.log(work[-1])))
    return abs(predicted / float(losses[-1]) - 1.0)


def realism_statistics(curves: Sequence[tuple[np.ndarray, np.ndarray]]) -> dict[str, float]:
    """The statistics above for ``(losses, work)`` pairs (increasing work; points at work 0 are
    left out of the power-law fit)."""
    ratios = np.array([losses[-1] / losses[0] for losses, _ in curves])
    return {
        "curves": float(len(curves)),
        "non_monotone_share": float(np.mean([rebounds(losses) for losses, _ in curves])),
        "power_law_within_10pct_share": float(
            np.mean([power_law_final_error(losses, work) <= TOLERANCE for losses, work in curves])
        ),
        "final_over_initial_q10": float(np.quantile(ratios, 0.1)),
        "final_over_initial_q50": float(np.quantile(ratios, 0.5)),
        "final_over_initial_q90": float(np.quantile(ratios, 0.9)),
    }
