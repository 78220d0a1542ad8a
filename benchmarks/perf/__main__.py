"""``python -m mara_env.benchmarks.perf <command>``: the commands of :mod:`mara_env.benchmarks.perf`."""

from __future__ import annotations

from mara_env.benchmarks.common.subcommands import dispatch
from mara_env.benchmarks.perf import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("perf", COMMANDS))
