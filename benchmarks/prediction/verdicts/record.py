"""Recording verdicts: each predictor's success probability beside the privileged truth.

One episode of the configured preset is played by the fixed :data:`DRIVER`. At the start of
every epoch, each slotted task that has reported since it was last judged (and has at least one
report after its arrival) is judged once per predictor, on what a scheduler sees
(:func:`mara_env.predictors.env_histories.task_histories`):

* **predicted**: the predictor's probability of reaching the target by the deadline with all
  ``m = config.task_node_limit`` nodes from now on, ``RemainingWork.success_probability`` with
  the curve steps ``m`` nodes make per epoch (:func:`mara_env.sim.rules.progress_gain`; switch costs
  ignored, as in the prediction wrappers);
* **truth** (privileged): whether it could still do so, from
  :func:`mara_env.agents.clairvoyant.task_epochs_to_target` (the reference's exact stepping of the hidden
  curve, with the switch cost paid by the nodes that did not train it last epoch).

The driver decides which tasks get reports, so it is fixed: ``round_robin`` trains every visible
task in turn, so every slotted task is reported on regularly whatever the predictors say.

Example:
    >>> settings = VerdictSettings(seeds=(100,), predictors=("wls",), arrival_horizon=5)
    >>> records = record_episode(settings, 100, {"wls": make_predictor("wls")})
    >>> records[0].reports >= 1 and 0.0 <= records[0].success["wls"] <= 1.0
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from mara_env import ClusterConfig, get_config, node_turns
from mara_env.agents.clairvoyant import NEVER, task_epochs_to_target
from mara_env.benchmarks.common.seeds import require_training_seeds
from mara_env.benchmarks.prediction.driven_episodes import driven_episode, predictor_generators
from mara_env.benchmarks.prediction.verdicts.laira_judge import (
    LAIRA_JUDGE,
    laira_settings,
    laira_success,
)
from mara_env.predictors.base import Predictor
from mara_env.predictors.env_histories import slotted_tasks, task_histories
from mara_env.predictors.registry import make_predictor, require_observation_only
from mara_env.sim.rules import progress_gain
from mara_env.sim.simulator import ClusterSimulator

#: The scheduler that plays the episodes (it decides which tasks get reports).
DRIVER = "round_robin"
#: Training seeds judged by default (below the evaluation seeds, which start at 1000).
DEFAULT_SEEDS = tuple(range(100, 110))
DEFAULT_PREDICTORS = ("wls", "dkf", "flow_matching")
#: Offset of the predictors' generator seeds from the episode seed.
_PREDICTOR_SEED_OFFSET = 7_919


@dataclass(frozen=True)
class VerdictSettings:
    """What the diagnostics play and judge.

    Attributes:
        preset: A config preset on the train split (default ``training``, at the training load).
        seeds: Environment seeds, all below the evaluation seeds (1000 and up).
        predictors: Registered predictor names.
        threshold: A task is judged infeasible when its predicted success probability is below
            this, in (0, 1].
        n_samples: Samples of remaining work per prediction.
        arrival_horizon: Shorter arrivals (``--quick``); ``None`` keeps the preset's.
        laira: Judge with the shipped LaiRA's own look-ahead too (:mod:`~.laira_judge`), at its
            own threshold.

    Raises:
        ValueError: For an evaluation seed, a preset on the test split, an unknown predictor, a
            threshold outside (0, 1] or fewer than one sample.
    """

    preset: str = "training"
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    predictors: tuple[str, ...] = DEFAULT_PREDICTORS
    threshold: float = 0.5
    n_samples: int = 32
    arrival_horizon: int | None = None
    laira: bool = True

    def __post_init__(self) -> None:
        require_training_seeds(self.seeds, where="VerdictSettings.seeds")
        if self.config.split != "train":
            raise ValueError(
                f"VerdictSettings.preset {self.preset!r} draws the test split; diagnostics use "
                "the train split (e.g. 'training')."
            )
        if not self.predictors:
            raise ValueError("VerdictSettings.predictors must name at least one predictor.")
        require_observation_only(self.predictors, "the verdicts (VerdictSettings.predictors)")
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"VerdictSettings.threshold must be in (0, 1], got {self.threshold}.")
        if self.n_samples < 1:
            raise ValueError(f"VerdictSettings.n_samples must be >= 1, got {self.n_samples}.")

    @property
    def judges(self) -> tuple[str, ...]:
        """The predictors, then LaiRA's look-ahead if it is judged."""
        return self.predictors + ((LAIRA_JUDGE,) if self.laira else ())

    def thresholds(self) -> dict[str, float]:
        """Each judge's threshold: ``threshold`` for the predictors, LaiRA's own for it."""
        chosen = dict.fromkeys(self.predictors, self.threshold)
        if self.laira:
            chosen[LAIRA_JUDGE] = laira_settings().success_threshold
        return chosen

    @property
    def config(self) -> ClusterConfig:
        """The preset, with the shorter arrival horizon if one is set."""
        if self.arrival_horizon is None:
            return get_config(self.preset)
        return get_config(self.preset, arrival_horizon=self.arrival_horizon)


@dataclass(frozen=True)
class VerdictRecord:
    """One task judged once.

    Attributes:
        seed: The episode's seed.
        task: The task's id in that episode.
        reports: Losses it had reported since its arrival.
        feasible: The privileged truth: it could still reach its target by its deadline with
            all the nodes from now on.
        success: Each predictor's probability of exactly that.
    """

    seed: int
    task: int
    reports: int
    feasible: bool
    success: Mapping[str, float]


def build_predictors(settings: VerdictSettings) -> dict[str, Predictor]:
    """The settings' predictors by name (torch ones import torch now)."""
    return {name: make_predictor(name) for name in settings.predictors}


def record_episode(
    settings: VerdictSettings, seed: int, predictors: Mapping[str, Predictor]
) -> list[VerdictRecord]:
    """Play episode ``seed`` with :data:`DRIVER` and judge every new report (module docstring)."""
    config = settings.config
    env, driver = driven_episode(config, DRIVER, seed)
    rng = predictor_generators(list(predictors), seed, offset=_PREDICTOR_SEED_OFFSET)
    judged: dict[int, int] = {}
    records: list[VerdictRecord] = []
    for agent, node in node_turns(env):
        if node == 0:
            records += _judge_epoch(env.simulator, settings, predictors, rng, judged, seed)
        env.step(driver.act(env.observe(agent), node))
    return records


def _judge_epoch(
    simulator: ClusterSimulator,
    settings: VerdictSettings,
    predictors: Mapping[str, Predictor],
    rng: Mapping[str, np.random.Generator],
    judged: dict[int, int],
    seed: int,
) -> list[VerdictRecord]:
    state, config = simulator.state, simulator.config
    fresh = []
    for task in slotted_tasks(simulator).tolist():
        points = len(state.history_loss[task])
        if points >= 2 and judged.get(task) != points:
            judged[task] = points
            fresh.append(task)
    if not fresh:
        return []
    nodes = config.task_node_limit
    held = np.bincount(state.node_task[state.node_task >= 0], minlength=len(state.tasks))
    histories = task_histories(simulator, fresh)
    time_left = np.array([history.time_left for history in histories])
    speed = np.array([history.speed for history in histories])
    all_nodes = progress_gain(speed, float(nodes), state.tasks.alpha[fresh])
    success = {
        name: predictor.predict(histories, settings.n_samples, rng[name]).success_probability(
            time_left, all_nodes
        )
        for name, predictor in predictors.items()
    }
    if settings.laira:
        alpha = state.tasks.alpha[fresh]
        success[LAIRA_JUDGE] = laira_success(laira_settings(), histories, alpha, nodes)
    records = []
    for index, task in enumerate(fresh):
        epochs = task_epochs_to_target(
            simulator, task, np.array([nodes]), int(held[task]), int(time_left[index])
        )
        records.append(
            VerdictRecord(
                seed=seed,
                task=task,
                reports=len(state.history_loss[task]) - 1,
                feasible=bool(epochs[0] != NEVER),
                success={name: float(values[index]) for name, values in success.items()},
            )
        )
    return records
