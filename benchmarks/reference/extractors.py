"""Extractors: the part of a results file a generated section shows (a table, some lines, a
script's printed report, a checkpoint card's facts), for :mod:`mara_env.benchmarks.reference.figures`.

Example:
    >>> print(first_table("# Title\\n\\n| a |\\n|---|\\n| 1 |\\n\\nmore\\n"))
    | a |
    |---|
    | 1 |
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable


class FiguresError(RuntimeError):
    """A marked section or its source is missing or malformed."""


def first_table(markdown: str) -> str:
    """The first Markdown table of ``markdown`` (its consecutive ``|`` lines).

    Raises:
        FiguresError: If there is none.

    Example:
        >>> first_table("# t\\n\\n| a |\\n| --- |\\n| 1 |\\n\\nmore | text\\n")
        '| a |\\n| --- |\\n| 1 |'
    """
    match = re.search(r"(?m)^\|.*\|$(?:\n^\|.*\|$)*", markdown)
    if match is None:
        raise FiguresError("the source has no Markdown table.")
    return match.group(0)


def table_after(marker: str) -> Callable[[str], str]:
    """An extractor of the first table after the line ``marker`` begins (a heading, a caption).

    Example:
        >>> table_after("## B")("## A\\n| a |\\n\\n## B\\ntext\\n| b |\\n| 2 |\\n")
        '| b |\\n| 2 |'
    """

    def extract(markdown: str) -> str:
        lines = markdown.splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith(marker)]
        if not starts:
            raise FiguresError(f"the source has no line beginning {marker!r}.")
        return first_table("\n".join(lines[starts[0] :]))

    return extract


def lines_containing(*fragments: str) -> Callable[[str], str]:
    """An extractor of the lines that contain any of ``fragments``, in the source's order.

    Example:
        >>> lines_containing("wall", "platform")("# t\\n- platform: x\\n- y\\n- 9 s wall\\n")
        '- platform: x\\n- 9 s wall'
    """

    def extract(markdown: str) -> str:
        lines = [line for line in markdown.splitlines() if any(f in line for f in fragments)]
        if not lines:
            raise FiguresError(f"the source has no line containing any of {list(fragments)}.")
        return "\n".join(lines)

    return extract


def text_block(text: str) -> str:
    """``text`` as a fenced ``text`` block (a script's printed output).

    Example:
        >>> print(text_block("a: 1\\n"))
        ```text
        a: 1
        ```
    """
    return f"```text\n{text.rstrip()}\n```"


def block_from(first_line: str) -> Callable[[str], str]:
    """An extractor of the line that is ``first_line`` and the indented lines after it, as a
    :func:`text_block` (one run's part of a report that prints a block per run).

    Example:
        >>> print(block_from("b.csv")("a.csv\\n  x: 1\\nb.csv\\n  x: 2\\nc.csv\\n"))
        ```text
        b.csv
          x: 2
        ```
    """

    def extract(text: str) -> str:
        lines = text.splitlines()
        if first_line not in lines:
            raise FiguresError(f"the source has no line {first_line!r}.")
        start = lines.index(first_line)
        end = start + 1
        while end < len(lines) and lines[end].startswith(" "):
            end += 1
        return text_block("\n".join(lines[start:end]))

    return extract


def card_facts(*keys: str) -> Callable[[str], str]:
    """An extractor of some facts of a checkpoint's JSON card (``facts[key]`` for each of
    ``keys``), as a :func:`text_block` of ``key: value`` lines, nested values flattened to
    dotted keys.

    Example:
        >>> card = '{"facts": {"ppo": {"best_update": 9}, "wall_minutes": 3.5, "x": 1}}'
        >>> print(card_facts("ppo", "wall_minutes")(card))
        ```text
        ppo.best_update: 9
        wall_minutes: 3.5
        ```
    """

    def flat(prefix: str, value: object) -> list[str]:
        if isinstance(value, dict):
            return [line for k, v in value.items() for line in flat(f"{prefix}.{k}", v)]
        return [f"{prefix}: {value}"]

    def extract(text: str) -> str:
        facts = json.loads(text).get("facts", {})
        missing = [key for key in keys if key not in facts]
        if missing:
            raise FiguresError(f"the card's facts have no {missing}.")
        return text_block("\n".join(line for key in keys for line in flat(key, facts[key])))

    return extract


def after_title(markdown: str) -> str:
    """``markdown`` without its first line (a results page's ``#`` title)."""
    return markdown.split("\n", 1)[1] if "\n" in markdown else ""
