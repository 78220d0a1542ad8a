"""``python -m benchmarks.prediction <command>``: the commands of :mod:`benchmarks.prediction`."""

from __future__ import annotations

from benchmarks.common.subcommands import dispatch
from benchmarks.prediction import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("prediction", COMMANDS))
