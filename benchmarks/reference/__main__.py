"""``python -m benchmarks.reference <command>``: the commands of :mod:`benchmarks.reference`."""

from __future__ import annotations

from benchmarks.common.subcommands import dispatch
from benchmarks.reference import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("reference", COMMANDS))
