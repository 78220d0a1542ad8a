"""Calibrating LaiRA's look-ahead: from the DKF's margin to a success probability.

LaiRA drops a task for a slice when its look-ahead says the target is out of reach even with
all the nodes (:mod:`mara_env.agents.laira`). The Dynamic Kalman Filter gives that test as a *margin*:
how many predicted standard deviations the best predicted log-loss lies below the log-target
(:class:`mara_env.predictors.dkf.Feasibility`). Its normal CDF is a probability only if the filter's
uncertainty is right, and on the shipped curves it is not. This module measures outcomes and
fits, per family (observable: the family is in the observation), a logistic map
``P(feasible) = 1 / (1 + exp(-(scale * margin + shift)))``:

* **episodes**: the ``training`` preset at the training load (train split), the leaderboard's
  workloads, training seeds (:func:`mara_env.benchmarks.baselines.tuning.tuning_seeds`), driven by LaiRA
  with the given settings except that it never drops a task (``success_threshold=0``) and runs
  the look-ahead from the first report (``min_reports=1``), so every task keeps getting reports;
* **verdicts**: at every slice start, each task with at least ``min_reports`` (2) reports
  gives its margin;
* **truth** (privileged, read only here): whether the task can still report a loss at or below
  its target by its deadline with all the nodes from now on, from the clairvoyant reference's
  exact stepping of its true curve (:func:`mara_env.agents.clairvoyant.task_epochs_to_target`);
* **fit**: maximum-likelihood logistic regression of truth on the margin (Newton's method),
  one per family.

Example:
    >>> import numpy as np
    >>> margin = np.array([-2.0, -1.0, -1.0, 0.0, 1.0, 1.0, 2.0, 3.0])
    >>> truth = np.array([0, 0, 1, 0, 1, 1, 1, 1], dtype=bool)
    >>> scale, shift = fit_logistic(margin, truth)
    >>> bool(scale > 0)
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from mara_env import ClusterConfig, node_turns, raw_env
from mara_env.agents import start_episode
from mara_env.agents.clairvoyant import task_epochs_to_target
from mara_env.agents.laira import Laira, LairaSettings
from mara_env.curves.families import observed_name

#: Reports a verdict needs to enter the fit (the smallest ``min_reports`` LaiRA is tuned with).
MIN_REPORTS = 2
#: Verdicts a family needs before it gets a calibration of its own.
MIN_VERDICTS = 100


@dataclass(frozen=True)
class Verdicts:
    """Look-ahead margins with their outcomes.

    Attributes:
        margin: The DKF margin of each verdict.
        reports: Reports the task had.
        family: The task's family name.
        feasible: Whether it could in truth still reach its target with all the nodes.
    """

    margin: np.ndarray
    reports: np.ndarray
    family: np.ndarray
    feasible: np.ndarray


def collect_verdicts(
    settings: LairaSettings, configs: Iterable[ClusterConfig], seeds: Iterable[int]
) -> Verdicts:
    """Play the calibration episodes and gather every verdict (see the module docstring)."""
    driver_settings = replace(settings, success_threshold=0.0, min_reports=1, lookahead=True)
    margins: list[float] = []
    reports: list[int] = []
    families: list[str] = []
    truth: list[bool] = []
    seeds = list(seeds)
    for config in configs:
        for seed in seeds:
            driver = Laira(driver_settings)
            env = raw_env(config)
            env.reset(seed=seed)
            start_episode(driver, env, seed)
            nodes = np.array([config.task_node_limit])
            slices = 0
            for agent, node in node_turns(env):
                observation = env.observe(agent)
                action = driver.act(observation, node)
                if node == 0 and len(driver.slice_lengths) > slices:
                    slices = len(driver.slice_lengths)
                    slots = np.flatnonzero(driver.last_reports >= MIN_REPORTS)
                    slots = slots[np.isfinite(driver.last_margin[slots])]
                    view = driver.histories.view
                    if view is not None and len(slots):
                        time_left = np.rint(view.time_left[slots]).astype(np.int64)
                        # Every node the task may hold, each paying the switch cost at first.
                        epochs = np.array(
                            [
                                task_epochs_to_target(env.simulator, task, nodes, 0, horizon)[0]
                                for task, horizon in zip(
                                    env.simulator.state.slots[slots].tolist(),
                                    time_left.tolist(),
                                    strict=True,
                                )
                            ]
                        )
                        margins += driver.last_margin[slots].tolist()
                        reports += driver.last_reports[slots].tolist()
                        families += [observed_name(int(f)) for f in view.family[slots]]
                        truth += (epochs <= time_left).tolist()
                env.step(action)
    return Verdicts(
        np.array(margins),
        np.array(reports, dtype=np.int64),
        np.array(families, dtype=str),
        np.array(truth, dtype=bool),
    )


def fit_logistic(
    margin: np.ndarray, truth: np.ndarray, *, iterations: int = 50
) -> tuple[float, float]:
    """Maximum-likelihood ``(scale, shift)`` of ``P(truth) = sigmoid(scale * margin + shift)``.

    Args:
        margin: One finite number per verdict.
        truth: One bool per verdict.
        iterations: Newton steps (the log-likelihood is concave; a few suffice).

    Raises:
        ValueError: For no verdicts, non-finite margins, or outcomes all of one kind (nothing
            to calibrate against).
    """
    x = np.asarray(margin, dtype=np.float64)
    y = np.asarray(truth, dtype=np.float64)
    if x.size == 0 or x.shape != y.shape or not np.isfinite(x).all():
        raise ValueError("fit_logistic: need one finite margin per outcome, and at least one.")
    if y.min() == y.max():
        raise ValueError("fit_logistic: every outcome is the same; play more episodes.")
    design = np.column_stack([x, np.ones_like(x)])
    weights = np.zeros(2)
    for _ in range(iterations):
        probability = 1.0 / (1.0 + np.exp(-np.clip(design @ weights, -700, 700)))
        gradient = design.T @ (y - probability)
        curvature = design.T @ (design * (probability * (1 - probability))[:, None])
        step = np.linalg.solve(curvature + 1e-9 * np.eye(2), gradient)
        weights += step
        if np.abs(step).max() < 1e-10:
            break
    return float(weights[0]), float(weights[1])


def calibrate(
    settings: LairaSettings, configs: Iterable[ClusterConfig], seeds: Iterable[int]
) -> dict[str, tuple[float, float]]:
    """``{family: (scale, shift)}`` for ``LairaSettings.calibration`` from the calibration
    episodes (families with too few verdicts, or verdicts of one outcome only, keep the DKF's
    own probability)."""
    verdicts = collect_verdicts(settings, configs, seeds)
    table = {}
    for family in sorted(set(verdicts.family.tolist())):
        mine = verdicts.family == family
        if mine.sum() >= MIN_VERDICTS and 0 < verdicts.feasible[mine].mean() < 1:
            table[family] = fit_logistic(verdicts.margin[mine], verdicts.feasible[mine])
    return table
