"""Single episodes of a scheduler with given settings, played in parallel and journalled.

The baseline scripts (:mod:`mara_env.benchmarks.baselines.tuning`, :mod:`mara_env.benchmarks.baselines.deviations`)
each play many short episodes of one scheduler with some settings. A :class:`Trial` names one
such episode; :func:`run_trials` plays the ones a :class:`TrialJournal` does not hold yet, on
worker processes, appending each result to the journal the moment it ends, so an interrupted
run resumes. Journal lines are keyed by the digest of what played them
(:func:`mara_env.benchmarks.baselines.trial_keys.trial_manifest`): lines written by other code are kept
in the file but never reused, until pruned (:class:`mara_env.benchmarks.common.store.ResultsStore`).

Example:
    >>> trial = Trial("edf", "{}", "rl", seed=3, preset="tiny")
    >>> 0.0 <= play_trial(trial) <= 1.0
    True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, get_type_hints

from tqdm.auto import tqdm

from mara_env import TRAINING_LOAD, ClusterConfig, get_config
from mara_env.agents import Scheduler, evaluate, make_agent
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.store import ResultsStore
from mara_env.benchmarks.common.tuning_configs import QUICK_ARRIVAL_HORIZON
from mara_env.worlds.config import LATEST_WORLD_VERSION


@dataclass(frozen=True)
class Trial:
    """One episode of one scheduler.

    Attributes:
        agent: A registered agent name, or with ``searched`` a search space of
            :data:`mara_env.benchmarks.baselines.search_spaces.SEARCH_SPACES`.
        settings: JSON of keyword settings: on top of the registry's tuned ones, or with
            ``searched`` on top of the class defaults and the variant's fixed settings.
        workload: A workload name of :mod:`mara_env.curves.workloads`.
        seed: The episode's seed.
        preset: The config preset, at the training load.
        world_version: The world's rules (``ClusterConfig.world_version``); a registered agent
            is built with the artifacts shipped for it.
        load_factor: Multiple of the training load.
        quick: Arrivals during only :data:`~mara_env.benchmarks.common.tuning_configs.QUICK_ARRIVAL_HORIZON` epochs.
        searched: Build from the tuning search space instead of the registry.
    """

    agent: str
    settings: str
    workload: str
    seed: int
    preset: str = "training"
    world_version: int = LATEST_WORLD_VERSION
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
        config = get_config(
            self.preset, workload=self.workload, load=load, world_version=self.world_version
        )
        if self.quick:
            config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
        return config

    def build(self) -> Scheduler:
        """The scheduler the trial plays."""
        settings = json.loads(self.settings)
        if self.searched:
            from mara_env.benchmarks.baselines.search_spaces import SEARCH_SPACES

            return SEARCH_SPACES[self.agent].build(settings)
        return make_agent(self.agent, world_version=self.world_version, **settings)


def play_trial(trial: Trial) -> float:
    """The completion rate of the trial's episode (runs in a worker process)."""
    rows = evaluate(trial.build(), trial.config(), seeds=[trial.seed])
    return float(rows[0]["completion_rate"])


#: The columns of a journal line: the :class:`Trial`'s fields, its score and the code's
#: fingerprint (the JSON lines of ``trials.jsonl``, keys sorted).
JOURNAL_COLUMNS: dict[str, type] = {
    **{item.name: get_type_hints(Trial)[item.name] for item in fields(Trial)},
    "completion_rate": float,
    "code": str,
}
#: What identifies a journal line: the trial and the code that played it.
JOURNAL_KEY = (*(item.name for item in fields(Trial)), "code")


class TrialJournal:
    """``trials.jsonl``: the finished trials, each appended and ``fsync``-ed the moment it ends.

    A thin use of :class:`mara_env.benchmarks.common.store.ResultsStore` keyed by the trial and the
    digest of ``manifest``: lines of other code stay in the file but are never reused, and the
    manifest is kept beside the file so that a later run can say what changed.

    Args:
        path: The journal file (created with its folder on the first append).
        manifest: What the trials' results depend on besides their own fields
            (:func:`trial_manifest`).

    Raises:
        mara_env.benchmarks.common.store.ResultsFileError: If the file holds a line that is not a trial.
    """

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.manifest = manifest
        self.fingerprint = manifest.digest
        self.store = ResultsStore(
            path,
            JOURNAL_COLUMNS,
            key=JOURNAL_KEY,
            advice="Pass another --output directory, or move the file away to start afresh.",
        )

    @property
    def path(self) -> Path:
        """The journal file."""
        return self.store.path

    def _key(self, trial: Trial) -> tuple[Any, ...]:
        return self.store.key_of({**asdict(trial), "code": self.fingerprint})

    def has(self, trial: Trial) -> bool:
        """Whether ``trial`` was played by the current code."""
        return self._key(trial) in self.store.done()

    def score(self, trial: Trial) -> float:
        """The recorded completion rate of ``trial`` (KeyError if it has not been played)."""
        return float(self.store.get(self._key(trial))["completion_rate"])

    def append(self, trial: Trial, score: float) -> None:
        """Record one finished trial on disk."""
        self.store.record_manifest(self.manifest)
        self.store.append({**asdict(trial), "completion_rate": score, "code": self.fingerprint})


def run_trials(
    trials: Sequence[Trial], journal: TrialJournal, *, workers: int, progress: bool, label: str
) -> None:
    """Play the trials not yet in ``journal`` on ``workers`` processes, with a progress bar."""
    todo = list({trial.key: trial for trial in trials if not journal.has(trial)}.values())
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
