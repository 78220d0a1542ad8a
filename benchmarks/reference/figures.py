"""The README's measured figures, copied from the results files that hold them.

Each figure the README shows sits between two markers, ``<!-- generated:NAME -->`` and
``<!-- /generated:NAME -->``, and :data:`SECTIONS` says which results file it comes from and
which part of it. ``python -m benchmarks.reference readme`` rewrites every marked section from
its file; ``--check`` exits 1 (naming the sections) if the README says something else, which is
what the tests run, so a regenerated result cannot leave a stale copy behind.

Example:
    >>> text = "intro\\n<!-- generated:x -->\\nold\\n<!-- /generated:x -->\\nend\\n"
    >>> print(replace_section(text, "x", "new"), end="")
    intro
    <!-- generated:x -->
    new
    <!-- /generated:x -->
    end
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common.atomic import write_atomically
from benchmarks.common.provenance import SOURCE_ROOT

#: The README, relative to the repository root.
README = Path("README.md")


class ReadmeFiguresError(RuntimeError):
    """A marked section or its source is missing or malformed."""


@dataclass(frozen=True)
class Section:
    """One generated section of the README.

    Attributes:
        name: The marker's name.
        source: The results file it is copied from (relative to the repository root).
        extract: The part of the source's text the README shows.
    """

    name: str
    source: Path
    extract: Callable[[str], str]

    def text(self, root: Path = SOURCE_ROOT) -> str:
        """The section's text as the source file gives it now."""
        path = root / self.source
        if not path.is_file():
            raise ReadmeFiguresError(f"{self.source} is missing: regenerate it first.")
        return self.extract(path.read_text())


def first_table(markdown: str) -> str:
    """The first Markdown table of ``markdown`` (its consecutive ``|`` lines).

    Raises:
        ReadmeFiguresError: If there is none.

    Example:
        >>> first_table("# t\\n\\n| a |\\n| --- |\\n| 1 |\\n\\nmore | text\\n")
        '| a |\\n| --- |\\n| 1 |'
    """
    match = re.search(r"(?m)^\|.*\|$(?:\n^\|.*\|$)*", markdown)
    if match is None:
        raise ReadmeFiguresError("the source has no Markdown table.")
    return match.group(0)


#: The README's generated sections.
SECTIONS: tuple[Section, ...] = (
    Section(
        "leaderboard",
        Path("benchmarks/results/leaderboard/leaderboard.md"),
        first_table,
    ),
)


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the lines between the markers of ``name`` replaced by ``body``.

    Raises:
        ReadmeFiguresError: If the markers are missing, repeated or out of order.
    """
    start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ReadmeFiguresError(
            f"{README} must hold one {start} followed by one {end} around the section."
        )
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{body.strip()}\n{end}{tail}"


def render(readme: str, root: Path = SOURCE_ROOT) -> str:
    """``readme`` with every section of :data:`SECTIONS` as its source gives it."""
    for section in SECTIONS:
        readme = replace_section(readme, section.name, section.text(root))
    return readme


def stale_sections(readme: str, root: Path = SOURCE_ROOT) -> list[str]:
    """The names of the sections whose text in ``readme`` is not what their source gives."""
    return [
        section.name
        for section in SECTIONS
        if replace_section(readme, section.name, section.text(root)) != readme
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the README's generated sections, or with ``--check`` compare them; returns 1 if
    one differs."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reference.readme_figures",
        description="Copy the README's measured figures from the results files (or check them).",
    )
    parser.add_argument("--check", action="store_true", help="Only compare; exit 1 if it differs.")
    args = parser.parse_args(argv)
    path = SOURCE_ROOT / README
    readme = path.read_text()
    try:
        if args.check:
            stale = stale_sections(readme)
            if stale:
                print(
                    f"{README}: the sections {stale} differ from their results files: run "
                    "python -m benchmarks.reference readme."
                )
                return 1
            print(f"{README}: every generated section matches its results file.")
            return 0
        write_atomically(path, render(readme))
    except ReadmeFiguresError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Wrote the generated sections of {README}: {[s.name for s in SECTIONS]}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
