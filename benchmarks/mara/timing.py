"""MARA's decision time per epoch, split into the prediction features and the policy alone.

Plays episodes of a config (default ``evaluation``: 8 nodes, 16 slots) with a MARA checkpoint
through ``mara_env.raw_env`` on one torch thread, and times at each epoch's first node (where
MARA decides every node of the epoch) the feature building (observed histories and
predictions) and the policy's encoder and eight decoder steps, with the thread's CPU time (so a
machine busy with other work does not inflate the figures). The process's first epoch loads the
compiled feature kernels from Numba's cache (or compiles them); it is printed on its own line and
left out of the statistics. ``mara_env.benchmarks.perf.decision_time`` gives the end-to-end figure for any
registered agent.

Run::

    python -m mara_env.benchmarks.mara.timing
    python -m mara_env.benchmarks.mara.timing --checkpoint benchmarks/results/v1/mara/ablation_no_predictions.pt
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

import mara_env
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.features import EpochFeatures
from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.threads import set_torch_threads


def time_epochs(agent: Mara, config: str, seeds: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per-epoch CPU milliseconds of feature building and of the policy (one array each).

    The episodes are played by :meth:`Mara.act`, as deployed; its two steps at each epoch's
    first node (:meth:`Mara.begin_epoch` and :meth:`Mara.decide`) are timed as they run.
    """
    env = mara_env.raw_env(config)
    features_ms: list[float] = []
    policy_ms: list[float] = []
    clock = time.thread_time
    begin_epoch, decide = agent.begin_epoch, agent.decide

    def timed_begin_epoch(observation: np.ndarray, mask: np.ndarray) -> EpochFeatures:
        start = clock()
        features = begin_epoch(observation, mask)
        features_ms.append(1000.0 * (clock() - start))
        return features

    def timed_decide(features: EpochFeatures) -> np.ndarray:
        start = clock()
        actions = decide(features)
        policy_ms.append(1000.0 * (clock() - start))
        return actions

    agent.begin_epoch, agent.decide = timed_begin_epoch, timed_decide  # type: ignore[method-assign]
    try:
        for seed in seeds:
            env.reset(seed=seed)
            agent.reset(env.config, seed=seed)
            for name, node in mara_env.node_turns(env):
                env.step(agent.act(env.observe(name), node))
    finally:
        del agent.begin_epoch, agent.decide  # the class's methods again
    return np.array(features_ms), np.array(policy_ms)


def main(argv: Sequence[str] | None = None) -> int:
    """Time MARA's epochs and print the report (also to ``--output``); returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.timing", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: shipped")
    parser.add_argument(
        "--config", default="evaluation", help="config preset (default: %(default)s)"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=list(evaluation_seeds(2)),
        help="environment seeds, one episode each (default: %(default)s)",
    )
    add_output_argument(parser)
    args = parser.parse_args(argv)
    with printed_report(args.output, "MARA's time per epoch", argv, parser.prog):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """Load the agent, time its epochs and print the summary; returns the exit status."""
    set_torch_threads(1)
    agent = Mara.load(args.checkpoint)
    features_ms, policy_ms = time_epochs(agent, args.config, args.seeds)
    first = features_ms[0] + policy_ms[0]
    features_ms, policy_ms = features_ms[1:], policy_ms[1:]
    total = features_ms + policy_ms
    print(
        f"first epoch {first:.2f} ms (loads the compiled kernels; left out below)\n"
        f"{len(total)} further epochs, config {args.config!r}, 1 torch thread, "
        "CPU time per epoch (ms):"
    )
    for label, values in (("features", features_ms), ("policy", policy_ms), ("total", total)):
        print(
            f"  {label:9s} mean {values.mean():.2f}  median {np.median(values):.2f}  "
            f"p95 {np.percentile(values, 95):.2f}  max {values.max():.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
