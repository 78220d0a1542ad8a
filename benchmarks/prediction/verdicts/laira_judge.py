"""LaiRA's own look-ahead as a judge: the verdict the shipped ``laira`` agent would give.

The predictors are judged through their common interface; LaiRA decides with its DKF look-ahead
in node-epochs, its calibrated success probability and its own threshold (its tuned settings,
:func:`mara_env.agents.make_agent`). :func:`laira_success` replays that decision on a task's history:
the filter over every report, the look-ahead with all the nodes until the deadline, the
calibrated probability of the margin; a task with fewer than ``min_reports`` reports is
presumed feasible (probability 1), as LaiRA presumes it.

Example:
    >>> import numpy as np
    >>> from mara_env.predictors.base import TaskHistory
    >>> reports = laira_settings().min_reports + 1
    >>> history = TaskHistory(2.0 * np.arange(reports), np.linspace(1.0, 0.7, reports),
    ...                       target=1e-6, time_left=5.0, speed=2.0, family="tabular")
    >>> probability = laira_success(laira_settings(), [history], np.array([0.8]), nodes=2)
    >>> bool(probability[0] < 0.5)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mara_env.agents import make_agent
from mara_env.agents.laira import Laira, LairaSettings
from mara_env.predictors.base import TaskHistory

#: The judge's name in the tables.
LAIRA_JUDGE = "laira"


def laira_settings() -> LairaSettings:
    """The shipped ``laira`` agent's settings (tuned)."""
    agent = make_agent("laira")
    if not isinstance(agent, Laira):  # pragma: no cover - the registry builds a Laira
        raise TypeError(f"make_agent('laira') built a {type(agent).__name__}, not a Laira.")
    return agent.settings


def laira_success(
    settings: LairaSettings, histories: Sequence[TaskHistory], alpha: np.ndarray, nodes: int
) -> np.ndarray:
    """LaiRA's success probability of each task with ``nodes`` nodes until its deadline."""
    dkf = settings.lookahead_filter
    probabilities = np.ones(len(histories))
    for index, history in enumerate(histories):
        if len(history.work) - 1 < settings.min_reports:
            continue
        in_node_epochs = replace(history, work=history.work / history.speed)
        _, probabilities[index] = settings.judge(
            dkf.filter(in_node_epochs),
            history.target,
            history.time_left,
            float(alpha[index]),
            nodes,
            history.family,
        )
    return probabilities
