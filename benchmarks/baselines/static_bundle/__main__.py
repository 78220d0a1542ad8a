"""``python -m benchmarks.baselines.static_bundle``: see :mod:`benchmarks.baselines.static_bundle`."""

from __future__ import annotations

from benchmarks.baselines.static_bundle.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
