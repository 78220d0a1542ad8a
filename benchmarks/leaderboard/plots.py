"""The leaderboard's figures: completion rate against load, and one episode's Gantt per agent.

- ``completion_vs_load.png``: one panel per workload; each agent's mean completion rate at
  each load with its 95% stratified-bootstrap band.
- ``gantt.png``: for every agent, the same episode (the grid's first workload, load and seed)
  until the end of its arrival horizon: each node's task over the epochs, one colour per task
  (light grey: idle), with the tasks completed so far. The episode is replayed here,
  deterministically, exactly as the cell ran it.

matplotlib is optional (``pip install 'mara-env[plot]'``); without it :class:`PlotsUnavailable`
says so and the leaderboard still writes its tables.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import mara_env
from mara_env import TRAINING_LOAD, ClusterConfig, decode_observation
from mara_env.agents import make_agent, start_episode
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.figures import pyplot
from mara_env.benchmarks.leaderboard.summary import Leaderboard
from mara_env.envs.render import task_colour

#: File names of the figures in the output directory.
LOAD_PLOT = "completion_vs_load.png"
GANTT_PLOT = "gantt.png"


def plot_completion_vs_load(board: Leaderboard, path: Path) -> None:
    """Completion rate against load per agent and workload, with 95% bands, as a PNG.

    Raises:
        PlotsUnavailable: Without matplotlib.
    """
    plt = pyplot()
    summary = board.summary
    if summary is None:
        return
    grid = board.grid
    loads = [factor * TRAINING_LOAD for factor in grid.load_factors]
    figure, axes = plt.subplots(
        1, len(grid.workloads), figsize=(4.2 * len(grid.workloads) + 2.2, 4.2), squeeze=False
    )
    colours = plt.get_cmap("tab20")
    for w, workload in enumerate(grid.workloads):
        axis = axes[0, w]
        for rank, agent in enumerate(board.ranked):
            a = board.index(agent)
            intervals = [
                summary.stratum[a][grid.strata.index((workload, f))] for f in grid.load_factors
            ]
            colour = colours(rank % 20)
            axis.plot(
                loads,
                [i.estimate for i in intervals],
                marker="o",
                color=colour,
                label=agent,
                linewidth=1.5,
            )
            axis.fill_between(
                loads,
                [i.low for i in intervals],
                [i.high for i in intervals],
                color=colour,
                alpha=0.15,
                linewidth=0,
            )
        axis.set_title(workload)
        axis.set_xlabel(f"load (training load = {TRAINING_LOAD:g})")
        axis.set_xticks(
            loads, [f"{load:g}\n{f:g}x" for load, f in zip(loads, grid.load_factors, strict=True)]
        )
        axis.set_ylim(0.0, 1.0)
        axis.grid(alpha=0.3)
    axes[0, 0].set_ylabel("completion rate (mean, 95% CI)")
    axes[0, -1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=8, frameon=False)
    figure.suptitle(
        f"Completion rate against load, {grid.n_seeds} seeds per point (best overall first)",
        fontsize=10,
    )
    figure.tight_layout()
    _save(plt, figure, path)


@dataclass(frozen=True)
class EpisodeSchedule:
    """Who trained what in one episode, epoch by epoch.

    Attributes:
        tasks: ``(epochs, n_nodes)`` the arrival serial of the task each node trained in each
            epoch (-1: idle).
        completed: ``(epochs,)`` tasks completed by the end of each epoch.
    """

    tasks: np.ndarray
    completed: np.ndarray


def episode_schedule(agent: str, config: ClusterConfig, seed: int, epoch: int) -> EpisodeSchedule:
    """``agent``'s episode ``seed``, replayed for its first ``epoch`` epochs (fewer if it ends
    sooner), with what each node trained.

    The scheduler is reset and (for a clairvoyant reference) bound exactly as
    :func:`mara_env.agents.evaluate` does; out-of-range actions become idle there and here.
    """
    env = mara_env.raw_env(config=config)
    scheduler = make_agent(agent, world_version=config.world_version)
    env.reset(seed=seed)
    start_episode(scheduler, env, seed)
    index = {name: i for i, name in enumerate(env.possible_agents)}
    tasks: list[list[int]] = []
    completed: list[float] = []
    current = [-1] * config.n_nodes
    for name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated or env.simulator.state.epoch >= epoch:
            break
        observation = env.observe(name)
        node = index[name]
        action = scheduler.act(observation, node)
        if not isinstance(action, (int, np.integer)) or not 0 <= action < config.n_actions:
            action = config.idle_action
        if action < config.n_slots:
            current[node] = int(
                decode_observation(observation["observation"], config).serial[action]
            )
        before = env.simulator.state.epoch
        env.step(int(action))
        if env.simulator.state.epoch != before:  # the last node has chosen: the epoch ran
            tasks.append(current)
            completed.append(env.simulator.episode_metrics()["completed"])
            current = [-1] * config.n_nodes
    return EpisodeSchedule(
        np.array(tasks, dtype=np.int64).reshape(-1, config.n_nodes), np.array(completed)
    )


def _schedule_picture(tasks: np.ndarray) -> np.ndarray:
    """``(n_nodes, epochs, 3)`` RGB: each node's task over time in its colour, idle light grey."""
    picture = np.full((*tasks.T.shape, 3), 225, dtype=np.uint8)
    for serial in np.unique(tasks[tasks >= 0]).tolist():
        picture[serial == tasks.T] = task_colour(serial)
    return picture


def plot_gantts(board: Leaderboard, path: Path) -> tuple[bool, list[str]]:
    """One episode's schedule per agent, in one PNG: nodes over epochs, coloured by the task each
    trains, with the tasks completed so far.

    Returns:
        Whether the PNG was written (some agent rendered), and notes on agents that failed.

    Raises:
        PlotsUnavailable: Without matplotlib.
    """
    plt = pyplot()
    grid = board.grid
    workload, factor = grid.strata[0]
    config = grid.config(workload, factor)
    seed = grid.seeds[0]
    agents = board.ranked or grid.agents
    schedules: list[tuple[str, EpisodeSchedule]] = []
    notes = []
    for agent in agents:
        try:
            schedules.append(
                (agent, episode_schedule(grid.spec(agent), config, seed, config.arrival_horizon))
            )
        except Exception as error:
            notes.append(f"Gantt of {agent} skipped: {type(error).__name__}: {error}")
    if not schedules:
        return False, notes
    columns = min(3, len(schedules))
    rows = math.ceil(len(schedules) / columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(4.8 * columns, 2.4 * rows + 1.0), squeeze=False, sharex=True
    )
    for axis in axes.flat[len(schedules) :]:
        axis.axis("off")
    for axis, (agent, schedule) in zip(axes.flat, schedules, strict=False):
        epochs = len(schedule.tasks)
        axis.imshow(
            _schedule_picture(schedule.tasks),
            aspect="auto",
            interpolation="nearest",
            extent=(0, epochs, config.n_nodes - 0.5, -0.5),
        )
        done = int(schedule.completed[-1]) if epochs else 0
        axis.set_title(f"{agent}: {done} tasks completed", fontsize=9)
        axis.set_ylabel("node", fontsize=8)
        axis.set_xlabel("epoch", fontsize=8)
        axis.tick_params(labelsize=7)
        count = axis.twinx()
        count.step(np.arange(1, epochs + 1), schedule.completed, where="post", color="black")
        count.set_ylabel("completed", fontsize=8)
        count.tick_params(labelsize=7)
        count.set_ylim(bottom=0)
    figure.suptitle(
        f"{grid.label(workload, factor)}, seed {seed}, epochs 0-{config.arrival_horizon}: each "
        "node's task over time (one colour per task; light grey: idle) and, in black, the tasks "
        "completed so far",
        fontsize=9,
    )
    figure.tight_layout()
    _save(plt, figure, path)
    return True, notes


def _save(plt: Any, figure: Any, path: Path) -> None:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    write_atomically(path, buffer.getvalue())
