"""LARA (Wang, Yu, Zhao, Zhou; ICML 2024) adapted to discrete nodes and arriving tasks.

The paper's three parts (``PAPERS.md`` §2 of the project notes summarises them):

1. **Online progress estimation.** Each task's loss is fitted by a power law in log space,
   ``ln l = -b ln(s + s0) + ln a``, with a discounted ridge weighted least-squares fit
   (:class:`mara_env.predictors.wls.DiscountedLeastSquares`, updated recursively with each newly reported
   point). Extrapolating gives the work still needed, ``s* = (a / target) ** (1 / b) - s0``
   (never when ``b <= 0``), and the **processing time** ``p = s* - s`` in node-epochs of one
   node (:meth:`Lara.predicted_processing`).
2. **Adaptive allocation search.** Among the tasks with a prediction, the largest set that can
   all meet their deadlines: Moore–Hodgson on earliest-deadline order (:func:`moore_hodgson`)
   over each task's cost, with the cluster's nodes as capacity per epoch.
3. **Balancing.** A task explores until it has reported ``exploration_points`` losses after
   arrival; from then on it is re-estimated and re-allocated every epoch.

Rules of this adaptation (:class:`LaraSettings` holds the hyperparameters;
``make_agent("lara")`` uses the tuned ones):

* **Need in nodes.** A task that needs ``p`` node-epochs of one node's work within ``T``
  epochs needs :func:`mara_env.sim.rules.nodes_for_rate` ``(p, T, alpha)`` nodes on average (alpha
  from the config and the task's family); its cost in the search is that share times ``T``,
  and a task that would need more than the config's ``task_node_limit`` is left out.
* **Serving the chosen set** (``allocation``). ``"edf"`` (the default): each chosen task, by
  earliest deadline, gets the whole nodes its share rounds up to. ``"proportional"`` (the
  paper's rule, registered as ``lara_proportional``): shares in proportion to need over time
  left, made whole by the largest-remainder method with a carried credit
  (:func:`largest_remainder`), a node moving only when another task is owed more than
  ``stickiness`` node-epochs beyond it.
* **Exploration.** Exploration is per task, one node each, earliest deadline first; explorers
  hold at most ``exploration_share`` of the nodes while chosen tasks wait, and get the nodes the
  chosen set leaves.
* **Spare nodes** (``spare_to_excluded``). Nodes the chosen set and the explorers leave go one
  each to the tasks outside the set, cheapest predicted need first, then as extra nodes to the
  chosen tasks; no node idles while a task could use it.
* **Switches.** Nodes stay on their task whenever the allocation keeps it served
  (:func:`mara_env.agents.assignment.keep_nodes_in_place`); the switch cost is not added to the need.
* **Units.** Work is in node-epochs of one node (curve steps over the task's speed), so ``s0``
  means the same for fast and slow tasks (the paper counts samples); losses are relative to the
  loss at arrival (:mod:`mara_env.agents.observed_history`), which shifts ``ln a`` by a constant only.
  A fit that says the target should already be reached gives one node-epoch of need.

Example:
    >>> from mara_env.agents import evaluate
    >>> from mara_env.agents.lara import Lara
    >>> rows = evaluate(Lara(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('lara', 0.0)
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mara_env.agents.assignment import keep_nodes_in_place
from mara_env.agents.observed_history import HistoryScheduler
from mara_env.predictors.base import Predictor
from mara_env.predictors.wls import DiscountedLeastSquares
from mara_env.sim.observation import SlotView
from mara_env.sim.rules import nodes_for_rate

#: Largest exponent taken when extrapolating (keeps ``exp`` finite).
_MAX_LOG_STEPS = 700.0
#: How the chosen set is served: ``"edf"`` whole nodes in deadline order (the default),
#: ``"proportional"`` the paper's shares in proportion to need over time left.
ALLOCATIONS = ("edf", "proportional")


def _solve(fit: DiscountedLeastSquares) -> tuple[float, float]:
    """``fit.theta`` as two floats, by the closed-form inverse of the 2x2 system (the same
    solution, without the overhead of a general solver; this runs for every task every
    epoch)."""
    (g00, g01), (g10, g11) = fit.gram.tolist()
    r0, r1 = fit.moment.tolist()
    v00, v11 = g00 + fit.ridge, g11 + fit.ridge
    det = v00 * v11 - g01 * g10
    return (v11 * r0 - g01 * r1) / det, (v00 * r1 - g10 * r0) / det


@dataclass(frozen=True)
class LaraSettings:
    """LARA's hyperparameters (``make_agent("lara")`` uses the tuned ones).

    Attributes:
        gamma: Forgetting factor of the discounted least-squares fit, in (0, 1].
        ridge: Ridge penalty of the fit (> 0 keeps it solvable with one point).
        offset: ``s0`` in node-epochs at one node, added to the work before taking logarithms
            (> 0). Larger values let the power law start flat, as many recorded curves do.
        exploration_points: Losses a task must report after arrival before its fit is used;
            until then it explores (>= 2: the fit has two parameters).
        stickiness: Node-epochs by which another task must be owed more than a task holding a
            node before the node moves (>= 0; 0 is plain largest-remainder rounding; the
            proportional rule only).
        allocation: ``"edf"``: the chosen set as an earliest-deadline schedule of whole nodes;
            ``"proportional"``: the paper's shares in proportion to need over time left.
        exploration_share: Most of the nodes explorers hold while chosen tasks wait, in [0, 1]
            (``"edf"`` only; 1 lets exploration take every node it can).
        spare_to_excluded: Nodes the chosen set and the explorers leave go to the tasks outside
            the set, one each, before extra nodes go to chosen tasks (``"edf"`` only).
    """

    gamma: float = 0.95
    ridge: float = 1e-6
    offset: float = 5.0
    exploration_points: int = 4
    stickiness: float = 1.0
    allocation: str = "edf"
    exploration_share: float = 0.25
    spare_to_excluded: bool = True

    def __post_init__(self) -> None:
        if self.allocation not in ALLOCATIONS:
            raise ValueError(
                f"LaraSettings.allocation must be one of {ALLOCATIONS}, got {self.allocation!r}."
            )
        if not isinstance(self.spare_to_excluded, bool):
            raise ValueError(
                f"LaraSettings.spare_to_excluded must be True or False, got "
                f"{self.spare_to_excluded!r}."
            )
        for name in (
            "gamma",
            "ridge",
            "offset",
            "stickiness",
            "exploration_points",
            "exploration_share",
        ):
            value = getattr(self, name)
            integral = name == "exploration_points"
            kinds = (int,) if integral else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds):
                raise ValueError(
                    f"LaraSettings.{name} must be {'an int' if integral else 'a number'}, got "
                    f"{value!r}."
                )
        checks = (
            ("gamma", 0.0 < self.gamma <= 1.0, "in (0, 1]"),
            ("ridge", 0.0 < self.ridge < math.inf, "a finite number > 0"),
            ("offset", 0.0 < self.offset < math.inf, "a finite number > 0"),
            ("exploration_points", self.exploration_points >= 2, "an int >= 2"),
            ("stickiness", 0.0 <= self.stickiness < math.inf, "a finite number >= 0"),
            ("exploration_share", 0.0 <= self.exploration_share <= 1.0, "in [0, 1]"),
        )
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(
                    f"LaraSettings.{name} must be {rule}, got {getattr(self, name)!r}."
                )


def moore_hodgson(
    time_left: np.ndarray,
    cost: np.ndarray,
    capacity: float,
    tiebreak: np.ndarray | None = None,
) -> np.ndarray:
    """The largest set of jobs that all meet their deadlines (Moore–Hodgson).

    Jobs are taken in earliest-deadline order; whenever the work accepted so far exceeds what
    the machine can do by the current job's deadline (``capacity * time_left``), the accepted
    job with the largest cost is dropped. For one machine of divisible capacity this maximises
    the number of on-time jobs.

    Args:
        time_left: Epochs until each job's deadline (> 0).
        cost: Work of each job, in the units of ``capacity`` per epoch (finite, >= 0).
        capacity: Work the machine does per epoch (>= 0).
        tiebreak: Order among equal deadlines (default: index order).

    Returns:
        A bool array: which jobs are kept.

    Raises:
        ValueError: For arrays of different shapes, or non-finite or negative costs.

    Example:
        >>> moore_hodgson(np.array([2.0, 3.0, 4.0]), np.array([2.0, 2.0, 1.0]), 1.0).tolist()
        [True, False, True]
    """
    time_left = np.asarray(time_left, dtype=np.float64)
    cost = np.asarray(cost, dtype=np.float64)
    if time_left.shape != cost.shape or time_left.ndim != 1:
        raise ValueError(
            f"moore_hodgson: time_left and cost must be 1-d arrays of one length, got shapes "
            f"{time_left.shape} and {cost.shape}."
        )
    if not (np.all(np.isfinite(cost)) and np.all(cost >= 0)):
        raise ValueError("moore_hodgson: costs must be finite and >= 0; drop 'never' jobs first.")
    keys = np.arange(len(cost)) if tiebreak is None else np.asarray(tiebreak)
    order = np.lexsort((keys, time_left))
    kept = np.zeros(len(cost), dtype=bool)
    heap: list[tuple[float, int, int]] = []
    total = 0.0
    tolerance = 1e-9 * max(1.0, float(capacity))
    for job in order.tolist():
        heapq.heappush(heap, (-float(cost[job]), -int(keys[job]), job))
        kept[job] = True
        total += float(cost[job])
        if total > capacity * float(time_left[job]) + tolerance:
            _, _, dropped = heapq.heappop(heap)
            kept[dropped] = False
            total -= float(cost[dropped])
    return kept


#: Node shares are rounded to this many decimals before whole nodes are dealt and credits carried:
#: a share computed as ``6 * s / s`` is 6.0 on one machine and 5.999999999999999 on another, and
#: without the rounding that last bit decides who gets a node (ties go to the lower task id).
OWED_DECIMALS = 9


def largest_remainder(
    quotas: np.ndarray,
    total: int,
    *,
    cap: int | None = None,
    held: np.ndarray | None = None,
    stickiness: float = 0.0,
    tiebreak: np.ndarray | None = None,
) -> np.ndarray:
    """Whole numbers summing to ``total`` that follow real-valued ``quotas``.

    Units are handed out one at a time, each to the entry whose quota exceeds what it has
    been given by the most (ties to the lower ``tiebreak``). For quotas that sum to ``total``
    this is the largest-remainder (Hamilton) method: every entry gets the integer part of its
    quota, and the units left go to the largest fractional parts. ``held`` adds hysteresis:
    an entry's first ``held`` units rank ``stickiness`` higher, so a unit stays where it was
    unless another entry is owed more than ``stickiness`` beyond. No entry exceeds ``cap``; the
    sum is ``total`` unless every entry is at ``cap``.

    Args:
        quotas: Real-valued shares of ``total`` (negative: owed less than nothing).
        total: Units to hand out (>= 0).
        cap: Most units one entry may get (``None``: no limit).
        held: Units each entry held before (default none).
        stickiness: Priority bonus of held units (>= 0).
        tiebreak: Lower values win ties (default: index order).

    Example:
        >>> largest_remainder(np.array([0.5, 1.2, 2.3]), 4).tolist()
        [1, 1, 2]
        >>> largest_remainder(np.array([0.2, 0.8]), 1, held=np.array([1, 0]), stickiness=1.0).tolist()
        [1, 0]
    """
    quota = np.asarray(quotas, dtype=np.float64)
    size = len(quota)
    counts = np.zeros(size, dtype=np.int64)
    if total <= 0 or size == 0:
        return counts
    limit = total if cap is None else min(cap, total)
    kept = np.zeros(size, dtype=np.int64) if held is None else np.asarray(held, dtype=np.int64)
    keys = np.arange(size) if tiebreak is None else np.asarray(tiebreak)
    order = np.argsort(keys, kind="stable")  # scan in tiebreak order: argmax keeps the first
    quota, kept = quota[order], kept[order]
    given = np.zeros(size, dtype=np.int64)
    for _ in range(total):
        priority = quota - given + stickiness * (given < kept)
        priority[given >= limit] = -np.inf
        best = int(np.argmax(priority))
        if priority[best] == -np.inf:
            break
        given[best] += 1
    counts[order] = given
    return counts


class Lara(HistoryScheduler):
    """LARA on discrete nodes: WLS progress estimates, largest feasible set, EDF service.

    See the module docstring for the algorithm and every deviation from the paper.

    Args:
        settings: Hyperparameters (default :class:`LaraSettings`).
        predictor: A predictor whose median remaining work replaces the power-law fit's
            (:meth:`predicted_processing`; e.g. the oracle, registered as ``lara_oracle``);
            every other rule, exploration included, stays. The name becomes
            ``lara_<predictor>``.
        n_samples: Samples per prediction of ``predictor``.
        **overrides: Individual :class:`LaraSettings` fields, e.g. ``Lara(gamma=0.9)``.

    Attributes:
        settings: The hyperparameters in use.
        last_allocation: Per slot, the real-valued node share of the latest plan (before
            rounding and credits).
        last_chosen: Per slot, whether the latest plan's feasible set included its task.

    Example:
        >>> Lara(exploration_points=4).settings.exploration_points
        4
    """

    name = "lara"

    def __init__(
        self,
        settings: LaraSettings | None = None,
        *,
        predictor: Predictor | None = None,
        n_samples: int = 16,
        **overrides: Any,
    ) -> None:
        super().__init__(predictor, n_samples)
        base = settings if settings is not None else LaraSettings()
        if overrides:
            known = set(LaraSettings.__dataclass_fields__)
            unknown = sorted(set(overrides) - known)
            if unknown:
                raise TypeError(
                    f"Lara: unknown setting(s) {unknown}; known settings: {sorted(known)}."
                )
            base = dataclasses.replace(base, **overrides)
        self.settings = base

    def on_reset(self) -> None:
        """Forget every task's fit, report count and credit."""
        self._fits: dict[int, DiscountedLeastSquares] = {}
        self._reports: dict[int, int] = {}
        self._credit: dict[int, float] = {}
        n_slots = self.config.n_slots
        self.last_allocation = np.zeros(n_slots)
        self.last_chosen = np.zeros(n_slots, dtype=bool)

    def _absorb_new_points(self, slots: np.ndarray) -> None:
        """Feed each task's newly reported points to its recursive fit (O(1) per point)."""
        histories = self.histories
        settings = self.settings
        for task in histories.departed_ids:
            self._fits.pop(task, None)
            self._reports.pop(task, None)
            self._credit.pop(task, None)
        for slot in slots.tolist():
            task = int(histories.task_ids[slot])
            fit = self._fits.get(task)
            if fit is None:
                fit = DiscountedLeastSquares(gamma=settings.gamma, ridge=settings.ridge)
                self._fits[task] = fit
                self._reports[task] = -1  # the arrival point is not a report
            work, loss = histories.new_points(slot)
            node_epochs = work / histories.speed[slot]
            for done, value in zip(node_epochs.tolist(), loss.tolist(), strict=True):
                fit.update(np.array([math.log(done + settings.offset), 1.0]), math.log(value))
            self._reports[task] += len(work)

    def predicted_processing(self, slots: np.ndarray) -> np.ndarray:
        """Predicted node-epochs at one node each slot's task still needs (``inf``: never; at
        least 1): the fit's extrapolation, or the median of the ``predictor``'s samples.

        Args:
            slots: Occupied slots whose fits are up to date (as in :meth:`plan_epoch`).
        """
        histories = self.histories
        view = histories.view
        if view is None:
            return np.full(len(slots), np.inf)
        if self.predictor is not None:
            median = self.predict_remaining(slots).quantiles([0.5])[:, 0]
            return np.maximum(median / histories.speed[slots], 1.0)
        offset = self.settings.offset
        processing = np.full(len(slots), np.inf)
        for index, slot in enumerate(slots.tolist()):
            slope, intercept = _solve(self._fits[int(histories.task_ids[slot])])
            if not slope < 0.0:
                continue
            log_needed = (float(view.log_target_ratio[slot]) - intercept) / slope
            needed = math.exp(min(log_needed, _MAX_LOG_STEPS)) - offset
            done = float(histories.curve_steps[slot] / histories.speed[slot])
            processing[index] = max(needed - done, 1.0)
        return processing

    def plan_epoch(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """Estimate, search the feasible set, serve it (see ``LaraSettings.allocation``)."""
        slots = np.flatnonzero(view.occupied & (mask[:-1] > 0))
        self._absorb_new_points(np.flatnonzero(view.occupied))
        self.last_allocation = np.zeros(self.config.n_slots)
        self.last_chosen = np.zeros(self.config.n_slots, dtype=bool)
        if len(slots) == 0:
            return np.full(self.config.n_nodes, self.config.idle_action, dtype=np.int64)
        if self.settings.allocation == "proportional":
            return self._plan_proportional(view, slots)
        return self._plan_edf(view, slots)

    def _exploring(self, slots: np.ndarray) -> np.ndarray:
        """Per slot of ``slots``: whether its task still has too few reports for its fit."""
        points = self.settings.exploration_points
        return np.array(
            [self._reports[int(task)] < points for task in self.histories.task_ids[slots]]
        )

    def _largest_feasible_set(
        self, view: SlotView, exploiting: np.ndarray, capacity: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Node shares each exploiting task needs, and which Moore–Hodgson keeps."""
        config = self.config
        time_left = np.maximum(view.time_left[exploiting], 1.0)
        alpha = config.observed_alphas()[view.family[exploiting]]
        share = nodes_for_rate(self.predicted_processing(exploiting), time_left, alpha)
        candidate = np.isfinite(share) & (share <= config.task_node_limit)
        keep = np.zeros(len(exploiting), dtype=bool)
        if candidate.any() and capacity > 0:
            keep[candidate] = moore_hodgson(
                time_left[candidate],
                share[candidate] * time_left[candidate],
                capacity,
                tiebreak=self.histories.task_ids[exploiting[candidate]],
            )
        return share, keep

    def _plan_edf(self, view: SlotView, slots: np.ndarray) -> np.ndarray:
        """The chosen set as an earliest-deadline schedule of whole nodes.

        Explorers (earliest deadline first) hold at most ``exploration_share`` of the nodes
        while chosen tasks wait; each chosen task then gets, by earliest deadline, the whole
        nodes its share rounds up to; nodes still free go to the other explorers, then to the
        tasks outside the set (cheapest predicted need first, so their estimates can recover),
        one each, then round the chosen tasks and everyone, one at a time.
        """
        config = self.config
        ids = self.histories.task_ids[slots]
        by_deadline = np.lexsort((ids, view.time_left[slots]))
        slots, ids = slots[by_deadline], ids[by_deadline]
        exploring = self._exploring(slots)
        explorers, exploiting = slots[exploring], slots[~exploring]
        reserve = min(len(explorers), math.ceil(self.settings.exploration_share * config.n_nodes))
        share, keep = self._largest_feasible_set(view, exploiting, float(config.n_nodes - reserve))
        limit = config.task_node_limit
        whole = np.minimum(np.ceil(np.where(keep, share, 1.0) - 1e-9), limit)
        chosen, others = exploiting[keep], exploiting[~keep]
        others = others[np.argsort(share[~keep], kind="stable")]  # cheapest first, "never" last
        if not self.settings.spare_to_excluded:
            others = others[:0]
        self.last_chosen[chosen] = True
        self.last_allocation[exploiting[keep]] = share[keep]
        counts = np.zeros(config.n_slots, dtype=np.int64)
        free = config.n_nodes
        needs = [(slot, 1) for slot in explorers[:reserve].tolist()]
        needs += list(
            zip(chosen.tolist(), np.maximum(whole[keep], 1).astype(int).tolist(), strict=True)
        )
        needs += [(slot, 1) for slot in explorers[reserve:].tolist() + others.tolist()]
        for slot, wanted in needs:
            given = min(wanted, free)
            counts[slot] += given
            free -= given
        for group in (chosen, np.concatenate((chosen, explorers, others))):
            while free > 0:
                open_slots = [slot for slot in group.tolist() if counts[slot] < limit][:free]
                if not open_slots:
                    break
                counts[open_slots] += 1
                free -= len(open_slots)
        order = np.concatenate((explorers[:reserve], chosen, explorers[reserve:], others))
        return keep_nodes_in_place(counts, self.previous_slots, order, config.idle_action)

    def _plan_proportional(self, view: SlotView, slots: np.ndarray) -> np.ndarray:
        """The paper's rule: shares in proportion to need over time left, rounded with credits.

        Explorers split the nodes equally, at most one node each; the chosen set divides the
        rest in proportion to need; with neither, the visible tasks share the nodes equally.
        """
        n_nodes = self.config.n_nodes
        allocation, chosen = self.last_allocation, self.last_chosen
        exploring = self._exploring(slots)
        explorers = int(exploring.sum())
        if explorers:
            allocation[slots[exploring]] = min(1.0, n_nodes / explorers)
        capacity = max(n_nodes - allocation.sum(), 0.0)
        exploiting = slots[~exploring]
        if len(exploiting):
            share, keep = self._largest_feasible_set(view, exploiting, capacity)
            if keep.any():
                allocation[exploiting[keep]] = capacity * share[keep] / share[keep].sum()
                chosen[exploiting[keep]] = True
        if allocation.sum() <= 0.0:
            allocation[slots] = n_nodes / len(slots)
        return self._place(view, slots, allocation)

    def _place(self, view: SlotView, slots: np.ndarray, allocation: np.ndarray) -> np.ndarray:
        """Round the shares (with carried credits) to whole nodes and assign the nodes."""
        config = self.config
        served = allocation[slots] > 0
        slots, ids = slots[served], self.histories.task_ids[slots[served]]
        credit = np.array([self._credit.get(int(task), 0.0) for task in ids])
        owed = np.round(allocation[slots] + credit, OWED_DECIMALS)
        held = np.bincount(self.previous_slots, minlength=config.n_actions)[slots]
        counts = largest_remainder(
            owed,
            config.n_nodes,
            cap=config.task_node_limit,
            held=held,
            stickiness=self.settings.stickiness,
            tiebreak=ids,
        )
        self._credit = dict(zip(ids.tolist(), (owed - counts).tolist(), strict=True))
        per_slot = np.zeros(config.n_slots, dtype=np.int64)
        per_slot[slots] = counts
        order = slots[np.lexsort((ids, view.time_left[slots]))]
        return keep_nodes_in_place(per_slot, self.previous_slots, order, config.idle_action)
