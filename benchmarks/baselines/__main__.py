"""``python -m mara_env.benchmarks.baselines <command>``: the commands of :mod:`mara_env.benchmarks.baselines`."""

from __future__ import annotations

from mara_env.benchmarks.baselines import COMMANDS
from mara_env.benchmarks.common.subcommands import dispatch

if __name__ == "__main__":
    raise SystemExit(dispatch("baselines", COMMANDS))
