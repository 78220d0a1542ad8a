"""Console-script entry points: what runs before the first import of ``agents``.

``mara-leaderboard`` is :func:`leaderboard`. A console script, unlike ``python -m``, does not put
the working directory on ``sys.path``, so ``mara-leaderboard --agents my_sched:MyScheduler``
could not import ``my_sched.py`` from where the user stands. :func:`leaderboard` therefore puts
the working directory first on ``sys.path``, as ``python -m`` does, but only after checking
(:func:`mara_env.installation_problems`) that no other installed distribution takes the names of
mara-env's four import packages and after importing all four from the installation: a user's
module resolves from where they stand, while a folder there named like one of the packages (a
clone of this repository, say) cannot shadow them, nor mix the installed ``mara_env`` with the
clone's ``agents``. This module imports only the standard library at import time, so that the
check runs before anything it guards.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence


def leaderboard(argv: Sequence[str] | None = None) -> int:
    """The ``mara-leaderboard`` command (also ``python -m benchmarks.leaderboard``).

    Args:
        argv: The arguments (default: the command line's).

    Returns:
        The exit code: 2 if mara-env's import packages are hidden or shared (with a message
        on stderr saying which and what to do), else that of
        :func:`benchmarks.leaderboard.main`.
    """
    from mara_env.installation import IMPORT_PACKAGES, installation_problems

    problems = installation_problems()
    if problems:
        for problem in problems:
            print(f"mara-leaderboard: error: {problem}", file=sys.stderr)
        return 2
    for name in IMPORT_PACKAGES:  # from the installation, before the working directory
        importlib.import_module(name)
    working_directory = os.getcwd()
    if working_directory not in sys.path:
        sys.path.insert(0, working_directory)  # import paths resolve as under python -m

    from benchmarks.leaderboard.cli import main

    return main(argv)
