"""``python -m mara_env.benchmarks.reliability <command>``: the commands of
:mod:`mara_env.benchmarks.reliability`."""

from __future__ import annotations

from mara_env.benchmarks.common.subcommands import dispatch
from mara_env.benchmarks.reliability import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("reliability", COMMANDS))
