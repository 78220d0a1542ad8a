"""``python -m mara_env.benchmarks.reference <command>``: the commands of :mod:`mara_env.benchmarks.reference`."""

from __future__ import annotations

from mara_env.benchmarks.common.subcommands import dispatch
from mara_env.benchmarks.reference import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("reference", COMMANDS))
