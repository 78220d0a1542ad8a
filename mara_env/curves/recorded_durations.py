"""Durations from the data: a curve's recorded work sets how long a node takes to train it.

With ``ClusterConfig.curve_durations = "stretched"`` (the default) one node trains a task's
whole curve in ``U(epochs_per_curve)`` epochs, whatever the run recorded: a run that processed
ten times the samples of another takes as long. With ``"recorded"`` the curve's recorded work
(the work axis of its trace: samples, seconds, ...) sets it instead:

* each curve is resampled, by linear interpolation of its losses, onto an evenly spaced work grid
  of as many points as it recorded, so that one curve step is the same work anywhere on it;
* its **run work** is the work of the whole recorded run at that spacing,
  ``(work[-1] - work[0]) * length / (length - 1)``, and its **relative duration** the run work
  over the median run work of its family's curves in the workload (the config's split);
* one node trains the whole curve in ``mean(epochs_per_curve) * relative duration`` epochs (the
  task's speed is its length over that), and Cluster-v2's submitter estimates a family's typical
  demand with its curves' durations (:func:`mara_env.sim.hidden_effort.family_tables`).

So each family's median run keeps the mean duration of the stretched rule (and the load
calibration its scale), while a run that recorded three times the work of its family's median
takes three times as long. Durations are compared within a family only, because families
record work in units of their own (the shipped ones: boosting stages, samples, environment
steps); the unit does not matter, as long as a family's curves share it.

Example:
    >>> import numpy as np
    >>> losses = np.array([[1.0, 0.5, 0.4, 0.4], [2.0, 1.0, 1.0, 1.0]])
    >>> work = np.array([[0.0, 1.0, 3.0, 4.0], [0.0, 20.0, 21.0, 22.0]])
    >>> lengths = np.array([3, 2])
    >>> even_work_curves(losses, lengths, work)[0].tolist()  # points at work 0, 1.5, 3
    [1.0, 0.475, 0.4, 0.4]
    >>> run_work(lengths, work).tolist()
    [4.5, 40.0]
    >>> relative_durations(np.array([4.5, 40.0, 10.0])).tolist()
    [0.45, 4.0, 1.0]
"""

from __future__ import annotations

import numpy as np

#: ``ClusterConfig.curve_durations``: how long one node takes to train a whole curve.
CURVE_DURATIONS = ("stretched", "recorded")


def unit_run_epochs(
    epochs_per_curve: tuple[float, float], curve_durations: str, uniform: np.ndarray
) -> np.ndarray:
    """Epochs one node needs for a whole curve of relative duration 1, per task (``uniform``:
    one ``U(0, 1)`` draw each): ``U(epochs_per_curve)`` when stretched, the range's mean when
    recorded (where each curve's relative duration then scales it).

    Example:
        >>> unit_run_epochs((10.0, 40.0), "stretched", np.array([0.0, 0.5])).tolist()
        [10.0, 25.0]
        >>> unit_run_epochs((10.0, 40.0), "recorded", np.array([0.0, 0.5])).tolist()
        [25.0, 25.0]
    """
    low, high = float(epochs_per_curve[0]), float(epochs_per_curve[1])
    if curve_durations == "recorded":
        return np.full(len(uniform), (low + high) / 2.0)
    return low + (high - low) * uniform


def even_work_curves(losses: np.ndarray, lengths: np.ndarray, work: np.ndarray) -> np.ndarray:
    """``losses`` (``(n, width)``, padded with last values) resampled onto evenly spaced work:
    each curve keeps its point count, first and last loss, and is interpolated linearly in
    between at ``linspace(work[0], work[length - 1], length)``."""
    even = np.array(losses, dtype=np.float64)
    for row, length in enumerate(lengths):
        recorded = work[row, :length]
        grid = np.linspace(recorded[0], recorded[-1], length)
        even[row, :length] = np.interp(grid, recorded, losses[row, :length])
        even[row, length:] = even[row, length - 1]
    return even.astype(losses.dtype)


def run_work(lengths: np.ndarray, work: np.ndarray) -> np.ndarray:
    """The work of each whole recorded run, at its even spacing: ``(work[length - 1] -
    work[0]) * length / (length - 1)``."""
    rows = np.arange(len(lengths))
    span = work[rows, lengths - 1] - work[rows, 0]
    return np.asarray(span * lengths / (lengths - 1), dtype=np.float64)


def relative_durations(run_works: np.ndarray) -> np.ndarray:
    """Each run's work over the median of ``run_works`` (one family's runs): how many times
    the median run's duration it takes."""
    return np.asarray(run_works / np.median(run_works), dtype=np.float64)
