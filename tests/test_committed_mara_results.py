"""The committed MARA evaluations follow from the code: every row carries the checkpoint and code
digests the current agents have, so ``python -m benchmarks.mara_evaluate`` resumes them (it
refuses rows made by other code or weights) and the README's figures are the code's."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from benchmarks.mara_evaluate import build

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "mara"
#: The evaluation CSVs (the ``*_training.csv`` files are training logs).
EVALUATIONS = sorted(path for path in RESULTS.glob("*.csv") if "_training" not in path.stem)


def test_the_evaluations_are_found() -> None:
    assert {path.name for path in EVALUATIONS} >= {
        "evaluation.csv",
        "mara_ppo_evaluation.csv",
        "ablations.csv",
    }


@pytest.mark.parametrize("path", EVALUATIONS, ids=lambda path: path.name)
def test_every_row_is_keyed_by_the_current_code_and_weights(path: Path) -> None:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    stale = []
    for label in sorted({row["agent"] for row in rows}):
        checkpoint_file = RESULTS / f"{label}.pt"
        agent = str(checkpoint_file) if checkpoint_file.exists() else label
        _, _, checkpoint, code = build(agent)
        keys = {(row["checkpoint"], row["code"]) for row in rows if row["agent"] == label}
        if keys != {(checkpoint, code)}:
            stale.append(f"{label}: rows {sorted(keys)}, current {(checkpoint, code)}")
    assert not stale, (
        f"{path.name} holds rows made by other code or weights; regenerate it with the "
        f"command in {RESULTS / 'README.md'}:\n" + "\n".join(stale)
    )
