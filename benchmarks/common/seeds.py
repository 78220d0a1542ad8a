"""The seed policy: training seeds below 1000, evaluation seeds 1000 and up.

Every result a scheduler is judged by is played on the **evaluation seeds**
(:data:`EVALUATION_SEED_START` and up, with the test split of the curves). Everything that
*chooses* something (training, tuning, calibration, diagnostics) plays **training seeds**
(:data:`TRAINING_SEEDS`, ``0 .. 999``), so no choice ever sees an episode it is reported on.
Scripts state which kind they play through these functions instead of comparing with ``1000``
themselves.

Example:
    >>> training_seeds(100, 3)
    (100, 101, 102)
    >>> evaluation_seeds(2)
    (1000, 1001)
    >>> require_training_seeds([5, 1000, 1001], where="--seeds")
    Traceback (most recent call last):
    ...
    ValueError: --seeds: seeds [1000, 1001] are not training seeds; training, tuning, calibration and diagnostics use seeds 0..999 only (1000 and up are the evaluation seeds results are reported on). Pick seeds below 1000.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Integral

#: The first evaluation seed: reported results use this seed and the ones above it.
EVALUATION_SEED_START = 1000
#: The seeds training, tuning, calibration and diagnostics may play.
TRAINING_SEEDS = range(EVALUATION_SEED_START)


def is_training_seed(seed: int) -> bool:
    """Whether ``seed`` is a training seed (in :data:`TRAINING_SEEDS`).

    Example:
        >>> is_training_seed(999), is_training_seed(1000), is_training_seed(-1)
        (True, False, False)
    """
    return seed in TRAINING_SEEDS


def require_training_seeds(seeds: Iterable[int], *, where: str) -> tuple[int, ...]:
    """The seeds as a tuple, if all are training seeds.

    Args:
        seeds: The seeds a script is about to play.
        where: Who asks (a function, an argument such as ``--seeds``): starts the error message.

    Raises:
        ValueError: If there are no seeds, or some are not whole numbers in ``0 .. 999``; the
            message names them.
    """
    values = tuple(seeds)
    if not values:
        raise ValueError(
            f"{where}: no seeds given; give one or more training seeds "
            f"(0..{EVALUATION_SEED_START - 1})."
        )
    wrong = [seed for seed in values if not (_is_int(seed) and is_training_seed(int(seed)))]
    if wrong:
        raise ValueError(
            f"{where}: seeds {wrong} are not training seeds; training, tuning, calibration and "
            f"diagnostics use seeds 0..{EVALUATION_SEED_START - 1} only "
            f"({EVALUATION_SEED_START} and up are the evaluation seeds results are reported "
            f"on). Pick seeds below {EVALUATION_SEED_START}."
        )
    return tuple(int(seed) for seed in values)


def training_seeds(start: int, count: int, *, where: str = "training_seeds") -> tuple[int, ...]:
    """``count`` consecutive training seeds from ``start``.

    Raises:
        ValueError: If ``count`` < 1 or a seed would fall outside ``0 .. 999`` (the message
            names the range).

    Example:
        >>> training_seeds(998, 3, where="tuning")
        Traceback (most recent call last):
        ...
        ValueError: tuning: seeds 998..1000 reach outside the training seeds 0..999 (1000 and up are the evaluation seeds results are reported on). Pick a lower start or fewer seeds.
    """
    if not _is_int(count) or count < 1:
        raise ValueError(f"{where}: count must be a whole number >= 1, got {count!r}.")
    if not _is_int(start) or start < 0 or start + count > EVALUATION_SEED_START:
        raise ValueError(
            f"{where}: seeds {start}..{start + count - 1} reach outside the training seeds "
            f"0..{EVALUATION_SEED_START - 1} ({EVALUATION_SEED_START} and up are the evaluation "
            "seeds results are reported on). Pick a lower start or fewer seeds."
        )
    return tuple(range(start, start + count))


def evaluation_seeds(count: int) -> tuple[int, ...]:
    """The first ``count`` evaluation seeds: ``1000, 1001, ...``.

    Raises:
        ValueError: If ``count`` < 1.
    """
    if not _is_int(count) or count < 1:
        raise ValueError(f"evaluation_seeds: count must be a whole number >= 1, got {count!r}.")
    return tuple(range(EVALUATION_SEED_START, EVALUATION_SEED_START + count))


def _is_int(value: object) -> bool:
    """A whole number (NumPy's included), not a bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)
