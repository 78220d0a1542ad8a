"""Successive halving over a stream: rungs judged against recent peers (an asynchronous variant).

The classical rule on a fixed cohort is :class:`mara_env.agents.successive_halving.SuccessiveHalving`.
"""

from __future__ import annotations

from collections import deque
from itertools import pairwise

import numpy as np

from mara_env.agents.priority import PriorityScheduler
from mara_env.sim.observation import SlotView


class SuccessiveHalvingStream(PriorityScheduler):
    """Successive halving over a stream of tasks: drop the laggards at fixed work rungs.

    Classic successive halving trains a fixed set of configurations for a budget, keeps the
    better half, doubles the budget and repeats. Here tasks arrive over time, so there is no
    fixed cohort. Adaptation (in the spirit of asynchronous successive halving): when a task
    has received ``rungs[r]`` node-epochs, its normalised progress toward its target is
    compared with the progress recorded by the last ``window`` tasks that reached the same rung
    (its peers). If it is below their median, the task is dropped and never trained again;
    otherwise it goes on to the next rung. The comparison only starts once ``min_peers`` peers
    have been recorded at that rung. Surviving tasks are served earliest deadline first (see
    :class:`mara_env.agents.priority.PriorityScheduler`). This rule was registered as
    ``successive_halving`` before the classical rule took that name.

    Args:
        rungs: Increasing node-epochs of work at which tasks are judged.
        window: How many recent peers each rung remembers.
        min_peers: Peers a rung needs before it drops anything.

    Example:
        >>> import mara_env
        >>> from mara_env.agents.evaluation import evaluate
        >>> evaluate(SuccessiveHalvingStream(), "tiny", seeds=[0])[0]["agent"]
        'successive_halving_stream'
    """

    name = "successive_halving_stream"

    def __init__(
        self, rungs: tuple[float, ...] = (4.0, 16.0), window: int = 16, min_peers: int = 4
    ) -> None:
        super().__init__()
        values = tuple(float(r) for r in rungs)
        if not values or values[0] <= 0 or any(b <= a for a, b in pairwise(values)):
            raise ValueError(
                "SuccessiveHalvingStream: rungs must be increasing positive node-epochs, got "
                f"{rungs!r}."
            )
        if window < 1 or min_peers < 1:
            raise ValueError(
                f"SuccessiveHalvingStream: window and min_peers must be >= 1, got {window} and "
                f"{min_peers}."
            )
        self.rungs = values
        self.window = int(window)
        self.min_peers = int(min_peers)

    def on_reset(self) -> None:
        """Forget peers, rungs reached and dropped tasks."""
        self._peers: list[deque[float]] = [deque(maxlen=self.window) for _ in self.rungs]
        self._next_rung: dict[int, int] = {}
        self._dropped: set[int] = set()

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Judge tasks that reached a rung, then serve the survivors earliest deadline first."""
        self._judge(view)
        return super().plan(view, mask)

    def _judge(self, view: SlotView) -> None:
        for slot in np.flatnonzero(view.occupied).tolist():
            task = int(self.tracker.task_ids[slot])
            rung = self._next_rung.get(task, 0)
            while task not in self._dropped and rung < len(self.rungs):
                if view.work[slot] < self.rungs[rung]:
                    break
                score = float(view.progress[slot])
                peers = self._peers[rung]
                if len(peers) >= self.min_peers and score < float(np.median(peers)):
                    self._dropped.add(task)
                peers.append(score)
                rung += 1
            self._next_rung[task] = rung

    def eligible(self, view: SlotView) -> np.ndarray:
        """Visible tasks that have not been dropped."""
        dropped = np.isin(self.tracker.task_ids, list(self._dropped))
        return view.occupied & ~dropped

    def priority(self, view: SlotView) -> np.ndarray:
        """Survivors: epochs left before the deadline (earliest deadline first)."""
        return view.time_left
