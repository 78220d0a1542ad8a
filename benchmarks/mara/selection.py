"""Choosing the weights a MARA training run keeps, and confirming the choice on fresh episodes.

Every validation plays a snapshot of the policy's weights on fixed validation episodes (train
split, each workload with each validation seed, at the deployed temperature); the best mean
completion rate so far keeps its snapshot. With a :class:`~mara_env.benchmarks.mara.validation.ValidationPlayer`
that plays in a worker process, training goes on while a score is pending: its log row, and the
rows after it, wait, and are written in order once the score is in, keeping the weights that
were scored, so the log, the kept weights and the scores are the same as when every validation
is played in the training process. Finally :meth:`Selection.confirm` scores the kept weights on
confirmation episodes that took no part in choosing, paired against the starting weights.

Example:
    >>> import tempfile
    >>> from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
    >>> from mara_env.benchmarks.mara.training_log import TrainingLog
    >>> from mara_env.benchmarks.mara.validation import Episodes, ValidationPlayer
    >>> from mara_env import get_config
    >>> network = PolicyConfig(width=16, layers=1, heads=2)
    >>> episodes = Episodes((get_config("tiny"),), network, "wls", 4, 0.35)
    >>> log = TrainingLog(Path(tempfile.mkdtemp()) / "log.csv")
    >>> selection = Selection(ValidationPlayer(episodes, workers=0), log, (900,), (950,))
    >>> policy = MaraPolicy(network)
    >>> selection.add({"phase": "ppo", "update": 1}, state=policy.state_dict())
    >>> selection.best_update, 0.0 <= selection.best_validation <= 1.0
    (1, True)
    >>> sorted(selection.confirm(policy))
    ['chosen', 'episodes', 'seeds']
    >>> selection.close()
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mara_env.agents.mara.policy import MaraPolicy
from mara_env.agents.statistics import mean_ci
from mara_env.benchmarks.mara.settings import WORKLOADS
from mara_env.benchmarks.mara.training_log import TrainingLog
from mara_env.benchmarks.mara.validation import ValidationPlayer, play_episodes


@dataclass
class _WaitingRow:
    """A log row, waiting for its ``validation`` (if any): the future score of a snapshot of
    the weights, and that snapshot."""

    row: dict[str, Any]
    validation: tuple[Future[list[float]], dict[str, torch.Tensor]] | None
    round_index: int | None


class Selection:
    """The best validated weights of a run so far, and the log rows waiting for their scores.

    Args:
        player: Plays the validation episodes (in a worker process or in this one).
        log: The run's log; rows are written to it in order once their scores are in.
        validation_seeds: The validation seeds, per workload (weights are chosen on these).
        confirmation_seeds: The confirmation seeds, per workload (never used for choosing).

    Attributes:
        best_validation: The best mean validation completion rate so far (-1 before any).
        best_state: The weights that scored it (empty before any).
        best_update: The PPO update that ended with those weights (0: imitation's result or
            the starting weights; -1 before any).
        best_round: The imitation round whose weights scored best in imitation (-1 before any).
    """

    def __init__(
        self,
        player: ValidationPlayer,
        log: TrainingLog,
        validation_seeds: Sequence[int],
        confirmation_seeds: Sequence[int],
    ) -> None:
        self.player = player
        self.log = log
        self.validation_seeds = validation_seeds
        self.confirmation_seeds = confirmation_seeds
        self.best_validation = -1.0
        self.best_state: dict[str, torch.Tensor] = {}
        self.best_update = -1
        self.best_round = -1
        #: Log rows not written yet, in order: each waits for its validation score, if any.
        self._waiting: deque[_WaitingRow] = deque()

    @property
    def log_path(self) -> Path:
        """The log file."""
        return self.log.path

    def add(
        self,
        row: dict[str, Any],
        *,
        state: dict[str, torch.Tensor] | None = None,
        round_index: int | None = None,
    ) -> None:
        """Queue a log row; with ``state`` (a snapshot of the weights), start scoring it on the
        validation episodes first. ``round_index``: the imitation round the weights end. Rows
        whose scores are in are written at once (:meth:`settle`)."""
        validation = None
        if state is not None:
            validation = (self.player.submit(state, self.validation_seeds), state)
        self._waiting.append(_WaitingRow(row, validation, round_index))
        self.settle()

    def settle(self, wait: bool = False) -> None:
        """Write the waiting log rows whose validation score is in (``wait``: all of them),
        in order, keeping the best validated weights."""
        while self._waiting:
            waiting = self._waiting[0]
            if waiting.validation is not None:
                future, state = waiting.validation
                if not (wait or future.done()):
                    return
                score = float(np.mean(future.result()))
                before = self.best_validation
                round_index = waiting.round_index
                update = int(waiting.row["update"]) if round_index is None else 0
                self.keep_if_best(score, update, state)
                if round_index is not None and self.best_validation > before:
                    self.best_round = round_index
                waiting.row["validation_completion"] = round(score, 4)
            self._waiting.popleft()
            self.log.write(waiting.row)

    def keep_if_best(self, score: float, update: int, state: dict[str, torch.Tensor]) -> None:
        """Keep the weights ``state`` if ``score`` beats the best so far."""
        if score > self.best_validation:
            self.best_validation = score
            self.best_update = update
            self.best_state = state

    def restart(self) -> None:
        """Forget the best score and weights (PPO's starting weights then compete as update 0
        on the same validation set); ``best_update`` and ``best_round`` stay until beaten."""
        self.best_validation, self.best_state = -1.0, {}

    def play(
        self, policy: MaraPolicy, seeds: Sequence[int], state: dict[str, torch.Tensor] | None = None
    ) -> list[float]:
        """Completion rates of ``policy`` (``state``: other weights, on a copy) on every workload
        with each of ``seeds``, in this process, at the deployed temperature (workload-major)."""
        if state is not None:
            policy = copy.deepcopy(policy)
            policy.load_state_dict(state)
        return play_episodes(self.player.episodes, policy, seeds)

    def validate(self, policy: MaraPolicy) -> float:
        """Mean completion rate of ``policy`` on the validation episodes, in this process."""
        return float(np.mean(self.play(policy, self.validation_seeds)))

    def confirm(
        self, policy: MaraPolicy, baseline: dict[str, torch.Tensor] | None = None
    ) -> dict[str, Any]:
        """Score the kept weights (``policy``'s own before any were kept) on the confirmation
        episodes, paired against ``baseline`` weights when given: the card's facts."""
        seeds = self.confirmation_seeds
        started = None if baseline is None else self.player.submit(baseline, seeds)
        chosen = self.play(policy, seeds, self.best_state or None)
        facts: dict[str, Any] = {
            "seeds": f"{seeds[0]}-{seeds[-1]} x {len(WORKLOADS)} workloads (train split)",
            "episodes": len(chosen),
            "chosen": round(float(np.mean(chosen)), 4),
        }
        if started is not None:
            start = started.result()
            summary = mean_ci([a - b for a, b in zip(chosen, start, strict=True)])
            facts["start"] = round(float(np.mean(start)), 4)
            facts["chosen_minus_start"] = {
                "mean": round(summary.mean, 4),
                "ci95": [round(summary.low, 4), round(summary.high, 4)],
            }
        return facts

    def close(self) -> None:
        """Stop the validation worker, if any (waits for the episodes it is playing)."""
        self.player.close()
