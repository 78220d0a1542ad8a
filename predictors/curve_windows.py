"""Fixed-size views of a learning curve for learned predictors: context in, future window out.

A task's history is a few (work, loss) points at irregular work. Learned predictors see it
through a fixed-size **context** vector and predict a fixed **future window**: the lowest
log-loss reached within each of :data:`FUTURE_EPOCHS` past the last report, relative to the last
reported log-loss. Both use only loss *ratios*, so they are invariant to the loss scale (a
scheduler observes losses relative to the loss at arrival only).

**Work is measured in node-epochs**: a history's work divided by its ``speed`` (the work one
node does in one epoch, which a scheduler knows), so nothing depends on a curve's sampling rate:
the same curve recorded at twice the resolution, with twice the speed and twice the step budget,
has the same context and the same window, and its remaining work in curve steps is simply twice
as large (``tests/test_flow_matching.py`` checks it). A job's **step budget**
(:attr:`mara_env.predictors.base.TaskHistory.budget`, the work after which its loss stops changing) is
an explicit input: when known it enters in node-epochs, when unknown (``inf``) a flag says so
and the model predicts without it.

Context layout (:data:`CONTEXT_SIZE` values)
    - ``0 .. K-1``: log-loss ``LOOKBACK_EPOCHS[k]`` node-epochs before the last report, minus the
      last log-loss, linearly interpolated between reported points (0 where it lies before
      arrival);
    - ``K .. 2K-1``: 1 where that look-back point lies before arrival (unknown), else 0;
    - ``2K``: ln(1 + node-epochs done) / ln(1 + MAX_EPOCHS);
    - ``2K + 1``: last log-loss minus the log-loss at arrival;
    - ``2K + 2``: ln(1 + reported points) / ln(1 + MAX_EPOCHS);
    - ``2K + 3``: 1 if the step budget is known, else 0;
    - ``2K + 4``: ln(1 + budget in node-epochs) / ln(1 + MAX_EPOCHS) (0 if unknown);
    - ``2K + 5``: share of the budget done, at most :data:`MAX_BUDGET_SHARE` (0 if unknown);
    - the family one-hot in :data:`mara_env.curves.families.FAMILY_NAMES` order (all zeros for a family
      the model does not know);
    - for a model that **reads the target** (:data:`TARGET_FEATURES` more values, see
      :func:`context_size`): ln(last loss / target), divided by the scale, at most
      :data:`MAX_TARGET_GAP`.

**Why the target is an input.** In the simulator (and the prediction benchmark) a task's target is
drawn from its own curve: the loss the curve reports at a random point
(:func:`mara_env.sim.rules.draw_task_terms`), and only a small share of targets are moved below
anything the curve reaches. So a target far below the current loss says that this curve will fall
far; a model blind to it predicts "never" for many reachable targets. A model that reads the
target is trained on tasks whose targets are drawn by that rule (:mod:`mara_env.predictors.training`), so
it answers for tasks set the simulator's way; a target chosen another way (a fixed loss a user
wants) is read as if it had been drawn from the curve.

Log-loss values are divided by a scale fixed at training time (see
:class:`mara_env.predictors.flow_matching.FlowMatchingConfig`), so the network sees values of order one.

Example:
    >>> import numpy as np
    >>> epochs = np.array([0.0, 1.0, 2.0])
    >>> context = encode_context(epochs, np.log([1.0, 0.5, 0.25]), "vision", log_scale=1.0)
    >>> context.shape == (CONTEXT_SIZE,)
    True
    >>> round(float(context[0]), 4)  # half a node-epoch back: halfway between ln 0.5 and ln 0.25
    0.3466
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence

import numpy as np
from numba import njit

from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.base import TaskHistory
from mara_env.sim import rules

#: Largest look-ahead and look-back, in node-epochs (four times the longest default job).
MAX_EPOCHS = 160.0
#: Node-epochs past the last report at which the future window is predicted (geometric spacing:
#: fine near the present, coarse far ahead).
FUTURE_EPOCHS = np.geomspace(0.25, MAX_EPOCHS, 36)
#: Node-epochs before the last report at which the context samples the history.
LOOKBACK_EPOCHS = np.geomspace(0.5, MAX_EPOCHS, 24)
WINDOW_SIZE = len(FUTURE_EPOCHS)
#: The largest share of its step budget a context reports as done.
MAX_BUDGET_SHARE = 2.0
CONTEXT_SIZE = 2 * len(LOOKBACK_EPOCHS) + 6 + len(FAMILY_NAMES)
_LOG_HORIZON = float(np.log1p(MAX_EPOCHS))
#: Node-epochs of the window's entries with the present (0, where the window starts) in front.
WINDOW_OFFSETS = np.concatenate([[0.0], FUTURE_EPOCHS])
#: Context values a model that reads the target has beyond :data:`CONTEXT_SIZE`.
TARGET_FEATURES = 1
#: The largest log-loss gap to the target (in units of the scale) a context reports.
MAX_TARGET_GAP = 8.0


def context_size(reads_target: bool) -> int:
    """Values in the context of a model that does or does not read the target.

    Example:
        >>> context_size(False), context_size(True)
        (58, 59)
    """
    return CONTEXT_SIZE + (TARGET_FEATURES if reads_target else 0)


@njit(cache=True)
def target_gap(last_log_loss: float, log_target: float, log_scale: float) -> float:
    """The target entry of a context: ln(last loss / target) / scale, at most
    :data:`MAX_TARGET_GAP`.

    Example:
        >>> round(target_gap(0.0, np.log(0.5), 1.0), 4), target_gap(0.0, np.log(1e-9), 1.0)
        (0.6931, 8.0)
    """
    return min((last_log_loss - log_target) / log_scale, MAX_TARGET_GAP)


def encode_context(
    epochs: np.ndarray,
    log_loss: np.ndarray,
    family: str,
    log_scale: float,
    known_families: Collection[str] = FAMILY_NAMES,
    budget_epochs: float = np.inf,
    log_target: float | None = None,
) -> np.ndarray:
    """The context vector of one history (see the module docstring for the layout).

    Args:
        epochs: Node-epochs of work at the reported points (work / speed), increasing, starting
            at 0 (arrival).
        log_loss: ln of the reported losses.
        family: The task's family name.
        log_scale: Divisor of every log-loss difference.
        known_families: Families whose one-hot is set; others read as unknown.
        budget_epochs: The job's step budget in node-epochs (budget / speed); ``inf`` if
            unknown.
        log_target: ln of the target, for a model that reads it (``None``: the context
            without it).
    """
    rows = encode_rows(
        [epochs], [log_loss], [family], log_scale, known_families, np.array([budget_epochs])
    )
    context = rows[0].astype(np.float64)
    if log_target is None:
        return context
    gap = target_gap(float(log_loss[-1]), float(log_target), float(log_scale))
    return np.concatenate([context, [gap]])


def encode_rows(
    epochs: Sequence[np.ndarray],
    log_losses: Sequence[np.ndarray],
    families: Sequence[str],
    log_scale: float,
    known_families: Collection[str],
    budget_epochs: np.ndarray,
) -> np.ndarray:
    """``(n, CONTEXT_SIZE)`` float32 contexts of ``n`` histories, computed in one pass (see
    :func:`_encode_flat`)."""
    lengths = np.fromiter((len(e) for e in epochs), dtype=np.intp, count=len(epochs))
    flat_epochs = np.concatenate(epochs) if len(epochs) else np.zeros(0)
    flat_loss = np.concatenate(log_losses) if len(epochs) else np.zeros(0)
    positions = _family_positions(tuple(known_families))
    family_index = np.array([positions.get(family, -1) for family in families], dtype=np.intp)
    out = np.zeros((len(lengths), CONTEXT_SIZE), dtype=np.float32)
    _encode_flat(flat_epochs, flat_loss, lengths, family_index, log_scale, budget_epochs, out)
    return out


def encode_contexts(
    histories: Sequence[TaskHistory],
    log_scale: float,
    known_families: Collection[str] = FAMILY_NAMES,
    reads_target: bool = False,
) -> np.ndarray:
    """``(n_tasks, context_size(reads_target))`` float32 contexts of a batch of histories.

    One pass in Python gathers each history's arrays and numbers (an epoch's batch is a few
    histories, so the calls, not the arithmetic, are what costs); one compiled call does the
    rest (:func:`_encode_histories`).
    """
    n = len(histories)
    out = np.zeros((n, context_size(reads_target)), dtype=np.float32)
    if n == 0:
        return out
    positions = _family_positions(tuple(known_families))
    works, losses, numbers = [], [], []
    for history in histories:
        works.append(history.work)
        losses.append(history.loss)
        numbers.append(
            (history.speed, history.budget, history.target, positions.get(history.family, -1))
        )
    _encode_histories(
        np.concatenate(works),
        np.concatenate(losses),
        np.fromiter(map(len, works), np.intp, n),
        np.array(numbers),
        float(log_scale),
        reads_target,
        out,
    )
    return out


@njit(cache=True)
def _encode_histories(
    flat_work: np.ndarray,
    flat_loss: np.ndarray,
    lengths: np.ndarray,
    numbers: np.ndarray,
    log_scale: float,
    reads_target: bool,
    out: np.ndarray,
) -> None:
    """Write into ``out`` (zeros on entry) the contexts of histories given as their
    concatenated work and losses, their lengths and ``(n, 4)`` numbers: speed, budget, target
    and the family's one-hot position (-1: unknown). Node-epochs are work / speed, log-losses
    ``ln`` of the losses, as NumPy computes them (the same operations, so the same bits)."""
    n = lengths.size
    if n and (np.min(lengths) < 1 or np.sum(lengths) != flat_work.size):
        raise ValueError("contexts need at least one point per history.")
    flat_epochs = np.empty(flat_work.size)
    flat_log_loss = np.log(flat_loss)
    budget_epochs = np.empty(n)
    family_index = np.empty(n, np.intp)
    start = 0
    for row in range(n):
        speed = numbers[row, 0]
        end = start + lengths[row]
        for index in range(start, end):
            flat_epochs[index] = flat_work[index] / speed
        budget_epochs[row] = numbers[row, 1] / speed
        family_index[row] = np.intp(numbers[row, 3])
        if reads_target:
            log_target = np.log(numbers[row, 2])
            out[row, CONTEXT_SIZE] = target_gap(flat_log_loss[end - 1], log_target, log_scale)
        start = end
    _encode_compiled(
        flat_epochs, flat_log_loss, lengths, budget_epochs, family_index, log_scale, out
    )


@functools.cache
def _family_positions(known_families: tuple[str, ...]) -> dict[str, int]:
    """Each known family's one-hot position (families absent read as unknown, -1)."""
    return {
        family: FAMILY_NAMES.index(family) for family in known_families if family in FAMILY_NAMES
    }


def _encode_flat(
    flat_epochs: np.ndarray,
    flat_loss: np.ndarray,
    lengths: np.ndarray,
    family_index: np.ndarray,
    log_scale: float,
    budget_epochs: np.ndarray,
    out: np.ndarray,
) -> None:
    """Write into the first :data:`CONTEXT_SIZE` columns of ``out`` (zeros on entry) the
    contexts of histories given as their concatenated node-epochs and log-losses, their lengths
    and their families' one-hot positions (:func:`_family_positions`; :func:`_encode_compiled`
    computes them).

    Raises:
        ValueError: If a history has no points, or the lengths do not add up to the points.
    """
    if (len(lengths) and np.min(lengths) < 1) or np.sum(lengths) != len(flat_epochs):
        raise ValueError(
            "contexts need at least one point per history, and the histories' lengths must add "
            f"up to the points given ({int(np.sum(lengths))} against {len(flat_epochs)})."
        )
    _encode_compiled(
        np.asarray(flat_epochs, dtype=np.float64),
        np.asarray(flat_loss, dtype=np.float64),
        np.asarray(lengths, dtype=np.intp),
        np.asarray(budget_epochs, dtype=np.float64),
        family_index,
        float(log_scale),
        out,
    )


@njit(cache=True)
def _encode_compiled(
    flat_epochs: np.ndarray,
    flat_loss: np.ndarray,
    lengths: np.ndarray,
    budget_epochs: np.ndarray,
    family_index: np.ndarray,
    log_scale: float,
    out: np.ndarray,
) -> None:
    """Write the context of each history into its row of ``out`` (zeros on entry).

    The look-back points of a history are visited from the nearest to the farthest, so one
    pointer walking back through its reports finds each one's bracketing pair. Each history's
    node-epochs are shifted past the previous history's, as the array code this loop replaced
    did to search all histories at once, and every value is computed with that code's
    floating-point operations in its order, so the contexts did not change
    (``tests/test_flow_matching.py`` holds them to a one-history-at-a-time ``np.interp``
    reference).
    """
    k = LOOKBACK_EPOCHS.size
    passed = 0.0  # the shifted end of the histories before this one
    start = 0
    for row in range(lengths.size):
        end = start + lengths[row]
        first, current = flat_epochs[start], flat_epochs[end - 1]
        last_loss = flat_loss[end - 1]
        shift = passed - first
        passed += current - first + 1.0
        right = end  # reports at or before the look-back point: those before ``right``
        for column in range(k):
            position = current - LOOKBACK_EPOCHS[column]
            if position < first:
                out[row, k + column] = 1.0  # before arrival: unknown, log-loss left at 0
                continue
            target = position + shift
            while right > start and flat_epochs[right - 1] + shift > target:
                right -= 1
            high = min(right, end - 1)
            low = max(high - 1, start)
            x0, x1 = flat_epochs[low] + shift, flat_epochs[high] + shift
            share = (target - x0) / (x1 - x0) if x1 > x0 else 1.0
            share = min(max(share, 0.0), 1.0)
            lookback = flat_loss[low] * (1.0 - share) + flat_loss[high] * share - last_loss
            out[row, column] = lookback / log_scale
        out[row, 2 * k] = np.log1p(current) / _LOG_HORIZON
        out[row, 2 * k + 1] = (last_loss - flat_loss[start]) / log_scale
        out[row, 2 * k + 2] = np.log1p(float(lengths[row])) / _LOG_HORIZON
        budget = budget_epochs[row]
        if np.isfinite(budget):
            out[row, 2 * k + 3] = 1.0
            out[row, 2 * k + 4] = np.log1p(budget) / _LOG_HORIZON
            out[row, 2 * k + 5] = min(current / budget, MAX_BUDGET_SHARE)
        if family_index[row] >= 0:
            out[row, 2 * k + 6 + family_index[row]] = 1.0
        start = end


def future_window(log_curve: np.ndarray, current: float, speed: float) -> np.ndarray:
    """True future window of a curve whose last report was at ``current`` curve steps.

    Entry ``j`` is the **lowest** log-loss over the next ``FUTURE_EPOCHS[j] * speed`` curve
    steps (the running minimum), minus the log-loss now. A task completes the first time its
    loss reaches the target, so the running minimum crosses the target exactly when the task
    would, even if the curve dips between two offsets. The running minimum at a progress is read
    by the simulator's rule for the loss at a progress (:func:`mara_env.sim.rules.loss_at`).

    Args:
        log_curve: ln of the curve's losses at steps 0, 1, ...
        current: Curve steps done at the last report.
        speed: Curve steps one node does per epoch.

    Example:
        >>> window = future_window(np.log([4.0, 1.0, 2.0, 0.5]), 0.0, speed=4.0)
        >>> round(float(window[FUTURE_EPOCHS * 4.0 >= 3.0][0]), 3)  # three steps ahead: the 0.5
        -2.079
    """
    start = min(int(current), len(log_curve) - 1)
    best_so_far = np.array(log_curve)  # a copy; the points before ``start`` are never read
    best_so_far[start:] = np.minimum.accumulate(best_so_far[start:])
    lowest = rules.loss_at(best_so_far[None, :], 0, current + speed * FUTURE_EPOCHS)
    return lowest - log_curve[start]


def epochs_to_cross(window: np.ndarray, log_gap: np.ndarray) -> np.ndarray:
    """Node-epochs until each window first falls to ``-log_gap`` (``inf`` if it never does).

    Linear interpolation between the window's offsets (and from 0 at offset 0).

    Args:
        window: ``(n, WINDOW_SIZE)`` future log-losses relative to the present.
        log_gap: ``(n,)`` ln(current loss / target); <= 0 means the target is already reached.

    Raises:
        ValueError: If ``window`` is not ``(n, WINDOW_SIZE)`` or ``log_gap`` not ``(n,)``.

    Example:
        >>> window = -np.log1p(FUTURE_EPOCHS)[None, :] * 0.5
        >>> round(float(epochs_to_cross(window, np.array([0.5 * np.log(11.0)]))[0]), 1)
        10.0
    """
    window = np.asarray(window, dtype=np.float64)
    log_gap = np.asarray(log_gap, dtype=np.float64)
    if window.ndim != 2 or window.shape[1] != WINDOW_SIZE or log_gap.shape != window.shape[:1]:
        raise ValueError(
            f"epochs_to_cross: window must be (n, {WINDOW_SIZE}) and log_gap (n,); got "
            f"{window.shape} and {log_gap.shape}."
        )
    epochs = np.empty(len(window))
    _cross_compiled(window, log_gap, epochs)
    return epochs


@njit(cache=True)
def _cross_compiled(window: np.ndarray, log_gap: np.ndarray, epochs: np.ndarray) -> None:
    """Write :func:`epochs_to_cross` of each row of ``window`` into ``epochs``."""
    for row in range(window.shape[0]):
        epochs[row] = epochs_to_level(window[row], log_gap[row])


@njit(cache=True)
def epochs_to_level(window: np.ndarray, log_gap: float) -> float:
    """:func:`epochs_to_cross` of one window (compiled; callable from other compiled code)."""
    if log_gap <= 0.0:
        return 0.0
    level = -log_gap
    for column in range(window.shape[0]):
        low = window[column]
        if low <= level:  # the first offset at or below the level
            # the value before: the previous offset's, or the present's 0 before the first
            high = window[column - 1] if column > 0 else 0.0
            # the window crosses here, so high > level >= low and the share is in (0, 1]
            share = (high - level) / (high - low) if high > low else 1.0
            begin = WINDOW_OFFSETS[column]
            return begin + share * (WINDOW_OFFSETS[column + 1] - begin)
    return np.inf
