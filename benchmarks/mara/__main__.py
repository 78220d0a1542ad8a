"""``python -m mara_env.benchmarks.mara <command>``: the commands of :mod:`mara_env.benchmarks.mara`."""

from __future__ import annotations

from mara_env.benchmarks.common.subcommands import dispatch
from mara_env.benchmarks.mara import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("mara", COMMANDS))
