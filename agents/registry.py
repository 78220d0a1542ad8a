"""Scheduler names and import paths.

:data:`AGENTS` maps the short names used on the command line and in result tables to scheduler
factories (like Stable-Baselines3's ``policy_aliases``); :data:`VARIANTS` adds the paper
variants and ablations that the leaderboard does not run by default (LARA's proportional
shares, LaiRA's STA and its ablations, MARA's imitation warm start ``mara_imitation``, i.e.
MARA without PPO, and the privileged ``lara_oracle`` and ``laira_oracle``, fed the true
remaining need). :func:`make_agent` builds a scheduler from such a name or from an import
path ``"package.module:ClassName"``, which is how your own scheduler joins the leaderboard.

The baselines with settings (LARA, LaiRA, successive halving, ...) are built with the settings
``python -m mara_env.benchmarks.baselines.tuning`` chose on training seeds (:mod:`mara_env.agents.tuned`); keyword
arguments to :func:`make_agent` override them.

Example:
    >>> from mara_env.agents.registry import make_agent
    >>> make_agent("edf").name
    'edf'
    >>> make_agent("mara_env.agents.priority:FirstComeFirstServed").name
    'fcfs'
    >>> make_agent("edff")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mara_env.agents.registry.UnknownAgentError: Unknown agent 'edff'. Did you mean 'edf'? Known agents: random, ...ClassName'.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType
from typing import Any

from mara_env.agents.base import Scheduler
from mara_env.agents.clairvoyant import Clairvoyant
from mara_env.agents.laira import Laira
from mara_env.agents.lara import Lara
from mara_env.agents.least_slack import LeastSlack
from mara_env.agents.priority import EarliestDeadlineFirst, FirstComeFirstServed
from mara_env.agents.random_agent import RandomScheduler
from mara_env.agents.reach import load_reach_model
from mara_env.agents.reach_planner import ReachPlanner
from mara_env.agents.round_robin import RoundRobin
from mara_env.agents.successive_halving import SuccessiveHalving
from mara_env.agents.successive_halving_stream import SuccessiveHalvingStream
from mara_env.agents.tuned import tuned_settings
from mara_env.agents.uniform import UniformShare
from mara_env.errors import CheckpointError
from mara_env.predictors.oracle import Oracle
from mara_env.worlds.config import LATEST_WORLD_VERSION, WORLD_VERSIONS


def _mara(*, world_version: int = LATEST_WORLD_VERSION, **kwargs: Any) -> Scheduler:
    """MARA from the checkpoint shipped for ``world_version`` (imports torch only now)."""
    from mara_env.agents.mara.agent import Mara

    return Mara.load(world_version=world_version, **kwargs)


def _mara_imitation(*, world_version: int = LATEST_WORLD_VERSION, **kwargs: Any) -> Scheduler:
    """MARA's imitation warm start, before PPO, from the checkpoint shipped for
    ``world_version`` (named ``mara_imitation``), so the gain of PPO can be measured."""
    from mara_env.agents.mara.agent import Mara, imitation_checkpoint

    kwargs.setdefault("path", imitation_checkpoint(world_version))
    agent = Mara.load(**kwargs)
    agent.name = "mara_imitation"
    return agent


def _reach_planner(*, world_version: int = LATEST_WORLD_VERSION, **kwargs: Any) -> Scheduler:
    """The reach planner with the model and settings shipped for ``world_version``
    (:mod:`mara_env.agents.reach`); keyword arguments override the settings."""
    model = load_reach_model(world_version=world_version)
    return ReachPlanner(model, **{**model.planner, **kwargs})


def _oracle_fed(scheduler: Callable[..., Scheduler]) -> Callable[..., Scheduler]:
    """``scheduler`` built with a fresh oracle (:mod:`mara_env.predictors.oracle`; keyword ``noise``:
    its sigma) in place of its own predictor: privileged, named ``<scheduler>_oracle``."""

    def build(*, noise: float = 0.0, **settings: Any) -> Scheduler:
        return scheduler(predictor=Oracle(noise), **settings)

    return build


def _tuned(
    factory: Callable[..., Scheduler], tuned_as: str, *, name: str | None = None, **fixed: Any
) -> Callable[..., Scheduler]:
    """A factory that builds ``factory`` with the settings of ``tuned_as`` tuned for its
    ``world_version`` keyword, then the ``fixed`` ones, then the caller's keyword arguments;
    ``name`` relabels the result."""
    return partial(_build_tuned, factory, tuned_as, name, fixed)


def _build_tuned(
    factory: Callable[..., Scheduler],
    tuned_as: str,
    name: str | None,
    fixed: dict[str, Any],
    *,
    world_version: int = LATEST_WORLD_VERSION,
    **kwargs: Any,
) -> Scheduler:
    tuned = tuned_settings(tuned_as, world_version=world_version)
    scheduler = factory(**{**tuned, **fixed, **kwargs})
    if name is not None:
        scheduler.name = name
    return scheduler


#: The shipped schedulers by name, in the order result tables list them by default.
AGENTS: Mapping[str, Callable[..., Scheduler]] = MappingProxyType(
    {
        "random": RandomScheduler,
        "round_robin": RoundRobin,
        "uniform": UniformShare,
        "fcfs": FirstComeFirstServed,
        "edf": EarliestDeadlineFirst,
        "least_slack": _tuned(LeastSlack, "least_slack"),
        "successive_halving": _tuned(SuccessiveHalving, "successive_halving"),
        "successive_halving_stream": _tuned(SuccessiveHalvingStream, "successive_halving_stream"),
        "lara": _tuned(Lara, "lara"),
        "clairvoyant": Clairvoyant,
        "laira": _tuned(Laira, "laira"),
        "reach_planner": _reach_planner,
        "mara": _mara,
    }
)

#: Paper variants and ablations, by name: built by :func:`make_agent`, not run by the
#: leaderboard unless asked for (``--agents sta``). The ablations keep LaiRA's tuned settings
#: and remove one part; ``lara_proportional`` is tuned on its own.
VARIANTS: Mapping[str, Callable[..., Scheduler]] = MappingProxyType(
    {
        # The paper's LARA allocation: shares in proportion to need over time left.
        "lara_proportional": _tuned(
            Lara, "lara_proportional", name="lara_proportional", allocation="proportional"
        ),
        # LaiRA's paper baseline STA: LaiRA without the DKF look-ahead (the "without the DKF
        # check" ablation).
        "sta": _tuned(Laira, "laira", name="sta", lookahead=False),
        # LaiRA ranking without the confidence bound (beta = 0).
        "laira_no_ucb": _tuned(Laira, "laira", name="laira_no_ucb", beta=0.0),
        # LaiRA with slices of fixed length (no PD control of the slice length).
        "laira_no_pd": _tuned(
            Laira, "laira", name="laira_no_pd", proportional_gain=0.0, derivative_gain=0.0
        ),
        # MARA without PPO: its imitation warm start (the "without PPO" ablation).
        "mara_imitation": _mara_imitation,
        # Privileged: LARA and LaiRA with the oracle's true remaining need (keyword noise:
        # its log-normal sigma) in place of their own predictors, tuned settings otherwise.
        "lara_oracle": _tuned(_oracle_fed(Lara), "lara"),
        "laira_oracle": _tuned(_oracle_fed(Laira), "laira"),
    }
)


#: Agents loaded from a file of trained weights, by the prefix of their spec: ``"sb3:PATH.zip"``
#: is a MaskablePPO model trained on the Gymnasium form. Each loader is named by its import
#: path and takes the file's path: its framework (torch, SB3) is imported only when such an
#: agent is built.
POLICY_LOADERS: Mapping[str, str] = MappingProxyType(
    {"sb3": "mara_env.agents.gym_policy:load_sb3_policy"}
)


class UnknownAgentError(ValueError):
    """A name that is neither a known agent nor an import path."""


class AgentImportError(ImportError):
    """An import path that does not lead to a scheduler."""


class AgentBuildError(RuntimeError):
    """An import path that leads to a scheduler class or factory which raised when called."""


def known_agents(*, variants: bool = False) -> tuple[str, ...]:
    """Names of the shipped schedulers (with ``variants=True``, of :data:`VARIANTS` too)."""
    return tuple(AGENTS) + (tuple(VARIANTS) if variants else ())


def make_agent(
    name_or_path: str, *, world_version: int = LATEST_WORLD_VERSION, **kwargs: Any
) -> Scheduler:
    """Build a scheduler from a name in :data:`AGENTS` or an import path.

    Args:
        name_or_path: ``"edf"``, ``"least_slack"``, ... (:data:`AGENTS`), a variant such as
            ``"sta"`` (:data:`VARIANTS`), a trained policy's file behind its prefix
            (:data:`POLICY_LOADERS`: ``"sb3:model.zip"``), or ``"package.module:ClassName"``
            (any class or factory whose result has ``name``, ``reset`` and ``act``).
        world_version: The world whose shipped artifacts a registered agent uses: the tuned
            settings and MARA's checkpoints are chosen on, or trained in, one world
            (``ClusterConfig.world_version``; default: the latest). Agents without such
            artifacts, and import paths, are built the same in every world.
        **kwargs: Passed to the class or factory.

    Raises:
        UnknownAgentError: For a name that is not known and not an import path, or a
            ``world_version`` that is not one of :data:`mara_env.worlds.config.WORLD_VERSIONS`.
        AgentImportError: If the module cannot be imported, lacks the attribute, or the result
            is not a scheduler.
        AgentBuildError: If an import path's class or factory raises when called, or loading a
            trained policy fails otherwise (a registered agent's own error passes through).
        mara_env.errors.CheckpointError: If a trained policy's file is missing or not a model
            of its kind, or a registered agent's checkpoint is.
    """
    if world_version not in WORLD_VERSIONS or isinstance(world_version, bool):
        raise UnknownAgentError(
            f"make_agent({name_or_path!r}): world_version must be one of {WORLD_VERSIONS}, got "
            f"{world_version!r}."
        )
    prefix, _, file = name_or_path.partition(":")
    factory = AGENTS.get(name_or_path) or VARIANTS.get(name_or_path)
    if factory is None and prefix in POLICY_LOADERS:
        try:
            scheduler = _import_factory(POLICY_LOADERS[prefix])(file, **kwargs)
        except CheckpointError:
            raise  # the model file is missing or not a model: the caller's input, named so
        except Exception as error:
            raise AgentBuildError(
                f"Loading agent {name_or_path!r} failed: {type(error).__name__}: {error}"
            ) from error
    elif factory is None:
        if ":" not in name_or_path:
            raise UnknownAgentError(
                f"Unknown agent {name_or_path!r}.{_suggestion(name_or_path)} Known agents: "
                f"{', '.join(AGENTS)}; variants: {', '.join(VARIANTS)}; or give an import path "
                "'package.module:ClassName'."
            )
        factory = _import_factory(name_or_path)
        try:
            scheduler = factory(**kwargs)
        except Exception as error:
            raise AgentBuildError(
                f"Building agent {name_or_path!r} failed: {type(error).__name__}: {error}. An "
                "import-path agent must be a class or factory callable without arguments."
            ) from error
    elif _has_world_artifacts(factory):
        scheduler = factory(world_version=world_version, **kwargs)
    else:
        scheduler = factory(**kwargs)
    if not isinstance(scheduler, Scheduler):
        raise AgentImportError(
            f"{name_or_path!r} built a {type(scheduler).__name__}, which is not a scheduler: it "
            "needs a 'name' attribute and reset(config, seed) and act(observation, node) "
            "methods (see mara_env.agents.base.Scheduler)."
        )
    return scheduler


def _has_world_artifacts(factory: Callable[..., Scheduler]) -> bool:
    """Whether a registered factory builds from per-world artifacts (tuned settings, MARA's
    checkpoints) and so takes a ``world_version``."""
    tuned = isinstance(factory, partial) and factory.func is _build_tuned
    return tuned or factory in (_mara, _mara_imitation, _reach_planner)


def _suggestion(name: str) -> str:
    """What ``name`` was probably meant to be: a close registered name, or an import path
    written with a dot where the colon goes (``my_sched.MySched`` for ``my_sched:MySched``)."""
    close = difflib.get_close_matches(name, [*AGENTS, *VARIANTS], n=1)
    if close:
        return f" Did you mean {close[0]!r}?"
    module, dot, attribute = name.rpartition(".")
    if dot and module and attribute:
        return (
            f" Did you mean the import path '{module}:{attribute}'? An import path puts a colon "
            "between the module and the class."
        )
    return ""


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
