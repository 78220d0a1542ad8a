"""LaiRA on discrete nodes: feasibility, slices, the information boundary, whole episodes."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mara_env
from conftest import ExactTraceSource, make_tasks, synthetic_config
from mara_env.agents import evaluate
from mara_env.agents.laira import Laira, LairaSettings
from mara_env.sim.simulator import COMPLETED, EXPIRED, NO_TASK
from mara_env.sim.workload import TaskTable

#: Exponents of the exact power-law curves ``(k + 1) ** -b`` used by the hand-built scenarios.
EXPONENTS = (0.5, 0.5, 0.7, 0.4, 0.9, 0.6)
LENGTH = 300


def power_law_curves(exponents: tuple[float, ...] = EXPONENTS) -> list[np.ndarray]:
    steps = np.arange(LENGTH, dtype=np.float64)
    return [(steps + 1.0) ** -exponent for exponent in exponents]


@dataclass
class Episode:
    """What happened in one hand-built episode, epoch by epoch."""

    env: Any
    node_tasks: list[list[int]] = field(default_factory=list)  # task trained by each node
    slot_tasks: list[list[int]] = field(default_factory=list)  # task in each slot
    feasible: list[np.ndarray] = field(default_factory=list)  # LaiRA's verdict per slot
    slice_index: list[int] = field(default_factory=list)  # slices started so far


def play(scheduler: Laira, curves: list[np.ndarray], tasks: TaskTable, **config: Any) -> Episode:
    """Run ``scheduler`` through the AEC loop on exactly ``tasks`` over ``curves``."""
    settings: dict[str, Any] = {
        "n_nodes": 1,
        "n_slots": 4,
        "switch_cost": 0.0,
        "alpha": 1.0,
        "arrival_horizon": int(tasks.arrival.max()) + 1,
    }
    settings.update(config)
    source = ExactTraceSource({"synthetic": [curve.tolist() for curve in curves]})
    env = mara_env.raw_env(synthetic_config(**settings), trace_source=source)
    env.reset(seed=0)
    env.simulator.reset(np.random.default_rng(0), tasks=tasks)
    env.builder.refresh()
    scheduler.reset(env.config, seed=0)
    state = env.simulator.state
    n_slots = env.config.n_slots
    episode = Episode(env)
    chosen: list[int] = []
    for agent, node in mara_env.node_turns(env):
        action = scheduler.act(env.observe(agent), node)
        if node == 0:
            chosen = []
            episode.slot_tasks.append(state.slots.tolist())
            episode.feasible.append(scheduler.last_feasible.copy())
            episode.slice_index.append(len(scheduler.slice_lengths))
        chosen.append(int(state.slots[action]) if action < n_slots else NO_TASK)
        if node == env.config.n_nodes - 1:
            episode.node_tasks.append(chosen)
        env.step(action)
    return episode


def test_an_infeasible_task_is_dropped_while_a_feasible_one_needs_the_node() -> None:
    """Task 1's target lies far below its curve: once LaiRA has seen enough of it, the
    look-ahead says infeasible and the node serves task 0 only, which completes. Then the node
    would idle, so it probes task 1 (new reports), whose verdict stays "infeasible"."""
    tasks = make_tasks(
        2, curve_row=[0, 1], target=[power_law_curves()[0][60], 1e-3], speed=4.0, deadline=80
    )
    episode = play(Laira(), power_law_curves(), tasks)
    state = episode.env.simulator.state
    assert state.status.tolist() == [COMPLETED, EXPIRED]
    marked = [
        epoch
        for epoch, (slots, feasible) in enumerate(
            zip(episode.slot_tasks, episode.feasible, strict=True)
        )
        if 1 in slots and not feasible[slots.index(1)]
    ]
    assert marked, "the hopeless task was never marked infeasible"
    assert len(state.history_work[1]) - 1 >= LairaSettings().min_reports  # it was explored
    # Re-checked every slice, it stays infeasible until it expires.
    assert marked == list(range(marked[0], len(episode.slot_tasks)))
    done = int(state.end_epoch[0])
    assert all(1 not in nodes for nodes in episode.node_tasks[marked[0] : done])
    assert all(nodes == [1] for nodes in episode.node_tasks[done:]), "probed, never idle"


def test_an_excluded_task_is_readmitted_when_probes_show_it_can_make_it() -> None:
    """Task 1 starts on a plateau (its first reports barely move), so the look-ahead drops it
    while task 0 holds the node; when task 0 completes, the spare node probes task 1, its
    curve drops, the verdict turns and it completes too."""
    steps = np.arange(LENGTH, dtype=np.float64)
    plateau = np.where(steps < 12, 1.0 - 0.001 * steps, 0.3 * np.maximum(steps - 11.0, 1.0) ** -0.5)
    curves = [power_law_curves()[0], plateau]
    tasks = make_tasks(2, curve_row=[0, 1], target=[curves[0][40], 0.1], speed=2.0, deadline=120)
    episode = play(Laira(min_reports=2), curves, tasks)
    state = episode.env.simulator.state
    verdicts = [
        bool(feasible[slots.index(1)])
        for slots, feasible in zip(episode.slot_tasks, episode.feasible, strict=True)
        if 1 in slots
    ]
    first_drop = verdicts.index(False)
    assert True in verdicts[first_drop:], "never re-admitted"
    assert state.status.tolist() == [COMPLETED, COMPLETED]


def test_the_assignment_is_held_for_a_whole_slice() -> None:
    """Within a slice, every node keeps its task unless some task left."""
    tasks = make_tasks(
        4,
        curve_row=[0, 2, 3, 5],
        target=[curve[150] for curve in power_law_curves((0.5, 0.7, 0.4, 0.6))],
        speed=3.0,
        deadline=200,
    )
    scheduler = Laira(first_slice=3, warmup_slices=4)
    episode = play(scheduler, power_law_curves(), tasks, n_nodes=2)
    held = changed_between_slices = 0
    for epoch in range(1, len(episode.node_tasks)):
        same_tasks = episode.slot_tasks[epoch] == episode.slot_tasks[epoch - 1]
        if episode.slice_index[epoch] == episode.slice_index[epoch - 1] and same_tasks:
            assert episode.node_tasks[epoch] == episode.node_tasks[epoch - 1]
            held += 1
        elif episode.node_tasks[epoch] != episode.node_tasks[epoch - 1]:
            changed_between_slices += 1
    assert held >= 10
    assert changed_between_slices >= 1
    assert scheduler.slice_lengths[:4] == [3, 3, 3, 3]


def test_hidden_future_trace_values_never_change_the_actions() -> None:
    """Rewriting every curve point beyond what was ever reported leaves every action alone."""
    curves = power_law_curves()
    tasks = make_tasks(
        6,
        curve_row=[0, 1, 2, 3, 4, 5],
        arrival=[0, 0, 1, 3, 5, 8],
        target=[curves[0][80], 1e-4, curves[2][40], curves[3][120], curves[4][30], curves[5][60]],
        speed=[3.0, 2.0, 4.0, 2.5, 5.0, 3.0],
        deadline=[60, 50, 40, 90, 45, 70],
    )
    first = play(Laira(), curves, tasks, n_nodes=2)
    reached = [
        int(np.floor(max(first.env.simulator.state.history_progress.get(task, [0.0]))))
        for task in range(6)
    ]
    rng = np.random.default_rng(5)
    perturbed = [curve.copy() for curve in curves]
    for row, last in enumerate(reached):
        hidden = perturbed[row][last + 1 :]
        perturbed[row][last + 1 :] = hidden * rng.uniform(0.01, 3.0, size=hidden.shape)
    assert sum(LENGTH - 1 - last for last in reached) > 100  # much of the traces was hidden
    second = play(Laira(), perturbed, tasks, n_nodes=2)
    assert second.node_tasks == first.node_tasks
    assert second.env.episode_metrics() == first.env.episode_metrics()


def test_slices_lengthen_when_predictions_are_exact_and_shorten_when_not() -> None:
    """PD control: on an exact power law the fit's error is ~0, so slices grow to
    ``max_slice``; on a noisy curve the error is large, so they fall to one epoch. (The
    look-ahead is switched off with a huge ``min_reports`` so that the noisy task keeps being
    trained.)"""
    steps = np.arange(LENGTH, dtype=np.float64)
    smooth = (steps + 1.0) ** -1.0
    noisy = smooth * np.exp(np.random.default_rng(0).normal(0.0, 0.4, LENGTH))
    noisy[0] = 1.0
    noisy_target = float(noisy[150:].min())
    assert np.argmax(noisy <= noisy_target) > 150
    lengths = {}
    for name, curve, target in (("smooth", smooth, smooth[200]), ("noisy", noisy, noisy_target)):
        scheduler = Laira(  # offset 1 node-epoch = 1 curve step: the fit is exact on `smooth`
            first_slice=2, warmup_slices=2, max_slice=8, min_reports=10**6, offset=1.0
        )
        episode = play(scheduler, [curve], make_tasks(1, target=target, deadline=400))
        assert episode.env.simulator.state.status[0] == COMPLETED
        assert scheduler.slice_lengths[:2] == [2, 2]
        lengths[name] = scheduler.slice_lengths[2:]
        assert len(lengths[name]) > 6
    assert lengths["smooth"] == sorted(lengths["smooth"])
    assert lengths["smooth"][-1] == 8
    assert np.median(lengths["noisy"]) == 1
    assert max(lengths["noisy"]) < 8


@pytest.mark.parametrize(
    "overrides",
    [
        {"config": "tiny", "load": 4.0},
        {"config": "tiny", "n_nodes": 4, "max_nodes_per_task": 1, "load": 2.0},
        {"config": "tiny", "n_nodes": 3, "n_slots": 2, "load": 3.0},
        {"config": "training", "arrival_horizon": 30},
    ],
)
def test_whole_episodes_run_without_illegal_actions(overrides: dict[str, Any]) -> None:
    config = mara_env.get_config(overrides.pop("config"), **overrides)
    rows = evaluate(Laira(), config, seeds=[0, 1])
    for row in rows:
        assert row["illegal_actions"] == 0.0
        assert row["invalid_actions"] == 0.0
        assert row["arrived"] > 0
    assert sum(row["completed"] for row in rows) > 0


def test_same_seed_same_episode() -> None:
    """Two runs of the same seeds give the same metrics (timings aside)."""
    config = mara_env.get_config("training", arrival_horizon=25)
    timing = {"decision_ms_per_epoch", "episode_seconds"}

    def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{key: value for key, value in row.items() if key not in timing} for row in rows]

    first = without_timing(evaluate(Laira(), config, seeds=[3, 4]))
    second = without_timing(evaluate(Laira(), config, seeds=[3, 4]))
    assert first == second
    assert first[0] != first[1]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"gamma": 0.0}, "gamma"),
        ({"ridge": 0.0}, "ridge"),
        ({"beta": -1.0}, "beta"),
        ({"offset": float("nan")}, "offset"),
        ({"first_slice": 0}, "first_slice"),
        ({"warmup_slices": 1.5}, "warmup_slices"),
        ({"max_slice": 1, "first_slice": 2}, "max_slice"),
        ({"error_reference": 0.0}, "error_reference"),
        ({"proportional_gain": -1.0}, "proportional_gain"),
        ({"derivative_gain": float("inf")}, "derivative_gain"),
        ({"min_reports": 0}, "min_reports"),
        ({"dkf": "dkf"}, "dkf"),
    ],
)
def test_bad_settings_raise(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=f"LairaSettings.{message} must be"):
        Laira(**overrides)


def test_decision_time_script_times_laira(capsys: pytest.CaptureFixture[str]) -> None:
    """The decision-time benchmark runs on a tiny budget and reports LaiRA's figures."""
    from mara_env.benchmarks.perf import decision_time

    times = decision_time.time_scheduler("laira", "tiny", [0], clock="cpu")
    assert times.agent == "laira"
    assert len(times.milliseconds) == len(times.full) > 0
    assert np.isfinite(times.milliseconds).all() and times.milliseconds.sum() > 0
    summary = times.summary()
    assert summary["epochs"] == len(times.milliseconds)
    assert summary["median"] <= summary["p95"]
    affinity = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    assert decision_time.main(["--agents", "laira", "edf", "--config", "tiny", "--seeds", "0"]) == 0
    if affinity is not None:
        assert os.sched_getaffinity(0) == affinity  # the one-core pin is undone
    printed = capsys.readouterr().out
    assert "laira" in printed and "edf" in printed and "full epochs" in printed
    with pytest.raises(ValueError, match="clock must be one of"):
        decision_time.time_scheduler("laira", "tiny", [0], clock="sundial")


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 999),
    n_nodes=st.integers(1, 4),
    n_slots=st.integers(1, 5),
    load=st.floats(0.5, 4.0),
    cap=st.one_of(st.none(), st.integers(1, 2)),
    variant=st.sampled_from([{}, {"lookahead": False}, {"success_threshold": 0.9}]),
)
def test_laira_never_idles_a_node_while_a_visible_task_could_use_it(
    seed: int,
    n_nodes: int,
    n_slots: int,
    load: float,
    cap: int | None,
    variant: dict[str, Any],
) -> None:
    """Whatever the verdicts (a threshold of 0.9 drops nearly everything), a node idles only
    when every visible task already has all the nodes it may hold (``max_nodes_per_task``)."""
    config = mara_env.get_config(
        "tiny", n_nodes=n_nodes, n_slots=n_slots, load=load, max_nodes_per_task=cap
    )
    env = mara_env.raw_env(config)
    env.reset(seed=seed)
    scheduler = Laira(**variant)
    scheduler.reset(config, seed=seed)
    limit = n_nodes if cap is None else cap
    actions: list[int] = []
    for agent, node in mara_env.node_turns(env):
        if node == 0:
            occupied = env.simulator.state.slots >= 0
            actions = []
        actions.append(scheduler.act(env.observe(agent), node))
        if node == n_nodes - 1 and config.idle_action in actions:
            counts = np.bincount(actions, minlength=config.n_actions)[: config.n_slots]
            assert np.all(counts[occupied] >= limit), (env.simulator.state.epoch, actions)
        env.step(actions[-1])
