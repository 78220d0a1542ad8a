"""``python -m benchmarks.mara <command>``: the commands of :mod:`benchmarks.mara`."""

from __future__ import annotations

from benchmarks.common.subcommands import dispatch
from benchmarks.mara import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("mara", COMMANDS))
