"""``python -m benchmarks.verdicts``: see :mod:`benchmarks.verdicts`."""

from __future__ import annotations

from benchmarks.verdicts.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
