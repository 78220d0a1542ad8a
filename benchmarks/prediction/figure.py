"""``trajectories.png`` of the prediction benchmark: sampled futures against the truth.

For two test tasks per family (one feasible, one infeasible) at one observed fraction: the
observed losses, the true future and sampled future trajectories of every predictor that
implements :class:`mara_env.predictors.cases.TrajectoryPredictor`; beside it, every predictor's
remaining-work samples against the true value. Needs matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.predictors.base import Predictor, TaskHistory
from mara_env.predictors.cases import CAP_CURVE_LENGTHS, PredictionTask, sample_trajectories

#: Sampled trajectories drawn per predictor and task.
FIGURE_TRAJECTORIES = 16


def figure_tasks(
    tasks: Sequence[PredictionTask], fraction: float, seed: int
) -> list[PredictionTask]:
    """Two tasks of a family for the figure: the first feasible and the first infeasible one
    in a seeded shuffle that still have work left at ``fraction``."""
    order = np.random.default_rng([seed, 0xF16]).permutation(len(tasks))
    chosen: list[PredictionTask] = []
    for wanted in (False, True):
        for index in order.tolist():
            task = tasks[index]
            if task.infeasible == wanted and task.true_remaining(fraction) > 0:
                chosen.append(tasks[index])
                break
    return chosen


def plot_figure(
    path: Path,
    predictors: dict[str, Predictor],
    tasks_by_family: dict[str, list[PredictionTask]],
    fraction: float,
    *,
    n_samples: int,
    seed: int,
) -> None:
    """Write ``trajectories.png`` (see the module docstring). Needs matplotlib."""
    plt = pyplot()
    panels = [(family, task) for family, tasks in tasks_by_family.items() for task in tasks]
    figure, axes = plt.subplots(
        len(panels), 2, figsize=(13, 3.2 * len(panels)), squeeze=False, width_ratios=(3, 2)
    )
    colors = [f"C{index}" for index in range(10)]
    for row, (family, task) in enumerate(panels):
        history = task.history(fraction)
        rng = np.random.default_rng([seed, row])
        _plot_trajectories(axes[row, 0], task, history, predictors, colors, rng)
        axes[row, 0].set_title(
            f"{family} curve {task.curve_id}, {fraction:.0%} observed"
            + (" (infeasible)" if task.infeasible else ""),
            fontsize=9,
        )
        truth = task.true_remaining(fraction)
        _plot_remaining(axes[row, 1], task, history, truth, predictors, colors, n_samples, rng)
    figure.tight_layout()
    save_png(figure, path, dpi=90)


def _plot_trajectories(
    axis: Any,
    task: PredictionTask,
    history: TaskHistory,
    predictors: dict[str, Predictor],
    colors: Sequence[Any],
    rng: np.random.Generator,
) -> None:
    scale = task.curve[0]
    steps = np.arange(task.length)
    last = float(history.work[-1])
    future = steps >= last
    axis.plot(steps[future], np.log(task.curve[future] / scale), color="0.6", label="true future")
    axis.plot(history.work, np.log(history.loss), "o", color="black", ms=3, label="observed")
    axis.axhline(np.log(history.target), color="tab:red", ls="--", lw=1, label="target")
    if not task.infeasible:
        axis.axvline(task.steps_to_target, color="tab:red", lw=0.8, alpha=0.5)
    offsets = np.linspace(1.0, max(task.length - last, 2.0), 50)
    for index, (name, predictor) in enumerate(predictors.items()):
        paths = sample_trajectories(predictor, [history], offsets, FIGURE_TRAJECTORIES, rng)
        if paths is None:
            continue
        color = colors[index % len(colors)]
        for j, path in enumerate(paths[0]):
            axis.plot(last + offsets, path, color=color, lw=0.7, alpha=0.35,
                      label=name if j == 0 else None)  # fmt: skip
    axis.set_xlabel("curve steps")
    axis.set_ylabel("ln(loss / loss at arrival)")
    axis.legend(fontsize=7, loc="upper right")


def _plot_remaining(
    axis: Any,
    task: PredictionTask,
    history: TaskHistory,
    truth: float,
    predictors: dict[str, Predictor],
    colors: Sequence[Any],
    n_samples: int,
    rng: np.random.Generator,
) -> None:
    never_at = np.log10(1.0 + task.cap) + 0.3
    names = list(predictors)
    for index, name in enumerate(names):
        samples = predictors[name].predict([history], n_samples, rng).samples[0]
        x = np.where(np.isinf(samples), never_at, np.log10(1.0 + np.minimum(samples, task.cap)))
        jitter = rng.uniform(-0.18, 0.18, size=len(x))
        axis.scatter(x, index + jitter, s=8, alpha=0.5, color=colors[index % len(colors)])
        median = np.quantile(x, 0.5, method="inverted_cdf")
        axis.plot(median, index, "|", color="black", ms=16, mew=2)
        axis.text(0.02, index + 0.25, f"P(never) {np.mean(np.isinf(samples)):.2f}", fontsize=7,
                  transform=axis.get_yaxis_transform())  # fmt: skip
    true_at = never_at if math.isinf(truth) else np.log10(1.0 + truth)
    axis.axvline(true_at, color="tab:red", lw=1.5, label="truth")
    axis.set_yticks(range(len(names)), names)
    axis.set_ylim(-0.6, len(names) - 0.4)
    axis.set_xlim(-0.1, never_at + 0.3)
    values = [v for v in (0, 10, 100, 1000, 10_000) if np.log10(1.0 + v) < never_at - 0.25]
    axis.set_xticks([*np.log10(1.0 + np.array(values)), never_at], [*map(str, values), "never"])
    axis.set_xlabel(
        f"remaining curve steps (log scale; beyond {CAP_CURVE_LENGTHS:g} curve lengths = never)"
    )
    axis.legend(fontsize=7, loc="lower right")
