"""``python -m mara_env.benchmarks.ceiling <command>``: the commands of :mod:`mara_env.benchmarks.ceiling`."""

from __future__ import annotations

from mara_env.benchmarks.ceiling import COMMANDS
from mara_env.benchmarks.common.subcommands import dispatch

if __name__ == "__main__":
    raise SystemExit(dispatch("ceiling", COMMANDS))
