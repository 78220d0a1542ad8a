"""Paired comparison of MARA checkpoints on training episodes no run chose with.

The check a new training run passes before it replaces the shipped ``mara``: every checkpoint
plays the same episodes (the ``training`` preset: train split, load 1.4; each workload with each
seed) at the temperature its card ships with, and the script prints each one's mean completion
rate and its paired difference from the first checkpoint with a 95% bootstrap CI
(:func:`mara_env.agents.mean_ci`). Only training seeds (below 1000) are accepted. Training chooses its
checkpoint on seeds 900-909 and confirms it on 950-959, so the default, 960-979, are episodes
that took part in no choice.

Run::

    python -m mara_env.benchmarks.mara.compare mara benchmarks/results/v1/mara/mara_ppo_first_recipe.pt
    python -m mara_env.benchmarks.mara.compare mara my_run.pt --first-seed 960 --seeds 20
    python -m mara_env.benchmarks.mara.compare a.pt b.pt --world-version 2     # on Cluster-v2's rules
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mara_env import get_config
from mara_env.agents import mean_ci
from mara_env.agents.mara.agent import Mara, default_checkpoint, imitation_checkpoint
from mara_env.benchmarks.common.arguments import add_world_version
from mara_env.benchmarks.common.seeds import training_seeds
from mara_env.benchmarks.common.threads import set_torch_threads
from mara_env.benchmarks.mara.settings import WORKLOADS
from mara_env.benchmarks.mara.validation import agent_episodes, play_episodes
from mara_env.worlds.config import LATEST_WORLD_VERSION

#: The shipped MARA agents by registered name.
SHIPPED = {"mara": default_checkpoint, "mara_imitation": imitation_checkpoint}


def checkpoint_path(name: str, world_version: int = LATEST_WORLD_VERSION) -> Path:
    """The ``.pt`` file of a shipped agent's name (the one shipped for ``world_version``), or
    ``name`` as a path.

    Raises:
        FileNotFoundError: If ``name`` is neither a shipped MARA agent nor an existing file.
    """
    if name in SHIPPED:
        return SHIPPED[name](world_version)
    path = Path(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"mara_compare: {name!r} is neither a shipped MARA agent ({', '.join(SHIPPED)}) "
            "nor a checkpoint file; pass a .pt file written by mara_env.benchmarks.mara.train."
        )
    return path


def completion_rates(
    checkpoint: Path, preset: str, seeds: Sequence[int], world_version: int | None = None
) -> np.ndarray:
    """Completion rates of ``checkpoint`` on every workload of ``preset`` (with the rules of
    ``world_version``, default the preset's) with each seed, workload-major, at the temperature
    it ships with."""
    agent = Mara.load(checkpoint)
    rules = {} if world_version is None else {"world_version": world_version}
    configs = [get_config(preset, workload=workload, **rules) for workload in WORKLOADS]
    return np.array(play_episodes(agent_episodes(agent, configs), agent.policy, seeds))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.compare", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "checkpoints",
        nargs="+",
        help="MARA checkpoints (.pt) or shipped names (mara, mara_imitation); the first is the "
        "reference of the paired differences",
    )
    parser.add_argument("--first-seed", type=int, default=960, help="default: %(default)s")
    parser.add_argument("--seeds", type=int, default=20, help="seeds per workload (default: 20)")
    parser.add_argument("--preset", default="training", help="config preset (default: training)")
    add_world_version(parser, default=None)
    args = parser.parse_args(argv)
    if len(args.checkpoints) < 2:
        parser.error("give at least two checkpoints: a reference and one to compare with it")
    try:
        seeds = training_seeds(args.first_seed, args.seeds, where="mara_compare")
        world = args.world_version or get_config(args.preset).world_version
        paths = [checkpoint_path(name, world) for name in args.checkpoints]
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    set_torch_threads(1)
    print(
        f"preset {args.preset!r} (world version {args.world_version or 'of the preset'}), seeds {seeds[0]}-{seeds[-1]} x {len(WORKLOADS)} workloads "
        f"({len(seeds) * len(WORKLOADS)} paired episodes), each at its shipped temperature"
    )
    rates = {}
    for name, path in zip(args.checkpoints, paths, strict=True):
        rates[name] = completion_rates(path, args.preset, seeds, args.world_version)
        print(f"  {name}: completion rate {rates[name].mean():.4f}", flush=True)
    reference = args.checkpoints[0]
    for name in args.checkpoints[1:]:
        summary = mean_ci(list(rates[name] - rates[reference]))
        print(
            f"  {name} - {reference}: {100 * summary.mean:+.1f} points "
            f"[{100 * summary.low:+.1f}, {100 * summary.high:+.1f}] (95% CI)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
