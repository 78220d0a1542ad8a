"""The ceiling: how far each scheduler is from the best any schedule can do, on small episodes.

On a small Cluster-v3 (4 nodes, 8 slots, 30 epochs of arrivals, so about 10 to 40 tasks an
episode) the offline optimum is solved exactly
(:class:`mara_env.agents.optimum.agent.OfflineOptimum`: a MILP, knowing every task and curve,
present and future) and played in the environment, which checks its count. Beside it, on the same
episodes, the **ladder** of schedulers (random, EDF, the best observation-only heuristic, MARA,
LARA fed the true remaining work, the clairvoyant reference) and the cheap certified bound of
:mod:`mara_env.agents.optimum.bound`, whose gap to the optimum says how far to trust it at the
leaderboard's sizes, where no exact optimum is solved.

The episodes are kept in a resumable store (:mod:`mara_env.benchmarks.ceiling.ladder_episodes`);
the page ``ladder.md`` and the plot ``ladder.png`` are written from it
(:mod:`mara_env.benchmarks.ceiling.ladder_report`).

Run::

    python -m mara_env.benchmarks.ceiling.ladder                 # 10 seeds x 3 loads
    python -m mara_env.benchmarks.ceiling.ladder --seeds 2 --loads 1.4 --time-limit 60
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from mara_env.benchmarks.ceiling.ladder_episodes import LOADS, OUTPUT, TIME_LIMIT, run
from mara_env.benchmarks.ceiling.ladder_report import write_report
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.seeds import evaluation_seeds


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.ceiling.ladder",
        description="Solve the exact offline optimum of small Cluster-v3 episodes and measure "
        "every rung of the ladder (random ... clairvoyant) and the certified bound against it.",
    )
    parser.add_argument(
        "--seeds", type=positive_int, default=10, help="Evaluation seeds per load (from 1000)."
    )
    parser.add_argument(
        "--loads", type=float, nargs="+", default=list(LOADS), help="Loads to play."
    )
    parser.add_argument(
        "--time-limit", type=float, default=TIME_LIMIT,
        help="Seconds the solver may spend on an episode (past it, the best schedule found is played).",
    )  # fmt: skip
    parser.add_argument(
        "--output", type=Path, default=OUTPUT, help="Folder of the store, page and plot."
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bar.")
    args = parser.parse_args(argv)
    if not args.time_limit > 0:
        parser.error(f"--time-limit must be a positive number of seconds, got {args.time_limit}.")
    if any(not load > 0 for load in args.loads):
        parser.error(f"--loads must be positive numbers, got {args.loads}.")
    start = time.perf_counter()
    rows = run(
        args.output,
        seeds=evaluation_seeds(args.seeds),
        loads=args.loads,
        time_limit=args.time_limit,
        progress=not args.no_progress,
    )
    page = write_report(rows, args.output, seconds=time.perf_counter() - start)
    print(f"wrote {page}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
