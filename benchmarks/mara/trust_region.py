"""How far PPO let MARA's joint policy move: a summary of training logs' trust-region columns.

A node's ratio is clipped per node under ``--trust-region per_node``, so the joint ratio of an
epoch's decisions (the product over its nodes) is bounded by nothing but KL control; every PPO
update logs how far the joint policy moved from the rollout policy (``joint_kl``,
``joint_ratio_max``, :func:`mara_env.benchmarks.mara.ppo.joint_move`). This script summarises those
columns per log, with the critic's warm-up and the early stops:

Run::

    python -m mara_env.benchmarks.mara.trust_region benchmarks/results/v2/mara/mara_ppo_per_node_training.csv

Example:
    >>> import csv, tempfile
    >>> from pathlib import Path
    >>> from mara_env.benchmarks.mara.training_log import TrainingLog
    >>> log = Path(tempfile.mkdtemp()) / "log.csv"
    >>> writer = TrainingLog(log)
    >>> writer.write({"phase": "ppo", "update": 1, "value_loss": 0.5, "warmup": 1})
    >>> writer.write({"phase": "ppo", "update": 2, "value_loss": 0.1, "warmup": 0,
    ...               "joint_kl": 0.03, "joint_ratio_max": 2.0, "policy_epochs": "4"})
    >>> summary = summarise(log)
    >>> summary["policy updates"], summary["joint KL max"], summary["critic warm-up updates"]
    (1, 0.03, 1)
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mara_env.benchmarks.mara.training_log import log_rows


def summarise(log: Path) -> dict[str, Any]:
    """The trust-region figures of one training log's PPO phase (module docstring).

    Raises:
        ValueError: If the log has no PPO update that logged the joint move (a log written
            before the column existed, or an imitation-only run).
    """
    rows = [row for row in log_rows(log, "ppo") if row["update"] not in ("", "0")]
    moved = [row for row in rows if row.get("joint_kl")]
    if not moved:
        raise ValueError(
            f"{log} has no PPO update with a joint_kl value: it was written before the column "
            "existed, or the run made no policy update."
        )
    kl = [float(row["joint_kl"]) for row in moved]
    largest = max(moved, key=lambda row: float(row["joint_kl"]))
    warmup = [row for row in rows if row.get("warmup") == "1"]
    stops = [row["policy_epochs"] for row in moved if "stop" in row["policy_epochs"]]
    return {
        "critic warm-up updates": len(warmup),
        "value loss ending the warm-up": float(warmup[-1]["value_loss"]) if warmup else None,
        "policy updates": len(moved),
        "joint KL median": round(statistics.median(kl), 5),
        "joint KL mean": round(statistics.fmean(kl), 5),
        "joint KL max": max(kl),
        "update of the joint KL max": int(largest["update"]),
        "largest joint ratio": max(float(row["joint_ratio_max"]) for row in moved),
        "per-node approx KL mean": round(
            statistics.fmean(float(row["approx_kl"] or 0.0) for row in moved), 5
        ),
        "updates stopped by KL control": len(stops),
        "of them in their first pass": sum(stop == "0+stop" for stop in stops),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print each log's summary; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.trust_region", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("logs", nargs="+", type=Path, help="training logs (CSV)")
    args = parser.parse_args(argv)
    for log in args.logs:
        try:
            summary = summarise(log)
        except (OSError, ValueError) as error:
            parser.error(str(error))
        print(log)
        for name, value in summary.items():
            print(f"  {name}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
