"""How a results file's lines are typed, checked and recovered: the column types a store allows,
the two formats (CSV and JSON lines, by suffix), and the recovery of a last line cut short.

Example:
    >>> convert(int, 3), from_text(float, '0.5'), from_text(bool, 'True')
    (3, 0.5, True)
    >>> format_of(Path('runs.jsonl'))
    'jsonl'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Literal

import numpy as np

#: The types a column may have.
KINDS: tuple[type, ...] = (str, int, float, bool)
#: Suffix of the file an interrupted last line is moved to.
PARTIAL_SUFFIX = ".partial"


def set_aside_cut_line(path: Path, data: bytes) -> bytes:
    """Move the last line of ``path`` (whose contents are ``data``) to ``<path>.partial`` if it
    has no newline (a write cut short by a crash, a power loss or a full disk), cut it from the
    file, and return the whole lines that remain. The recovery of every results file.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "rows.jsonl"
        >>> _ = path.write_bytes(b'{"a": 1}\\n{"a": ')
        >>> set_aside_cut_line(path, path.read_bytes())  # doctest: +ELLIPSIS
        b'{"a": 1}\\n'
        >>> path.read_bytes(), path.with_name("rows.jsonl.partial").read_bytes()
        (b'{"a": 1}\\n', b'{"a": \\n')
    """
    keep = data.rfind(b"\n") + 1
    if keep == len(data):
        return data
    partial = path.with_name(path.name + PARTIAL_SUFFIX)
    with partial.open("ab") as handle:
        handle.write(data[keep:] + b"\n")
    os.truncate(path, keep)
    print(
        f"note: {path} ended in an interrupted line; it was moved to {partial} and its work "
        "runs again.",
        file=sys.stderr,
    )
    return data[:keep]


def format_of(path: Path) -> Literal["csv", "jsonl"]:
    if path.suffix == ".csv":
        return "csv"
    if path.suffix == ".jsonl":
        return "jsonl"
    raise ValueError(f"ResultsStore: {path} must end in .csv or .jsonl (the file's format).")


def check_schema(columns: Mapping[str, type], key: Sequence[str]) -> None:
    if not columns:
        raise ValueError("ResultsStore: give at least one column.")
    odd = {name: kind for name, kind in columns.items() if kind not in KINDS}
    if odd:
        raise ValueError(f"ResultsStore: column types must be str, int, float or bool; got {odd}.")
    unknown = [name for name in key if name not in columns]
    if unknown or not key:
        raise ValueError(
            f"ResultsStore: key must name one or more of the columns {list(columns)}; got "
            f"{list(key)}."
        )


def convert(kind: type, value: Any) -> Any:
    """``value`` as a ``kind``: int and float take NumPy numbers (a JSON integer is a valid
    float); nothing else is coerced."""
    if kind is bool:
        if isinstance(value, bool | np.bool_):
            return bool(value)
    elif kind is int:
        if isinstance(value, Integral) and not isinstance(value, bool):
            return int(value)
    elif kind is float:
        if isinstance(value, Real) and not isinstance(value, bool):
            return float(value)
    elif isinstance(value, str):
        return value
    raise ValueError(f"{value!r} is not of type {kind.__name__}")


def from_text(kind: type, text: str) -> Any:
    """A CSV field as a ``kind``."""
    if kind is str:
        return text
    if kind is bool:
        if text not in ("True", "False"):
            raise ValueError(f"{text!r} is not True or False")
        return text == "True"
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{text!r} is not of type {kind.__name__}") from None
