"""How far each value-of-prediction row's predictor is from the truth: the plot's x axis.

The rows of :mod:`mara_env.benchmarks.mara.prediction_value` differ only in the predictor behind MARA's
features. ``python -m mara_env.benchmarks.prediction.value_errors`` scores each on episodes of
Cluster-v2's ``evaluation`` preset and writes ``prediction_errors.json`` beside the rows'
checkpoints, which the value table and its plot read. The episodes are played by the
leak audit's driver (:func:`mara_env.benchmarks.prediction.audit_episodes.play_episode`: a random
masked scheduler, which favours no task), every time a task reports a new loss from its second
on, against the simulator's privileged truth:

* **Brier score** of the predicted probability that the task reaches its target by its deadline
  on every node it may get (the ``success_all_nodes`` feature), against whether it can
  (:func:`mara_env.agents.clairvoyant.task_epochs_to_target`): 0 for a perfect predictor; the
  ``no_predictions`` row, which always says 0, scores the share of feasible judgements;
* **median log error** of the predicted median need, ``|ln(predicted / true)|``, over the
  judgements where both are finite and above 0 (``nan`` for a row that never predicts a finite
  need). The true need here is the audit's (the task's hidden demand less the work done), which
  can differ from the oracle's (the curve steps to the first point at or below the target), so
  even the exact oracle's is not 0.

The Brier score's 95% interval resamples the episodes.

Example:
    >>> errors = measure(seeds=(1000,), rows=("oracle", "no_predictions"), progress=False,
    ...                  arrival_horizon=8)
    >>> errors["oracle"].brier < errors["no_predictions"].brier
    True
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from mara_env.agents.mara.features import NoPredictions
from mara_env.benchmarks.common.seeds import evaluation_seeds
from mara_env.benchmarks.common.threads import one_torch_thread
from mara_env.benchmarks.prediction.audit_episodes import AuditSettings, Record, play_episode
from mara_env.predictors.base import Predictor
from mara_env.predictors.registry import make_predictor

#: Each row's predictor, by row name (the rows of the value table).
ROW_PREDICTORS = {
    "oracle": "oracle",
    "oracle_noise_0.5": "oracle_noise_0.5",
    "oracle_noise_1": "oracle_noise_1",
    "flow_matching": "flow_matching",
    "flow_matching_without_target": "flow_matching_without_target",
    "wls": "wls",
    "no_predictions": "none",
}
#: Samples per prediction: MARA's.
N_SAMPLES = 16


@dataclass(frozen=True)
class PredictionError:
    """One row's error (module docstring).

    Attributes:
        brier: Brier score of the success probability on all nodes.
        brier_low, brier_high: Its 95% interval over episodes.
        median_log_error: Median ``|ln(predicted / true)|`` of the need, both finite.
        judgements: Judgements scored.
    """

    brier: float
    brier_low: float
    brier_high: float
    median_log_error: float
    judgements: int


def _predictor(name: str) -> Predictor:
    return NoPredictions() if name == NoPredictions.name else make_predictor(name)


def measure(
    seeds: Sequence[int],
    rows: Sequence[str] = tuple(ROW_PREDICTORS),
    *,
    progress: bool = True,
    arrival_horizon: int | None = None,
    n_resamples: int = 2000,
) -> dict[str, PredictionError]:
    """Every row's :class:`PredictionError` on ``seeds`` (evaluation seeds) of Cluster-v2's
    ``evaluation`` preset (``arrival_horizon``: shorter arrivals, for tests).

    Raises:
        ValueError: For an unknown row or a seed below 1000.
    """
    unknown = [row for row in rows if row not in ROW_PREDICTORS]
    if unknown:
        raise ValueError(f"Unknown row(s) {unknown}; rows: {list(ROW_PREDICTORS)}.")
    settings = AuditSettings(
        worlds=("v2",),
        eval_seeds=tuple(seeds),
        predictors=(),
        n_samples=N_SAMPLES,
        arrival_horizon=arrival_horizon,
    )
    # keyed apart from the audit's own "oracle" entry, which it adds to every judgement
    predictors = {_key(row): _predictor(ROW_PREDICTORS[row]) for row in rows}
    episodes: list[list[Record]] = []
    with one_torch_thread():
        for seed in tqdm(seeds, desc="prediction error", unit="episode", disable=not progress):
            episodes.append(play_episode(settings, "evaluation", seed, predictors, "v2")[1])
    rng = np.random.default_rng(0)
    picks = rng.integers(len(episodes), size=(n_resamples, len(episodes)))
    return {row: _score(episodes, row, picks) for row in rows}


def _key(row: str) -> str:
    return f"row_{row}"


def _score(episodes: list[list[Record]], row: str, picks: np.ndarray) -> PredictionError:
    """``row``'s error over ``episodes``, with the Brier score's interval over ``picks``."""
    squared = [
        np.array([(r[f"{_key(row)}_success"] - float(r["feasible"])) ** 2 for r in episode])
        for episode in episodes
    ]
    sums = np.array([values.sum() for values in squared])
    counts = np.array([len(values) for values in squared])
    resampled = sums[picks].sum(axis=1) / np.maximum(counts[picks].sum(axis=1), 1)
    low, high = np.quantile(resampled, [0.025, 0.975])
    logs = [
        abs(math.log(r[f"{_key(row)}_need"] / r["need"]))
        for episode in episodes
        for r in episode
        if 0 < r["need"] < math.inf and 0 < r[f"{_key(row)}_need"] < math.inf
    ]
    return PredictionError(
        brier=float(sums.sum() / max(counts.sum(), 1)),
        brier_low=float(low),
        brier_high=float(high),
        median_log_error=float(np.median(logs)) if logs else math.nan,
        judgements=int(counts.sum()),
    )


#: Where the errors go: beside the value-of-prediction runs, which read them.
OUTPUT = Path("benchmarks/results/v2/mara/prediction_value/prediction_errors.json")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.prediction.value_errors``: score every row, write the JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.value_errors",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("--seeds", type=int, default=10, help="evaluation episodes (from 1000)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the JSON file to write")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be >= 1")
    errors = measure(evaluation_seeds(args.seeds), progress=not args.no_progress)
    document = {
        "command": "python -m mara_env.benchmarks.prediction.value_errors"
        + (f" --seeds {args.seeds}" if args.seeds != 10 else ""),
        "episodes": args.seeds,
        "rows": {row: asdict(error) for row, error in errors.items()},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=1) + "\n")
    for row, error in errors.items():
        print(f"{row}: Brier {error.brier:.3f} [{error.brier_low:.3f}, {error.brier_high:.3f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
