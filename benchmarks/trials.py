"""Single episodes of a scheduler with given settings, played in parallel and journalled.

The baseline scripts (:mod:`benchmarks.tune_baselines`, :mod:`benchmarks.baseline_deviations`)
each play many short episodes of one scheduler with some settings. A :class:`Trial` names one
such episode; :func:`run_trials` plays the ones a :class:`TrialJournal` does not hold yet, on
worker processes, appending each result to the journal the moment it ends, so an interrupted
run resumes. Journal lines are keyed by a fingerprint of the code, weights and data
(:func:`benchmarks.source_fingerprint.source_fingerprint`): lines written by other code are kept
in the file but never reused.

Example:
    >>> trial = Trial("edf", "{}", "rl", seed=3, preset="tiny")
    >>> 0.0 <= play_trial(trial) <= 1.0
    True
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from agents import Scheduler, evaluate, make_agent
from mara_env import TRAINING_LOAD, ClusterConfig, get_config

#: Arrival epochs of a ``quick`` (smoke-run) trial.
QUICK_ARRIVAL_HORIZON = 20


@dataclass(frozen=True)
class Trial:
    """One episode of one scheduler.

    Attributes:
        agent: A registered agent name, or with ``searched`` a search space of
            :data:`benchmarks.tune_baselines.SEARCH_SPACES`.
        settings: JSON of keyword settings: on top of the registry's tuned ones, or with
            ``searched`` on top of the class defaults and the variant's fixed settings.
        workload: A workload name of :mod:`mara_env.workloads`.
        seed: The episode's seed.
        preset: The config preset, at the training load.
        load_factor: Multiple of the training load.
        quick: Arrivals during only :data:`QUICK_ARRIVAL_HORIZON` epochs.
        searched: Build from the tuning search space instead of the registry.
    """

    agent: str
    settings: str
    workload: str
    seed: int
    preset: str = "training"
    load_factor: float = 1.0
    quick: bool = False
    searched: bool = False

    @property
    def key(self) -> tuple[Any, ...]:
        """Everything that defines the trial (the journal's key, with the code)."""
        return tuple(getattr(self, item.name) for item in fields(self))

    def config(self) -> ClusterConfig:
        """The trial's cluster config."""
        load = self.load_factor * TRAINING_LOAD
        config = get_config(self.preset, workload=self.workload, load=load)
        if self.quick:
            config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
        return config

    def build(self) -> Scheduler:
        """The scheduler the trial plays."""
        settings = json.loads(self.settings)
        if self.searched:
            from benchmarks.tune_baselines import SEARCH_SPACES

            return SEARCH_SPACES[self.agent].build(settings)
        return make_agent(self.agent, **settings)


def play_trial(trial: Trial) -> float:
    """The completion rate of the trial's episode (runs in a worker process)."""
    rows = evaluate(trial.build(), trial.config(), seeds=[trial.seed])
    return float(rows[0]["completion_rate"])


class TrialJournal:
    """A JSON-lines file of finished trials, each appended and flushed the moment it ends.

    Args:
        path: The journal file (created with its folder if missing).
        fingerprint: The code fingerprint results are reused for.
    """

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.scores: dict[tuple[Any, ...], float] = {}
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            return
        names = [item.name for item in fields(Trial)]
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            try:
                row = json.loads(line)
                trial = Trial(**{name: row[name] for name in names})
                score = float(row["completion_rate"])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                print(f"note: {path}:{number} is not a trial; ignored.", file=sys.stderr)
                continue
            if row.get("code") == fingerprint:
                self.scores[trial.key] = score

    def score(self, trial: Trial) -> float:
        """The recorded completion rate of ``trial`` (KeyError if it has not been played)."""
        return self.scores[trial.key]

    def append(self, trial: Trial, score: float) -> None:
        """Record one finished trial on disk."""
        row = {**asdict(trial), "completion_rate": score, "code": self.fingerprint}
        with self.path.open("a") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.scores[trial.key] = score


def run_trials(
    trials: Sequence[Trial], journal: TrialJournal, *, workers: int, progress: bool, label: str
) -> None:
    """Play the trials not yet in ``journal`` on ``workers`` processes, with a progress bar."""
    todo = list({trial.key: trial for trial in trials if trial.key not in journal.scores}.values())
    if not todo:
        return
    bar = tqdm(total=len(todo), desc=label, disable=not progress, leave=False)
    if workers <= 1:
        for trial in todo:
            journal.append(trial, play_trial(trial))
            bar.update()
    else:
        with ProcessPoolExecutor(workers) as pool:
            for trial, score in zip(todo, pool.map(play_trial, todo), strict=True):
                journal.append(trial, score)
                bar.update()
    bar.close()
