"""The leaderboard's figures: completion rate against load, and one episode's Gantt per agent.

- ``completion_vs_load.png``: one panel per workload; each agent's mean completion rate at
  each load with its 95% stratified-bootstrap band.
- ``gantt.png``: for every agent, the environment's ``rgb_array`` picture of the same episode
  (the grid's first workload, load and seed) at the end of its arrival horizon: node
  assignments over time coloured by task (top), each visible task's progress and time left
  (bottom). The episode is replayed here, deterministically, exactly as the cell ran it.

matplotlib is optional (``pip install 'mara-env[plot]'``); without it :class:`PlotsUnavailable`
says so and the leaderboard still writes its tables.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

import numpy as np

import mara_env
from mara_env import TRAINING_LOAD, ClusterConfig
from mara_env.agents import make_agent, start_episode
from mara_env.benchmarks.common.atomic import write_atomically
from mara_env.benchmarks.common.figures import pyplot
from mara_env.benchmarks.leaderboard.summary import Leaderboard

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


def episode_frame(agent: str, config: ClusterConfig, seed: int, epoch: int) -> np.ndarray:
    """The ``rgb_array`` picture of ``agent``'s episode ``seed`` after ``epoch`` epochs (or at
    its end, if sooner).

    The scheduler is reset and (for a clairvoyant reference) bound exactly as
    :func:`mara_env.agents.evaluate` does; out-of-range actions become idle there and here.
    """
    env = mara_env.raw_env(config=config, render_mode="rgb_array")
    scheduler = make_agent(agent, world_version=config.world_version)
    env.reset(seed=seed)
    start_episode(scheduler, env, seed)
    index = {name: i for i, name in enumerate(env.possible_agents)}
    for name in env.agent_iter():
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated or env.simulator.state.epoch >= epoch:
            break
        action = scheduler.act(env.observe(name), index[name])
        if not isinstance(action, (int, np.integer)) or not 0 <= action < config.n_actions:
            action = config.idle_action
        env.step(int(action))
    frame = env.render()
    if not isinstance(frame, np.ndarray):
        raise RuntimeError("the environment did not return an rgb_array frame")
    return frame


def plot_gantts(board: Leaderboard, path: Path) -> tuple[bool, list[str]]:
    """One episode's Gantt picture per agent, in one PNG.

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
    frames: list[tuple[str, np.ndarray]] = []
    notes = []
    for agent in agents:
        try:
            frame = episode_frame(grid.spec(agent), config, seed, config.arrival_horizon)
            frames.append((agent, frame))
        except Exception as error:
            notes.append(f"Gantt of {agent} skipped: {type(error).__name__}: {error}")
    if not frames:
        return False, notes
    columns = min(3, len(frames))
    rows = math.ceil(len(frames) / columns)
    height, width = frames[0][1].shape[:2]
    panel = 4.6
    figure, axes = plt.subplots(
        rows,
        columns,
        figsize=(panel * columns, rows * (panel * height / width + 0.5) + 0.6),
        squeeze=False,
    )
    for axis in axes.flat:
        axis.axis("off")
    for axis, (agent, frame) in zip(axes.flat, frames, strict=False):
        axis.imshow(frame, interpolation="nearest")
        axis.set_title(agent, fontsize=9)
    figure.suptitle(
        f"{grid.label(workload, factor)}, seed {seed}, after epoch {config.arrival_horizon}: "
        "nodes over time coloured by task (top), each slot's progress and time left (bottom)",
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
