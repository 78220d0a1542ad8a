"""How the ranking moves from one leaderboard to another: the same agents, side by side.

``python -m mara_env.benchmarks.leaderboard.rankings --boards LABEL=DIR ... --output FILE.md`` reads each
board's ``leaderboard.json`` and writes one table: every agent that all boards ranked, with its
mean completion rate (95% interval) and its rank among those agents on each board, the first
board being the baseline the others are read against. A rank that moves is marked with the
baseline's in brackets. Privileged agents keep their mark.

Example:
    >>> boards = {"a": [("x", 0.5, 0.4, 0.6, False), ("y", 0.4, 0.3, 0.5, True)],
    ...           "b": [("x", 0.3, 0.2, 0.4, False), ("y", 0.6, 0.5, 0.7, True)]}
    >>> print(ranking_table(boards).splitlines()[3])
    | y (privileged) | 0.400 [0.300, 0.500] (2) | 0.600 [0.500, 0.700] (1, was 2) |
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.leaderboard.report import PRIVILEGED_MARK

#: One agent on one board: name, mean, interval low and high, privileged.
Entry = tuple[str, float, float, float, bool]


def read_board(directory: Path) -> list[Entry]:
    """The agents of the board in ``directory``, from its ``leaderboard.json``.

    Raises:
        FileNotFoundError: If the board has no ``leaderboard.json``.
    """
    document = json.loads((directory / "leaderboard.json").read_text())
    return [
        (
            entry["agent"],
            entry["completion_rate"]["estimate"],
            entry["completion_rate"]["low"],
            entry["completion_rate"]["high"],
            bool(entry.get("privileged", False)),
        )
        for entry in document["leaderboard"]
    ]


def ranking_table(boards: Mapping[str, Sequence[Entry]]) -> str:
    """The Markdown table of the agents every board ranked (module docstring)."""
    names = list(boards)
    common = set.intersection(*({entry[0] for entry in board} for board in boards.values()))
    ranks: dict[str, dict[str, int]] = {}
    found: dict[str, dict[str, Entry]] = {}
    for label, board in boards.items():
        kept = sorted((e for e in board if e[0] in common), key=lambda e: -e[1])
        ranks[label] = {entry[0]: rank for rank, entry in enumerate(kept, start=1)}
        found[label] = {entry[0]: entry for entry in kept}
    baseline = names[0]
    lines = ["| agent | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for agent in sorted(common, key=lambda a: ranks[baseline][a]):
        privileged = found[baseline][agent][4]
        cells = []
        for label in names:
            _, mean, low, high, _ = found[label][agent]
            rank, was = ranks[label][agent], ranks[baseline][agent]
            moved = f"{rank}, was {was}" if rank != was else f"{rank}"
            cells.append(f"{mean:.3f} [{low:.3f}, {high:.3f}] ({moved})")
        shown = f"{agent} {PRIVILEGED_MARK}" if privileged else agent
        lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.leaderboard.rankings",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--boards", nargs="+", required=True, metavar="LABEL=DIR",
        help="the boards, the baseline first: a label and a leaderboard --output folder",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the Markdown page to write")
    args = parser.parse_args(argv)
    boards = {}
    for item in args.boards:
        label, _, folder = item.partition("=")
        if not folder:
            parser.error(f"--boards {item!r}: give LABEL=DIR.")
        try:
            boards[label] = read_board(Path(folder))
        except (OSError, KeyError, ValueError) as error:
            parser.error(f"--boards {item!r}: no readable leaderboard.json ({error}).")
    program = ["python", "-m", "mara_env.benchmarks.leaderboard.rankings"]
    command = shlex.join([*program, "--boards", *args.boards, "--output", str(args.output)])
    text = (
        "# How the ranking moves\n\n"
        f"Made by `{command}` from each board's `leaderboard.json`. Each cell: the mean "
        "completion rate with its 95% interval and the agent's rank among the agents of this "
        "table; a rank that differs from the first board's says which it was.\n\n"
        + ranking_table(boards)
    )
    write_atomically(args.output, text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
