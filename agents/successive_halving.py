"""Classical successive halving, as LaiRA's paper uses it as a baseline: halving rounds on a cohort.

Successive halving (Karnin et al. 2013; Jamieson & Talwalkar 2016, the inner loop of Hyperband)
trains a fixed set of candidates for a budget split equally among them, keeps the better half,
doubles the budget per survivor and repeats until one is left. On this cluster a candidate is a
task, the budget is node-epochs and "better" is the observed normalised progress toward the
target (``progress`` in :mod:`mara_env.sim.observation`), so the rule reads observations only.

**One bracket** (a run of successive halving on a cohort):

1. **Cohort.** The visible tasks that have not been dropped, ``n`` of them.
2. **Budget.** ``B = n_nodes * E`` node-epochs, with ``E = bracket_epochs`` or, by default,
   the epochs until the cohort's latest deadline (all the time the cohort has).
3. **Rounds.** ``R = ceil(log_eta n)`` rounds. In round ``r`` each of the ``|S_r|`` survivors
   gets ``b_r = max(1, floor(B / (R * |S_r|)))`` node-epochs: the round's share ``B / R``
   split equally. Survivors are served one node each in turn, those already holding nodes
   first, then in the order they were first seen, so on one node the tasks are trained one
   after another (few switches) rather than interleaved.
4. **Halving.** When every survivor has had its ``b_r``, the ``ceil(|S_r| / eta)`` with the
   highest progress survive (ties: the task seen first); the rest are dropped for good. With
   ``eta = 2`` the budget per survivor doubles each round.
5. **The end.** After the last round (or once one survivor is left) the survivors take every
   node until ``E`` epochs have passed since the bracket began, or until they leave.

A survivor that completes or expires leaves the cohort; a round whose survivors have all had
their budget (or left) is judged at once.

**Tasks that arrive over time** (the cluster environment; in a static bundle every task is in
the first cohort). Classical successive halving has no rule for them, so this one is chosen
to keep the fixed-cohort logic intact: a task that appears while a bracket runs **waits for the
next bracket**. A bracket ends when its survivors have all left, or when its ``E`` epochs have
passed after its last round; the next bracket's cohort is every visible task not dropped (the
survivors carried over and the tasks that waited). Nodes go to the survivors first; nodes they
cannot take (beyond the config's ``task_node_limit`` each) go to waiting tasks, earliest
deadline first. So no node idles while a survivor (or a waiting task) could use it; nodes idle
only when every visible task has been dropped. Nodes stay on the task they trained whenever the
counts allow (:func:`mara_env.agents.assignment.keep_nodes_in_place`).

The streaming rule registered as ``successive_halving`` before this one (rungs judged against
recent peers, survivors served earliest deadline first) is
:class:`mara_env.agents.successive_halving_stream.SuccessiveHalvingStream`.

Example:
    >>> from mara_env.agents.evaluation import evaluate
    >>> rows = evaluate(SuccessiveHalving(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('successive_halving', 0.0)
"""

from __future__ import annotations

import math

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place
from mara_env.agents.base import EpochScheduler
from mara_env.sim.observation import SlotView


def halving_rounds(n: int, eta: int = 2) -> int:
    """Rounds successive halving needs to bring ``n`` candidates down to one: ``ceil(log_eta n)``.

    Example:
        >>> [halving_rounds(n) for n in (1, 2, 3, 4, 5, 10)]
        [0, 1, 2, 2, 3, 4]
    """
    rounds, reach = 0, 1
    while reach < n:
        reach *= eta
        rounds += 1
    return rounds


def deal(order: list[int], limit: np.ndarray, counts: np.ndarray, free: int) -> int:
    """Deal ``free`` nodes one at a time along ``order``, wrapping around, while slots are below
    ``limit``; adds to ``counts`` in place and returns the nodes left.

    Example:
        >>> counts = np.zeros(3, dtype=np.int64)
        >>> deal([2, 0], np.array([1, 0, 3]), counts, 4), counts.tolist()
        (0, [1, 0, 3])
    """
    while free > 0:
        open_slots = [slot for slot in order if counts[slot] < limit[slot]]
        if not open_slots:
            break
        for slot in open_slots[:free]:
            counts[slot] += 1
        free -= min(free, len(open_slots))
    return free


class SuccessiveHalving(EpochScheduler):
    """Classical successive halving on cohorts of tasks (see the module docstring).

    Args:
        eta: Survivors kept per round: the best ``ceil(|S| / eta)`` (2: halving).
        bracket_epochs: Epochs ``E`` of a bracket's budget ``n_nodes * E``; ``None``: until the
            cohort's latest deadline.

    Example:
        >>> SuccessiveHalving(eta=3).eta
        3
        >>> SuccessiveHalving(eta=1)
        Traceback (most recent call last):
        ...
        ValueError: SuccessiveHalving: eta must be an int >= 2, got 1.
    """

    name = "successive_halving"

    def __init__(self, eta: int = 2, bracket_epochs: int | None = None) -> None:
        super().__init__()
        if isinstance(eta, bool) or not isinstance(eta, int) or eta < 2:
            raise ValueError(f"SuccessiveHalving: eta must be an int >= 2, got {eta!r}.")
        whole = isinstance(bracket_epochs, int) and not isinstance(bracket_epochs, bool)
        if bracket_epochs is not None and not (whole and bracket_epochs >= 1):
            raise ValueError(
                "SuccessiveHalving: bracket_epochs must be None or an int >= 1, got "
                f"{bracket_epochs!r}."
            )
        self.eta = eta
        self.bracket_epochs = bracket_epochs

    @property
    def survivors(self) -> tuple[int, ...]:
        """Task ids (:attr:`tracker` ids) of the current bracket's survivors."""
        return tuple(self._survivors)

    @property
    def dropped(self) -> frozenset[int]:
        """Task ids dropped so far this episode."""
        return frozenset(self._dropped)

    @property
    def round(self) -> int:
        """The current bracket's round (``rounds`` once the halving is over)."""
        return self._round

    @property
    def rounds(self) -> int:
        """Rounds of the current bracket (``ceil(log_eta n)``)."""
        return self._rounds

    @property
    def round_budget(self) -> int:
        """Node-epochs each survivor gets in the current round."""
        return self._budget

    def on_reset(self) -> None:
        """No bracket, nothing dropped."""
        self._epoch = -1
        self._survivors: list[int] = []
        self._dropped: set[int] = set()
        self._round_start: dict[int, float] = {}
        self._round = 0
        self._rounds = 0
        self._budget = 0
        self._total = 0
        self._end = -1

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Update the bracket (start, halve, end) and deal out this epoch's nodes."""
        self._epoch += 1
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        slot_of = {int(self.tracker.task_ids[slot]): int(slot) for slot in slots.tolist()}
        self._survivors = [task for task in self._survivors if task in slot_of]
        if self._survivors and self._round >= self._rounds and self._epoch >= self._end:
            self._round_start = {}  # the bracket's time is up: its survivors join the next
            self._survivors = []
        if not self._survivors:
            self._start_bracket(view, slot_of)
        while self._survivors and self._round < self._rounds and self._round_done(view, slot_of):
            self._halve(view, slot_of)
        return self._assign(view, slot_of)

    def _start_bracket(self, view: SlotView, slot_of: dict[int, int]) -> None:
        cohort = sorted(task for task in slot_of if task not in self._dropped)
        self._survivors = cohort
        if not cohort:
            return
        time_left = max(float(view.time_left[slot_of[task]]) for task in cohort)
        epochs = int(time_left) if self.bracket_epochs is None else self.bracket_epochs
        self._total = self.config.n_nodes * max(epochs, 1)
        self._end = self._epoch + max(epochs, 1)
        self._rounds = halving_rounds(len(cohort), self.eta)
        self._round = 0
        self._begin_round(view, slot_of)

    def _begin_round(self, view: SlotView, slot_of: dict[int, int]) -> None:
        share = self._total // max(self._rounds * len(self._survivors), 1)
        self._budget = max(1, share)
        self._round_start = {task: float(view.work[slot_of[task]]) for task in self._survivors}

    def _round_work(self, view: SlotView, slot_of: dict[int, int], task: int) -> float:
        return float(view.work[slot_of[task]]) - self._round_start[task]

    def _round_done(self, view: SlotView, slot_of: dict[int, int]) -> bool:
        return all(
            self._round_work(view, slot_of, task) >= self._budget for task in self._survivors
        )

    def _halve(self, view: SlotView, slot_of: dict[int, int]) -> None:
        """Keep the best ``ceil(|S| / eta)`` survivors by progress (ties: seen first)."""
        ranked = sorted(self._survivors, key=lambda task: (-view.progress[slot_of[task]], task))
        keep = math.ceil(len(ranked) / self.eta)
        self._dropped.update(ranked[keep:])
        self._survivors = sorted(ranked[:keep])
        self._round += 1
        if len(self._survivors) <= 1:
            self._round = self._rounds
        if self._round < self._rounds:
            self._begin_round(view, slot_of)

    def _assign(self, view: SlotView, slot_of: dict[int, int]) -> np.ndarray:
        config = self.config
        cap = config.task_node_limit
        held = np.bincount(self.previous_slots, minlength=config.n_actions)
        survivors = sorted(self._survivors, key=lambda task: (held[slot_of[task]] == 0, task))
        order = [slot_of[task] for task in survivors]
        counts = np.zeros(config.n_slots, dtype=np.int64)
        limit = np.full(config.n_slots, cap, dtype=np.int64)
        if self._round < self._rounds:  # a round: each survivor up to its remaining budget
            for task, slot in zip(survivors, order, strict=True):
                remaining = self._budget - self._round_work(view, slot_of, task)
                limit[slot] = min(cap, max(math.ceil(remaining), 0))
        free = deal(order, limit, counts, config.n_nodes)
        free = deal(order, np.full(config.n_slots, cap), counts, free)
        members = set(self._survivors)
        waiting = sorted(
            (task for task in slot_of if task not in members and task not in self._dropped),
            key=lambda task: (view.time_left[slot_of[task]], task),
        )
        order += [slot_of[task] for task in waiting]
        deal(order, np.full(config.n_slots, cap), counts, free)
        placement = np.array(order, dtype=np.int64)
        return keep_nodes_in_place(counts, self.previous_slots, placement, config.idle_action)
