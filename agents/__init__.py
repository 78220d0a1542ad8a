"""Schedulers for mara-env: one protocol, the classic heuristics, and the evaluation harness.

Every scheduler follows :class:`mara_env.agents.base.Scheduler`: ``reset(config, seed)`` then
``act(observation, node) -> action`` with the AEC observation of one node. Build the shipped
ones by name with :func:`make_agent` (names in :data:`AGENTS`, paper variants and ablations in
:data:`VARIANTS`), or your own from an import path
``"package.module:ClassName"``, and run them with :func:`evaluate`.

Example:
    >>> from mara_env.agents import evaluate, make_agent, mean_ci
    >>> rows = evaluate(make_agent("edf"), "tiny", seeds=range(3))
    >>> summary = mean_ci([row["completion_rate"] for row in rows])
    >>> summary.low <= summary.mean <= summary.high
    True
"""

from __future__ import annotations

from mara_env.agents.base import (
    EpochScheduler,
    NotResetError,
    Observation,
    PrivilegedScheduler,
    Scheduler,
)
from mara_env.agents.clairvoyant import Clairvoyant
from mara_env.agents.evaluation import SchedulerError, evaluate, scheduler_seed, start_episode
from mara_env.agents.laira import Laira, LairaSettings
from mara_env.agents.lara import Lara, LaraSettings
from mara_env.agents.least_slack import LeastSlack, estimated_remaining_work
from mara_env.agents.observed_history import HistoryScheduler, ObservedHistories
from mara_env.agents.priority import EarliestDeadlineFirst, FirstComeFirstServed, PriorityScheduler
from mara_env.agents.random_agent import RandomScheduler
from mara_env.agents.registry import (
    AGENTS,
    VARIANTS,
    AgentBuildError,
    AgentImportError,
    UnknownAgentError,
    known_agents,
    make_agent,
)
from mara_env.agents.round_robin import RoundRobin
from mara_env.agents.statistics import Summary, mean_ci
from mara_env.agents.successive_halving import SuccessiveHalving
from mara_env.agents.successive_halving_stream import SuccessiveHalvingStream
from mara_env.agents.uniform import UniformShare

__all__ = [
    "AGENTS",
    "VARIANTS",
    "AgentBuildError",
    "AgentImportError",
    "Clairvoyant",
    "EarliestDeadlineFirst",
    "EpochScheduler",
    "FirstComeFirstServed",
    "HistoryScheduler",
    "Laira",
    "LairaSettings",
    "Lara",
    "LaraSettings",
    "LeastSlack",
    "NotResetError",
    "Observation",
    "ObservedHistories",
    "PriorityScheduler",
    "PrivilegedScheduler",
    "RandomScheduler",
    "RoundRobin",
    "Scheduler",
    "SchedulerError",
    "SuccessiveHalving",
    "SuccessiveHalvingStream",
    "Summary",
    "UniformShare",
    "UnknownAgentError",
    "estimated_remaining_work",
    "evaluate",
    "known_agents",
    "make_agent",
    "mean_ci",
    "scheduler_seed",
    "start_episode",
]
