"""The cluster configuration: a frozen, validated dataclass, and the keywords it takes.

Every number that shapes an episode lives here. Derived quantities (the arrival rate, the episode
limit) are computed from these fields, never stored beside them.

Example:
    >>> from mara_env import ClusterConfig, get_config
    >>> config = get_config("training")
    >>> config.n_nodes, config.n_slots
    (8, 16)
    >>> smaller = config.replace(n_nodes=4)
    >>> smaller.n_nodes
    4
    >>> ClusterConfig(n_nodes=0)
    Traceback (most recent call last):
    ...
    mara_env.errors.ConfigError: ClusterConfig.n_nodes must be an int >= 1, got 0. Use a positive whole number.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from mara_env.curves.arrivals import check_arrivals
from mara_env.curves.families import FAMILIES, FAMILY_NAMES, OTHER_NAME
from mara_env.curves.recorded_durations import CURVE_DURATIONS
from mara_env.curves.workloads import WORKLOADS
from mara_env.errors import ConfigError, UnexpectedArgumentError
from mara_env.moved import moved_name
from mara_env.worlds.world import LATEST_WORLD_VERSION, WORLD_VERSIONS, World, world

Split = Literal["train", "test"]

#: ``estimate_spread``'s default; Cluster-v1, which has no submitter's estimate, refuses others.
DEFAULT_ESTIMATE_SPREAD = 0.3


def env_id(world_version: int) -> str:
    """The registered id of the environment with the rules of ``world_version``."""
    return world(world_version).env_id


def _require(condition: bool, name: str, value: object, rule: str, hint: str) -> None:
    if not condition:
        raise ConfigError(f"ClusterConfig.{name} {rule}, got {value!r}. {hint}")


def _check_range(name: str, value: tuple[float, float], low: float, hint: str) -> None:
    ok = (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, (int, float)) and math.isfinite(v) for v in value)
        and low <= value[0] <= value[1]
    )
    _require(ok, name, value, f"must be a (low, high) tuple with {low} <= low <= high", hint)


@dataclass(frozen=True)
class ClusterConfig:
    """Everything that defines the simulated cluster and its workload.

    Attributes:
        n_nodes: Number of identical compute nodes (one PettingZoo agent each).
        n_slots: Number of task slots visible to the schedulers; further arrived tasks wait in a
            first-come queue summarised in the observation.
        load: Offered load rho = expected demand arriving per epoch / cluster capacity
            (``n_nodes`` node-epochs per epoch). The Poisson arrival rate follows from it.
        arrival_horizon: Tasks arrive during epochs ``0 .. arrival_horizon - 1``.
        max_epochs: Safety truncation: the episode is truncated after this many epochs even if
            tasks are still active. Deadlines are capped so that it never binds by default.
        family_weights: The workload mix as ``(family, weight)`` pairs; weights are normalised.
            Default: the ``in_distribution`` workload (tabular, vision, rl in equal shares);
            see :mod:`mara_env.curves.workloads` for the named ones.
        split: Which side of the trace source's fixed train/test split to draw curves from.
        alpha: Parallel-scaling exponent: ``k`` nodes advance a task by ``speed * k**alpha`` curve
            steps per epoch. ``None`` uses each family's default (see ``mara_env.curves.families``).
        switch_cost: Fraction of an epoch a node loses when it trains a different task than in
            the previous epoch (or idled then): checkpoint reload and warm-up.
        epochs_per_curve: One node trains a task's whole recorded curve in a number of epochs
            drawn uniformly from this range; the task's speed (curve steps per node-epoch) is the
            curve length divided by it. With ``curve_durations="recorded"``, the mean of this
            range is each family's median run's duration instead.
        curve_durations: How long one node takes to train a whole curve: ``"stretched"`` (every
            curve in ``U(epochs_per_curve)`` epochs, whatever the run recorded) or
            ``"recorded"`` (:mod:`mara_env.curves.recorded_durations`: each curve's recorded work sets
            it, relative to its family's median run; needs a work axis in every curve).
        target_fraction: A feasible task's target is the loss its curve reports at a point drawn
            uniformly from this fraction range of the curve.
        infeasible_share: Probability that a task's target lies below anything its curve ever
            reports (the task can never complete and should be dropped).
        slack_range: Deadline = ``min(arrival + max(1, ceil(slack * estimate /
            deadline_nodes**alpha)), max_epochs)``, slack drawn uniformly from this range. In
            Cluster-v1 ``estimate`` is the node-epochs one node needs to reach the task's
            *feasible* target (the one drawn from ``target_fraction``, at most 0.99 of the
            initial loss), also for a task whose target was then moved out of reach, and
            ``epochs_per_curve[1]`` if even the feasible target is never reached
            (:func:`mara_env.sim.rules.draw_task_terms`, :func:`mara_env.sim.rules.deadlines`); in
            Cluster-v2 it is the submitter's estimate (:mod:`mara_env.sim.hidden_effort`).
        deadline_nodes: Nodes a task could reasonably get, used only to set deadlines.
        world_version: The rules of task drawing: ``1`` (Cluster-v1, above: deadlines from the
            true demand, targets at most 0.99 of the initial loss, hopeless targets below their
            curve's minimum), ``2`` (Cluster-v2, :mod:`mara_env.sim.hidden_effort`: a deadline
            from the submitter's estimate of the demand, which knows the family and the target
            but not the curve; a hopeless task's target drawn as a feasible one's is, on a curve
            of its family that never gets that low) or ``3`` (Cluster-v3: Cluster-v2 whose
            hopeless tasks stall just short of their targets, ``hopeless_curve_share`` 0.1). The
            default is the latest, :data:`LATEST_WORLD_VERSION`; the environment ids set it:
            ``mara_env/Cluster-v1``, ``-v2`` and ``-v3``.
        estimate_spread: Cluster-v2 and later: the standard deviation of the log-normal error
            of the submitter's demand estimate (0: every submitter estimates the family's
            typical demand for the target exactly). Cluster-v1 refuses any but the default.
        hopeless_curve_share: Cluster-v2 and later: a hopeless task runs a curve drawn
            uniformly among this share of its family's curves that never get down to its
            target, those whose lowest loss lies nearest above it (1: all of them; 0.1: the
            nearest tenth, which stall just short of the target, so that only the course of a
            task's losses can tell it from one that will finish; 0: the nearest one). ``None``:
            the world's own (:attr:`mara_env.worlds.world.World.hopeless_curve_share`: 1 on Cluster-v2, 0.1 on
            Cluster-v3; :attr:`effective_hopeless_curve_share`). Cluster-v1 refuses a value.
        max_nodes_per_task: At most this many nodes may train one task in an epoch (``None``: no
            limit). In the AEC form later nodes see the limit in their action masks; in the
            Parallel and Gymnasium forms lower-indexed nodes win and the rest idle. The nodes a
            task can get at most are :attr:`task_node_limit`.
        own_families: Families of your own curves, each ``(name, alpha)``
            (:mod:`mara_env.curves.families`): the simulator advances their tasks with that alpha,
            while schedulers see them as one code, ``other``, and assume ``other_alpha``.
        other_alpha: The alpha schedulers assume for a task of a family of your own (``None``:
            the weighted mean of ``own_families``' alphas, see :attr:`assumed_other_alpha`).
        arrivals: How many tasks arrive in each epoch (:mod:`mara_env.curves.arrivals`): ``"poisson"``
            (independent epochs), ``"philly"`` (a real cluster's bursty, diurnal submissions
            replayed), or the path of your own ``.csv`` of submission times; the mean rate
            follows from ``load`` either way.
        shaping_weight: Weight of the potential-based progress shaping added to the team reward
            (0 disables it): ``shaping_weight * (shaping_discount * Phi(s') - Phi(s))``.
        shaping_discount: The discount ``gamma`` of the shaping term. Set it to the discount
            your learner uses: the shaping then telescopes in the discounted return (which
            differs from the unshaped one only by the constant ``-shaping_weight * Phi(s_0)``,
            and ``Phi(s_0) = 0`` at an episode's start), so it cannot change which policy is
            optimal (Ng, Harada and Russell, 1999). The default 1 suits undiscounted returns.
    """

    n_nodes: int = 8
    n_slots: int = 16
    load: float = 1.0
    arrival_horizon: int = 100
    max_epochs: int = 1000
    family_weights: tuple[tuple[str, float], ...] = WORKLOADS["in_distribution"]
    split: Split = "train"
    alpha: float | None = None
    switch_cost: float = 0.1
    epochs_per_curve: tuple[float, float] = (10.0, 40.0)
    curve_durations: str = "stretched"
    target_fraction: tuple[float, float] = (0.15, 0.85)
    infeasible_share: float = 0.1
    slack_range: tuple[float, float] = (1.5, 3.0)
    deadline_nodes: int = 1
    world_version: int = LATEST_WORLD_VERSION
    estimate_spread: float = DEFAULT_ESTIMATE_SPREAD
    hopeless_curve_share: float | None = None
    max_nodes_per_task: int | None = None
    own_families: tuple[tuple[str, float], ...] = ()
    other_alpha: float | None = None
    arrivals: str = "poisson"
    shaping_weight: float = 0.0
    shaping_discount: float = 1.0
    _families: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("n_nodes", "n_slots", "arrival_horizon", "max_epochs", "deadline_nodes"):
            value = getattr(self, name)
            _require(
                isinstance(value, int) and not isinstance(value, bool) and value >= 1,
                name,
                value,
                "must be an int >= 1",
                "Use a positive whole number.",
            )
        _require(
            self.max_epochs > self.arrival_horizon,
            "max_epochs",
            self.max_epochs,
            f"must exceed arrival_horizon ({self.arrival_horizon})",
            "Leave time for the last arrivals to finish.",
        )
        _require(
            isinstance(self.load, (int, float)) and math.isfinite(self.load) and self.load > 0,
            "load",
            self.load,
            "must be a finite number > 0",
            "Use e.g. 1.0 for the training load, 2.0 for twice as much demand.",
        )
        self._validate_own_families()
        self._validate_family_weights()
        check_arrivals(self.arrivals)
        _require(
            self.split in ("train", "test"),
            "split",
            self.split,
            "must be 'train' or 'test'",
            "Train schedulers on 'train', evaluate on 'test'.",
        )
        _require(
            self.alpha is None
            or (isinstance(self.alpha, (int, float)) and 0.0 < self.alpha <= 1.0),
            "alpha",
            self.alpha,
            "must be None or in (0, 1]",
            "alpha <= 1 models diminishing returns of data-parallel training.",
        )
        _require(
            isinstance(self.switch_cost, (int, float)) and 0.0 <= self.switch_cost < 1.0,
            "switch_cost",
            self.switch_cost,
            "must be in [0, 1)",
            "It is the fraction of an epoch lost when a node changes task.",
        )
        _check_range("epochs_per_curve", self.epochs_per_curve, 1e-6, "E.g. (10.0, 40.0).")
        _require(
            self.curve_durations in CURVE_DURATIONS,
            "curve_durations",
            self.curve_durations,
            f"must be one of {CURVE_DURATIONS}",
            "'recorded' lets each curve's recorded work set its duration; 'stretched' does not.",
        )
        _check_range("target_fraction", self.target_fraction, 0.0, "E.g. (0.15, 0.85).")
        _require(
            self.target_fraction[1] <= 1.0,
            "target_fraction",
            self.target_fraction,
            "must lie within [0, 1]",
            "It is a fraction of the curve's length.",
        )
        _require(
            isinstance(self.infeasible_share, (int, float)) and 0.0 <= self.infeasible_share <= 1.0,
            "infeasible_share",
            self.infeasible_share,
            "must be in [0, 1]",
            "It is a probability.",
        )
        _check_range("slack_range", self.slack_range, 1.0, "Slack below 1 makes tasks hopeless.")
        _require(
            self.world_version in WORLD_VERSIONS and not isinstance(self.world_version, bool),
            "world_version",
            self.world_version,
            f"must be one of {WORLD_VERSIONS}",
            f"Use {LATEST_WORLD_VERSION} (the latest), or an older one to reproduce its world.",
        )
        _require(
            isinstance(self.estimate_spread, (int, float))
            and not isinstance(self.estimate_spread, bool)
            and math.isfinite(self.estimate_spread)
            and self.estimate_spread >= 0,
            "estimate_spread",
            self.estimate_spread,
            "must be a finite number >= 0",
            "It is the log-normal sigma of the submitter's demand estimate, e.g. 0.3.",
        )
        _require(
            self.hopeless_curve_share is None
            or (
                isinstance(self.hopeless_curve_share, (int, float))
                and not isinstance(self.hopeless_curve_share, bool)
                and 0.0 <= self.hopeless_curve_share <= 1.0
            ),
            "hopeless_curve_share",
            self.hopeless_curve_share,
            "must be None or in [0, 1]",
            "It is the share of a family's never-reaching curves a hopeless task's curve is "
            "drawn from, nearest first: 1 for all of them, 0.1 for the nearest tenth; None for "
            "the world's own.",
        )
        if not self.world.hides_effort:
            self._refuse_later_worlds_fields()
        _require(
            self.max_nodes_per_task is None
            or (isinstance(self.max_nodes_per_task, int) and self.max_nodes_per_task >= 1),
            "max_nodes_per_task",
            self.max_nodes_per_task,
            "must be None or an int >= 1",
            "Use None for no limit.",
        )
        _require(
            isinstance(self.shaping_weight, (int, float))
            and math.isfinite(self.shaping_weight)
            and self.shaping_weight >= 0,
            "shaping_weight",
            self.shaping_weight,
            "must be a finite number >= 0",
            "Use 0 to disable shaping, 1 for the standard potential.",
        )
        _require(
            isinstance(self.shaping_discount, (int, float))
            and not isinstance(self.shaping_discount, bool)
            and 0.0 < self.shaping_discount <= 1.0,
            "shaping_discount",
            self.shaping_discount,
            "must be in (0, 1]",
            "Use the discount gamma your learner uses (e.g. 0.99), or 1 for undiscounted returns.",
        )
        object.__setattr__(self, "_families", tuple(name for name, _ in self.family_weights))

    def _refuse_later_worlds_fields(self) -> None:
        for name, unset in (
            ("hopeless_curve_share", self.hopeless_curve_share is None),
            ("estimate_spread", self.estimate_spread == DEFAULT_ESTIMATE_SPREAD),
        ):
            _require(
                unset,
                name,
                getattr(self, name),
                "has no effect in Cluster-v1 (world_version=1)",
                "Cluster-v1 sets deadlines from the true demand and hopeless targets below "
                "their own curve's minimum; leave it out, or use world_version=2 or later.",
            )

    def _validate_family_weights(self) -> None:
        pairs = self.family_weights
        ok = isinstance(pairs, tuple) and len(pairs) > 0
        ok = ok and all(
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and isinstance(pair[1], (int, float))
            and math.isfinite(pair[1])
            and pair[1] >= 0
            for pair in pairs
        )
        _require(
            ok and sum(weight for _, weight in pairs) > 0,
            "family_weights",
            pairs,
            "must be a non-empty tuple of (family, weight >= 0) pairs with a positive sum",
            'E.g. (("synthetic", 1.0),).',
        )
        names = [name for name, _ in pairs]
        _require(
            len(set(names)) == len(names),
            "family_weights",
            pairs,
            "must name each family once",
            "Merge the duplicate entries.",
        )
        own = [name for name, _ in self.own_families]
        unknown = sorted(set(names) - set(FAMILIES) - set(own))
        _require(
            not unknown,
            "family_weights",
            pairs,
            f"names unknown families {unknown}",
            f"Known families: {sorted(FAMILIES)}; declare a family of your own with its alpha in "
            "own_families, e.g. own_families=(('speech', 0.8),).",
        )

    def _validate_own_families(self) -> None:
        pairs = self.own_families
        ok = isinstance(pairs, tuple) and all(
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and pair[0].strip() == pair[0] != ""
            and isinstance(pair[1], (int, float))
            and 0.0 < pair[1] <= 1.0
            for pair in pairs
        )
        _require(
            ok,
            "own_families",
            pairs,
            "must be a tuple of (name, alpha in (0, 1]) pairs",
            "E.g. (('speech', 0.8), ('recommendation', 0.6)).",
        )
        names = [name for name, _ in pairs]
        clashes = sorted(set(names) & (set(FAMILIES) | {OTHER_NAME}))
        _require(
            len(set(names)) == len(names) and not clashes,
            "own_families",
            pairs,
            f"must name each family once, and none of the shipped ones {sorted(FAMILIES)} "
            f"or {OTHER_NAME!r}",
            "Rename your family.",
        )
        _require(
            self.other_alpha is None
            or (isinstance(self.other_alpha, (int, float)) and 0.0 < self.other_alpha <= 1.0),
            "other_alpha",
            self.other_alpha,
            "must be None or in (0, 1]",
            "It is the alpha schedulers assume for families of your own.",
        )

    @property
    def families(self) -> tuple[str, ...]:
        """The families of the workload, in ``family_weights`` order."""
        return self._families

    @property
    def world(self) -> World:
        """The world whose rules this config plays (:data:`mara_env.worlds.world.WORLDS`)."""
        return world(self.world_version)

    @property
    def env_id(self) -> str:
        """The registered environment id of this config's rules (``world_version``).

        Example:
            >>> ClusterConfig(world_version=2).env_id
            'mara_env/Cluster-v2'
        """
        return env_id(self.world_version)

    @property
    def effective_hopeless_curve_share(self) -> float:
        """The ``hopeless_curve_share`` the rules use: the config's, or its world's
        (:attr:`mara_env.worlds.world.World.hopeless_curve_share`); 1 on Cluster-v1, whose rule
        has no such share.

        Example:
            >>> v3 = ClusterConfig(world_version=3)
            >>> v3.effective_hopeless_curve_share
            0.1
            >>> v3.replace(hopeless_curve_share=1.0).effective_hopeless_curve_share
            1.0
        """
        if self.hopeless_curve_share is not None:
            return float(self.hopeless_curve_share)
        share = self.world.hopeless_curve_share
        return 1.0 if share is None else share

    @property
    def n_actions(self) -> int:
        """Size of each node's action space: one action per slot plus idle (the last)."""
        return self.n_slots + 1

    @property
    def idle_action(self) -> int:
        """The action that leaves a node idle this epoch."""
        return self.n_slots

    @property
    def task_node_limit(self) -> int:
        """The most nodes one task can get in an epoch: ``min(n_nodes, max_nodes_per_task)``,
        or ``n_nodes`` without a per-task cap.

        Example:
            >>> ClusterConfig(n_nodes=8).task_node_limit
            8
            >>> ClusterConfig(n_nodes=8, max_nodes_per_task=3).task_node_limit
            3
            >>> ClusterConfig(n_nodes=2, max_nodes_per_task=5).task_node_limit  # never more than n_nodes
            2
        """
        cap = self.max_nodes_per_task
        return self.n_nodes if cap is None else min(self.n_nodes, cap)

    def family_probabilities(self) -> tuple[float, ...]:
        """Normalised family weights, in ``families`` order."""
        total = sum(weight for _, weight in self.family_weights)
        return tuple(weight / total for _, weight in self.family_weights)

    def alpha_for(self, family: str) -> float:
        """The parallel-scaling exponent used for ``family`` (a shipped one, or one of
        :attr:`own_families`); :attr:`alpha` overrides every family's.

        Raises:
            ConfigError: For a family that is neither.
        """
        if self.alpha is not None:
            return float(self.alpha)
        if family in FAMILIES:
            return FAMILIES[family].alpha
        for name, alpha in self.own_families:
            if name == family:
                return float(alpha)
        raise ConfigError(
            f"ClusterConfig: unknown family {family!r}; shipped: {sorted(FAMILIES)}, your own: "
            f"{[name for name, _ in self.own_families]}."
        )

    @property
    def assumed_other_alpha(self) -> float:
        """The alpha schedulers assume for a task of :data:`OTHER_FAMILY` (the observation does
        not tell your families apart): :attr:`other_alpha`, or :attr:`alpha`, or the mean of
        :attr:`own_families`' alphas weighted by :attr:`family_weights` (1 without any).

        Example:
            >>> config = ClusterConfig(family_weights=(("speech", 1.0), ("rl", 1.0)),
            ...                        own_families=(("speech", 0.5),))
            >>> config.alpha_for("speech"), config.assumed_other_alpha
            (0.5, 0.5)
        """
        if self.other_alpha is not None:
            return float(self.other_alpha)
        if self.alpha is not None:
            return float(self.alpha)
        weights = dict(self.family_weights)
        own = [(alpha, weights.get(name, 0.0)) for name, alpha in self.own_families]
        total = sum(weight for _, weight in own)
        return sum(a * w for a, w in own) / total if total > 0 else 1.0

    def observed_alphas(self) -> np.ndarray:
        """The alpha a scheduler uses for each family code it observes: the shipped
        families' (:data:`mara_env.curves.families.FAMILY_NAMES` order), then
        :attr:`assumed_other_alpha` at :data:`mara_env.curves.families.OTHER_FAMILY`."""
        shipped = [self.alpha_for(name) for name in FAMILY_NAMES]
        return np.array([*shipped, self.assumed_other_alpha])

    def replace(self, **changes: Any) -> ClusterConfig:
        """A copy with ``changes`` applied (validated like a new config).

        Raises:
            UnexpectedArgumentError: If a name is not a field (a ``ConfigError`` and a
                ``TypeError``).
            ConfigError: If a new value is invalid.
        """
        check_keywords(changes, "ClusterConfig.replace()", workload=False)
        return dataclasses.replace(self, **changes)


#: What to do instead, for keywords that other libraries pass by convention.
_KEYWORD_HINTS = {
    "max_cycles": "The PettingZoo forms take max_cycles; with Gymnasium, pass max_episode_steps "
    "to gym.make instead.",
    "max_episode_steps": "Pass it to gym.make (Gymnasium's TimeLimit), not to the environment.",
}


def config_keywords(*, workload: bool = True) -> tuple[str, ...]:
    """The keywords that configure a cluster: every ``ClusterConfig`` field and, where
    :func:`mara_env.worlds.presets.get_config` reads them, ``workload``."""
    fields = tuple(f.name for f in dataclasses.fields(ClusterConfig) if f.init)
    return (*fields, "workload") if workload else fields


def keyword_parameters(function: Callable[..., Any]) -> tuple[str, ...]:
    """The names ``function`` takes as keywords itself (not ``self``, not ``**kwargs``).

    Example:
        >>> from mara_env import get_config
        >>> keyword_parameters(get_config)
        ('name', 'workload')
    """
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind in kinds and name != "self"
    )


def check_keywords(
    keywords: Iterable[str], where: str, takes: Sequence[str] = (), *, workload: bool = True
) -> None:
    """Refuse keywords that neither ``where`` itself (``takes``) nor the cluster's config take.

    Args:
        keywords: The keyword names given.
        where: The callable that received them, as Python names it (``"raw_env.__init__()"``).
        takes: The callable's own keyword arguments (listed in the message).
        workload: Whether ``workload`` is accepted (it is wherever :func:`mara_env.worlds.presets.get_config` runs).

    Raises:
        UnexpectedArgumentError: A ``ConfigError`` and a ``TypeError`` whose message starts as
            Python's (``where got an unexpected keyword argument 'name'``).

    Example:
        >>> check_keywords(["n_nodes"], "raw_env.__init__()")
        >>> check_keywords(["frameskip"], "ClusterGymEnv.__init__()")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        mara_env.errors.UnexpectedArgumentError: ClusterGymEnv.__init__() got an unexpected keyword argument 'frameskip'. ...
    """
    known = config_keywords(workload=workload)
    unknown = [name for name in keywords if name not in known and name not in takes]
    if not unknown:
        return
    also = f" (and {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    own = f"its own arguments {list(takes)} and " if takes else ""
    hint = _KEYWORD_HINTS.get(unknown[0], "Check the spelling.")
    raise UnexpectedArgumentError(
        f"{where} got an unexpected keyword argument {unknown[0]!r}{also}. It takes {own}the "
        f"cluster's settings {list(known)} as keywords. {hint}"
    )


def __getattr__(name: str) -> Any:
    """The presets and :func:`get_config`, moved to :mod:`mara_env.worlds.presets` in 0.4.1."""
    return moved_name(__name__, name)
