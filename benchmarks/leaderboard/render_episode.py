"""Render one episode of a scheduler as a picture (the README's figure).

Runs ``--agent`` on ``--config`` for one seed and saves the environment's ``rgb_array`` frame
(a Gantt chart of node assignments over the last epochs, and each visible task's progress toward
its target with its time left) at ``--epoch``, with axis labels added by matplotlib.

Example:
    python -m mara_env.benchmarks.leaderboard.render_episode --agent edf --epoch 80 \
        --output benchmarks/figures/episode_edf.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import mara_env
from mara_env.agents import make_agent, start_episode
from mara_env.benchmarks.common.figures import PlotsUnavailable, pyplot
from mara_env.envs.render import GANTT_EPOCHS, ROW_PIXELS, render_ansi
from mara_env.sim.observation import TIME_SCALE


def frame_at(agent_name: str, config: str, seed: int, epoch: int) -> tuple[np.ndarray, str]:
    """The ``rgb_array`` frame after ``epoch`` epochs of ``agent_name``, and its ansi text."""
    env = mara_env.raw_env(config=config, render_mode="rgb_array")
    scheduler = make_agent(agent_name)
    env.reset(seed=seed)
    start_episode(scheduler, env, seed)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated or env.simulator.state.epoch >= epoch:
            break
        env.step(scheduler.act(observation, int(agent.split("_")[1])))
    frame = env.render()
    if not isinstance(frame, np.ndarray):
        raise RuntimeError("the environment did not return an rgb_array frame")
    return frame, render_ansi(env.simulator)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="edf", help="scheduler name or import path")
    parser.add_argument("--config", default="training", help="config preset")
    parser.add_argument("--seed", type=int, default=0, help="environment seed")
    parser.add_argument("--epoch", type=int, default=80, help="render after this many epochs")
    parser.add_argument("--output", type=Path, default=Path("episode.png"), help="PNG to write")
    args = parser.parse_args(argv)
    try:
        plt = pyplot()
    except PlotsUnavailable as error:
        raise SystemExit(f"render_episode: {error}") from None

    frame, text = frame_at(args.agent, args.config, args.seed, args.epoch)
    config = mara_env.get_config(args.config)
    n_nodes = config.n_nodes
    figure, axis = plt.subplots(figsize=(10, 10 * frame.shape[0] / frame.shape[1] + 0.8))
    axis.imshow(frame, interpolation="nearest")
    slot_top = (n_nodes + 1) * ROW_PIXELS
    axis.set_yticks(
        [(i + 0.5) * ROW_PIXELS for i in range(n_nodes)]
        + [slot_top + (i + 0.5) * ROW_PIXELS for i in range(config.n_slots)],
        [f"node {i}" for i in range(n_nodes)] + [f"slot {i}" for i in range(config.n_slots)],
        fontsize=7,
    )
    axis.set_xticks([])
    axis.set_xlabel(
        f"top: the last {GANTT_EPOCHS} epochs, left to right; bottom: progress (bar) "
        f"and time left (tick, full width = {TIME_SCALE:.0f} epochs)",
        fontsize=8,
    )
    axis.set_title(
        f"{args.agent} on '{args.config}', seed {args.seed}, after epoch {args.epoch}: "
        "node assignments coloured by task (grey = idle), then each slot's task",
        fontsize=9,
    )
    figure.tight_layout()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(args.output, dpi=120)
    print(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
