"""Argument types shared by the benchmark scripts' command lines.

Each turns a command-line string into a number or raises ``argparse.ArgumentTypeError`` with
what was expected, which argparse reports next to the option's name.

:func:`data_error` stops a command on a file it was handed that cannot be used, with one line and
exit status 2, without the usage block argparse prints for a malformed command line.

Also :func:`attribute_help`, which reads a settings class's documented attributes, so that an
option's help is the attribute's one description, and :func:`add_world_version`, the one
``--world-version`` option of every script that can play either world.

Example:
    >>> positive_int("3"), non_negative_int("0"), positive_float("1.5")
    (3, 0, 1.5)
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number >= 1, got 0
"""

from __future__ import annotations

import argparse
import inspect
import math
import re
import sys
from pathlib import Path
from typing import NoReturn

from mara_env.worlds.config import LATEST_WORLD_VERSION, WORLD_VERSIONS, env_id


def data_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """Stop with ``<prog>: error: <message>`` on stderr and exit status 2, as argparse does for
    a bad argument but without the usage block: the command line was well formed, a file it
    names was not."""
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _whole_number(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number >= {least}, got {text!r}"
        ) from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected a whole number >= {least}, got {value}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1 (counts, seeds per run, workers...)."""
    return _whole_number(text, 1)


def non_negative_int(text: str) -> int:
    """A whole number >= 0 (seeds)."""
    return _whole_number(text, 0)


def positive_float(text: str) -> float:
    """A finite number > 0 (loads, multipliers)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def attribute_help(cls: type) -> dict[str, str]:
    """Each attribute's description from the ``Attributes:`` section of ``cls``'s Google-style
    docstring, as plain text (an entry naming several attributes, ``a, b: text``, describes
    each; continuation lines are joined; reST roles and literals lose their markup).

    Example:
        >>> class Settings:
        ...     '''Run settings.
        ...
        ...     Attributes:
        ...         seed: Seeds the run.
        ...         width, depth: Network sizes, in units
        ...             of neurons.
        ...     '''
        >>> attribute_help(Settings)
        {'seed': 'Seeds the run.', 'width': 'Network sizes, in units of neurons.', \
'depth': 'Network sizes, in units of neurons.'}
    """
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    if "Attributes:" not in lines:
        return {}
    described: dict[str, list[str]] = {}
    current: list[str] = []
    for line in lines[lines.index("Attributes:") + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            break  # the next section
        entry = re.match(r"\s{4}(\w+(?:, \w+)*): (.*)", line)
        if entry and indent == 4:
            current = [entry.group(2)]
            for name in entry.group(1).split(", "):
                described[name] = current
        else:
            current.append(line.strip())
    return {name: _plain(" ".join(parts)) for name, parts in described.items()}


def _plain(text: str) -> str:
    """``text`` without reST markup (roles and literals), as a terminal shows it."""
    return re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")


def add_world_version(
    parser: argparse.ArgumentParser, *, default: int | None = LATEST_WORLD_VERSION, note: str = ""
) -> None:
    """Add ``--world-version``: the world's rules (``ClusterConfig.world_version``), one of
    :data:`mara_env.worlds.config.WORLD_VERSIONS`; ``default=None`` leaves them to the preset's.
    ``note`` ends the help (what the option means for this script)."""
    shown = "the preset's" if default is None else f"{default}, {env_id(default)}"
    parser.add_argument(
        "--world-version",
        type=int,
        choices=WORLD_VERSIONS,
        default=default,
        help=f"The world's rules (ClusterConfig.world_version; default: {shown}). {note}".strip(),
    )


def add_output(parser: argparse.ArgumentParser, *, default: Path | None, help: str) -> None:
    """Add ``--output`` (the one name of a script's output file or folder; into ``args.out``),
    with the ``--out`` of mara-env 0.3 still read, unlisted, for commands written then (the
    checkpoints' cards record them)."""
    parser.add_argument("--output", dest="out", type=Path, default=default, help=help)
    parser.add_argument("--out", dest="out", type=Path, help=argparse.SUPPRESS)
