"""The named code blocks of a documentation page: the tests' one reader of its ``page:`` markers.

A page marks a block it wants tested as a file or a command between ``<!-- page:NAME -->`` and
``<!-- /page:NAME -->`` (docs/your_scheduler.md)."""

from __future__ import annotations

import re

#: A fenced block between its markers: the name, the fence's language, the code.
MARKED = re.compile(r"<!-- page:(\S+) -->\n```(\w+)\n(.*?)```\n<!-- /page:\1 -->", re.S)


def page_blocks(text: str) -> dict[str, tuple[str, str]]:
    """``{name: (language, code)}`` of every marked block of the page ``text``."""
    return {name: (language, code) for name, language, code in MARKED.findall(text)}
