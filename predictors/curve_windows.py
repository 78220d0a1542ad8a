"""Fixed-size views of a learning curve for learned predictors: context in, future window out.

A task's history is a few (curve step, loss) points at irregular steps. Learned predictors see it
through a fixed-size **context** vector and predict a fixed **future window**: the lowest log-loss
reached within :data:`FUTURE_OFFSETS` curve steps past the last reported point, relative to the
last reported log-loss. Both use only loss *ratios*, so they are invariant to the loss scale (a scheduler
observes losses relative to the loss at arrival only).

Context layout (:data:`CONTEXT_SIZE` values)
    - ``0 .. K-1``: log-loss ``LOOKBACK_OFFSETS[k]`` steps before the last report, minus the last
      log-loss, linearly interpolated between reported points (0 where it lies before step 0);
    - ``K .. 2K-1``: 1 where that look-back point lies before step 0 (unknown), else 0;
    - ``2K``: ln(1 + steps done) / ln(1 + MAX_OFFSET);
    - ``2K + 1``: last log-loss minus the log-loss at arrival;
    - ``2K + 2``: ln(1 + reported points) / ln(1 + MAX_OFFSET);
    - the family one-hot in :data:`mara_env.families.FAMILY_NAMES` order.

Log-loss values are divided by a scale fixed at training time (see
:class:`predictors.flow_matching.FlowMatchingConfig`), so the network sees values of order one.

Example:
    >>> import numpy as np
    >>> steps = np.array([0.0, 10.0, 20.0])
    >>> context = encode_context(steps, np.log([1.0, 0.5, 0.25]), "vision", log_scale=1.0)
    >>> context.shape == (CONTEXT_SIZE,)
    True
    >>> round(float(context[LOOKBACK_OFFSETS.tolist().index(11)]), 4)  # 0.9 ln 0.5 - ln 0.25: step 9, interpolated
    0.7625
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mara_env.families import FAMILY_NAMES
from predictors.base import TaskHistory

#: Largest look-ahead and look-back, in curve steps (the longest shipped curve has 200 points).
MAX_OFFSET = 200
#: Curve steps past the last report at which the future window is predicted (geometric spacing:
#: fine near the present, coarse far ahead).
FUTURE_OFFSETS = np.unique(np.round(np.geomspace(1, MAX_OFFSET, 40)).astype(np.int64))
#: Curve steps before the last report at which the context samples the history.
LOOKBACK_OFFSETS = np.unique(np.round(np.geomspace(1, MAX_OFFSET, 30)).astype(np.int64))
WINDOW_SIZE = len(FUTURE_OFFSETS)
CONTEXT_SIZE = 2 * len(LOOKBACK_OFFSETS) + 3 + len(FAMILY_NAMES)
_LOG_HORIZON = float(np.log1p(MAX_OFFSET))


def family_one_hot(family: str) -> np.ndarray:
    """One-hot of ``family`` over :data:`FAMILY_NAMES` (all zeros for an unknown family)."""
    one_hot = np.zeros(len(FAMILY_NAMES))
    if family in FAMILY_NAMES:
        one_hot[FAMILY_NAMES.index(family)] = 1.0
    return one_hot


def encode_context(
    steps: np.ndarray, log_loss: np.ndarray, family: str, log_scale: float
) -> np.ndarray:
    """The context vector of one history (see the module docstring for the layout).

    Args:
        steps: Curve steps of the reported points, increasing, starting at 0 (arrival).
        log_loss: ln of the reported losses.
        family: The task's family name.
        log_scale: Divisor of every log-loss difference.
    """
    current = steps[-1]
    position = current - LOOKBACK_OFFSETS
    unknown = position < steps[0]
    lookback = np.interp(position, steps, log_loss) - log_loss[-1]
    lookback[unknown] = 0.0
    return np.concatenate(
        [
            lookback / log_scale,
            unknown.astype(np.float64),
            [
                np.log1p(current) / _LOG_HORIZON,
                (log_loss[-1] - log_loss[0]) / log_scale,
                np.log1p(len(steps)) / _LOG_HORIZON,
            ],
            family_one_hot(family),
        ]
    )


def encode_contexts(histories: Sequence[TaskHistory], log_scale: float) -> np.ndarray:
    """``(n_tasks, CONTEXT_SIZE)`` float32 contexts of a batch of histories."""
    rows = [encode_context(h.work, np.log(h.loss), h.family, log_scale) for h in histories]
    return np.array(rows, dtype=np.float32).reshape(len(rows), CONTEXT_SIZE)


def future_window(log_curve: np.ndarray, current: float) -> np.ndarray:
    """True future window of a curve whose last report was at ``current`` curve steps.

    Entry ``j`` is the **lowest** log-loss over the next ``FUTURE_OFFSETS[j]`` steps (the
    running minimum), minus the log-loss now. A task completes the first time its loss reaches
    the target, so the running minimum crosses the target exactly when the task would, even if
    the curve dips between two offsets. The loss at a fractional step ``p`` is the curve's point
    ``floor(p)``, and the last point repeats past the curve's end, as in the simulator.

    Args:
        log_curve: ln of the curve's losses at steps 0, 1, ...
        current: Steps done at the last report.

    Example:
        >>> future_window(np.log([4.0, 1.0, 2.0, 0.5]), 0.0)[:4].round(3).tolist()
        [-1.386, -1.386, -2.079, -2.079]
    """
    last = len(log_curve) - 1
    start = min(int(current), last)
    best_so_far = np.minimum.accumulate(log_curve[start:])
    ahead = np.minimum((current + FUTURE_OFFSETS).astype(np.int64) - start, len(best_so_far) - 1)
    return best_so_far[ahead] - log_curve[start]


def steps_to_cross(window: np.ndarray, log_gap: np.ndarray) -> np.ndarray:
    """Curve steps until each window first falls to ``-log_gap`` (``inf`` if it never does).

    Linear interpolation between the window's offsets (and from 0 at offset 0).

    Args:
        window: ``(n, WINDOW_SIZE)`` future log-losses relative to the present.
        log_gap: ``(n,)`` ln(current loss / target); <= 0 means the target is already reached.

    Example:
        >>> window = -np.log1p(FUTURE_OFFSETS.astype(float))[None, :] * 0.5
        >>> round(float(steps_to_cross(window, np.array([0.5 * np.log(11.0)]))[0]), 6)
        10.0
    """
    level = -log_gap[:, None]
    values = np.concatenate([np.zeros((len(window), 1)), window], axis=1)
    offsets = np.concatenate([[0.0], FUTURE_OFFSETS.astype(np.float64)])
    below = values <= level
    below[:, 0] = log_gap <= 0
    crossed = below.any(axis=1)
    first = np.argmax(below, axis=1)
    previous = np.maximum(first - 1, 0)
    rows = np.arange(len(window))
    high, low = values[rows, previous], values[rows, first]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(high > low, (high - level[:, 0]) / (high - low), 1.0)
    steps = offsets[previous] + np.clip(share, 0.0, 1.0) * (offsets[first] - offsets[previous])
    steps[first == 0] = 0.0
    return np.where(crossed, steps, np.inf)
