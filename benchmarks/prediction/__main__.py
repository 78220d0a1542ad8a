"""``python -m mara_env.benchmarks.prediction <command>``: the commands of :mod:`mara_env.benchmarks.prediction`."""

from __future__ import annotations

from mara_env.benchmarks.common.subcommands import dispatch
from mara_env.benchmarks.prediction import COMMANDS

if __name__ == "__main__":
    raise SystemExit(dispatch("prediction", COMMANDS))
