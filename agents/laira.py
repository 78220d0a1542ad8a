"""LaiRA (Wang, Liu, Zhou; AAAI 2026) adapted to discrete nodes and arriving tasks.

LaiRA (``/work/shared/PAPERS.md`` §3) works in time slices of adaptive length ``M``. Work is
counted in node-epochs of one node (curve steps over the task's speed). At the start of each
slice:

1. **Look-ahead feasibility (DKF).** Every visible task's loss is tracked by the Dynamic Kalman
   Filter of :mod:`mara_env.predictors.dkf` (a power law with drifting parameters, updated at constant
   cost per new report). Its state is projected to the deadline assuming the task got all the
   nodes it can (``max(T, 1) * progress_gain(1, K, alpha)`` node-epochs of one node's work for
   ``K = task_node_limit`` nodes, :func:`mara_env.sim.rules.progress_gain`); a task whose **success
   probability** there is below ``success_threshold`` is **infeasible** for this slice. The
   probability comes from the filter's margin (how many predicted standard deviations the best
   predicted log-loss lies below the target) through a per-family logistic calibration
   (:meth:`LairaSettings.success_probability`). The test is repeated every slice, once a task
   has ``min_reports`` reports.
2. **Immediate evaluation with a confidence bound.** A discounted ridge least-squares fit
   (:class:`mara_env.predictors.wls.DiscountedLeastSquares`, features ``[ln(s + s0), 1]``) gives a
   lower confidence bound on the log-loss after one more slice:
   ``r_hat = <x_hat, theta_hat> - beta ||x_hat||_{V^-1}`` at ``x_hat = [ln(s + M + s0), 1]``.
3. **UCB ratio.** Optimistic slope over the slice ``rho_hat = (ln l_fit(s) - r_hat) /
   (ln(s + M + s0) - ln(s + s0))``; slope required to reach the target by the deadline
   ``rho = (ln l(s) - ln target) / (ln(s + T + s0) - ln(s + s0))``. Feasible tasks are ranked
   by the score ``min(rho_hat / rho, ratio_cap)``, largest first, ties by earliest deadline
   (:meth:`Laira.ratios`).
4. **Adaptive slice length (PD control).** After each slice the mean absolute error of the
   fits' predictions of the log-loss reached during the slice, ``e``, steers the next length:
   ``M <- clip(M + k_p (e_ref - e) - k_d (e - e_previous), 1, max_slice)``; the first
   ``warmup_slices`` slices have the fixed length ``first_slice``. The error is taken over the
   tasks that trained during the slice and had at least one report at its start.

Rules of this adaptation (:class:`LairaSettings` holds the hyperparameters;
``make_agent("laira")`` uses the tuned ones):

* **Discrete nodes** (``allocation``). Feasible tasks are served in rank order, each getting
  (``"need"``) the whole nodes its look-ahead's mean path needs to reach the target by the
  deadline (:func:`mara_env.sim.rules.whole_nodes_needed`; one node when the mean path does not
  reach it), or (``"one_each"``) one node each; nodes left go round the ranking again, never
  more than the config's ``task_node_limit`` per task.
* **The verdict** drops a task when its calibrated success probability is below
  ``success_threshold`` (the paper drops it when the projected mean loss stays above the
  target); without a ``calibration`` entry the DKF's own normal probability is used.
* **Probes** (``probe_excluded``). Nodes no feasible task can use go one each to the dropped
  tasks, most probable first, so their new reports can turn the verdict.
* **A bounded score.** Scores are capped at ``ratio_cap`` (``rho`` tends to 0 as a task nears
  its target); ``fitted_loss`` starts the optimistic slope from the fit's log-loss now instead
  of the latest report.
* **Arrivals.** Tasks that arrive during a slice wait for the next one unless nodes are idle;
  idle nodes are handed out mid-slice by the same rule (tasks holding nodes keep them).
* **Too little data.** Before ``min_reports`` reports after arrival a task is presumed feasible.
* **Units.** ``s0`` is in node-epochs of one node, for the fit and the DKF alike, and ``N`` in
  ``rho_hat`` and ``rho`` is one node-epoch per epoch; losses are relative to the loss at
  arrival (:mod:`mara_env.agents.observed_history`), which shifts ``ln a`` by a constant only.
* **Switches.** Nodes stay on their task whenever the new allocation keeps it served
  (:func:`mara_env.agents.assignment.keep_nodes_in_place`), and allocations are held for a slice; the
  switch cost is not added to predicted needs.

Variants (:data:`mara_env.agents.registry.VARIANTS`): ``sta`` (LaiRA's paper baseline STA: no look-ahead),
``laira_no_ucb`` (``beta=0``) and ``laira_no_pd`` (fixed slices), each with LaiRA's tuned
settings otherwise.

Example:
    >>> from mara_env.agents import evaluate
    >>> from mara_env.agents.laira import Laira
    >>> rows = evaluate(Laira(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('laira', 0.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place
from mara_env.agents.laira_settings import LairaSettings
from mara_env.agents.observed_history import HistoryScheduler
from mara_env.curves.families import observed_name
from mara_env.predictors.base import Predictor
from mara_env.predictors.dkf import FilterState
from mara_env.predictors.wls import DiscountedLeastSquares
from mara_env.sim.observation import SlotView
from mara_env.sim.rules import progress_gain, whole_nodes_needed


@dataclass
class _TaskMemory:
    """What LaiRA keeps per task between epochs (work in node-epochs at one node)."""

    filter: FilterState
    fit: DiscountedLeastSquares
    reports: int = 0
    feasible: bool = True
    probability: float = 1.0
    margin: float = math.inf
    needed_nodes: int = 1


class Laira(HistoryScheduler):
    """LaiRA on discrete nodes: DKF look-ahead, UCB ratio ranking, PD-controlled slices.

    See the module docstring for the algorithm and every deviation from the paper.

    Args:
        settings: Hyperparameters (default :class:`LairaSettings`).
        predictor: A predictor that replaces the DKF look-ahead (e.g. the oracle, registered
            as ``laira_oracle``): every slice, each task's verdict is its success probability
            with ``task_node_limit`` nodes by the deadline, and its nodes are those its median
            remaining work needs (:meth:`_check_feasibility`), from its first report on (the
            ``min_reports`` wait exists for the filter's data). The ranking and everything
            else stay. The name becomes ``laira_<predictor>``.
        n_samples: Samples per prediction of ``predictor``.
        **overrides: Individual :class:`LairaSettings` fields, e.g. ``Laira(beta=0.5)``.

    Attributes:
        settings: The hyperparameters in use.
        slice_length: Length in epochs of the current slice.
        slice_lengths: Lengths of every slice started this episode, in order.
        last_feasible: Per slot, the latest look-ahead verdict of its task (``False`` for empty
            slots).
        last_probability: Per slot, the look-ahead's success probability of its task with all
            the nodes, at the latest slice start (``nan`` for empty slots; 1 before
            ``min_reports`` reports or without the look-ahead).
        last_margin: Per slot, the DKF margin behind that probability (``inf`` where the
            look-ahead did not run).
        last_reports: Per slot, the reports its task had then.
        last_ratio: Per slot, the ranking score ``min(rho_hat / rho, ratio_cap)`` of the latest
            ranking (``nan`` for tasks not ranked).

    Example:
        >>> Laira(beta=0.5).settings.beta
        0.5
        >>> Laira(bta=0.5)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: Laira: unknown setting(s) ['bta']; known settings: ['allocation', 'beta', ...].
    """

    name = "laira"

    def __init__(
        self,
        settings: LairaSettings | None = None,
        *,
        predictor: Predictor | None = None,
        n_samples: int = 16,
        **overrides: Any,
    ) -> None:
        super().__init__(predictor, n_samples)
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
        #: The look-ahead filter, on the same work axis (node-epochs + ``offset``) as the fit.
        self._dkf = base.lookahead_filter

    def on_reset(self) -> None:
        """Forget every task and start the first slice afresh."""
        n_slots = self.config.n_slots
        self._alphas = self.config.observed_alphas()
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
        self.last_probability = np.full(n_slots, np.nan)
        self.last_margin = np.full(n_slots, np.nan)
        self.last_reports = np.zeros(n_slots, dtype=np.int64)
        self.last_ratio = np.full(n_slots, np.nan)

    # ------------------------------------------------------------------ per-task memory
    def _node_epochs(self, slot: int) -> float:
        """Work the slot's task has received, in node-epochs at one node."""
        return float(self.histories.curve_steps[slot] / self.histories.speed[slot])

    def _absorb_new_points(self, occupied: np.ndarray) -> None:
        """Feed each task's new reports to its DKF and its fit (constant cost per point)."""
        histories, settings, dkf = self.histories, self.settings, self._dkf
        for task in histories.departed_ids:
            self._tasks.pop(task, None)
            self._held.pop(task, None)
            self._predicted.pop(task, None)
        for slot in occupied.tolist():
            steps, loss = histories.new_points(slot)
            if len(steps) == 0:
                continue
            work = steps / histories.speed[slot]
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
        return float(self._alphas[int(view.family[slot])])

    def _check_feasibility(self, view: SlotView, slots: np.ndarray) -> None:
        """Run the DKF look-ahead of every task in ``slots`` with all the remaining compute (or
        the ``predictor``'s, :meth:`_predicted_feasibility`)."""
        settings, histories = self.settings, self.histories
        limit = self.config.task_node_limit
        if self.predictor is not None and settings.lookahead:
            self._predicted_feasibility(view, slots)
            return
        for slot in slots.tolist():
            memory = self._tasks[int(histories.task_ids[slot])]
            if not settings.lookahead or memory.reports < settings.min_reports:
                memory.feasible, memory.probability, memory.needed_nodes = True, 1.0, 1
                memory.margin = math.inf
                continue
            alpha = self._alpha(view, slot)
            time_left = max(float(view.time_left[slot]), 1.0)
            target = math.exp(float(view.log_target_ratio[slot]))
            family = observed_name(int(view.family[slot]))
            verdict, memory.probability = settings.judge(
                memory.filter, target, time_left, alpha, limit, family
            )
            memory.margin = verdict.margin
            memory.feasible = memory.probability >= settings.success_threshold
            if settings.allocation == "need" and math.isfinite(verdict.work_to_target):
                memory.needed_nodes = whole_nodes_needed(
                    verdict.work_to_target, 1.0, time_left, alpha, limit
                )
            else:
                memory.needed_nodes = 1

    def _predicted_feasibility(self, view: SlotView, slots: np.ndarray) -> None:
        """The look-ahead from the ``predictor``: each task's probability of reaching its target
        by the deadline on ``task_node_limit`` nodes, and the whole nodes its median remaining
        work needs (one when it never gets there)."""
        if len(slots) == 0:
            return
        settings, histories = self.settings, self.histories
        limit = self.config.task_node_limit
        remaining = self.predict_remaining(slots)
        time_left = np.maximum(view.time_left[slots], 1.0)
        alpha = np.array([self._alpha(view, slot) for slot in slots.tolist()])
        speed = histories.speed[slots]
        probability = remaining.success_probability(time_left, progress_gain(speed, limit, alpha))
        median = remaining.quantiles([0.5])[:, 0] / speed
        for index, slot in enumerate(slots.tolist()):
            memory = self._tasks[int(histories.task_ids[slot])]
            memory.probability = float(probability[index])
            memory.feasible = memory.probability >= settings.success_threshold
            memory.margin = math.nan
            work = float(median[index])
            memory.needed_nodes = (
                whole_nodes_needed(work, 1.0, float(time_left[index]), float(alpha[index]), limit)
                if settings.allocation == "need" and math.isfinite(work)
                else 1
            )

    def ratios(self, view: SlotView, slots: np.ndarray) -> np.ndarray:
        """LaiRA's UCB ratio ``rho_hat / rho`` of each task in ``slots``, capped at ``ratio_cap``.

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
            work = self._node_epochs(slot)
            log_loss = float(view.log_loss_ratio[slot])
            here = math.log(work + offset)
            ahead = math.log(work + horizon + offset)
            # x^T V^-1 x and x^T V^-1 r for x = [ahead, 1], with V^-1 of the 2 x 2 precision.
            (a, b), (_, d) = fit.precision.tolist()
            first, second = fit.moment.tolist()
            determinant = a * d - b * b
            left = (d * ahead - b) / determinant, (a - b * ahead) / determinant
            spread = math.sqrt(max(left[0] * ahead + left[1], 0.0))
            bound = left[0] * first + left[1] * second - beta * spread
            slope = (d * first - b * second) / determinant
            intercept = (a * second - b * first) / determinant
            now = slope * here + intercept if settings.fitted_loss else log_loss
            optimistic = (now - bound) / (ahead - here)
            time_left = max(float(view.time_left[slot]), 1.0)
            deadline = math.log(work + time_left + offset)
            gap = max(log_loss - float(view.log_target_ratio[slot]), 1e-12)
            required = gap / (deadline - here)
            ratios[index] = min(max(optimistic / required, 0.0), settings.ratio_cap)
        return ratios

    def _ranking(self, view: SlotView, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Feasible tasks of ``slots`` by score, best first (ties: earliest deadline, then the
        task seen first), and the infeasible ones, most likely to succeed first."""
        ids = self.histories.task_ids[slots]
        memories = [self._tasks[int(task)] for task in ids]
        feasible = np.array([memory.feasible for memory in memories], dtype=bool)
        probability = np.array([memory.probability for memory in memories])
        time_left = view.time_left[slots]
        ratios = self.ratios(view, slots[feasible])
        self.last_ratio = np.full(self.config.n_slots, np.nan)
        self.last_ratio[slots[feasible]] = ratios
        ranked = np.lexsort((ids[feasible], time_left[feasible], -ratios))
        hopeless = np.lexsort((ids[~feasible], time_left[~feasible], -probability[~feasible]))
        return slots[feasible][ranked], slots[~feasible][hopeless]

    def _deal(
        self, ranked: np.ndarray, excluded: np.ndarray, nodes: int, counts: dict[int, int]
    ) -> None:
        """Hand ``nodes`` out: each ranked task what it needs, in order; then one node to each
        excluded task (a probe that brings new reports, so its verdict can change); then the
        rest round the ranked tasks, then round everyone, one node at a time."""
        ids = self.histories.task_ids
        limit = self.config.task_node_limit
        if not self.settings.probe_excluded:
            excluded = excluded[:0]

        def give(task: int, wanted: int) -> int:
            given = min(wanted, nodes, limit - counts.get(task, 0))
            if given > 0:
                counts[task] = counts.get(task, 0) + given
            return max(given, 0)

        for task in ids[ranked].tolist():
            nodes -= give(task, self._tasks[task].needed_nodes)
        for task in ids[excluded].tolist():
            if counts.get(task, 0) == 0:
                nodes -= give(task, 1)
        for group in (ids[ranked].tolist(), ids[np.concatenate((ranked, excluded))].tolist()):
            while nodes > 0:
                open_tasks = [task for task in group if counts.get(task, 0) < limit]
                if not open_tasks:
                    break
                for task in open_tasks[:nodes]:
                    nodes -= give(task, 1)

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
            work = self._node_epochs(slot)
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
        memories = [self._tasks[int(task)] for task in ids]
        self.last_feasible[:] = False
        self.last_feasible[slots] = [memory.feasible for memory in memories]
        self.last_probability[:] = np.nan
        self.last_probability[slots] = [memory.probability for memory in memories]
        self.last_margin[:] = np.nan
        self.last_margin[slots] = [memory.margin for memory in memories]
        self.last_reports[:] = 0
        self.last_reports[slots] = [memory.reports for memory in memories]
        self._held = {}
        self._deal(*self._ranking(view, slots), self.config.n_nodes, self._held)
        self._predicted = {}
        for slot, task in zip(slots.tolist(), ids.tolist(), strict=True):
            memory = self._tasks[task]
            if memory.reports >= 1:  # the arrival point and one report fix both parameters
                self._predicted[task] = np.concatenate(
                    [[self._node_epochs(slot)], memory.fit.theta]
                )

    def _fill_idle(self, view: SlotView, slots: np.ndarray) -> None:
        """Mid-slice: give nodes nobody holds to the tasks present (unserved ones first)."""
        idle = self.config.n_nodes - sum(self._held.values())
        if idle <= 0 or len(slots) == 0:
            return
        ranked, excluded = self._ranking(view, slots)
        ids = self.histories.task_ids
        unserved = np.array([int(task) not in self._held for task in ids[ranked]], dtype=bool)
        ranked = np.concatenate([ranked[unserved], ranked[~unserved]])
        self._deal(ranked, excluded, idle, self._held)

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
