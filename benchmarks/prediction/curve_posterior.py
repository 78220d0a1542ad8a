"""A posterior over the curves a task may run: what its reported losses and the world's rule for
drawing tasks tell of whether it can still reach its target.

A task's hidden curve is one of a family's recorded curves, and its target is drawn from that
curve by the world's rule (Cluster-v2 and v3 move some targets below anything the curve reaches,
v3 onto curves that stall just short of them). :class:`CurvePosterior` knows the **train split**'s
curves of every family and a bank of tasks drawn from them by the world's own rule
(:func:`mara_env.sim.workload.draw_tasks`, the training preset). For a task it weighs each candidate
curve of the task's family by

- the **world's target rule**: a kernel density, over the bank's tasks on that curve, at the
  task's target (log loss, bandwidth ``target_bandwidth``): how often the world pairs that curve
  with such a target;
- the **reported losses**: a Gaussian likelihood of the task's reported log losses given the
  candidate's at the same curve steps (bandwidth ``loss_bandwidth``), and zero for a candidate
  that would already have reported a loss at or below the target;

and returns the posterior probability that the task reaches its target within ``budget`` more
curve steps: the weight of the candidates that do. It reads only what a scheduler sees (the
family, the reported losses and the curve steps at which they came, the target) and the train
split, never the task's own curve; on the train split itself, ``exclude_row`` leaves the task's
own curve out (leave one curve out), so that choosing the bandwidths there is fair.

Example:
    >>> from mara_env import get_config
    >>> posterior = CurvePosterior.for_world(get_config("training", world_version=3), bank=512)
    >>> row = int(posterior.workload.rows_by_family[0][0])
    >>> curve = posterior.workload.curves[row]
    >>> steps = np.array([0.0, 4.0, 8.0])
    >>> probability = posterior.success_probability(
    ...     posterior.workload.curve_family[row], steps, curve[[0, 4, 8]],
    ...     target=float(curve[40]), budget=1e9)
    >>> 0.0 <= probability <= 1.0
    True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mara_env import ClusterConfig
from mara_env.curves.families import FAMILY_NAMES, family_code
from mara_env.curves.sources import default_trace_source
from mara_env.curves.traces import TraceSource
from mara_env.predictors.base import RemainingWork, TaskHistory
from mara_env.sim.workload import Workload, build_workload, draw_tasks

#: Seed of the bank's draws: the bank is part of the posterior, the same in every episode.
BANK_SEED = 20_261_206
#: Tasks in the bank (each on one curve with one target, by the world's rule).
BANK_TASKS = 20_000
#: The log weight of an impossible candidate.
_FLOOR = -1e300


@dataclass(frozen=True)
class CurvePosterior:
    """The posterior of one world (module docstring).

    Attributes:
        workload: The train split's curves (the training preset's workload).
        log_curves: Per family code: the rows of its curves in ``workload.curves`` and their
            log losses.
        bank: Per family code: the position, among the family's curves, of each bank task's
            curve, and the bank task's log target.
        loss_bandwidth: Standard deviation of the reported log losses around a candidate's.
        target_bandwidth: Kernel width over the bank's log targets.
    """

    workload: Workload
    log_curves: dict[int, tuple[np.ndarray, np.ndarray]]
    bank: dict[int, tuple[np.ndarray, np.ndarray]]
    loss_bandwidth: float = 0.1
    target_bandwidth: float = 0.1

    @classmethod
    def for_world(
        cls,
        config: ClusterConfig,
        *,
        bank: int = BANK_TASKS,
        relative: bool = False,
        trace_source: TraceSource | None = None,
        **bandwidths: float,
    ) -> CurvePosterior:
        """The posterior over ``config``'s curves (use a train-split preset) from ``trace_source``
        (the package's curves if ``None``), with a bank of
        ``bank`` tasks drawn by ``config``'s world rule from a fixed seed. ``relative``: every
        curve and target divided by the curve's first loss, for losses and targets given relative
        to the loss at arrival (as :class:`mara_env.predictors.base.TaskHistory` holds them).

        Raises:
            ValueError: If ``config`` does not draw from the train split, or ``bank`` < 1.
        """
        if config.split != "train":
            raise ValueError(
                f"CurvePosterior.for_world: the posterior may know the train split only, got "
                f"a config of the {config.split!r} split; use the training preset."
            )
        if bank < 1:
            raise ValueError(f"CurvePosterior.for_world: bank must be >= 1, got {bank}.")
        workload = build_workload(config, trace_source or default_trace_source())
        tasks, _ = draw_tasks(
            workload, np.zeros(bank, dtype=np.int64), np.random.default_rng(BANK_SEED)
        )
        log_curves, by_family = {}, {}
        for family in np.unique(workload.curve_family):
            rows = np.flatnonzero(workload.curve_family == family)
            drawn = np.isin(tasks.curve_row, rows)
            logs = np.log(workload.curves[rows])
            log_targets = np.log(tasks.target[drawn])
            if relative:
                log_targets = log_targets - np.log(workload.curves[tasks.curve_row[drawn], 0])
                logs = logs - logs[:, :1]
            log_curves[int(family)] = (rows, logs)
            by_family[int(family)] = (np.searchsorted(rows, tasks.curve_row[drawn]), log_targets)
        return cls(workload, log_curves, by_family, **bandwidths)

    def with_bandwidths(self, loss: float, target: float) -> CurvePosterior:
        """The same posterior with other bandwidths (both > 0)."""
        if not (loss > 0 and target > 0):
            raise ValueError(f"Bandwidths must be > 0, got loss {loss} and target {target}.")
        return dataclasses.replace(self, loss_bandwidth=loss, target_bandwidth=target)

    def candidates(
        self,
        family: int,
        steps: np.ndarray,
        losses: np.ndarray,
        target: float,
        exclude_row: int = -1,
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The posterior weight (summing to 1) of each curve of ``family`` and the curve steps
        it still needs from the task's last report to a loss at or below ``target`` (``inf``:
        never); ``None`` when no curve is consistent with what the task reported.

        Args:
            family: The task's family code.
            steps: Curve steps at which it reported each loss (the first at 0).
            losses: The reported losses.
            target: Its target loss.
            exclude_row: A curve row to leave out (the task's own, on the train split).
        """
        family = int(family)
        if family not in self.bank:
            return None
        rows, log_curves = self.log_curves[family]
        log_target = float(np.log(target))
        columns = np.minimum(np.floor(steps).astype(np.intp), log_curves.shape[1] - 1)
        seen = log_curves[:, columns]
        log_weight = -0.5 * ((seen - np.log(losses)) ** 2).sum(axis=1) / self.loss_bandwidth**2
        log_weight += self._log_prior(family, len(rows), log_target)
        log_weight[(seen <= log_target).any(axis=1)] = _FLOOR  # would have completed already
        log_weight[rows == exclude_row] = _FLOOR
        if log_weight.max() <= _FLOOR:
            return None
        weight = np.exp(log_weight - log_weight.max())
        start = int(columns[-1]) + 1
        need = np.full(len(rows), np.inf)
        if start < log_curves.shape[1]:  # else the curves' last losses are behind it
            ahead = log_curves[:, start:] <= log_target
            reached = ahead.any(axis=1)
            need[reached] = start + ahead[reached].argmax(axis=1) - float(steps[-1])
        return weight / weight.sum(), need

    def success_probability(
        self,
        family: int,
        steps: np.ndarray,
        losses: np.ndarray,
        target: float,
        budget: float,
        exclude_row: int = -1,
    ) -> float:
        """P(the task reaches ``target`` within ``budget`` more curve steps | what it reported),
        with the arguments of :meth:`candidates`; 0.5 when no curve is consistent with it."""
        found = self.candidates(family, steps, losses, target, exclude_row)
        if found is None:
            return 0.5
        weight, need = found
        return float(weight[need <= budget].sum())

    def _log_prior(self, family: int, n_rows: int, log_target: float) -> np.ndarray:
        """Log of each of the family's curves' kernel density of the bank's targets at
        ``log_target`` (plus a small floor, so that a curve the bank never paired with such a
        target keeps a little weight)."""
        positions, log_targets = self.bank[family]
        kernel = np.exp(-0.5 * ((log_targets - log_target) / self.target_bandwidth) ** 2)
        density = np.bincount(positions, weights=kernel, minlength=n_rows)
        return np.log(density / max(len(positions), 1) + 1e-9)


class PosteriorPredictor:
    """:class:`CurvePosterior` as a predictor (:class:`mara_env.predictors.base.Predictor`): samples of
    each task's remaining work, in curve steps, drawn over the curves of its family by their
    posterior weights. It reads only what a :class:`~mara_env.predictors.base.TaskHistory` holds (losses
    and target relative to the loss at arrival, the family), so it needs a ``relative``
    posterior; a task of a family the posterior does not know, or that no curve explains, gets
    ``inf`` (never) samples.

    Example:
        >>> from mara_env import get_config
        >>> from mara_env.predictors.base import TaskHistory
        >>> posterior = CurvePosterior.for_world(get_config("training"), bank=512, relative=True)
        >>> history = TaskHistory(np.array([0.0, 4.0]), np.array([1.0, 0.8]), target=0.5,
        ...                       family="vision")
        >>> work = PosteriorPredictor(posterior).predict([history], 8, np.random.default_rng(0))
        >>> work.samples.shape
        (1, 8)
    """

    name = "curve_posterior"

    def __init__(self, posterior: CurvePosterior) -> None:
        self.posterior = posterior

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        """``n_samples`` draws of each task's remaining work (module docstring)."""
        samples = np.full((len(histories), n_samples), np.inf)
        for index, history in enumerate(histories):
            if history.family not in FAMILY_NAMES:
                continue
            found = self.posterior.candidates(
                family_code(history.family), history.work, history.loss, history.target
            )
            if found is not None:
                weight, need = found
                samples[index] = need[rng.choice(len(need), size=n_samples, p=weight)]
        return RemainingWork(samples)
