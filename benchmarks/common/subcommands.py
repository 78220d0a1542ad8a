"""``python -m mara_env.benchmarks.<group> <command> [options]``: one entry point per group of scripts.

Each group of benchmark scripts (``mara``, ``prediction``, ``baselines``, ``perf``) names its
commands in a :data:`Commands` table; :func:`dispatch` runs the one named first on the command
line with the rest of the arguments, importing only that script. Every script also runs on its
own, e.g. ``python -m mara_env.benchmarks.mara.train`` is ``python -m mara_env.benchmarks.mara train``.

Example:
    >>> commands = {"evaluate": ("mara_env.benchmarks.mara.evaluate", "Evaluate MARA.")}
    >>> dispatch("mara", commands, [])
    usage: python -m mara_env.benchmarks.mara <command> [options]
    <BLANKLINE>
    commands:
      evaluate  Evaluate MARA.
    <BLANKLINE>
    Run `python -m mara_env.benchmarks.mara <command> --help` for a command's options.
    2
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence

#: Command name -> (the module whose ``main(argv)`` runs it, a one-line summary).
Commands = Mapping[str, tuple[str, str]]


def dispatch(group: str, commands: Commands, argv: Sequence[str] | None = None) -> int:
    """Run ``argv[0]``'s script with the remaining arguments; print the commands otherwise.

    Args:
        group: The group's name (``benchmarks.<group>``).
        commands: Its commands.
        argv: The arguments (default: the command line's).

    Returns:
        The script's exit code (0 if its ``main`` returns something else); 0 for ``--help`` and 2,
        with the list of commands, for no command or an unknown one.
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(_usage(group, commands))
        return 0 if arguments else 2
    name, rest = arguments[0], arguments[1:]
    if name not in commands:
        print(f"python -m mara_env.benchmarks.{group}: no command {name!r}.\n", file=sys.stderr)
        print(_usage(group, commands), file=sys.stderr)
        return 2
    module = importlib.import_module(commands[name][0])
    sys.argv = [f"python -m mara_env.benchmarks.{group} {name}", *rest]
    code = module.main(rest)
    return code if isinstance(code, int) else 0


def _usage(group: str, commands: Commands) -> str:
    width = max(len(name) for name in commands)
    lines = [f"usage: python -m mara_env.benchmarks.{group} <command> [options]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {summary}" for name, (_, summary) in commands.items()]
    lines += [
        "",
        f"Run `python -m mara_env.benchmarks.{group} <command> --help` for a command's options.",
    ]
    return "\n".join(lines)
