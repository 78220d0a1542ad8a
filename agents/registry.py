"""Scheduler names and import paths.

:data:`AGENTS` maps the short names used on the command line and in result tables to scheduler
classes (like Stable-Baselines3's ``policy_aliases``). :func:`make_agent` builds a scheduler from
such a name or from an import path ``"package.module:ClassName"``, which is how your own
scheduler joins the leaderboard.

Example:
    >>> from agents.registry import make_agent
    >>> make_agent("edf").name
    'edf'
    >>> make_agent("agents.priority:FirstComeFirstServed").name
    'fcfs'
    >>> make_agent("edff")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agents.registry.UnknownAgentError: Unknown agent 'edff'. Known agents: random, ...ClassName'.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from agents.base import Scheduler
from agents.clairvoyant import Clairvoyant
from agents.laira import Laira
from agents.lara import Lara
from agents.least_slack import LeastSlack
from agents.priority import EarliestDeadlineFirst, FirstComeFirstServed
from agents.random_agent import RandomScheduler
from agents.round_robin import RoundRobin
from agents.successive_halving import SuccessiveHalving
from agents.uniform import UniformShare


def _mara(**kwargs: Any) -> Scheduler:
    """MARA from its shipped checkpoint (imports torch only now)."""
    from agents.mara.agent import Mara

    return Mara.load(**kwargs)


#: The shipped schedulers by name, in the order result tables list them by default.
AGENTS: Mapping[str, Callable[..., Scheduler]] = MappingProxyType(
    {
        "random": RandomScheduler,
        "round_robin": RoundRobin,
        "uniform": UniformShare,
        "fcfs": FirstComeFirstServed,
        "edf": EarliestDeadlineFirst,
        "least_slack": LeastSlack,
        "successive_halving": SuccessiveHalving,
        "lara": Lara,
        "clairvoyant": Clairvoyant,
        "laira": Laira,
        "mara": _mara,
    }
)


class UnknownAgentError(ValueError):
    """A name that is neither a known agent nor an import path."""


class AgentImportError(ImportError):
    """An import path that does not lead to a scheduler."""


def known_agents() -> tuple[str, ...]:
    """Names of the shipped schedulers."""
    return tuple(AGENTS)


def make_agent(name_or_path: str, **kwargs: Any) -> Scheduler:
    """Build a scheduler from a name in :data:`AGENTS` or an import path.

    Args:
        name_or_path: ``"edf"``, ``"least_slack"``, ... or ``"package.module:ClassName"``
            (any class or factory whose result has ``name``, ``reset`` and ``act``).
        **kwargs: Passed to the class or factory.

    Raises:
        UnknownAgentError: For a name that is not known and not an import path.
        AgentImportError: If the module cannot be imported, lacks the attribute, or the result
            is not a scheduler.
    """
    factory = AGENTS.get(name_or_path)
    if factory is None:
        if ":" not in name_or_path:
            raise UnknownAgentError(
                f"Unknown agent {name_or_path!r}. Known agents: {', '.join(AGENTS)}; or give an "
                "import path 'package.module:ClassName'."
            )
        factory = _import_factory(name_or_path)
        try:
            scheduler = factory(**kwargs)
        except Exception as error:
            raise AgentImportError(
                f"Building agent {name_or_path!r} failed: {type(error).__name__}: {error}. An "
                "import-path agent must be a class or factory callable without arguments."
            ) from error
    else:
        scheduler = factory(**kwargs)
    if not isinstance(scheduler, Scheduler):
        raise AgentImportError(
            f"{name_or_path!r} built a {type(scheduler).__name__}, which is not a scheduler: it "
            "needs a 'name' attribute and reset(config, seed) and act(observation, node) "
            "methods (see agents.base.Scheduler)."
        )
    return scheduler


def _import_factory(path: str) -> Callable[..., Scheduler]:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise AgentImportError(
            f"Bad import path {path!r}: expected 'package.module:ClassName' with both parts."
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise AgentImportError(
            f"Cannot import module {module_name!r} of agent {path!r}: {error}. Check that it is "
            "installed or on sys.path (mara-leaderboard and python -m look in the working "
            "directory: run them from the folder that holds the module)."
        ) from error
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise AgentImportError(
                f"Module {module_name!r} has no attribute {attribute!r} (agent {path!r})."
            )
        target = getattr(target, part)
    if not callable(target):
        raise AgentImportError(
            f"{path!r} is a {type(target).__name__}, not a class or factory of schedulers."
        )
    return target
