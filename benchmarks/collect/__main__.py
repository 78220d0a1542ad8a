"""Command line: ``python -m mara_env.benchmarks.collect run|pack ...`` (see the package docstring)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mara_env.benchmarks.collect.arrival_pack import main as arrivals_main
from mara_env.benchmarks.collect.pack import main as pack_main
from mara_env.benchmarks.collect.pollux import main as pollux_main
from mara_env.benchmarks.collect.runner import COLLECTORS, collect
from mara_env.benchmarks.collect.store import CurveStore
from mara_env.benchmarks.common.write_faults import write_faults_end


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.collect", description="Collect real learning curves."
    )
    commands = parser.add_subparsers(
        dest="command", required=True, help="run: collect curves; pack: ship them"
    )
    run = commands.add_parser("run", help="train the grids' models and store their curves")
    run.add_argument("--store", type=Path, default=Path("traces_raw"), help="raw curve folder")
    run.add_argument(
        "--families",
        nargs="+",
        default=list(COLLECTORS),
        choices=list(COLLECTORS),
        help="families to collect (default: all)",
    )
    run.add_argument("--smoke", action="store_true", help="tiny grids, for a quick check")
    run.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    commands.add_parser("pack", help="write the shipped trace file and data card", add_help=False)
    commands.add_parser(
        "arrivals", help="bin a file of submission times into an arrival trace", add_help=False
    )
    commands.add_parser(
        "pollux", help="the Pollux artifact's curves as a curve table (an example)", add_help=False
    )
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["pack"]:
        return pack_main(argv[1:])
    if argv[:1] == ["arrivals"]:
        return arrivals_main(argv[1:])
    if argv[:1] == ["pollux"]:
        return pollux_main(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "run":
        kept = f"Every finished run is kept in {args.store}, a file each"
        with write_faults_end("collect run", lambda: kept, "it skips the runs it finds"):
            report = collect(
                args.families,
                CurveStore(args.store),
                smoke=args.smoke,
                workers=args.workers,
                progress=not args.no_progress,
            )
        print(
            f"collected {report.done} runs, skipped {report.skipped} already stored, "
            f"{report.failed} failed, in {report.seconds:.1f} s"
        )
        return 1 if report.failed else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
