"""Benchmarks and scripts of mara-env.

Importing this package checks that ``agents``, ``predictors`` and ``mara_env`` resolve to
mara-env's own packages (:func:`mara_env.check_installation`, without the slower distribution
scan), so that ``python -m benchmarks...`` run beside a folder named ``agents/`` stops with a
message naming that folder instead of an ``ImportError`` deep inside a script.
"""

from __future__ import annotations

from mara_env.installation import check_installation

check_installation(distributions=False, verbose=False)
