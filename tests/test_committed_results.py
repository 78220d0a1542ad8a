"""The committed results follow from the code: every resumable store under
``benchmarks/results`` holds rows keyed by the fingerprints the current code computes, so its
documented command resumes them instead of replaying (or refusing) them, and the README's
figures are the code's. (The leaderboard has its own check, ``tests/test_leaderboard_validate.py``.)

When one of these fails after a code change, run the command its message names."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.baselines.static_bundle import BUNDLE_AGENTS, setup_fingerprint
from benchmarks.baselines.static_bundle.bundles import BUNDLES, bundle_config
from benchmarks.baselines.tuning import trial_code
from benchmarks.common.source_fingerprint import source_fingerprint
from benchmarks.mara.evaluate import build
from benchmarks.prediction.benchmark import SCORED_CODE
from mara_env import default_trace_source

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
MARA = RESULTS / "mara"
#: The MARA evaluation CSVs (the ``*_training.csv`` files are training logs).
EVALUATIONS = sorted(path for path in MARA.glob("*.csv") if "_training" not in path.stem)


def rows_of(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_evaluations_are_found() -> None:
    assert {path.name for path in EVALUATIONS} >= {
        "evaluation.csv",
        "mara_ppo_evaluation.csv",
        "ablations.csv",
    }


@pytest.mark.parametrize("path", EVALUATIONS, ids=lambda path: path.name)
def test_every_mara_evaluation_is_keyed_by_the_current_code_and_weights(path: Path) -> None:
    rows = rows_of(path)
    stale = []
    for label in sorted({row["agent"] for row in rows}):
        checkpoint_file = MARA / f"{label}.pt"
        agent = str(checkpoint_file) if checkpoint_file.exists() else label
        _, _, checkpoint, code = build(agent)
        keys = {(row["checkpoint"], row["code"]) for row in rows if row["agent"] == label}
        if keys != {(checkpoint, code)}:
            stale.append(f"{label}: rows {sorted(keys)}, current {(checkpoint, code)}")
    assert not stale, (
        f"{path.name} holds rows made by other code or weights; regenerate it with the "
        f"command in {MARA / 'README.md'}:\n" + "\n".join(stale)
    )


@pytest.mark.parametrize(
    ("journal", "code", "command"),
    [
        ("tuning", trial_code, "python -m benchmarks.baselines.tuning"),
        ("deviations", source_fingerprint, "python -m benchmarks.baselines.deviations"),
    ],
)
def test_every_trial_journal_is_keyed_by_the_current_code(
    journal: str, code: Callable[[], str], command: str
) -> None:
    lines = (RESULTS / journal / "trials.jsonl").read_text().splitlines()
    keys = {json.loads(line)["code"] for line in lines}
    assert keys == {code()}, (
        f"benchmarks/results/{journal}/trials.jsonl holds trials of code {sorted(keys)}, not the "
        f"current {code()}: move it away and run `{command}`."
    )


@pytest.mark.parametrize("name", ["results.csv", "pairs.csv"])
def test_the_prediction_results_are_keyed_by_the_current_code(name: str) -> None:
    keys = {row["code"] for row in rows_of(RESULTS / "predictors" / name)}
    assert keys == {source_fingerprint(SCORED_CODE)}, (
        f"benchmarks/results/predictors/{name} holds rows of code {sorted(keys)}: run "
        "`python -m benchmarks.prediction.benchmark --no-resume`."
    )


@pytest.mark.parametrize("bundle", sorted(BUNDLES))
def test_the_bundle_results_hold_every_row_of_the_current_code(bundle: str) -> None:
    setup = setup_fingerprint(BUNDLES[bundle], bundle_config(), default_trace_source())
    rows = [
        row for row in rows_of(RESULTS / "static_bundle" / "bundle.csv") if row["setup"] == setup
    ]
    assert {row["agent"] for row in rows} == set(BUNDLE_AGENTS), (
        f"benchmarks/results/static_bundle/bundle.csv has no complete rows of the current code "
        f"for the {bundle!r} bundle: run `python -m benchmarks.baselines.static_bundle --bundle {bundle}`."
    )
