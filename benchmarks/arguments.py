"""Argument types shared by the benchmark scripts' command lines.

Each turns a command-line string into a number or raises ``argparse.ArgumentTypeError`` with
what was expected, which argparse reports next to the option's name.

Example:
    >>> positive_int("3"), non_negative_int("0"), positive_float("1.5")
    (3, 0, 1.5)
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number >= 1, got 0
"""

from __future__ import annotations

import argparse
import math


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number >= {least}, got {text!r}"
        ) from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {least}, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (counts, seeds per run, workers...)."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (seeds)."""
    return _whole_number(text, 0)


def positive_float(text: str) -> float:
    """A finite number > 0 (loads, multipliers)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value
