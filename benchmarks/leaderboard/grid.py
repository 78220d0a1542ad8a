"""The leaderboard's grid: agents x workloads x loads x evaluation seeds, and its cells.

A :class:`Cell` is one episode: one agent on one seed of one fully specified
:class:`mara_env.ClusterConfig`. Its result depends on nothing else, so cells can run in any
order, on any backend, and a finished cell never needs to run again. :attr:`Cell.key`
fingerprints everything the result depends on: the agent's label and name or import path, the
seed, every config field, and the fingerprints (:mod:`mara_env.benchmarks.leaderboard.fingerprints`) of
the agent's code and weights and of the code, trace data and package version every episode
shares. That is how a resumed run recognises finished cells, and knows when code changed.

Example:
    >>> grid = Grid(agents=("edf", "random"), workloads=("rl",), load_factors=(1.0, 2.0),
    ...             n_seeds=2, base="tiny")
    >>> len(grid.cells())
    8
    >>> [cell.config.load for cell in grid.cells()[:4]]
    [1.4, 1.4, 2.8, 2.8]
    >>> grid.label("rl", 2.0)
    'tiny/rl@2x'
    >>> config_from_fields(config_fields(grid.config("rl", 2.0))) == grid.config("rl", 2.0)
    True
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mara_env import TRAINING_LOAD, WORKLOADS, ClusterConfig, ConfigError, get_config
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.seeds import EVALUATION_SEED_START
from mara_env.worlds.config import LATEST_WORLD_VERSION

#: Evaluation episodes use environment seeds from here on; training and tuning code in this
#: project uses seeds below it, so no scheduler is evaluated on an episode it was trained on
#: (the seed policy of :mod:`mara_env.benchmarks.common.seeds`).
EVALUATION_SEED_BASE = EVALUATION_SEED_START
#: Default grid: every registered agent on these workloads, at these multiples of
#: :data:`mara_env.TRAINING_LOAD`, for this many seeds.
DEFAULT_WORKLOADS = EVALUATION_WORKLOADS
DEFAULT_LOAD_FACTORS = (1.0, 1.5, 2.0)
DEFAULT_SEEDS = 10
#: ``--quick``: fewer seeds, and tasks arrive during at most this many epochs.
QUICK_SEEDS = 3
QUICK_ARRIVAL_HORIZON = 30


@dataclass(frozen=True)
class Cell:
    """One episode to run: an agent (name or import path) on one seed of one config.

    Attributes:
        agent: A registered agent name or an import path ``package.module:ClassName``.
        seed: The environment seed.
        config: The full configuration of the episode.
        config_name: A readable label of ``config`` (stored with the results).
        workload: The workload name, if the cell belongs to a leaderboard grid.
        load_factor: The load as a multiple of :data:`mara_env.TRAINING_LOAD`, likewise.
        fingerprint: The shared fingerprint: code, trace data and package version every
            episode depends on; part of :attr:`key`.
        agent_fingerprint: The agent's own fingerprint (its code and weights); part of
            :attr:`key`.
        label: The agent's name in tables (default: ``agent``).
        traces: The trace file or curve table the episode draws its curves from (``None``: the
            package's own); its content is in ``fingerprint``.
    """

    agent: str
    seed: int
    config: ClusterConfig
    config_name: str
    workload: str | None = None
    load_factor: float | None = None
    fingerprint: str = ""
    agent_fingerprint: str = ""
    label: str = ""
    traces: str | None = None

    @property
    def name(self) -> str:
        """The agent's name in tables and rows."""
        return self.label or self.agent

    @property
    def key(self) -> str:
        """A fingerprint of everything the episode's result depends on."""
        parts = [self.name, self.agent, self.seed, repr(self.config)]
        text = json.dumps([*parts, self.fingerprint, self.agent_fingerprint], separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def config_hash(config: ClusterConfig) -> str:
    """A short fingerprint of every field of ``config`` (rows of different configs never mix).

    Example:
        >>> from mara_env import get_config
        >>> config_hash(get_config("tiny")) == config_hash(get_config("tiny"))
        True
    """
    return hashlib.sha256(repr(config).encode()).hexdigest()[:12]


def config_fields(config: ClusterConfig) -> dict[str, Any]:
    """Every constructor field of ``config``, JSON-ready (tuples become lists)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init}


def config_from_fields(fields: Mapping[str, Any]) -> ClusterConfig:
    """The config :func:`config_fields` described (lists read back from JSON become tuples).

    Raises:
        ConfigError: If a field is unknown or a value invalid.
    """
    return get_config("training").replace(**{k: _tuples(v) for k, v in fields.items()})


def _tuples(value: Any) -> Any:
    return tuple(_tuples(item) for item in value) if isinstance(value, list) else value


def parse_seeds(values: Sequence[str]) -> range:
    """``--seeds``: a count of evaluation seeds from :data:`EVALUATION_SEED_BASE` (``10``), an
    inclusive range (``1000-1009``), or consecutive seeds (``1000 1001 1002``).

    Example:
        >>> parse_seeds(["3"]), parse_seeds(["1005-1009"]), parse_seeds(["1002", "1003"])
        (range(1000, 1003), range(1005, 1010), range(1002, 1004))

    Raises:
        ValueError: Saying which forms are accepted, for anything else (seeds below
            :data:`EVALUATION_SEED_BASE`, which training uses, or seeds with gaps).
    """
    forms = (
        f"give a count (10: seeds {EVALUATION_SEED_BASE}-{EVALUATION_SEED_BASE + 9}), a range "
        f"({EVALUATION_SEED_BASE}-{EVALUATION_SEED_BASE + 9}) or consecutive seeds"
    )
    ranged = len(values) == 1 and "-" in values[0]
    try:
        numbers = [int(part) for part in (values[0].split("-", 1) if ranged else values)]
    except ValueError:
        raise ValueError(f"--seeds {' '.join(values)}: not whole numbers; {forms}.") from None
    if ranged and numbers[0] > numbers[1]:
        raise ValueError(
            f"--seeds {values[0]}: the range runs backwards; write the lower seed first "
            f"({numbers[1]}-{numbers[0]})."
        )
    seeds = list(range(numbers[0], numbers[1] + 1)) if ranged else numbers
    if len(seeds) == 1 and 1 <= seeds[0] < EVALUATION_SEED_BASE:
        return range(EVALUATION_SEED_BASE, EVALUATION_SEED_BASE + seeds[0])
    if not seeds or seeds != list(range(seeds[0], seeds[0] + len(seeds))):
        raise ValueError(
            f"--seeds {' '.join(values)}: the seeds must be consecutive (the statistics pair "
            f"agents on the same seeds); {forms}."
        )
    if seeds[0] < EVALUATION_SEED_BASE:
        raise ValueError(
            f"--seeds {' '.join(values)}: evaluation seeds start at {EVALUATION_SEED_BASE} "
            f"(training and tuning use those below); {forms}."
        )
    return range(seeds[0], seeds[-1] + 1)


@dataclass(frozen=True)
class Grid:
    """Which episodes a leaderboard runs.

    Attributes:
        agents: Agent names or import paths, in table order.
        workloads: Workload names (see :data:`mara_env.WORKLOADS`).
        load_factors: Loads as multiples of :data:`mara_env.TRAINING_LOAD`.
        n_seeds: Evaluation seeds per (agent, workload, load): ``first_seed ..``.
        first_seed: The first evaluation seed (at least :data:`EVALUATION_SEED_BASE`).
        base: The config preset the grid varies (default ``evaluation``: held-out test curves).
        world_version: The world's rules (``ClusterConfig.world_version``; default: the latest).
        quick: Shorten arrivals to :data:`QUICK_ARRIVAL_HORIZON` epochs.
        fingerprint: The shared fingerprint (code, trace data, package version) that every
            cell key includes.
        specs: ``{label: registered name or import path}`` for agents labelled otherwise than
            by their spec (see :mod:`mara_env.benchmarks.leaderboard.labels`).
        agent_fingerprints: ``{label: fingerprint of the agent's code and weights}``.
        configs: ``{stratum label: config}`` to use instead of building it from ``base``
            (the configs a recorded run used, when validating it).
        traces: A trace file or curve table to draw the curves from instead of the package's
            (``--traces``; its content belongs in ``fingerprint``).
        arrivals: The arrival process of every config (``ClusterConfig.arrivals``;
            ``--arrivals``).
        own_families: Families of your own curves with their alphas
            (``ClusterConfig.own_families``; ``--own-families``); each is also a workload of
            that family alone.
        curve_durations: How long a node takes to train a whole curve
            (``ClusterConfig.curve_durations``; ``--durations``): ``"stretched"`` or
            ``"recorded"`` (each curve's recorded work sets it).
        hopeless_curve_share: The share of a family's never-reaching curves, nearest first, a
            hopeless task runs (``ClusterConfig.hopeless_curve_share``; ``--hopeless-curves``;
            Cluster-v2 and later); ``None``: the world's own.

    Raises:
        ConfigError: For an empty or repeated list, an unknown workload or preset, a load
            factor <= 0 or fewer than one seed.
    """

    agents: tuple[str, ...]
    workloads: tuple[str, ...] = DEFAULT_WORKLOADS
    load_factors: tuple[float, ...] = DEFAULT_LOAD_FACTORS
    n_seeds: int = DEFAULT_SEEDS
    first_seed: int = EVALUATION_SEED_BASE
    base: str = "evaluation"
    world_version: int = LATEST_WORLD_VERSION
    quick: bool = False
    fingerprint: str = ""
    specs: Mapping[str, str] = field(default_factory=dict)
    agent_fingerprints: Mapping[str, str] = field(default_factory=dict)
    configs: Mapping[str, ClusterConfig] = field(default_factory=dict)
    traces: str | None = None
    arrivals: str = "poisson"
    own_families: tuple[tuple[str, float], ...] = ()
    curve_durations: str = "stretched"
    hopeless_curve_share: float | None = None
    _configs: dict[tuple[str, float], ClusterConfig] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("agents", "workloads", "load_factors"):
            values = getattr(self, name)
            if not isinstance(values, tuple) or not values:
                raise ConfigError(f"Grid.{name} must be a non-empty tuple, got {values!r}.")
            if len(set(values)) != len(values):
                raise ConfigError(f"Grid.{name} names an entry twice: {list(values)}.")
        own = [name for name, _ in self.own_families]
        unknown = [name for name in self.workloads if name not in WORKLOADS and name not in own]
        if unknown:
            raise ConfigError(
                f"Unknown workload(s) {unknown}. Known workloads: {sorted(WORKLOADS)}"
                + (f", and your own families {own}." if own else ".")
            )
        if not all(isinstance(f, (int, float)) and 0 < f < float("inf") for f in self.load_factors):
            raise ConfigError(
                f"Grid.load_factors must be positive numbers (multiples of the training load "
                f"{TRAINING_LOAD}), got {list(self.load_factors)}."
            )
        if not isinstance(self.n_seeds, int) or self.n_seeds < 1:
            raise ConfigError(f"Grid.n_seeds must be an int >= 1, got {self.n_seeds!r}.")
        if not isinstance(self.first_seed, int) or self.first_seed < EVALUATION_SEED_BASE:
            raise ConfigError(
                f"Grid.first_seed must be an int >= {EVALUATION_SEED_BASE} (evaluation seeds; "
                f"training and tuning use those below), got {self.first_seed!r}."
            )
        configs = {
            (workload, factor): self._build_config(workload, factor)
            for workload in self.workloads
            for factor in self.load_factors
        }
        object.__setattr__(self, "_configs", configs)

    def _build_config(self, workload: str, factor: float) -> ClusterConfig:
        recorded = self.configs.get(self.label(workload, factor))
        if recorded is not None:
            return recorded
        mix: dict[str, Any] = (
            {"workload": workload}
            if workload in WORKLOADS
            else {"family_weights": ((workload, 1.0),)}
        )
        config = get_config(
            self.base,
            **mix,
            load=float(factor) * TRAINING_LOAD,
            world_version=self.world_version,
            arrivals=self.arrivals,
            own_families=self.own_families,
            curve_durations=self.curve_durations,
            hopeless_curve_share=self.hopeless_curve_share,
        )
        if self.quick and config.arrival_horizon > QUICK_ARRIVAL_HORIZON:
            config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
        return config

    @property
    def seeds(self) -> range:
        """The evaluation seeds."""
        return range(self.first_seed, self.first_seed + self.n_seeds)

    @property
    def strata(self) -> tuple[tuple[str, float], ...]:
        """The (workload, load factor) pairs, workload-major."""
        return tuple(self._configs)

    def config(self, workload: str, load_factor: float) -> ClusterConfig:
        """The configuration of one stratum."""
        return self._configs[(workload, load_factor)]

    def label(self, workload: str, load_factor: float) -> str:
        """A readable name of one stratum's config, e.g. ``evaluation/rl@1.5x`` (with its
        arrival process when not Poisson, ``evaluation/rl@1.5x philly``, ``recorded`` when
        the curves' recorded work sets their durations, and ``hopeless 0.1`` when the grid
        sets the share of never-reaching curves hopeless tasks run)."""
        arrivals = "" if self.arrivals == "poisson" else f" {Path(self.arrivals).stem}"
        durations = "" if self.curve_durations == "stretched" else f" {self.curve_durations}"
        share = self.hopeless_curve_share
        hopeless = "" if share is None else f" hopeless {share:g}"
        quick = " quick" if self.quick else ""
        return f"{self.base}/{workload}@{load_factor:g}x{quick}{arrivals}{durations}{hopeless}"

    def spec(self, agent: str) -> str:
        """The registered name or import path of the agent labelled ``agent``."""
        return self.specs.get(agent, agent)

    def cells(self) -> list[Cell]:
        """Every cell, seed-major with agents interleaved (so the progress bar's ETA is fair)."""
        return [
            Cell(
                self.spec(agent),
                seed,
                self.config(workload, factor),
                self.label(workload, factor),
                workload=workload,
                load_factor=float(factor),
                fingerprint=self.fingerprint,
                agent_fingerprint=self.agent_fingerprints.get(agent, ""),
                label=agent,
                traces=self.traces,
            )
            for seed in self.seeds
            for workload, factor in self.strata
            for agent in self.agents
        ]
