"""LaiRA (Wang, Liu, Zhou; AAAI 2026) adapted to discrete nodes and arriving tasks.

LaiRA (``/work/shared/PAPERS.md`` §3) works in time slices of adaptive length ``M``. At the
start of each slice:

1. **Look-ahead feasibility (DKF).** Every visible task's loss is tracked by the Dynamic Kalman
   Filter of :mod:`predictors.dkf` (a power law with drifting parameters, updated at constant
   cost per new report). Its state is projected to the deadline assuming the task got all the
   remaining compute (``time_left * speed * K**alpha`` curve steps for ``K`` nodes); a task
   whose predicted loss stays above its target even then is **infeasible** for this slice and
   gets no compute. The test is repeated every slice.
2. **Immediate evaluation with a confidence bound.** A discounted ridge least-squares fit
   (:class:`predictors.wls.DiscountedLeastSquares`, features ``[ln(s + s0), 1]``) gives a
   lower confidence bound on the log-loss after one more slice:
   ``r_hat = <x_hat, theta_hat> - beta ||x_hat||_{V^-1}`` at ``x_hat = [ln(s + M N + s0), 1]``.
3. **UCB ratio.** Optimistic slope over the slice ``rho_hat = (ln l(s) - r_hat) /
   (ln(s + M N + s0) - ln(s + s0))``; slope required to reach the target by the deadline
   ``rho = (ln l(s) - ln target) / (ln(s + T N + s0) - ln(s + s0))``. Feasible tasks are ranked
   by ``rho_hat / rho``, largest first.
4. **Adaptive slice length (PD control).** After each slice the mean absolute error of the
   fits' predictions of the log-loss reached during the slice, ``e``, steers the next length:
   ``M <- clip(M + k_p (e_ref - e) - k_d (e - e_previous), 1, max_slice)`` (accurate
   predictions lengthen slices, inaccurate ones shorten them); the first ``warmup_slices``
   slices have the fixed length ``first_slice``. The error is taken over the tasks that
   trained during the slice and had at least one report at its start (arrival point plus one
   report fix both parameters of the fit).

Faithful: the DKF and its look-ahead test repeated every slice (with all the remaining compute),
the discounted ridge fit with its confidence bound, the ratio ``rho_hat / rho``, no compute for
infeasible tasks, PD-controlled slice lengths with a fixed first length, and holding an
allocation for a whole slice (LaiRA's answer to LARA's many switches).

Deviations, and why:

* **Discrete nodes (allocation rule).** LaiRA gives the whole (divisible) compute of a slice to
  the single best task. Here compute is ``K`` nodes and ``k`` nodes advance a task only
  ``speed * k**alpha`` curve steps per epoch (alpha < 1), so one task cannot use the whole
  cluster well. Rule: feasible tasks are served in rank order, each getting the nodes it
  **needs** to reach its target by its deadline according to the DKF's look-ahead (the extra
  work ``W`` at which the predicted loss first reaches the target; ``ceil((W / (speed T)) **
  (1 / alpha))`` nodes, at least 1, at most what is left and ``max_nodes_per_task``). The best
  task thus gets as many nodes as it usefully can, as in the paper, and the rest go down the
  ranking instead of being wasted on diminishing returns. A task without enough reports for
  the DKF gets one node (enough to learn about it). Nodes left when every feasible task is
  served go round the ranking again, one more node each (an idle node completes nothing).
* **Per-node speed ``N``.** ``N`` in ``rho_hat`` and ``rho`` is the task's speed on one node:
  which tasks get several nodes is decided only after ranking.
* **Arrivals.** LaiRA's tasks are all present at the start. Here tasks arrive during a slice:
  they wait for the next slice unless nodes are idle (freed by a task that completed or
  expired, or never used); idle nodes are handed out mid-slice by the same rule, ranking the
  tasks present by their current ratio (tasks already holding nodes keep them).
* **Too little data.** The look-ahead only drops a task once it has ``min_reports`` reports
  after arrival; before that it is presumed feasible (the DKF would only be echoing its prior).
  Tasks with few reports have a wide confidence bound, hence a large ratio, so they are
  explored first: the bound is LaiRA's exploration mechanism. As in the paper, a dropped task
  gets no compute, hence no new reports, so its verdict can only change through its shrinking
  time left: in practice it stays dropped. On noisy curves (rl) an early report that happens
  to lie above the arrival loss can therefore drop a task that would have made it.
* **Relative losses.** Schedulers see losses relative to each task's loss at arrival
  (:mod:`agents.observed_history`); both the DKF and the fit are invariant to that scale
  apart from a constant shift of ``ln a``.
* **Switch cost.** Switching costs ``switch_cost`` of an epoch here; nodes stay on their task
  whenever the new allocation keeps it served (:func:`agents.assignment.keep_nodes_in_place`),
  and allocations are held for a slice. The cost is not added to predicted needs.
* **Hyperparameters.** PAPERS.md gives none of LaiRA's values; the defaults are ours (see
  :class:`LairaSettings`).

Example:
    >>> from agents import evaluate
    >>> from agents.laira import Laira
    >>> rows = evaluate(Laira(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('laira', 0.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from agents.assignment import keep_nodes_in_place
from agents.observed_history import HistoryScheduler
from mara_env.families import FAMILY_NAMES
from mara_env.observation import SlotView
from predictors.dkf import DKF, FilterState
from predictors.wls import DiscountedLeastSquares


@dataclass(frozen=True)
class LairaSettings:
    """LaiRA's hyperparameters (PAPERS.md gives no values; these defaults are ours).

    Attributes:
        gamma: Forgetting factor of the discounted least-squares fit, in (0, 1].
        ridge: Ridge penalty ``lambda`` of the fit (> 0).
        beta: Width of the confidence bound on the next log-loss (>= 0).
        offset: ``s0`` in curve steps, added to the work before taking logarithms (> 0).
        first_slice: ``M_1``: epochs per slice during the first ``warmup_slices`` slices.
        warmup_slices: Slices of fixed length before the PD control takes over (>= 1).
        max_slice: Longest slice in epochs (>= ``first_slice``).
        error_reference: Mean absolute log-loss prediction error at which the slice length
            stays put (> 0).
        proportional_gain: ``k_p``: epochs added per unit of ``error_reference - error``.
        derivative_gain: ``k_d``: epochs removed per unit of error increase since the
            previous slice.
        min_reports: Reports after arrival a task needs before the look-ahead may drop it.
        dkf: The Dynamic Kalman Filter used for the look-ahead.
    """

    gamma: float = 0.95
    ridge: float = 1e-3
    beta: float = 0.1
    offset: float = 1.0
    first_slice: int = 2
    warmup_slices: int = 3
    max_slice: int = 8
    error_reference: float = 0.1
    proportional_gain: float = 10.0
    derivative_gain: float = 2.0
    min_reports: int = 2
    dkf: DKF = field(default_factory=DKF)

    def __post_init__(self) -> None:
        def number(value: object) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool)

        def whole(value: object) -> bool:
            return isinstance(value, int) and not isinstance(value, bool)

        checks = (
            ("gamma", number(self.gamma) and 0.0 < self.gamma <= 1.0, "a number in (0, 1]"),
            ("ridge", number(self.ridge) and 0.0 < self.ridge < math.inf, "a finite number > 0"),
            ("beta", number(self.beta) and 0.0 <= self.beta < math.inf, "a finite number >= 0"),
            ("offset", number(self.offset) and 0.0 < self.offset < math.inf, "a finite number > 0"),
            ("first_slice", whole(self.first_slice) and self.first_slice >= 1, "an int >= 1"),
            ("warmup_slices", whole(self.warmup_slices) and self.warmup_slices >= 1, "an int >= 1"),
            (
                "max_slice",
                whole(self.max_slice)
                and whole(self.first_slice)
                and self.max_slice >= self.first_slice,
                f"an int >= first_slice ({self.first_slice})",
            ),
            (
                "error_reference",
                number(self.error_reference) and 0.0 < self.error_reference < math.inf,
                "a finite number > 0",
            ),
            (
                "proportional_gain",
                number(self.proportional_gain) and 0.0 <= self.proportional_gain < math.inf,
                "a finite number >= 0",
            ),
            (
                "derivative_gain",
                number(self.derivative_gain) and 0.0 <= self.derivative_gain < math.inf,
                "a finite number >= 0",
            ),
            ("min_reports", whole(self.min_reports) and self.min_reports >= 1, "an int >= 1"),
            ("dkf", isinstance(self.dkf, DKF), "a predictors.dkf.DKF"),
        )
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(
                    f"LairaSettings.{name} must be {rule}, got {getattr(self, name)!r}. See "
                    "the LairaSettings docstring for what it controls and its default."
                )


def nodes_needed(work: float, speed: float, time_left: float, alpha: float, limit: int) -> int:
    """Fewest nodes (1 to ``limit``) that do ``work`` curve steps within ``time_left`` epochs.

    ``k`` nodes advance a task ``speed * k**alpha`` curve steps per epoch, so ``k = ceil((work
    / (speed * time_left)) ** (1 / alpha))``; ``limit`` when even that many do not suffice or
    ``work`` is infinite.

    Example:
        >>> nodes_needed(40.0, speed=2.0, time_left=5.0, alpha=0.5, limit=8)  # 16, capped
        8
        >>> nodes_needed(12.0, speed=2.0, time_left=5.0, alpha=0.5, limit=8)  # 1.2 ** 2 = 1.44
        2
        >>> nodes_needed(3.0, speed=2.0, time_left=5.0, alpha=0.5, limit=8)
        1
    """
    per_node = work / (speed * time_left)
    if per_node <= 1.0:
        return 1
    if not math.isfinite(per_node):
        return limit
    return min(math.ceil(per_node ** (1.0 / alpha) - 1e-9), limit)


@dataclass
class _TaskMemory:
    """What LaiRA keeps per task between epochs."""

    filter: FilterState
    fit: DiscountedLeastSquares
    reports: int = 0
    feasible: bool = True
    needed_nodes: int = 1


class Laira(HistoryScheduler):
    """LaiRA on discrete nodes: DKF look-ahead, UCB ratio ranking, PD-controlled slices.

    See the module docstring for the algorithm and every deviation from the paper.

    Args:
        settings: Hyperparameters (default :class:`LairaSettings`).
        **overrides: Individual :class:`LairaSettings` fields, e.g. ``Laira(beta=0.5)``.

    Attributes:
        settings: The hyperparameters in use.
        slice_length: Length in epochs of the current slice.
        slice_lengths: Lengths of every slice started this episode, in order.
        last_feasible: Per slot, the latest look-ahead verdict of its task (``False`` for empty
            slots).
        last_ratio: Per slot, the ratio ``rho_hat / rho`` of the latest ranking (``nan`` for
            tasks not ranked).

    Example:
        >>> Laira(beta=0.5).settings.beta
        0.5
        >>> Laira(bta=0.5)
        Traceback (most recent call last):
        ...
        TypeError: Laira: unknown setting(s) ['bta']; known settings: ['beta', 'derivative_gain', 'dkf', 'error_reference', 'first_slice', 'gamma', 'max_slice', 'min_reports', 'offset', 'proportional_gain', 'ridge', 'warmup_slices'].
    """

    name = "laira"

    def __init__(self, settings: LairaSettings | None = None, **overrides: Any) -> None:
        super().__init__()
        base = settings if settings is not None else LairaSettings()
        if overrides:
            known = {item.name for item in fields(LairaSettings)}
            unknown = sorted(set(overrides) - known)
            if unknown:
                raise TypeError(
                    f"Laira: unknown setting(s) {unknown}; known settings: {sorted(known)}."
                )
            base = replace(base, **overrides)
        self.settings = base

    def on_reset(self) -> None:
        """Forget every task and start the first slice afresh."""
        n_slots = self.config.n_slots
        self._tasks: dict[int, _TaskMemory] = {}
        self._held: dict[int, int] = {}
        self._slice_left = 0
        self._slices_started = 0
        self._length = float(self.settings.first_slice)
        self._previous_error: float | None = None
        #: Per task: work at the slice start, then the fit's parameters then.
        self._predicted: dict[int, np.ndarray] = {}
        self.slice_length = self.settings.first_slice
        self.slice_lengths: list[int] = []
        self.last_feasible = np.zeros(n_slots, dtype=bool)
        self.last_ratio = np.full(n_slots, np.nan)

    # ------------------------------------------------------------------ per-task memory
    def _absorb_new_points(self, occupied: np.ndarray) -> None:
        """Feed each task's new reports to its DKF and its fit (constant cost per point)."""
        histories, settings = self.histories, self.settings
        dkf = settings.dkf
        for task in histories.departed_ids:
            self._tasks.pop(task, None)
            self._held.pop(task, None)
            self._predicted.pop(task, None)
        for slot in occupied.tolist():
            work, loss = histories.new_points(slot)
            if len(work) == 0:
                continue
            task = int(histories.task_ids[slot])
            memory = self._tasks.get(task)
            start = 0
            if memory is None:
                fit = DiscountedLeastSquares(gamma=settings.gamma, ridge=settings.ridge)
                memory = _TaskMemory(dkf.start(float(work[0]), float(loss[0])), fit)
                memory.fit.update(self._features(float(work[0])), math.log(float(loss[0])))
                self._tasks[task] = memory
                start = 1
            for done, value in zip(work[start:].tolist(), loss[start:].tolist(), strict=True):
                memory.filter = dkf.update(memory.filter, done, value)
                memory.fit.update(self._features(done), math.log(value))
                memory.reports += 1

    def _features(self, work: float) -> np.ndarray:
        return np.array([math.log(work + self.settings.offset), 1.0])

    # ------------------------------------------------------------------ the slice decisions
    def _alpha(self, view: SlotView, slot: int) -> float:
        return self.config.alpha_for(FAMILY_NAMES[int(view.family[slot])])

    def _node_limit(self) -> int:
        config = self.config
        cap = config.max_nodes_per_task
        return config.n_nodes if cap is None else min(cap, config.n_nodes)

    def _check_feasibility(self, view: SlotView, slots: np.ndarray) -> None:
        """Run the DKF look-ahead of every task in ``slots`` with all the remaining compute."""
        dkf, histories = self.settings.dkf, self.histories
        limit = self._node_limit()
        for slot in slots.tolist():
            memory = self._tasks[int(histories.task_ids[slot])]
            if memory.reports < self.settings.min_reports:
                memory.feasible, memory.needed_nodes = True, 1
                continue
            alpha = self._alpha(view, slot)
            speed, time_left = float(histories.speed[slot]), max(float(view.time_left[slot]), 1.0)
            extra = time_left * speed * limit**alpha
            target = math.exp(float(view.log_target_ratio[slot]))
            verdict = dkf.lookahead(memory.filter, target, extra)
            memory.feasible = verdict.feasible
            memory.needed_nodes = nodes_needed(
                verdict.work_to_target, speed, time_left, alpha, limit
            )

    def ratios(self, view: SlotView, slots: np.ndarray) -> np.ndarray:
        """LaiRA's UCB ratio ``rho_hat / rho`` of each task in ``slots`` (larger is better).

        Args:
            view: The current decoded observation.
            slots: Occupied slots whose tasks' fits are up to date.
        """
        settings, histories = self.settings, self.histories
        offset, beta = settings.offset, settings.beta
        horizon = max(self.slice_length, 1)
        ratios = np.empty(len(slots))
        for index, slot in enumerate(slots.tolist()):
            fit = self._tasks[int(histories.task_ids[slot])].fit
            work, speed = float(histories.curve_steps[slot]), float(histories.speed[slot])
            log_loss = float(view.log_loss_ratio[slot])
            here = math.log(work + offset)
            ahead = math.log(work + horizon * speed + offset)
            # x^T V^-1 x and x^T V^-1 r for x = [ahead, 1], with V^-1 of the 2 x 2 precision.
            (a, b), (_, d) = fit.precision.tolist()
            first, second = fit.moment.tolist()
            determinant = a * d - b * b
            left = (d * ahead - b) / determinant, (a - b * ahead) / determinant
            spread = math.sqrt(max(left[0] * ahead + left[1], 0.0))
            bound = left[0] * first + left[1] * second - beta * spread
            optimistic = (log_loss - bound) / (ahead - here)
            time_left = max(float(view.time_left[slot]), 1.0)
            deadline = math.log(work + time_left * speed + offset)
            gap = max(log_loss - float(view.log_target_ratio[slot]), 1e-12)
            required = gap / (deadline - here)
            ratios[index] = optimistic / required
        return ratios

    def _ranking(self, view: SlotView, slots: np.ndarray) -> np.ndarray:
        """Feasible tasks of ``slots`` by ratio, best first (ties: the task seen first)."""
        ids = self.histories.task_ids[slots]
        feasible = np.array([self._tasks[int(task)].feasible for task in ids], dtype=bool)
        slots, ids = slots[feasible], ids[feasible]
        ratios = self.ratios(view, slots)
        self.last_ratio = np.full(self.config.n_slots, np.nan)
        self.last_ratio[slots] = ratios
        return slots[np.lexsort((ids, -ratios))]

    def _deal(self, order: np.ndarray, nodes: int, counts: dict[int, int]) -> None:
        """Hand ``nodes`` out along ``order``: each task what it needs, then round again."""
        ids = self.histories.task_ids
        limit = self._node_limit()
        for task in ids[order].tolist():
            if nodes <= 0:
                return
            wanted = self._tasks[task].needed_nodes
            given = min(wanted, nodes, limit - counts.get(task, 0))
            if given > 0:
                counts[task] = counts.get(task, 0) + given
                nodes -= given
        while nodes > 0:
            open_tasks = [task for task in ids[order].tolist() if counts.get(task, 0) < limit]
            if not open_tasks:
                return
            for task in open_tasks[:nodes]:
                counts[task] = counts.get(task, 0) + 1
            nodes -= min(nodes, len(open_tasks))

    def _end_slice(self, view: SlotView) -> None:
        """PD update of the slice length from the prediction error of the slice just ended.

        The error is the mean absolute difference between each trained task's log-loss now and
        the log-loss its fit predicted at the slice start for the work it has now done.
        """
        settings, histories = self.settings, self.histories
        errors = []
        for slot in np.flatnonzero(view.occupied).tolist():
            task = int(histories.task_ids[slot])
            prediction = self._predicted.get(task)
            work = float(histories.curve_steps[slot])
            if prediction is None or work <= prediction[0]:
                continue
            predicted = float(self._features(work) @ prediction[1:])
            errors.append(abs(float(view.log_loss_ratio[slot]) - predicted))
        if not errors:
            return
        error = float(np.mean(errors))
        if self._slices_started >= settings.warmup_slices:
            change = settings.proportional_gain * (settings.error_reference - error)
            if self._previous_error is not None:
                change -= settings.derivative_gain * (error - self._previous_error)
            self._length = min(max(self._length + change, 1.0), float(settings.max_slice))
        self._previous_error = error

    def _start_slice(self, view: SlotView, slots: np.ndarray) -> None:
        """Re-check feasibility, rank, allocate; remember the fits' predictions for the PD."""
        settings = self.settings
        if self._slices_started >= settings.warmup_slices:
            self.slice_length = max(1, round(self._length))
        else:
            self.slice_length = settings.first_slice
        self._slices_started += 1
        self.slice_lengths.append(self.slice_length)
        self._slice_left = self.slice_length
        self._check_feasibility(view, slots)
        ids = self.histories.task_ids[slots]
        self.last_feasible[:] = False
        self.last_feasible[slots] = [self._tasks[int(task)].feasible for task in ids]
        self._held = {}
        self._deal(self._ranking(view, slots), self.config.n_nodes, self._held)
        self._predicted = {}
        for slot, task in zip(slots.tolist(), ids.tolist(), strict=True):
            memory = self._tasks[task]
            if memory.reports >= 1:  # the arrival point and one report fix both parameters
                work = float(self.histories.curve_steps[slot])
                self._predicted[task] = np.concatenate([[work], memory.fit.theta])

    def _fill_idle(self, view: SlotView, slots: np.ndarray) -> None:
        """Mid-slice: give nodes nobody holds to the ranked tasks present (new ones first)."""
        idle = self.config.n_nodes - sum(self._held.values())
        if idle <= 0 or len(slots) == 0:
            return
        order = self._ranking(view, slots)
        ids = self.histories.task_ids[order]
        unserved = np.array([int(task) not in self._held for task in ids], dtype=bool)
        self._deal(np.concatenate([order[unserved], order[~unserved]]), idle, self._held)

    def plan_epoch(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Update the filters and fits; start a new slice or keep the current one."""
        config = self.config
        self._absorb_new_points(np.flatnonzero(view.occupied))
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        known = [int(task) in self._tasks for task in self.histories.task_ids[slots]]
        slots = slots[np.array(known, dtype=bool)]
        if self._slice_left <= 0:
            if self._slices_started:
                self._end_slice(view)
            self._start_slice(view, slots)
        else:
            present = {int(task) for task in self.histories.task_ids[slots]}
            self._held = {task: n for task, n in self._held.items() if task in present}
            self._fill_idle(view, slots)
        self._slice_left -= 1
        counts = np.zeros(config.n_slots, dtype=np.int64)
        ids = self.histories.task_ids[slots].tolist()
        slot_of = dict(zip(ids, slots.tolist(), strict=True))
        for task, nodes in self._held.items():
            counts[slot_of[task]] = nodes
        order = slots[np.argsort(-counts[slots], kind="stable")]
        return keep_nodes_in_place(counts, self.previous_slots, order, config.idle_action)
