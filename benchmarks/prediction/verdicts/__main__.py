"""``python -m benchmarks.prediction.verdicts``: see :mod:`benchmarks.prediction.verdicts`."""

from __future__ import annotations

from benchmarks.prediction.verdicts.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
