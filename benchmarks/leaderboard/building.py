"""Building the leaderboard's agents before any episode: what does not build is said in one line.

Example:
    >>> import argparse
    >>> built = check_agents(argparse.ArgumentParser(), ["edf"])
    >>> list(built)
    ['edf']
"""

from __future__ import annotations

import argparse
import traceback
from collections.abc import Sequence

from mara_env.agents.registry import AgentImportError, UnknownAgentError
from mara_env.benchmarks.common.keys import BuiltAgent, build_agent
from mara_env.errors import CheckpointError
from mara_env.worlds.config import LATEST_WORLD_VERSION


def build_agents(
    parser: argparse.ArgumentParser,
    agents: Sequence[str],
    world_version: int = LATEST_WORLD_VERSION,
) -> tuple[dict[str, BuiltAgent], dict[str, str]]:
    """Build and fingerprint each agent once, for the world ``world_version``, so that a
    failure shows before any episode.

    A name that is no agent, or an import path that leads to no scheduler, is a usage error
    (``parser.error``), and a trained policy's file that is missing or not a model a data error
    (one line, exit 2): neither is a failure to build.

    Returns:
        ``{agent: built agent}`` for those that built, and ``{agent: why}`` (one readable line
        with the cause) for those that did not.
    """
    built, failed = {}, {}
    for agent in agents:
        try:
            built[agent] = build_agent(agent, world_version)
        except (UnknownAgentError, AgentImportError) as error:
            parser.error(str(error))
        except CheckpointError as error:  # a data error: one line, no usage
            parser.exit(2, f"{parser.prog}: error: {error}\n")
        except Exception as error:
            failed[agent] = _why_not_built(agent, error)
    return built, failed


def _why_not_built(agent: str, error: Exception) -> str:
    """One line: the error's type and first line (at most 300 characters), where it was raised
    (the file and line of the innermost frame, e.g. in your agent's module), and what to do when
    a dependency is missing."""
    lines = str(error).strip().splitlines() or [""]
    text = lines[0] if len(lines[0]) <= 300 else lines[0][:297] + "..."
    message = f"{type(error).__name__}: {text}"
    raised = _raised_at(error)
    if raised:
        message += f" (raised at {raised})"
    missing = _missing_module(error)
    own_module = agent.partition(":")[0]
    if missing is not None and not (own_module + ".").startswith(missing + "."):
        message += (
            f" It needs {missing!r}, which is not installed: install it (pip install "
            "'mara-env[torch]' for the learned agents) or leave the agent out with --agents."
        )
    return message


def check_agents(
    parser: argparse.ArgumentParser,
    agents: Sequence[str],
    world_version: int = LATEST_WORLD_VERSION,
) -> dict[str, BuiltAgent]:
    """:func:`build_agents`, where any agent that does not build is a usage error (the scripts
    that need every agent they are given); returns ``{agent: built agent}``."""
    built, failed = build_agents(parser, agents, world_version)
    for agent, why in failed.items():
        parser.error(f"Agent {agent!r} cannot be built: {why}")
    return built


def _missing_module(error: BaseException | None) -> str | None:
    """The module whose absence caused ``error`` (following its causes), if any."""
    while error is not None:
        if isinstance(error, ModuleNotFoundError) and error.name:
            return error.name
        error = error.__cause__ or error.__context__
    return None


def _raised_at(error: BaseException) -> str | None:
    """``FILE:LINE`` of the innermost frame that raised ``error`` (or the error it was raised
    from), the import machinery's own frames left out."""
    while error.__cause__ is not None:
        error = error.__cause__
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<frozen ")
    ]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None
