"""What the simulation core reports: :class:`BatchEpoch`, one epoch of every cluster of a batch,
and :data:`COUNT_METRICS`, the episode metrics that are whole counts.

Example:
    >>> "completed" in COUNT_METRICS, "completion_rate" in COUNT_METRICS
    (True, False)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Metrics of :meth:`ClusterBatch.episode_metrics` that count events or node-epochs (whole
#: numbers, stored as floats): equal on every machine, while the others (rates, means) agree
#: within :data:`mara_env.portability.MAX_ULPS`.
COUNT_METRICS = frozenset(
    (
        "completed",
        "arrived",
        "expired",
        "switches",
        "wasted_node_epochs",
        "useful_node_epochs",
        "idle_while_feasible",
        "epochs",
        "illegal_actions",
        "conflicts",
    )
)


@dataclass(frozen=True)
class BatchEpoch:
    """What happened in one epoch of every cluster of a batch (arrays, batch first).

    Attributes:
        epoch: The epoch that just ended in each cluster.
        completed: Number of tasks that completed.
        expired: Number of tasks whose deadline came (slotted or queued).
        arrived: Number of tasks that arrived for the next epoch.
        switches: Nodes that paid the switch cost.
        shaping: The shaping term ``gamma * Phi(s') - Phi(s)`` of the progress potential
            (``gamma``: ``config.shaping_discount``; ``Phi`` is 0 once an episode terminated).
        trained: ``(B, n_slots)`` whether each slot's task trained this epoch.
        completed_slots: ``(B, n_slots)`` slots whose task completed.
        expired_slots: ``(B, n_slots)`` slots whose task expired.
        departed_tasks: ``(B, n_slots)`` task id in each slot before departures.
        queue_expired: ``(cluster, task)`` index arrays of the tasks that expired in the queue.
    """

    epoch: np.ndarray
    completed: np.ndarray
    expired: np.ndarray
    arrived: np.ndarray
    switches: np.ndarray
    shaping: np.ndarray
    trained: np.ndarray
    completed_slots: np.ndarray
    expired_slots: np.ndarray
    departed_tasks: np.ndarray
    queue_expired: tuple[np.ndarray, np.ndarray]
