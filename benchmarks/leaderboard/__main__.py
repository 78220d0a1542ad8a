"""``python -m benchmarks.leaderboard``: the same as the ``mara-leaderboard`` command."""

from __future__ import annotations

from benchmarks.leaderboard.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
