"""The longer fuzz run of the readers: many hostile files per reader, seeded; a table of what
escaped the contract.

Run ``python -m mara_env.benchmarks.reliability.fuzz [--examples N] [--seed S] [--output PAGE]``.
Each reader of :data:`~mara_env.benchmarks.reliability.readers.READERS` gets ``--examples``
files, the hostile kinds (:data:`~mara_env.benchmarks.reliability.readers.KINDS`) in turn,
each drawn from its own seeded generator, so an escape is replayed by its reader, kind and
example number. A file escapes when reading it raises anything but the reader's own errors, or
writes or changes a file (:func:`~mara_env.benchmarks.reliability.readers.feed`). The tests
feed 25 files per reader on every run; this is the run that takes longer. Exit code 1 if
anything escaped.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.reliability.readers import KINDS, READERS, Reader, feed, hostile


def example_rng(seed: int, reader: str, example: int) -> random.Random:
    """The generator of one example: the same for the same seed, reader and number."""
    return random.Random(f"{seed}/{reader}/{example}")


def fuzz_reader(
    name: str, reader: Reader, examples: int, seed: int, folder: Path, progress: bool
) -> list[str]:
    """Feed ``reader`` ``examples`` hostile files; return a line for each escape."""
    valid = reader.valid()
    escapes = []
    for example in tqdm(range(examples), desc=name, disable=not progress, leave=False):
        kind = KINDS[example % len(KINDS)]
        data = hostile(valid, kind, example_rng(seed, name, example))
        path = folder / f"{example}{reader.suffix}"  # a new file each: no cache hides it
        broke = feed(reader, data, path)
        if broke is not None:
            escapes.append(f"{name}, example {example} ({kind}): {broke}")
    return escapes


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.reliability.fuzz",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument(
        "--examples", type=positive_int, default=800, help="hostile files per reader"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the hostile files")
    parser.add_argument(
        "--readers",
        nargs="+",
        default=list(READERS),
        choices=list(READERS),
        metavar="READER",
        help="which readers (default: all)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_output_argument(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    arguments = list(sys.argv[1:] if argv is None else argv)
    escapes: list[str] = []
    command = "python -m mara_env.benchmarks.reliability.fuzz"
    with printed_report(args.output, "Fuzzing the readers", arguments, command):
        print(
            f"{args.examples} hostile files per reader ({', '.join(KINDS)} in turn), seed {args.seed}"
        )
        print("| reader | files | escaped the contract |")
        print("|---|---|---|")
        for name in args.readers:
            with tempfile.TemporaryDirectory() as folder:
                found = fuzz_reader(
                    name,
                    READERS[name],
                    args.examples,
                    args.seed,
                    Path(folder),
                    not args.no_progress,
                )
            print(f"| {name} | {args.examples} | {len(found)} |", flush=True)
            escapes += found
        total = args.examples * len(args.readers)
        print(f"{total} files, {len(escapes)} escaped.")
        for line in escapes:
            print(line)
    return 1 if escapes else 0


if __name__ == "__main__":
    raise SystemExit(main())
