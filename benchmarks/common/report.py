"""A measuring script's printed report, kept as a results page (``--output PAGE``).

The speed and memory scripts print what they measured. With ``--output PAGE`` the same report
is also written, once the run has finished, to a Markdown page that says which command made
it, from which commit, on which machine and when; the documentation shows those pages'
figures through :mod:`mara_env.benchmarks.reference.figures`, so no timing on the site is typed by hand.
An interrupted run leaves the previous page as it was.

Example:
    >>> import argparse, tempfile
    >>> from pathlib import Path
    >>> parser = argparse.ArgumentParser(prog="python -m demo")
    >>> add_output_argument(parser)
    >>> page = Path(tempfile.mkdtemp()) / "demo.md"
    >>> args = parser.parse_args(["--output", str(page)])
    >>> with printed_report(args.output, "Demo", ["--output", str(page)], "python -m demo"):
    ...     print("42 steps/s")
    42 steps/s
    >>> text = page.read_text()
    >>> text.splitlines()[0], "```text\\n42 steps/s\\n```" in text
    ('# Demo', True)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.common.provenance import git_revision


def results_page(text: str) -> Path:
    """``--output``'s value: a ``.md`` file in a folder that exists (checked before measuring).

    Example:
        >>> results_page("report.txt")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: report.txt: the results page must be a .md file.
    """
    page = Path(text)
    if page.suffix != ".md":
        raise argparse.ArgumentTypeError(f"{text}: the results page must be a .md file.")
    if not page.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"{text}: the folder {page.parent} does not exist; create it first."
        )
    return page


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--output PAGE`` option of a measuring script."""
    parser.add_argument(
        "--output",
        type=results_page,
        default=None,
        metavar="PAGE",
        help="also write the printed report to this Markdown results page when the run ends",
    )


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        return self.copy.write(text)

    def flush(self) -> None:
        self.terminal.flush()


@contextlib.contextmanager
def printed_report(
    page: Path | None, title: str, argv: Sequence[str] | None, program: str
) -> Iterator[None]:
    """Print as usual; if ``page`` is given, write what was printed there when the block ends.

    Args:
        page: The results page, or None to only print.
        title: The page's ``#`` title.
        argv: The script's arguments (``sys.argv[1:]`` when None), to name the command.
        program: How the script is run (``python -m ...``).
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield
    if page is None:
        return
    command = shlex.join([*program.split(), *arguments])
    body = tee.copy.getvalue().rstrip("\n")
    write_atomically(
        page,
        f"# {title}\n\n"
        f"Made by `{command}` at commit {git_revision()}, started {started}, on "
        f"{platform_line()}, {available_cores()} cores. The report as the script printed it:\n\n"
        f"```text\n{body}\n```\n",
    )
