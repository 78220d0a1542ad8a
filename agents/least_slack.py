"""Least slack first, with the remaining work estimated from observed progress.

Estimator (from the observation only): a task's remaining log-loss gap to its target is
``gap = ln(loss / target) = log_loss_ratio - log_target_ratio``. Its observed rate is the
log-loss it has lost per node-epoch so far, ``rate = -log_loss_ratio / work``. The estimated
remaining work is ``gap / rate`` node-epochs, i.e. epochs at one node, assuming the task keeps
improving at its average rate so far. Learning curves flatten, so this is optimistic: it
underestimates the remaining work, more so for tasks far from their target.

A task that has not been trained yet (or has not improved) has no rate; it borrows ``prior``
times the median rate of the tasks that do have one (1x by default), and when no task has one,
its remaining work is taken as 0 (its slack is then its time left, as in EDF).

Slack = time left - estimated remaining work. Tasks with slack >= 0 are served least slack
first. A task with negative slack is estimated to miss its deadline even with a node of its
own; serving it first (as textbook least slack does) wastes nodes on lost causes, so such tasks
come after all others, the least hopeless (largest slack) first.
"""

from __future__ import annotations

import numpy as np

from mara_env.agents.priority import PriorityScheduler
from mara_env.sim.observation import SlotView

#: Priority offset that sends estimated-late tasks behind every task with non-negative slack.
_LATE = 1e9


def estimated_remaining_work(view: SlotView, prior: float = 1.0) -> np.ndarray:
    """Estimated node-epochs each slot's task still needs at one node (0 for empty slots).

    See the module docstring for the estimator.

    Args:
        view: A decoded observation.
        prior: Multiplier of the median observed rate given to tasks without a rate of their own.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=0)
        >>> view = mara_env.decode_observation(env.observe("node_0")["observation"], env.config)
        >>> estimated_remaining_work(view).tolist()  # nothing trained yet: no rate anywhere
        [0.0, 0.0, 0.0]
    """
    gap = np.where(view.occupied, np.maximum(view.log_loss_ratio - view.log_target_ratio, 0.0), 0.0)
    drop = -view.log_loss_ratio
    has_rate = view.occupied & (view.work > 0) & (drop > 0)
    rate = np.where(has_rate, drop / np.maximum(view.work, 1.0), np.nan)
    if has_rate.any():
        rate = np.where(has_rate, rate, prior * float(np.median(rate[has_rate])))
        return np.where(view.occupied, gap / rate, 0.0)
    return np.zeros_like(gap)


class LeastSlack(PriorityScheduler):
    """Least slack first: the task with the least time to spare before its deadline first.

    Slack = epochs left - estimated remaining work at one node (see the module docstring for
    the estimator). Tasks estimated to be late already (negative slack) are served last.

    Args:
        prior: Multiplier of the median observed rate assumed for tasks without a rate yet.

    Example:
        >>> import mara_env
        >>> from mara_env.agents.evaluation import evaluate
        >>> evaluate(LeastSlack(), "tiny", seeds=[0])[0]["agent"]
        'least_slack'
    """

    name = "least_slack"

    def __init__(self, prior: float = 1.0) -> None:
        super().__init__()
        if not prior > 0:
            raise ValueError(f"LeastSlack: prior must be > 0, got {prior!r}.")
        self.prior = float(prior)

    def priority(self, view: SlotView) -> np.ndarray:
        """Slack for tasks that can still make it; late tasks after them, least late first."""
        slack = view.time_left - estimated_remaining_work(view, self.prior)
        return np.where(slack >= 0, slack, _LATE - slack)
