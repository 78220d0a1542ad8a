"""``python -m benchmarks.perf <command>``: the commands of :mod:`benchmarks.perf`."""

from __future__ import annotations

from benchmarks.common.subcommands import dispatch
from benchmarks.perf import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("perf", COMMANDS))
