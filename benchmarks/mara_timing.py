"""MARA's decision time per epoch, split into the prediction features and the policy alone.

Plays episodes of a config (default ``evaluation``: 8 nodes, 16 slots) with a MARA checkpoint
through ``mara_env.raw_env`` on one torch thread, and times at each epoch's first node (where
MARA decides every node of the epoch) the feature building (observed histories and
predictions) and the policy's encoder and eight decoder steps, with the thread's CPU time (so a
machine busy with other work does not inflate the figures). ``benchmarks.decision_time`` gives
the end-to-end figure for any registered agent.

Run::

    python -m benchmarks.mara_timing
    python -m benchmarks.mara_timing --checkpoint benchmarks/results/mara/ablation_no_predictions.pt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import mara_env
from agents.mara.agent import Mara
from benchmarks.common.seeds import evaluation_seeds
from benchmarks.common.threads import set_torch_threads


def time_epochs(agent: Mara, config: str, seeds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-epoch CPU milliseconds of feature building and of the policy (one array each)."""
    env = mara_env.raw_env(config)
    features_ms, policy_ms = [], []
    clock = time.thread_time
    for seed in seeds:
        env.reset(seed=seed)
        agent.reset(env.config, seed=seed)
        for name, node in mara_env.node_turns(env):
            observation = env.observe(name)
            if node == 0:
                start = clock()
                features = agent.begin_epoch(observation["observation"], observation["action_mask"])
                middle = clock()
                actions = agent.decide(features)
                end = clock()
                agent.end_epoch(actions)
                features_ms.append(1000.0 * (middle - start))
                policy_ms.append(1000.0 * (end - middle))
            env.step(agent.act(observation, node))
    return np.array(features_ms), np.array(policy_ms)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mara_timing", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: shipped")
    parser.add_argument("--config", default="evaluation")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(evaluation_seeds(2)))
    args = parser.parse_args(argv)
    set_torch_threads(1)
    agent = Mara.load(args.checkpoint)
    features_ms, policy_ms = time_epochs(agent, args.config, args.seeds)
    total = features_ms + policy_ms
    print(f"{len(total)} epochs, config {args.config!r}, 1 torch thread, CPU time per epoch (ms):")
    for label, values in (("features", features_ms), ("policy", policy_ms), ("total", total)):
        print(
            f"  {label:9s} mean {values.mean():.2f}  median {np.median(values):.2f}  "
            f"p95 {np.percentile(values, 95):.2f}  max {values.max():.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
