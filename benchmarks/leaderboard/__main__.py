"""``python -m mara_env.benchmarks.leaderboard``: the same as the ``mara-leaderboard`` command."""

from __future__ import annotations

from mara_env.benchmarks.commands import leaderboard

if __name__ == "__main__":
    raise SystemExit(leaderboard())
