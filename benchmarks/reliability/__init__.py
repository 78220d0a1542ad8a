"""Reliability: hostile files into every reader, kill -9 into every long command.

Run ``python -m mara_env.benchmarks.reliability <command> [options]``; each command is also its
own module:

* ``fuzz`` (:mod:`mara_env.benchmarks.reliability.fuzz`): many hostile files per reader of a
  file a user hands the suite; what escaped the contract (only the project's errors, nothing
  written).
* ``kills`` (:mod:`mara_env.benchmarks.reliability.kills`): kill -9 at random points of every
  long command; the work kept, whether the files read, whether the rerun equals an
  uninterrupted run.

:mod:`mara_env.benchmarks.reliability.readers` holds the readers and the hostile variants the
fuzz tests use too. Unlike the other groups, this one reaches into them (it feeds their readers
and runs their commands), as :mod:`mara_env.benchmarks.stores` does.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "fuzz": (
        "mara_env.benchmarks.reliability.fuzz",
        "Many hostile files per reader; what escaped the contract.",
    ),
    "kills": (
        "mara_env.benchmarks.reliability.kills",
        "Kill -9 at random points of every long command; work kept, reruns equal.",
    ),
}
