"""Rendering: a text table (``ansi``) and a Gantt-style picture (``rgb_array``).

Rendering only reads the simulator's state; it never feeds observations. ``human`` prints the
text table to standard output.

The picture has two panels. Top: one row per node, one column per epoch, coloured by the task
the node trained (dark = idle); a task's colour is fixed by its id. Bottom: one row per visible
slot, showing the task's normalised progress toward its target as a bar in the task's colour,
and its time left before the deadline as a white tick on a scale of ``TIME_SCALE`` epochs.
"""

from __future__ import annotations

import sys

import numpy as np

from mara_env.curves.families import observed_name
from mara_env.errors import ConfigError
from mara_env.sim.observation import TIME_SCALE
from mara_env.sim.simulator import NO_TASK, ClusterSimulator

RENDER_MODES = ("human", "ansi", "rgb_array")

ROW_PIXELS = 12  # height of a node row in the Gantt panel and of a slot bar
COLUMN_PIXELS = 6  # width of one epoch in the Gantt panel
GANTT_EPOCHS = 120  # epochs shown in the Gantt panel (the most recent ones)
_WIDTH = GANTT_EPOCHS * COLUMN_PIXELS
_BACKGROUND = np.array([24, 24, 28], dtype=np.uint8)
_IDLE = np.array([48, 48, 56], dtype=np.uint8)


def task_colour(task_id: int) -> np.ndarray:
    """A stable, bright colour for a task id (golden-ratio hue walk)."""
    hue = (task_id * 0.618033988749895) % 1.0
    sector = int(hue * 6)
    fraction = hue * 6 - sector
    value, low = 230, 70
    rising, falling = low + (value - low) * fraction, value - (value - low) * fraction
    rgb = [
        (value, rising, low),
        (falling, value, low),
        (low, value, rising),
        (low, falling, value),
        (rising, low, value),
        (value, low, falling),
    ][sector % 6]
    return np.array(rgb, dtype=np.uint8)


def render_ansi(simulator: ClusterSimulator) -> str:
    """The cluster as a text table: nodes, then visible tasks, then the queue."""
    state = simulator.state
    tasks = state.tasks
    metrics = simulator.episode_metrics()
    lines = [
        f"epoch {state.epoch}  arrived {state.arrived}  completed {state.completed}  "
        f"expired {state.expired}  queued {len(state.queue)}  "
        f"completion rate {metrics['completion_rate']:.2f}",
        "node  last task",
    ]
    for node, task in enumerate(state.node_task.tolist()):
        lines.append(f"{node:>4}  {'idle' if task == NO_TASK else f'task {task}'}")
    lines.append("slot  task  family     loss      target    progress  time left  work")
    occupied = np.flatnonzero(state.slots != NO_TASK)
    progress = simulator.progress_fraction(state.slots[occupied])
    for slot, fraction in zip(occupied.tolist(), progress, strict=True):
        task = int(state.slots[slot])
        lines.append(
            f"{slot:>4}  {task:>4}  {observed_name(tasks.family[task]):<9}  "
            f"{state.loss[task]:<8.4g}  {tasks.target[task]:<8.4g}  {fraction:>8.0%}  "
            f"{tasks.deadline[task] - state.epoch:>9}  {state.work[task]:>4.0f}"
        )
    if not len(occupied):
        lines.append("   (no visible tasks)")
    return "\n".join(lines)


def render_rgb(simulator: ClusterSimulator) -> np.ndarray:
    """A Gantt-style picture (H x W x 3 uint8) of the last epochs and the visible tasks."""
    state, config = simulator.state, simulator.config
    n_nodes, n_slots = config.n_nodes, config.n_slots
    gantt_height = n_nodes * ROW_PIXELS
    height = gantt_height + ROW_PIXELS + n_slots * ROW_PIXELS
    image = np.empty((height, _WIDTH, 3), dtype=np.uint8)
    image[:] = _BACKGROUND
    recent = state.assignments[-GANTT_EPOCHS:]
    for column, assignment in enumerate(recent):
        x = column * COLUMN_PIXELS
        for node, task in enumerate(assignment.tolist()):
            colour = _IDLE if task == NO_TASK else task_colour(task)
            y = node * ROW_PIXELS
            image[y : y + ROW_PIXELS - 1, x : x + COLUMN_PIXELS - 1] = colour
    top = gantt_height + ROW_PIXELS
    occupied = np.flatnonzero(state.slots != NO_TASK)
    if len(occupied):
        ids = state.slots[occupied]
        fractions = simulator.progress_fraction(ids)
        time_left = state.tasks.deadline[ids] - state.epoch
        for slot, task, fraction, left in zip(
            occupied.tolist(), ids.tolist(), fractions, time_left.tolist(), strict=True
        ):
            y = top + slot * ROW_PIXELS
            bar = slice(y, y + ROW_PIXELS - 2)
            image[bar, :] = _IDLE
            image[bar, : max(1, int(fraction * _WIDTH))] = task_colour(task)
            tick = min(_WIDTH - 2, int(min(left, TIME_SCALE) / TIME_SCALE * _WIDTH))
            image[bar, tick : tick + 2] = 255
    return image


class Renderer:
    """Renders a simulator in one of :data:`RENDER_MODES` (or not at all for ``None``)."""

    def __init__(self, simulator: ClusterSimulator, render_mode: str | None) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ConfigError(
                f"Unknown render_mode {render_mode!r}; use one of {RENDER_MODES} or None."
            )
        self.simulator = simulator
        self.render_mode = render_mode

    def render(self) -> str | np.ndarray | None:
        """Render the current state in the configured mode."""
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='ansi' or 'rgb_array'."
            )
            return None
        if not self.simulator.has_episode:
            return None if self.render_mode == "human" else self._empty()
        if self.render_mode == "ansi":
            return render_ansi(self.simulator)
        if self.render_mode == "rgb_array":
            return render_rgb(self.simulator)
        sys.stdout.write(render_ansi(self.simulator) + "\n")
        return None

    def _empty(self) -> str | np.ndarray:
        if self.render_mode == "ansi":
            return "(no episode: call reset())"
        return np.zeros((1, 1, 3), dtype=np.uint8)

    def close(self) -> None:
        """Nothing to release (no windows are opened)."""
