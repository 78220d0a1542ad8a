"""``python -m mara_env.benchmarks.baselines.static_bundle``: see :mod:`mara_env.benchmarks.baselines.static_bundle`."""

from __future__ import annotations

from mara_env.benchmarks.baselines.static_bundle.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
