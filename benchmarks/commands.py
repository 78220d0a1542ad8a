"""Console-script entry points: what runs before the first import of ``agents``.

``mara-leaderboard`` is :func:`leaderboard`. A console script, unlike ``python -m``, does not put
the working directory on ``sys.path``, so ``mara-leaderboard --agents my_sched:MyScheduler``
could not import ``my_sched.py`` from where the user stands. :func:`leaderboard` therefore lets
Python search the working directory, but **last**, after importing mara-env's packages
without it (:func:`mara_env.installation.put_working_directory_last`), and only after
checking (:func:`mara_env.installation_problems`) that no other installed distribution takes
mara-env's import name, ``mara_env``, and that every shipped data file is there unchanged. A
user's module resolves from where they stand, while a folder there named ``mara_env`` (a clone
of this repository, say) can shadow them neither in this process nor in the
worker processes, which start with this process's ``sys.path`` and do the same. This module
imports only the standard library at import time, so that the checks run before anything they
guard.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def leaderboard(argv: Sequence[str] | None = None) -> int:
    """The ``mara-leaderboard`` command (also ``python -m mara_env.benchmarks.leaderboard``).

    Args:
        argv: The arguments (default: the command line's).

    Returns:
        The exit code: 2 if mara-env's import packages are hidden or shared, or a shipped data
        file is missing or changed (with a message on stderr saying which and what to do), else
        that of :func:`mara_env.benchmarks.leaderboard.main`.
    """
    from mara_env.installation import installation_problems, put_working_directory_last

    problems = installation_problems()
    if problems:
        for problem in problems:
            print(f"mara-leaderboard: error: {problem}", file=sys.stderr)
        return 2
    if os.getcwd() not in sys.path:  # a console script; python -m puts it first itself
        put_working_directory_last()  # import paths resolve here, after the installation

    from mara_env.benchmarks.leaderboard.cli import main

    return main(argv)
