"""Benchmarks and scripts of mara-env.

Importing this package in a main process checks that ``agents``, ``predictors`` and ``mara_env``
resolve to mara-env's own packages (:func:`mara_env.check_installation`, without the slower
checks of the distributions, the data files and the workers), so that ``python -m
benchmarks...`` run beside a folder named ``agents/`` stops with a message naming that folder
instead of an ``ImportError`` deep inside a script. When the packages import from elsewhere than
the installed distribution (``python -m`` run in a clone beside a non-editable install), it says
so on stderr: the run uses that tree's code and data, not the installation's. Worker processes
are checked by the process that starts them
(:func:`mara_env.installation.worker_import_problems`), after their initializer has run.
"""

from __future__ import annotations

import multiprocessing
import sys

from mara_env.installation import check_installation, imported_instead_of_installed

# A worker's name is set before it imports anything (spawn's preparation), its parent only later.
if multiprocessing.current_process().name == "MainProcess":
    check_installation(distributions=False, data=False, workers=False, verbose=False)
    if (_note := imported_instead_of_installed()) is not None:
        print(_note, file=sys.stderr)
