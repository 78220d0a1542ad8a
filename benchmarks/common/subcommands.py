"""``python -m mara_env.benchmarks.<group>``: the list of a group's commands, each with its one
spelling.

Each group of benchmark scripts (``mara``, ``prediction``, ``baselines``, ``perf``,
``reference``) names its commands in a :data:`Commands` table. A command runs as its module,
``python -m mara_env.benchmarks.mara.train``; the group itself lists its commands that way. The
spelling of mara-env 0.3, a command's name after its group (``python -m
mara_env.benchmarks.mara train``), still runs it until 0.5.0, after a note naming the one to use.

Example:
    >>> commands = {"evaluate": ("mara_env.benchmarks.mara.evaluate", "Evaluate MARA.")}
    >>> dispatch("mara", commands, [])
    The commands of mara_env.benchmarks.mara (each runs as a module; add --help for its options):
    <BLANKLINE>
      python -m mara_env.benchmarks.mara.evaluate  Evaluate MARA.
    0
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence

#: Command name -> (the module that runs it, a one-line summary).
Commands = Mapping[str, tuple[str, str]]


def spelling(module: str) -> str:
    """How a command runs: ``python -m`` its module (a package's, for a ``cli`` module run by its
    package's ``__main__``)."""
    return f"python -m {module.removesuffix('.cli')}"


def dispatch(group: str, commands: Commands, argv: Sequence[str] | None = None) -> int:
    """List ``group``'s commands; run one named after the group (0.3's spelling), after a note
    on stderr naming its spelling now.

    Args:
        group: The group's name (``mara_env.benchmarks.<group>``).
        commands: Its commands.
        argv: The arguments (default: the command line's).

    Returns:
        0 after the list; the command's exit code (0 if its ``main`` returns something else); 2,
        with the list, for an unknown word.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(_usage(group, commands))
        return 0
    name, rest = arguments[0], arguments[1:]
    if name in commands:
        module, _ = commands[name]
        print(
            f"note: `python -m mara_env.benchmarks.{group} {name}` is spelled "
            f"`{spelling(module)}` since mara-env 0.4.0; this spelling goes in 0.5.0.",
            file=sys.stderr,
        )
        sys.argv = [spelling(module), *rest]
        code = importlib.import_module(module).main(rest)
        return code if isinstance(code, int) else 0
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
