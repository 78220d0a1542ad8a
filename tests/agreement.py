"""The comparison of two implementations of one rule in the tests (:mod:`mara_env.portability`).

Integer outcomes exactly, floats within :data:`mara_env.portability.MAX_ULPS` units in the last
place of their magnitude or of 1 (the world's losses, rewards, shares and observation columns are
of order 1, so a difference of values of that size counts in their ulps).
"""

from __future__ import annotations

from mara_env.portability import differences


def assert_agree(actual: object, expected: object, where: str = "") -> None:
    """Fail, listing every difference, unless ``actual`` and ``expected`` agree."""
    found = differences(actual, expected, scale=1.0, where=where)
    assert not found, "\n".join(found)
