"""Each rule of the world has one home: the node limit, the parallel speed-up and its inverses,
progress accumulation, the loss at a progress, and the bootstrap interval.

The homes are :attr:`mara_env.ClusterConfig.task_node_limit`, :mod:`mara_env.sim.rules`
(``progress_gain``, ``nodes_for_rate``, ``whole_nodes_needed``, ``progress_after_epochs``,
``loss_at``) and :func:`mara_env.predictors.bootstrap.percentile_bootstrap`; these tests check what the
rules promise and that their users agree with them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env import get_config
from mara_env.agents import evaluate, make_agent
from mara_env.agents.statistics import mean_ci, ratio_ci
from mara_env.envs.infos import epoch_info
from mara_env.predictors.bootstrap import bootstrap_mean_interval, percentile_bootstrap
from mara_env.predictors.cases import draw_tasks
from mara_env.predictors.curve_windows import FUTURE_EPOCHS, future_window
from mara_env.predictors.slot_features import success_thresholds
from mara_env.sim.rules import (
    loss_after,
    nodes_for_rate,
    progress_after_epochs,
    progress_gain,
    whole_nodes_needed,
)
from mara_env.sim.simulator import ClusterSimulator, EpochEvents

ALPHAS = st.floats(0.05, 1.0)


# ------------------------------------------------------------------------------ the node limit
@given(n_nodes=st.integers(1, 70), cap=st.one_of(st.none(), st.integers(1, 100)))
def test_task_node_limit_is_the_cap_but_never_more_than_the_nodes(
    n_nodes: int, cap: int | None
) -> None:
    config = get_config("training", n_nodes=n_nodes, max_nodes_per_task=cap)
    limit = config.task_node_limit
    assert 1 <= limit <= n_nodes
    assert limit == (n_nodes if cap is None else min(cap, n_nodes))


@pytest.mark.parametrize(
    "name", ["round_robin", "uniform", "edf", "successive_halving", "lara", "laira", "clairvoyant"]
)
def test_a_cap_above_the_node_count_changes_nothing(name: str) -> None:
    """Some schedulers used to take ``max_nodes_per_task`` without the ``min`` with ``n_nodes``:
    with the one limit, a cap above the cluster's nodes plays exactly as no cap."""
    base = get_config("tiny", n_nodes=4, load=3.0)
    drop = {"decision_ms_per_epoch", "episode_seconds"}
    rows = [
        [
            {key: value for key, value in row.items() if key not in drop}
            for row in evaluate(make_agent(name), config, seeds=[0, 1])
        ]
        for config in (base, base.replace(max_nodes_per_task=7))
    ]
    assert rows[0] == rows[1]


# ------------------------------------------------------------------------------ the speed-up
@settings(max_examples=300)
@given(
    work=st.floats(1e-3, 1e6),
    time=st.floats(0.5, 500.0),
    alpha=ALPHAS,
)
def test_nodes_for_rate_inverts_the_speed_up(work: float, time: float, alpha: float) -> None:
    nodes = float(nodes_for_rate(work, time, alpha))
    rate = work / time
    if rate <= 1.0:
        assert nodes == rate  # time-sharing one node is linear
    else:
        assert nodes >= 1.0
        # nodes of one node's work per epoch: the forward rule gives the rate back
        assert float(progress_gain(1.0, nodes, alpha)) == pytest.approx(rate, rel=1e-9)


def test_nodes_for_rate_of_infinite_work_is_infinite() -> None:
    result = nodes_for_rate(np.array([np.inf, 4.0]), np.array([5.0, 2.0]), np.array([0.7, 1.0]))
    assert result.tolist() == [math.inf, 2.0]


@settings(max_examples=300)
@given(
    work=st.floats(1e-3, 1e5),
    speed=st.floats(0.05, 20.0),
    time=st.floats(0.5, 200.0),
    alpha=ALPHAS,
    limit=st.integers(1, 64),
)
def test_whole_nodes_needed_is_the_fewest_whole_nodes_that_suffice(
    work: float, speed: float, time: float, alpha: float, limit: int
) -> None:
    nodes = whole_nodes_needed(work, speed, time, alpha, limit)
    assert 1 <= nodes <= limit
    done = float(progress_gain(speed, nodes, alpha)) * time
    if nodes < limit:
        assert done >= work * (1.0 - 1e-6)  # enough (up to the rule's rounding tolerance)
    if nodes > 1:
        fewer = float(progress_gain(speed, nodes - 1, alpha)) * time
        assert fewer < work * (1.0 + 1e-6)  # one node fewer is not enough


@settings(max_examples=300)
@given(
    work=st.floats(1e-3, 1e5),
    time=st.floats(0.5, 200.0),
    alpha=ALPHAS,
    limit=st.integers(1, 64),
)
def test_whole_nodes_needed_rounds_up_the_average_nodes(
    work: float, time: float, alpha: float, limit: int
) -> None:
    average = float(nodes_for_rate(work, time, alpha))
    if abs(average - round(average)) < 1e-6:
        return  # the two differ in the last bits of their powers; an integer is a tie
    expected = min(max(1, math.ceil(average)), limit)
    assert whole_nodes_needed(work, 1.0, time, alpha, limit) == expected


def test_whole_nodes_needed_gives_the_limit_for_work_never_done() -> None:
    assert whole_nodes_needed(math.inf, 1.0, 5.0, 0.7, 6) == 6
    assert whole_nodes_needed(1e12, 1.0, 5.0, 0.7, 6) == 6


@pytest.mark.parametrize("max_nodes", [1, 2, 8, 13, 64])
def test_success_thresholds_are_the_speed_up_of_the_most_nodes(max_nodes: int) -> None:
    alpha = np.array([0.6, 0.7, 0.8, 0.9, 1.0])
    thresholds = success_thresholds(alpha, max_nodes)
    assert thresholds[:, 0].tolist() == [1.0] * len(alpha)
    expected = [float(max_nodes) ** float(a) for a in alpha]  # the C library's pow, as compiled
    assert thresholds[:, 1].tolist() == expected


# ------------------------------------------------------------------------------ progress and loss
@given(
    gains=st.lists(st.floats(0.0, 50.0), max_size=30),
    start=st.floats(0.0, 100.0),
)
def test_progress_after_epochs_adds_one_epoch_at_a_time(gains: list[float], start: float) -> None:
    expected = [start]
    for gain in gains:
        expected.append(expected[-1] + gain)
    assert progress_after_epochs(np.array(gains), start).tolist() == expected


def test_prediction_tasks_report_what_the_rules_say() -> None:
    task = draw_tasks("rl", seed=0, draws_per_curve=1)[0]
    progress = task.report_progress(0.3)
    assert progress[0] == 0.0
    assert (
        progress.tolist() == progress_after_epochs(np.full(len(progress) - 1, task.speed)).tolist()
    )
    curve = task.curve[None, :]
    queries = np.linspace(0.0, 2.0 * task.length, 41)
    expected = [loss_after(curve, 0, float(p)) for p in queries]
    assert task.loss_at(queries).tolist() == expected


@settings(max_examples=50)
@given(seed=st.integers(0, 2**32 - 1), current=st.floats(0.0, 60.0), speed=st.floats(0.1, 5.0))
def test_future_window_reads_the_running_minimum_at_the_rules_progress(
    seed: int, current: float, speed: float
) -> None:
    log_curve = np.random.default_rng(seed).normal(size=40).cumsum()
    window = future_window(log_curve, current, speed)
    start = min(int(current), len(log_curve) - 1)
    for offset, value in zip(FUTURE_EPOCHS.tolist(), window.tolist(), strict=True):
        reached = min(int(current + speed * offset), len(log_curve) - 1)
        assert value == log_curve[start : reached + 1].min() - log_curve[start]


# ------------------------------------------------------------------------------ the bootstrap
def test_mean_ci_is_the_percentile_bootstrap_of_episode_means() -> None:
    values = np.random.default_rng(3).normal(size=25)
    summary = mean_ci(values, n_resamples=500, seed=4)
    draws = np.random.default_rng(4).integers(25, size=(500, 25))
    tail = (1.0 - 0.95) / 2.0
    low, high = np.quantile(values[draws].sum(axis=1) / 25.0, [tail, 1.0 - tail])
    assert (summary.low, summary.high) == (min(low, summary.mean), max(high, summary.mean))
    assert ratio_ci(values, np.ones(25), n_resamples=500, seed=4) == summary


def test_the_intervals_share_one_resampling_loop() -> None:
    """Drawn in one chunk or many, the groups come from the same generator calls as
    :func:`percentile_bootstrap` makes."""
    values = np.random.default_rng(5).random(30)
    interval = bootstrap_mean_interval(values, np.random.default_rng(6), resamples=300)
    direct = percentile_bootstrap(
        30, np.random.default_rng(6), lambda drawn: values[drawn].mean(axis=1), 300, 0.95
    )
    assert interval == pytest.approx(direct, abs=1e-12)
    assert 0.0 < interval[0] < float(values.mean()) < interval[1] < 1.0


def test_percentile_bootstrap_draws_in_chunks_from_the_generator() -> None:
    seen: list[int] = []

    def count(drawn: np.ndarray) -> np.ndarray:
        seen.append(len(drawn))
        return drawn.mean(axis=1)

    percentile_bootstrap(4, np.random.default_rng(0), count, 10, 0.9, chunk=4)
    assert seen == [4, 4, 2]


# ------------------------------------------------------------------------------ epoch info
def test_epoch_info_counts_the_events_and_reports_the_rate_so_far() -> None:
    """The info's counts are the events'; its completion rate is the core's (the rule of
    ``episode_metrics``), at every epoch; the task ids only on request."""
    simulator = ClusterSimulator(get_config("tiny"))
    simulator.reset(np.random.default_rng(0))
    simulator.core.completed[0], simulator.core.next_arrival[0] = 1, 4
    events = EpochEvents(
        epoch=3, completed=(1,), expired=(), arrived=(2, 4), switches=1, shaping=0.0
    )
    info = epoch_info(simulator, events, illegal=0, conflicts=2)
    assert info["completed"] == 1 and info["arrived"] == 2 and info["conflicts"] == 2
    assert info["completion_rate"] == 0.25 == simulator.episode_metrics()["completion_rate"]
    assert "completed_tasks" not in info
    with_ids = epoch_info(simulator, events, 0, 2, task_ids=True)
    assert with_ids["completed_tasks"].tolist() == [1] and with_ids["expired_tasks"].size == 0
