"""Do two leaderboard results folders hold the same episodes?

``python -m mara_env.benchmarks.leaderboard.compare MINE PUBLISHED`` reads both journals
(``episodes.jsonl``) and compares every episode, matched by agent, config and seed, outcome by
outcome: counts (:data:`mara_env.sim.epoch_report.COUNT_METRICS`) and every other integer or text exactly,
float metrics within :data:`mara_env.portability.MAX_ULPS` units in the last place, wall times
and keys left aside (keys name the code that ran, which may legitimately differ, such as an
editable install and a wheel of the same code). It exits 0 when the two hold the same episodes
with the same outcomes, 1 otherwise, listing each difference and each episode only one holds.

Where ``--validate`` replays a folder against the installed code, this compares two runs as they
were recorded: a run of yours against the published one, or the same command run from two
places or with two worker counts.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from mara_env.benchmarks.leaderboard import main as run
    >>> folders = [Path(tempfile.mkdtemp()) for _ in range(2)]
    >>> for folder, workers in zip(folders, ("1", "2")):
    ...     _ = run(["--agents", "edf", "--config", "tiny", "--workloads", "rl", "--loads", "1",
    ...              "--seeds", "2", "--workers", workers, "--no-progress", "--no-plots",
    ...              "--output", str(folder)])  # doctest: +ELLIPSIS
    rank ...
    >>> main([str(folder) for folder in folders])  # doctest: +ELLIPSIS
    The same 2 episodes with the same outcomes in ... and ....
    0
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.store import ResultsFileError
from mara_env.benchmarks.leaderboard.cells import KEY_COLUMNS, TIMING_COLUMNS
from mara_env.benchmarks.leaderboard.journal import JOURNAL, read_journal
from mara_env.portability import MAX_ULPS, differences
from mara_env.sim.epoch_report import COUNT_METRICS

#: The columns that say which episode a row is, whatever code played it.
EPISODE_COLUMNS = ("agent", "config", "config_hash", "seed")
#: How many differences are listed before the rest are only counted.
SHOWN = 20

Episode = tuple[Any, ...]


def episodes(folder: Path) -> dict[Episode, dict[str, Any]]:
    """``{(agent, config, config hash, seed): row}`` of the journal in ``folder``.

    Raises:
        ResultsFileError: If the folder holds no readable journal.
    """
    return {
        tuple(row[column] for column in EPISODE_COLUMNS): row
        for row in read_journal(folder / JOURNAL).rows
    }


def outcome_differences(mine: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Each outcome column where row ``mine`` differs from row ``theirs``, one line each."""
    skipped = set(KEY_COLUMNS) | set(TIMING_COLUMNS)
    found = []
    for column in sorted((set(mine) | set(theirs)) - skipped):
        ours, recorded = mine.get(column, "(missing)"), theirs.get(column, "(missing)")
        tolerance = 0 if column in COUNT_METRICS else MAX_ULPS
        if differences(ours, recorded, max_ulps=tolerance):
            found.append(f"{column} {ours!r} against {recorded!r}")
    return found


def compare(first: Path, second: Path) -> list[str]:
    """Every difference between the episodes of results folders ``first`` and ``second``.

    Raises:
        ResultsFileError: If either folder holds no readable journal.
    """
    mine, theirs = episodes(first), episodes(second)
    problems = []
    for episode in sorted(set(mine) | set(theirs), key=repr):
        where = f"{episode[0]} {episode[1]} seed {episode[3]}"
        if episode not in theirs:
            problems.append(f"{where}: only in {first}")
        elif episode not in mine:
            problems.append(f"{where}: only in {second}")
        else:
            changed = outcome_differences(mine[episode], theirs[episode])
            problems += [f"{where}: {text}" for text in changed]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.leaderboard.compare FIRST SECOND``: 0 when the same episodes have
    the same outcomes, 1 when they differ, 2 when a folder cannot be read."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.leaderboard.compare",
        description="Compare the episodes of two leaderboard results folders, outcome by "
        "outcome (counts exactly, floats within a few ulps; wall times and code keys aside).",
    )
    parser.add_argument("first", type=Path, metavar="FIRST", help="A results folder.")
    parser.add_argument("second", type=Path, metavar="SECOND", help="Another results folder.")
    args = parser.parse_args(argv)
    try:
        problems = compare(args.first, args.second)
        count = len(episodes(args.first))
    except ResultsFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not problems:
        print(
            f"The same {count} episodes with the same outcomes in {args.first} and {args.second}."
        )
        return 0
    for problem in problems[:SHOWN]:
        print(problem)
    if len(problems) > SHOWN:
        print(f"... and {len(problems) - SHOWN} more.")
    print(f"Not the same: {len(problems)} difference(s) between {args.first} and {args.second}.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
