"""``python -m benchmarks.baselines <command>``: the commands of :mod:`benchmarks.baselines`."""

from __future__ import annotations

from benchmarks.baselines import COMMANDS
from benchmarks.common.subcommands import dispatch

if __name__ == "__main__":
    raise SystemExit(dispatch("baselines", COMMANDS))
