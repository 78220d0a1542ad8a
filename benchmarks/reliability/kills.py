"""Kill -9 at random points of every long command: is finished work kept, is nothing corrupt, and
does the rerun complete and equal an uninterrupted run?

Run ``python -m mara_env.benchmarks.reliability.kills [--kills N] [--seed S] [--output PAGE]``.
For each long command (:data:`COMMANDS`, each on a small configuration so that the whole table
takes minutes), the script:

1. runs it twice, uninterrupted, each into a folder of its own (the first fills the caches the
   later runs find filled): the second gives the reference outcome and duration;
2. ``--kills`` times: starts it afresh in another folder and sends ``SIGKILL`` to its whole
   process group (its workers too) at a random moment within the reference duration, drawn
   from a generator seeded by ``--seed``; then counts the finished work left on disk, reads it
   with the command's own reader (nothing may be half-written), runs the same command again to
   the end, and compares its outcome with the reference.

The table says, per command: the kills, the work kept after each, whether every kill left
readable files, and whether every rerun equalled the uninterrupted run. What "work" and
"outcome" mean is each command's own (:class:`LongCommand`): the leaderboard's journalled
episodes and its rows, the tuning's trials and its chosen settings, the curve collector's
stored runs and their curves, MARA's training's saved stages and its final weights. Training has
no mid-run resume: a kill loses the stage in flight, and the rerun starts over. A command exits 1
if any kill left an unreadable file or any rerun differed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.leaderboard.cells import TIMING_COLUMNS
from mara_env.benchmarks.leaderboard.journal import JOURNAL, read_journal

#: The shortest wait before a kill (seconds): sooner, the interpreter has not started.
EARLIEST_KILL = 0.5


@dataclass(frozen=True)
class LongCommand:
    """A long command and how to judge a killed run of it.

    Attributes:
        name: What the table calls it.
        argv: Its arguments after ``python -m``, separated by spaces, ``{out}`` standing for its
            output folder.
        work: The finished work units on disk in the output folder.
        outcome: What a finished run produced, comparable across runs; raises if the files
            cannot be read.
    """

    name: str
    argv: str
    work: Callable[[Path], int]
    outcome: Callable[[Path], Any]

    def command(self, out: Path) -> list[str]:
        """The command line writing into ``out``."""
        return [sys.executable, "-m", *(part.format(out=out) for part in self.argv.split())]


def _episodes(out: Path) -> int:
    path = out / JOURNAL
    return len(read_journal(path).rows) if path.is_file() else 0


def _board(out: Path) -> list[dict[str, Any]]:
    rows = read_journal(out / JOURNAL).rows
    kept = [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in rows]
    return sorted(kept, key=lambda row: json.dumps(row, sort_keys=True))


def _trials(out: Path) -> int:
    from mara_env.benchmarks.baselines.trials import JOURNAL_COLUMNS, JOURNAL_KEY
    from mara_env.benchmarks.common.store import ResultsStore

    path = out / "trials.jsonl"  # read as the tuning reads it (a cut last line set aside)
    return len(ResultsStore(path, JOURNAL_COLUMNS, key=JOURNAL_KEY).rows) if path.is_file() else 0


def _settings(out: Path) -> Any:
    return json.loads((out / "tuned.json").read_text())["agents"]


def _runs(out: Path) -> int:
    from mara_env.benchmarks.collect.store import CurveStore

    return len(CurveStore(out).load_family("tabular"))


def _curves(out: Path) -> dict[str, str]:
    from mara_env.benchmarks.collect.store import CurveStore

    curves = {}
    for record, losses, work in CurveStore(out).load_family("tabular"):
        curves[record["run_id"]] = hashlib.sha256(losses.tobytes() + work.tobytes()).hexdigest()
    return curves


def _stages(out: Path) -> int:
    from mara_env.agents.mara.agent import Mara

    if not (out / "quick.pt").is_file():
        return 0
    Mara.load(out / "quick.pt")  # the card and its hash check
    return 1


def _weights(out: Path) -> dict[str, str]:
    import torch

    from mara_env.agents.mara.agent import Mara

    Mara.load(out / "quick.pt")  # the card and its hash check
    state = torch.load(out / "quick.pt", map_location="cpu", weights_only=True)
    return {name: hashlib.sha256(t.numpy().tobytes()).hexdigest() for name, t in state.items()}


#: The long commands, each on a configuration small enough for a table in minutes.
COMMANDS = (
    LongCommand(
        "leaderboard",
        "mara_env.benchmarks.leaderboard --workloads rl vision --loads 1 1.5 --seeds 6 "
        "--agents edf lara laira --workers 1 --no-progress --no-plots --output {out}",
        _episodes,
        _board,
    ),
    LongCommand(
        "tuning",
        "mara_env.benchmarks.baselines.tuning --quick --workers 1 --agents least_slack lara "
        "--no-progress --output {out} --settings-file {out}/tuned.json",
        _trials,
        _settings,
    ),
    LongCommand(
        "curve collection",
        "mara_env.benchmarks.collect run --families tabular --smoke --workers 1 --no-progress "
        "--store {out}",
        _runs,
        _curves,
    ),
    LongCommand(
        "MARA training",
        "mara_env.benchmarks.mara.train --quick --threads 1 --no-progress --output {out}/quick.pt",
        _stages,
        _weights,
    ),
)


@dataclass
class KillRecord:
    """One kill: when, whether the command was still running, the work it left, whether its
    files read, whether the rerun finished and equalled the reference."""

    after_seconds: float
    killed: bool
    work_kept: int
    readable: bool
    rerun_equal: bool


def run_to_end(command: LongCommand, out: Path, timeout: float) -> float:
    """Run ``command`` into ``out`` to the end; return its wall seconds (raises if it fails)."""
    start = time.perf_counter()
    subprocess.run(command.command(out), check=True, capture_output=True, timeout=timeout)
    return time.perf_counter() - start


def kill_once(
    command: LongCommand, out: Path, after: float, reference: Any, timeout: float
) -> KillRecord:
    """Start ``command`` into ``out``, ``SIGKILL`` its process group ``after`` seconds in, judge
    what it left, rerun it to the end and compare with ``reference``."""
    process = subprocess.Popen(
        command.command(out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches its workers too
    )
    try:
        process.wait(timeout=after)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        killed = True
    try:
        work = command.work(out)
        readable = True
    except Exception:  # an unreadable file is what this script exists to find
        work, readable = 0, False
    run_to_end(command, out, timeout)
    return KillRecord(after, killed, work, readable, command.outcome(out) == reference)


def measure(command: LongCommand, kills: int, rng: random.Random, root: Path) -> list[KillRecord]:
    """The reference run, then ``kills`` killed runs of ``command`` under ``root``."""
    run_to_end(command, root / "warm-up", timeout=3600)  # caches filled, as for the runs after
    reference_out = root / "reference"
    duration = run_to_end(command, reference_out, timeout=3600)
    reference = command.outcome(reference_out)
    records = []
    for index in range(kills):
        after = max(EARLIEST_KILL, rng.uniform(0.05, 0.95) * duration)
        records.append(kill_once(command, root / f"kill{index}", after, reference, 10 * duration))
    return records


def table_rows(name: str, records: Sequence[KillRecord]) -> str:
    """One line of the printed table."""
    killed = [record for record in records if record.killed]
    kept = ", ".join(str(record.work_kept) for record in killed) or "-"
    readable = sum(record.readable for record in killed)
    equal = sum(record.rerun_equal for record in records)
    return (
        f"| {name} | {len(killed)} of {len(records)} | {kept} | {readable} of {len(killed)} | "
        f"{equal} of {len(records)} |"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.reliability.kills",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--kills", type=positive_int, default=10, help="kills per command")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    parser.add_argument(
        "--commands",
        nargs="+",
        default=[command.name for command in COMMANDS],
        choices=[command.name for command in COMMANDS],
        metavar="NAME",
        help="which commands (default: all)",
    )
    add_output_argument(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    arguments = list(sys.argv[1:] if argv is None else argv)
    rng = random.Random(args.seed)
    failures = 0
    title = "Kill -9 at random points of the long commands"
    command_line = "python -m mara_env.benchmarks.reliability.kills"
    with printed_report(args.output, title, arguments, command_line):
        print(
            f"kill -9 (SIGKILL to the process group) {args.kills} times per command, seed {args.seed}"
        )
        print("| command | killed while running | work kept after each kill | files readable "
              "| reruns equal to an uninterrupted run |")  # fmt: skip
        print("|---|---|---|---|---|")
        for command in COMMANDS:
            if command.name not in args.commands:
                continue
            with tempfile.TemporaryDirectory() as folder:
                records = measure(command, args.kills, rng, Path(folder))
            print(table_rows(command.name, records), flush=True)
            failures += sum(not (r.readable and r.rerun_equal) for r in records)
        print(f"{failures} kills left unreadable files or reruns that differ.")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
