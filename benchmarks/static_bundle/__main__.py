"""``python -m benchmarks.static_bundle``: see :mod:`benchmarks.static_bundle`."""

from __future__ import annotations

from benchmarks.static_bundle.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
