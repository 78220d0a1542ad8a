"""The measured effect of each way LARA and LaiRA depart from their papers.

Both baselines are adapted to discrete nodes and arriving tasks (their module docstrings,
:mod:`mara_env.agents.lara` and :mod:`mara_env.agents.laira`, say how and why). Where an adaptation is a setting,
this script measures it: the shipped agent (its tuned settings) against the same agent with that
one setting put back to the paper's rule, on the same episodes (the ``evaluation`` preset, test
curves, at the training load, the leaderboard's workloads and evaluation seeds 1000 and up:
reporting only, nothing here is chosen). Each row is a paired difference with a 95% bootstrap
interval over the episodes; a negative difference means the paper's rule does worse.

Episodes go to ``DIR/trials.jsonl`` as they finish (resumable, keyed by the code) and the table
to ``DIR/README.md`` (default ``benchmarks/results/v3/deviations``).

Usage::

    python -m mara_env.benchmarks.baselines.deviations               # 10 seeds
    python -m mara_env.benchmarks.baselines.deviations --quick --output /tmp/deviations
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.agents import mean_ci
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.baselines.search_spaces import WORKLOADS
from mara_env.benchmarks.baselines.trial_keys import trial_manifest
from mara_env.benchmarks.baselines.trials import Trial, TrialJournal, run_trials
from mara_env.benchmarks.common.arguments import positive_int
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.store import ResultsFileError

DEFAULT_OUTPUT = Path("benchmarks/results/v3/deviations")


@dataclass(frozen=True)
class Deviation:
    """One adaptation and the settings that undo it.

    Attributes:
        agent: The registered agent.
        adaptation: What the shipped agent does.
        paper: What the paper does instead.
        undo: The settings that restore the paper's rule (on top of the tuned ones).
    """

    agent: str
    adaptation: str
    paper: str
    undo: Mapping[str, Any]


DEVIATIONS = (
    Deviation(
        "lara",
        "the chosen set as an earliest-deadline schedule of whole nodes",
        "shares in proportion to need over time left (`lara_proportional` rule)",
        {"allocation": "proportional"},
    ),
    Deviation(
        "lara",
        "explorers hold at most `exploration_share` of the nodes",
        "explorers take the nodes first (`exploration_share=1`)",
        {"exploration_share": 1.0},
    ),
    Deviation(
        "lara",
        "spare nodes probe the tasks outside the chosen set",
        "tasks outside the set get nothing",
        {"spare_to_excluded": False},
    ),
    Deviation(
        "laira",
        "drop a task when its calibrated success probability is below `success_threshold`",
        "drop it when the DKF's mean prediction stays above the target",
        {"calibration": None, "success_threshold": 0.5},
    ),
    Deviation(
        "laira",
        "ranking score `min(rho_hat / rho, ratio_cap)`, ties by deadline",
        "the raw ratio `rho_hat / rho`",
        {"ratio_cap": math.inf},
    ),
    Deviation(
        "laira",
        "the optimistic slope starts from the fit's log-loss now",
        "it starts from the latest (noisy) report",
        {"fitted_loss": False},
    ),
    Deviation(
        "laira",
        "spare nodes probe dropped tasks (verdicts can change; no node idles)",
        "dropped tasks get nothing; nodes may idle",
        {"probe_excluded": False},
    ),
    Deviation(
        "laira",
        "ranked tasks get the nodes of `allocation`",
        "each ranked task gets the nodes its look-ahead needs (`allocation='need'`)",
        {"allocation": "need"},
    ),
    Deviation("laira", "the DKF look-ahead", "ablation: none (`sta`)", {"lookahead": False}),
    Deviation("laira", "the UCB bonus", "ablation: none (`laira_no_ucb`)", {"beta": 0.0}),
    Deviation(
        "laira",
        "PD-controlled slice lengths",
        "ablation: fixed slices (`laira_no_pd`)",
        {"proportional_gain": 0.0, "derivative_gain": 0.0},
    ),
)


def trials_of(
    settings: Mapping[str, Any], agent: str, seeds: Sequence[int], quick: bool
) -> list[Trial]:
    """The paired episodes of one agent with ``settings`` over the tuned ones."""
    key = json.dumps(dict(settings), sort_keys=True)
    return [
        Trial(agent, key, workload, seed, preset="evaluation", quick=quick)
        for workload in WORKLOADS
        for seed in seeds
    ]


def markdown_table(
    rows: Sequence[tuple[Deviation, np.ndarray, np.ndarray]], seeds: Sequence[int]
) -> str:
    """One line per deviation: both completion rates and their paired difference."""
    lines = [
        "# The effect of each deviation from the papers",
        "",
        "Made by `python -m mara_env.benchmarks.baselines.deviations`: the shipped agent (tuned settings) "
        "against the same agent with one setting put back to the paper's rule, on the same "
        f"{len(rows[0][1]) if rows else 0} episodes (`evaluation` preset, test curves, training "
        f"load, workloads {', '.join(WORKLOADS)}, seeds {seeds[0]}-{seeds[-1]}). Difference = "
        "paper's rule minus shipped, with a 95% bootstrap interval over the paired episodes.",
        "",
        "| agent | shipped | paper's rule | shipped | paper's rule | difference [95% CI] |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for deviation, shipped, paper in rows:
        difference = mean_ci(paper - shipped)
        lines.append(
            f"| {deviation.agent} | {deviation.adaptation} | {deviation.paper} | "
            f"{shipped.mean():.3f} | {paper.mean():.3f} | {difference.bracketed('+.3f')} |"
        )
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.baselines.deviations",
        description="Paired effect of each of LARA's and LaiRA's deviations from their papers.",
    )
    parser.add_argument("--seeds", type=positive_int, default=10, help="Seeds per workload.")
    parser.add_argument(
        "--quick", action="store_true", help="Smoke run: 1 seed, arrivals during 20 epochs."
    )
    parser.add_argument(
        "--workers", type=positive_int, default=os.cpu_count() or 1, help="Worker processes."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help="Folder of the trials journal and the README (default: %(default)s).",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every deviation; returns the process exit code."""
    args = build_parser().parse_args(argv)
    seeds = list(evaluation_seeds(1 if args.quick else args.seeds))
    start = time.perf_counter()
    try:
        journal = TrialJournal(args.output / "trials.jsonl", trial_manifest())
    except ResultsFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    agents = list(dict.fromkeys(deviation.agent for deviation in DEVIATIONS))
    wanted = [trial for agent in agents for trial in trials_of({}, agent, seeds, args.quick)]
    for deviation in DEVIATIONS:
        wanted += trials_of(deviation.undo, deviation.agent, seeds, args.quick)
    run_trials(
        wanted, journal, workers=args.workers, progress=not args.no_progress, label="episodes"
    )

    def rates(settings: Mapping[str, Any], agent: str) -> np.ndarray:
        return np.array([journal.score(t) for t in trials_of(settings, agent, seeds, args.quick)])

    rows = [(d, rates({}, d.agent), rates(d.undo, d.agent)) for d in DEVIATIONS]
    table = markdown_table(rows, seeds)
    write_atomically(args.output / "README.md", table)
    print(table)
    print(
        f"{len(wanted)} episodes in {time.perf_counter() - start:.0f} s; table in {args.output}.",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
