"""``python -m mara_env.benchmarks.<group>``: the list of a group's commands, each with its one
spelling.

Each group of benchmark scripts (``mara``, ``prediction``, ``baselines``, ``perf``,
``reference``) names its commands in a :data:`Commands` table. A command runs as its module,
``python -m mara_env.benchmarks.mara.train``; the group itself lists its commands that way. The
spelling of mara-env 0.3, a command's name after its group (``python -m
mara_env.benchmarks.mara train``), is answered with the one to use.

Example:
    >>> commands = {"evaluate": ("mara_env.benchmarks.mara.evaluate", "Evaluate MARA.")}
    >>> dispatch("mara", commands, [])
    The commands of mara_env.benchmarks.mara (each runs as a module; add --help for its options):
    <BLANKLINE>
      python -m mara_env.benchmarks.mara.evaluate  Evaluate MARA.
    0
    >>> dispatch("mara", commands, ["evaluate", "--seeds", "2"])
    2
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

#: Command name -> (the module that runs it, a one-line summary).
Commands = Mapping[str, tuple[str, str]]


def spelling(module: str) -> str:
    """How a command runs: ``python -m`` its module (a package's, for a ``cli`` module run by its
    package's ``__main__``)."""
    return f"python -m {module.removesuffix('.cli')}"


def dispatch(group: str, commands: Commands, argv: Sequence[str] | None = None) -> int:
    """List ``group``'s commands, or say how a command named after the group is spelled.

    Args:
        group: The group's name (``mara_env.benchmarks.<group>``).
        commands: Its commands.
        argv: The arguments (default: the command line's).

    Returns:
        0 after the list; 2 for a command named after the group (its spelling on stderr) or an
        unknown word (with the list).
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(_usage(group, commands))
        return 0
    name = arguments[0]
    if name in commands:
        rest = " ".join(arguments[1:])
        print(
            f"python -m mara_env.benchmarks.{group} {name} is spelled "
            f"`{spelling(commands[name][0])}{' ' + rest if rest else ''}` since mara-env 0.4.0: "
            "run that.",
            file=sys.stderr,
        )
        return 2
    print(f"python -m mara_env.benchmarks.{group}: no command {name!r}.\n", file=sys.stderr)
    print(_usage(group, commands), file=sys.stderr)
    return 2


def _usage(group: str, commands: Commands) -> str:
    spelled = {spelling(module): summary for module, summary in commands.values()}
    width = max(len(command) for command in spelled)
    lines = [
        f"The commands of mara_env.benchmarks.{group} (each runs as a module; add --help for "
        "its options):",
        "",
    ]
    lines += [f"  {command.ljust(width)}  {summary}" for command, summary in spelled.items()]
    return "\n".join(lines)
