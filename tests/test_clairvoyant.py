"""The clairvoyant reference: exact needs, known answers, its privileged binding, episodes."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import mara_env
from conftest import make_tasks, play, prepared_env
from mara_env.agents import PrivilegedScheduler, evaluate, make_agent
from mara_env.agents.clairvoyant import NEVER, Clairvoyant, UnboundError, epochs_to_target
from mara_env.agents.lara import Lara
from mara_env.sim.simulator import COMPLETED, EXPIRED
from mara_env.sim.workload import TaskTable, sample_tasks

pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

#: Loss 1 - k / 100 at curve step k.
LONG_LINE = [1.0 - step / 100.0 for step in range(100)]


def target_at(step: int) -> float:
    """A target first reported at ``step`` of LONG_LINE."""
    return LONG_LINE[step] + 1e-9


# ---------------------------------------------------------------------------- known answers
def test_the_reference_completes_a_set_that_plain_edf_misses() -> None:
    """One node. Task 0 needs 20 epochs by epoch 8 (hopeless), task 1 needs 6 by 10, task 2
    needs 4 by 12. EDF spends epochs 0-7 on task 0 and then misses both others; the reference
    skips task 0 and completes task 1 (epoch 6) and task 2 (epoch 10)."""
    tasks = make_tasks(
        3,
        target=[target_at(20), target_at(6), target_at(4)],
        deadline=[8, 10, 12],
        demand=[20, 6, 4],
    )
    edf_env = prepared_env(tasks, [LONG_LINE])
    play(edf_env, make_agent("edf"))
    assert edf_env.episode_metrics()["completed"] == 0
    env = prepared_env(tasks, [LONG_LINE])
    actions = play(env, Clairvoyant())
    state = env.simulator.state
    assert state.status.tolist() == [EXPIRED, COMPLETED, COMPLETED]
    assert state.end_epoch.tolist() == [8, 6, 10]
    assert actions[:6] == [1] * 6 and actions[6:10] == [2] * 4
    assert 0 not in actions, "the hopeless task never gets the node while others can use it"


def two_tasks_one_too_many(curve_0: list[float]) -> tuple[TaskTable, list[list[float]]]:
    """One node, deadline 10 for both: task 0 (curve 0) and task 1 (LONG_LINE, 7 epochs)."""
    tasks = make_tasks(
        2, curve_row=[0, 1], target=[target_at(5), target_at(7)], deadline=10, demand=[5, 7]
    )
    return tasks, [curve_0, LONG_LINE]


def test_perturbing_the_hidden_future_changes_the_reference_but_not_lara() -> None:
    """Both tasks cannot finish by epoch 10. On the true curves task 0 needs 5 epochs and the
    reference serves it; when the hidden part of its curve (every point after the arrival
    point, which is all anyone has seen at epoch 0) is changed so that it needs 9, the
    reference serves task 1 instead. LARA, which sees only reported losses, acts the same."""
    honest, curves = two_tasks_one_too_many(LONG_LINE)
    slower = LONG_LINE.copy()
    slower[1:9] = [0.999] * 8  # the target (0.95) is now first reached at step 9
    perturbed, perturbed_curves = two_tasks_one_too_many(slower)
    first = play(prepared_env(honest, curves), Clairvoyant())
    second = play(prepared_env(perturbed, perturbed_curves), Clairvoyant())
    assert first[0] == 0 and second[0] == 1
    lara_first = play(prepared_env(honest, curves), Lara())
    lara_second = play(prepared_env(perturbed, perturbed_curves), Lara())
    assert lara_first[0] == lara_second[0]


def test_a_task_that_needs_several_nodes_gets_them() -> None:
    """Two nodes, alpha 1: one task needing 10 curve steps by epoch 5 must get both nodes
    (one node would take 10 epochs); the reference gives them from the first epoch."""
    tasks = make_tasks(1, target=target_at(10), deadline=5, demand=10)
    env = prepared_env(tasks, [LONG_LINE], n_nodes=2)
    actions = play(env, Clairvoyant())
    assert actions == [0] * 10
    assert env.simulator.state.status[0] == COMPLETED


# ---------------------------------------------------------------------------- exact needs
def test_epochs_to_target_agrees_with_the_simulator_on_recorded_curves() -> None:
    """For real shipped curves, the epochs the reference computes for k nodes trained from
    idle (so every node pays the switch cost in the first epoch) are the epochs after which
    the simulator reports completion."""
    config = mara_env.get_config("training", load=3.0)
    simulator = mara_env.ClusterSimulator(config)
    drawn = sample_tasks(simulator.workload, np.random.default_rng(3))
    finite = np.flatnonzero(np.isfinite(drawn.demand))[:12]
    keep = 1.0 - config.switch_cost
    checked = 0
    for task in finite.tolist():
        one = TaskTable(
            **{
                field.name: getattr(drawn, field.name)[task : task + 1].copy()
                for field in dataclasses.fields(drawn)
            }
        )
        one = dataclasses.replace(
            one, arrival=np.zeros(1, dtype=np.int64), deadline=np.full(1, 1000, dtype=np.int64)
        )
        for nodes in (1, 2, 3):
            choice = np.where(np.arange(config.n_nodes) < nodes, 0, config.idle_action)
            simulator.reset(np.random.default_rng(0), tasks=one)
            epochs = 0
            while simulator.state.status[0] != COMPLETED and epochs < 999:
                simulator.advance(choice)
                epochs += 1
            predicted = epochs_to_target(
                simulator.workload.curves[one.curve_row[0]],
                0.0,
                float(one.target[0]),
                float(one.speed[0]),
                float(one.alpha[0]),
                np.array([nodes * keep]),
                np.array([nodes]),
                999,
            )
            expected = epochs if simulator.state.status[0] == COMPLETED else NEVER
            assert predicted[0] == expected, (task, nodes)
            checked += 1
    assert checked >= 30


def test_epochs_to_target_handles_no_time_and_unreachable_targets() -> None:
    curve = np.array([1.0, 0.8, 0.6])
    assert epochs_to_target(curve, 0.0, 0.7, 1.0, 1.0, np.ones(1), np.ones(1), 0)[0] == NEVER
    assert epochs_to_target(curve, 0.0, 0.1, 1.0, 1.0, np.ones(1), np.ones(1), 50)[0] == NEVER
    assert epochs_to_target(curve, 0.0, 0.7, 1.0, 1.0, np.ones(1), np.ones(1), 50)[0] == 2


# ---------------------------------------------------------------------------- privileged binding
def test_the_reference_refuses_to_act_unbound_and_checks_the_bound_config() -> None:
    env = mara_env.raw_env("tiny", load=4.0)
    env.reset(seed=0)
    reference = Clairvoyant()
    assert isinstance(reference, PrivilegedScheduler)
    assert not isinstance(make_agent("edf"), PrivilegedScheduler)
    reference.reset(env.config, seed=0)
    with pytest.raises(UnboundError, match="bind"):
        reference.act(env.observe("node_0"), 0)
    reference.reset(mara_env.get_config("tiny", n_nodes=1), seed=0)
    with pytest.raises(ValueError, match="config differs"):
        reference.bind(env)
    with pytest.raises(ValueError, match="hold"):
        Clairvoyant(hold=-1.0)


def test_evaluate_binds_a_privileged_scheduler_every_episode() -> None:
    class Counting(Clairvoyant):
        binds = 0

        def bind(self, env: Any) -> None:
            Counting.binds += 1
            super().bind(env)

    rows = evaluate(Counting(), "tiny", seeds=[0, 1, 2])
    assert Counting.binds == 3 and len(rows) == 3


# ---------------------------------------------------------------------------- whole episodes
@pytest.mark.parametrize(
    "overrides",
    [
        {"config": "tiny", "load": 3.0},
        {"config": "tiny", "n_nodes": 1, "load": 4.0},
        {"config": "tiny", "n_nodes": 4, "max_nodes_per_task": 1, "load": 3.0},
        {"config": "tiny", "n_nodes": 5, "n_slots": 2, "max_nodes_per_task": 2},
    ],
)
def test_the_reference_plays_whole_episodes_without_illegal_actions(
    overrides: dict[str, Any],
) -> None:
    options = dict(overrides)
    config = mara_env.get_config(options.pop("config"), **options)
    env = mara_env.raw_env(config, strict=True)  # a masked action would raise
    for seed in (0, 1):
        env.reset(seed=seed)
        play(env, Clairvoyant())
        assert env.episode_metrics()["illegal_actions"] == 0
    rows = evaluate(make_agent("clairvoyant"), config, seeds=[2, 3])
    assert all(row["illegal_actions"] == row["invalid_actions"] == 0 for row in rows)


def test_the_reference_is_deterministic_and_completes_more_than_edf() -> None:
    config = mara_env.get_config("training", arrival_horizon=30)
    timing = ("decision_ms_per_epoch", "episode_seconds")
    runs = [evaluate(make_agent("clairvoyant"), config, seeds=range(4)) for _ in range(2)]
    stripped = [[{k: v for k, v in r.items() if k not in timing} for r in run] for run in runs]
    assert stripped[0] == stripped[1]
    edf = evaluate(make_agent("edf"), config, seeds=range(4))
    assert sum(r["completed"] for r in runs[0]) > sum(r["completed"] for r in edf)
