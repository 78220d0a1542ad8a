"""The CSV log of a MARA training run, and its plot.

One row per imitation round and per PPO update, with the columns :data:`LOG_FIELDS` (blank
where a phase has no such figure). ``wall_seconds`` and ``epochs_per_second`` are wall-clock
figures; every other column is the same for the same settings and seed on one machine.
:func:`plot_log` draws validation completion against updates.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "log.csv"
    >>> log = TrainingLog(path)
    >>> log.write({"phase": "ppo", "update": 1, "validation_completion": 0.5})
    >>> log.write({"phase": "ppo", "update": 2})
    >>> [row["validation_completion"] for row in log_rows(path, "ppo")]
    ['0.5', '']
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

#: The log's columns, in order.
LOG_FIELDS = (
    "phase",
    "update",
    "wall_seconds",
    "env_epochs",
    "epochs_per_second",
    "train_completion",
    "validation_completion",
    "imitation_loss",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "anchor_kl",
    "policy_epochs",
    "policy_lr",
    # whether the update trained the critic alone (its warm-up)
    "warmup",
    # the joint policy's move on the update's rollout (mara_env.benchmarks.mara.ppo.joint_move)
    "joint_kl",
    "joint_ratio_max",
)


class TrainingLog:
    """A CSV log, started afresh (its header written) when made; rows are appended as written.

    Args:
        path: The log file (its folder is made if missing; an old file is replaced).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writeheader()

    def write(self, row: dict[str, Any]) -> None:
        """Append ``row`` (columns of :data:`LOG_FIELDS`; those missing are left blank)."""
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writerow(row)


def log_rows(log: Path, phase: str) -> list[dict[str, str]]:
    """The rows of ``log`` of ``phase`` (``"imitation"`` or ``"ppo"``), as text."""
    with log.open() as handle:
        return [row for row in csv.DictReader(handle) if row["phase"] == phase]


def plot_log(log: Path, plot: Path) -> None:
    """Validation completion rate against updates (imitation rounds before update 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs, ys, imitation = [], [], []
    with log.open() as handle:
        for row in csv.DictReader(handle):
            if row["validation_completion"] == "":
                continue
            if row["phase"] == "imitation":
                imitation.append(float(row["validation_completion"]))
            else:
                xs.append(int(row["update"]))
                ys.append(float(row["validation_completion"]))
    figure, axis = plt.subplots(figsize=(6, 3.5))
    if imitation:
        axis.plot(range(-len(imitation), 0), imitation, "o-", label="imitation rounds")
    axis.plot(xs, ys, "o-", label="PPO")
    axis.set_xlabel("PPO update (imitation rounds at negative x)")
    axis.set_ylabel("validation completion rate")
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(plot, dpi=120)
    plt.close(figure)
