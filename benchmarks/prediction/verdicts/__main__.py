"""``python -m mara_env.benchmarks.prediction.verdicts``: see :mod:`mara_env.benchmarks.prediction.verdicts`."""

from __future__ import annotations

from mara_env.benchmarks.prediction.verdicts.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
