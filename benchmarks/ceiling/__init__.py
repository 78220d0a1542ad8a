"""The ceiling: the exact offline optimum of small episodes, a certified bound for any episode,
and the ladder of schedulers between random and the optimum.

Run ``python -m mara_env.benchmarks.ceiling <command> [options]``; each command is also its own module:

* ``ladder`` (:mod:`mara_env.benchmarks.ceiling.ladder`): solve the optimum of small Cluster-v3
  episodes and measure every rung of the ladder and the certified bound against it.

The optimum and the bound need SciPy's HiGHS (``pip install "mara-env[optimum]"``).
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "ladder": (
        "mara_env.benchmarks.ceiling.ladder",
        "Solve the offline optimum of small Cluster-v3 episodes and measure the ladder against it.",
    ),
}
