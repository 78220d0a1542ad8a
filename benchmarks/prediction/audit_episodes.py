"""The episodes of the leak audit (:mod:`mara_env.benchmarks.prediction.leak_audit`): what it plays, and
what it records of each task: the observed columns and the privileged truth.

:func:`play_episode` plays one episode with the random masked scheduler and records each task at
first sight (the first epoch it stands in a visible slot) and, from its second reported loss,
once per new loss: its observed slot columns, the deadline window, the predictors' features, and
the truth from the simulator's privileged view (its remaining need; whether it can still reach
its target by its deadline with every node it may get). Nothing privileged enters the observed
columns or the predictors' features.

Example:
    >>> settings = AuditSettings(train_seeds=(100,), eval_seeds=(1000,), predictors=("wls",),
    ...                          arrival_horizon=8)
    >>> sights, judged = play_episode(settings, "evaluation", 1000, build_predictors(settings))
    >>> bool(len(sights)) and set(judged[0]) >= {"feasible", "wls_success"}
    True
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
from tqdm.auto import tqdm

from mara_env import ClusterConfig, node_turns
from mara_env.agents import Scheduler
from mara_env.agents.clairvoyant import NEVER, task_epochs_to_target
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.seeds import (
    EVALUATION_SEED_START,
    evaluation_seeds,
    require_training_seeds,
    training_seeds,
)
from mara_env.benchmarks.common.threads import one_torch_thread
from mara_env.benchmarks.prediction.audit_worlds import DEFAULT_WORLD, WORLDS
from mara_env.benchmarks.prediction.driven_episodes import driven_episode, predictor_generators
from mara_env.curves.families import observed_name
from mara_env.predictors.base import Predictor, RemainingWork, is_privileged
from mara_env.predictors.env_histories import task_histories
from mara_env.predictors.registry import make_predictor, require_observation_only
from mara_env.sim.observation import SlotView, decode_observation
from mara_env.sim.rules import progress_gain
from mara_env.sim.simulator import ClusterSimulator

#: The scheduler that plays the audited episodes: it favours no task, so it selects nothing.
DRIVER = "random"
#: What each world of :data:`WORLDS` is, as the results pages say it.
WORLD_DESCRIPTIONS: Mapping[str, str] = {name: entry.description for name, entry in WORLDS.items()}
#: The predictors whose features the probes read by default.
DEFAULT_PREDICTORS = ("wls", "flow_matching", "flow_matching_without_target")
#: The observed slot columns audited, as :class:`~mara_env.sim.observation.SlotView` fields.
COLUMNS = (
    "log_target_ratio",
    "log_loss_ratio",
    "progress",
    "time_left",
    "time_left_fraction",
    "age",
    "work",
    "speed",
    "curve_steps",
    "recent_slope",
    "budget",
)
#: The privileged perfect predictor whose features the oracle probe reads (never observed).
ORACLE = "oracle"
#: Derived from the observation: the epochs from arrival to deadline.
WINDOW = "deadline_window"
#: Offset of the predictors' generator seeds from the episode seed.
_PREDICTOR_SEED_OFFSET = 4_241


@dataclass(frozen=True)
class AuditSettings:
    """What the audit plays and measures.

    Attributes:
        worlds: World names of :data:`~mara_env.benchmarks.prediction.audit_worlds.WORLDS`,
            audited side by side.
        train_seeds: Training seeds (below 1000) of the training preset, to fit the probes.
        eval_seeds: Evaluation seeds (1000 and up) of the evaluation preset, measured.
        predictors: Registered predictor names whose features the probes may read.
        n_samples: Samples of remaining work per prediction.
        arrival_horizon: Shorter arrivals (``--quick``); ``None`` keeps the presets'.
        resamples: Bootstrap resamples of the evaluation episodes for each interval.

    Raises:
        ValueError: For an unknown world or predictor, a training seed of 1000 or more, an
            evaluation seed below 1000, or fewer than one sample.
    """

    worlds: tuple[str, ...] = tuple(WORLDS)
    train_seeds: tuple[int, ...] = training_seeds(100, 20)
    eval_seeds: tuple[int, ...] = evaluation_seeds(20)
    predictors: tuple[str, ...] = DEFAULT_PREDICTORS
    n_samples: int = 32
    arrival_horizon: int | None = None
    resamples: int = 500

    def __post_init__(self) -> None:
        unknown = [world for world in self.worlds if world not in WORLDS]
        if unknown or not self.worlds:
            raise ValueError(f"AuditSettings.worlds must name {list(WORLDS)}, got {unknown}.")
        require_training_seeds(self.train_seeds, where="AuditSettings.train_seeds")
        low = [seed for seed in self.eval_seeds if seed < EVALUATION_SEED_START]
        if low or not self.eval_seeds:
            raise ValueError(
                f"AuditSettings.eval_seeds must be evaluation seeds (1000 and up), got {low}."
            )
        require_observation_only(self.predictors, "the leak audit (AuditSettings.predictors)")
        if self.n_samples < 1 or self.resamples < 1:
            raise ValueError(
                f"AuditSettings.n_samples and resamples must be >= 1, got {self.n_samples} "
                f"and {self.resamples}."
            )

    def config(self, preset: str, world: str = DEFAULT_WORLD) -> ClusterConfig:
        """The preset in ``world``, with the shorter arrival horizon if one is set."""
        if self.arrival_horizon is None:
            return WORLDS[world].config(preset)
        return WORLDS[world].config(preset, arrival_horizon=self.arrival_horizon)


def build_predictors(settings: AuditSettings) -> dict[str, Predictor]:
    """The settings' predictors by name."""
    return {name: make_predictor(name) for name in settings.predictors}


#: One task seen once: observed columns, predictor features and privileged truth, by name.
Record = dict[str, Any]


def start_episode(
    settings: AuditSettings,
    preset: str,
    seed: int,
    predictors: Mapping[str, Predictor],
    world: str,
    *,
    offset: int,
) -> tuple[ClusterConfig, Any, Scheduler, dict[str, np.random.Generator]]:
    """The config, the reset AEC env and :data:`DRIVER` of one audited episode, the privileged
    predictors among ``predictors`` bound to it, and one generator per predictor (seeded from
    ``seed`` and ``offset``)."""
    config = settings.config(preset, world)
    env, driver = driven_episode(config, DRIVER, seed, WORLDS[world].trace_source())
    for predictor in predictors.values():
        if is_privileged(predictor):
            cast(Any, predictor).bind(env)
    return config, env, driver, predictor_generators(list(predictors), seed, offset=offset)


def add_settings_arguments(
    parser: argparse.ArgumentParser, *, output: Path, writes: str, quick: str
) -> None:
    """The options :func:`command_line_settings` reads, on ``parser``: ``--worlds``,
    ``--seeds``, ``--output`` (default ``output``, where ``writes`` go), ``--quick`` (what the
    smoke run leaves out, ``quick``) and ``--no-progress``."""
    parser.add_argument(
        "--worlds",
        nargs="+",
        default=list(WORLDS),
        choices=list(WORLDS),
        help="The worlds measured side by side (default: all).",
    )
    parser.add_argument(
        "--seeds",
        type=positive_int,
        default=20,
        help="Episodes of each preset: training seeds from 100 to fit on, evaluation seeds "
        "from 1000 for the figures (default 20).",
    )
    parser.add_argument(
        "--output", type=Path, default=output, help=f"Where {writes} go (default {output})."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"A smoke run: 2 seeds, arrivals over 20 epochs, {quick}.",
    )
    parser.add_argument("--no-progress", action="store_true", help="No progress bars.")


def command_line_settings(
    parser: argparse.ArgumentParser, args: argparse.Namespace, predictors: Sequence[str]
) -> AuditSettings:
    """The settings of a command line parsed with :func:`add_settings_arguments`: ``--seeds``
    training seeds from 100 and as many evaluation seeds from 1000; ``--quick``: 2 of each,
    arrivals over 20 epochs, 50 resamples. Bad settings end the command through
    ``parser.error`` with the reason."""
    count = 2 if args.quick else args.seeds
    try:
        return AuditSettings(
            worlds=tuple(args.worlds),
            train_seeds=training_seeds(100, count, where="--seeds"),
            eval_seeds=evaluation_seeds(count),
            predictors=tuple(predictors),
            arrival_horizon=20 if args.quick else None,
            resamples=50 if args.quick else 500,
        )
    except ValueError as error:
        parser.error(str(error))


def play_episode(
    settings: AuditSettings,
    preset: str,
    seed: int,
    predictors: Mapping[str, Predictor],
    world: str = DEFAULT_WORLD,
) -> tuple[list[Record], list[Record]]:
    """Play one episode with :data:`DRIVER`; return the first-sight records and the mid-task
    judgements (module docstring), each a dict of observed columns and privileged truth.
    Privileged predictors among ``predictors`` (the oracle) are bound to the episode."""
    config, env, driver, rng = start_episode(
        settings, preset, seed, predictors, world, offset=_PREDICTOR_SEED_OFFSET
    )
    seen: set[int] = set()
    reported: dict[int, int] = {}
    sights: list[Record] = []
    judged: list[Record] = []
    for agent, node in node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            view = decode_observation(np.asarray(observation["observation"]), config)
            slots = slot_records(env.simulator, view)
            sights += [record for record in slots if record["task"] not in seen]
            seen |= {record["task"] for record in slots}
            fresh = [
                r for r in slots if r["reports"] >= 2 and reported.get(r["task"]) != r["reports"]
            ]
            reported.update({r["task"]: r["reports"] for r in fresh})
            judged += judge(env.simulator, fresh, predictors, rng, settings.n_samples)
        env.step(driver.act(observation, node))
    return sights, judged


def slot_records(simulator: ClusterSimulator, view: SlotView) -> list[Record]:
    """The observed columns and the privileged need of every occupied slot."""
    state = simulator.state
    records = []
    for slot in np.flatnonzero(view.occupied):
        task = int(state.slots[slot])
        speed = float(state.tasks.speed[task])
        steps_done = float(view.curve_steps[slot])
        need = max(float(state.tasks.demand[task]) - steps_done / speed, 0.0)
        record: Record = {column: float(getattr(view, column)[slot]) for column in COLUMNS}
        fraction = record["time_left_fraction"]
        record[WINDOW] = record["time_left"] / fraction if fraction > 0 else math.nan
        record.update(
            task=task,
            slot=int(slot),
            family=observed_name(int(view.family[slot])),
            need=need,
            unreachable=not math.isfinite(need),
            reports=len(state.history_loss[task]),
        )
        records.append(record)
    return records


def judge(
    simulator: ClusterSimulator,
    fresh: list[Record],
    predictors: Mapping[str, Predictor],
    rng: Mapping[str, np.random.Generator],
    n_samples: int,
) -> list[Record]:
    """Each fresh record with its truth (feasible with every node it may get) and the
    predictors' features."""
    if not fresh:
        return []
    state, config = simulator.state, simulator.config
    nodes = config.task_node_limit
    tasks = [record["task"] for record in fresh]
    held = np.bincount(state.node_task[state.node_task >= 0], minlength=len(state.tasks))
    histories = task_histories(simulator, tasks)
    time_left = np.array([history.time_left for history in histories])
    speed = np.array([history.speed for history in histories])
    every_node = progress_gain(speed, float(nodes), state.tasks.alpha[tasks])
    # the oracle is a perfect predictor: its one sample is the true remaining work
    truth = RemainingWork(np.array([record["need"] for record in fresh])[:, None] * speed[:, None])
    predicted = {name: p.predict(histories, n_samples, rng[name]) for name, p in predictors.items()}
    for name, work in {**predicted, ORACLE: truth}.items():
        success = work.success_probability(time_left, every_node)
        median = np.quantile(work.samples, 0.5, axis=1, method="inverted_cdf") / speed
        for index, record in enumerate(fresh):
            record[f"{name}_success"] = float(success[index])
            record[f"{name}_need"] = float(median[index])
    for index, record in enumerate(fresh):
        epochs = task_epochs_to_target(
            simulator,
            record["task"],
            np.array([nodes]),
            int(held[record["task"]]),
            int(time_left[index]),
        )
        record["feasible"] = bool(epochs[0] != NEVER)
    return fresh


def collect(
    settings: AuditSettings, world: str, preset: str, seeds: Sequence[int], progress: bool
) -> tuple[list[Record], list[Record]]:
    """Every episode's first-sight records and judgements, seed by seed."""
    predictors = build_predictors(settings)
    sights: list[Record] = []
    judged: list[Record] = []
    with one_torch_thread():
        for seed in tqdm(seeds, desc=f"{world} {preset}", unit="episode", disable=not progress):
            first, later = play_episode(settings, preset, seed, predictors, world)
            sights += [{**record, "seed": seed} for record in first]
            judged += [{**record, "seed": seed} for record in later]
    return sights, judged
