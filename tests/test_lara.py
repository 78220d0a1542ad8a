"""LARA on discrete nodes: known answers on exact power-law curves, its search and rounding
against slow references, the information boundary, and whole episodes."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mara_env
from conftest import ExactTraceSource, make_tasks, synthetic_config
from mara_env.agents import evaluate, make_agent
from mara_env.agents.lara import Lara, LaraSettings, largest_remainder, moore_hodgson
from mara_env.sim.rules import nodes_for_rate
from mara_env.sim.workload import TaskTable

pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

#: Power law in node-epochs at one node: loss(e) = ((e + S0) / S0) ** -B, so loss(0) = 1.
S0 = LaraSettings().offset
B = 0.5
#: One curve step per node-epoch (speed 1), long enough for every scenario.
POWER_CURVE = [((step + S0) / S0) ** -B for step in range(400)]
SOURCE = ExactTraceSource({"synthetic": [POWER_CURVE]})


def target_after(node_epochs: float) -> float:
    """The target first reported after ``node_epochs`` steps of POWER_CURVE."""
    return POWER_CURVE[int(node_epochs)] * (1.0 + 1e-12)


def prepared_env(tasks: TaskTable, **overrides: Any) -> mara_env.raw_env:
    """A raw env over POWER_CURVE running exactly ``tasks`` (alpha 1, no switch cost)."""
    fields: dict[str, Any] = {
        "n_nodes": 2,
        "n_slots": 4,
        "switch_cost": 0.0,
        "alpha": 1.0,
        "arrival_horizon": 1,
    }
    fields.update(overrides)
    env = mara_env.raw_env(synthetic_config(**fields), trace_source=SOURCE)
    env.reset(seed=0)
    env.simulator.reset(np.random.default_rng(0), tasks=tasks)
    env.builder.refresh()
    return env


def play_epochs(
    env: mara_env.raw_env,
    scheduler: Any,
    *,
    seed: int = 0,
    after_plan: Callable[[int, np.ndarray], None] | None = None,
) -> list[list[int]]:
    """Run the episode to its end; returns each epoch's actions. ``after_plan(epoch, slots)``
    runs once per epoch after the scheduler planned, with the simulator's task per slot."""
    scheduler.reset(env.config, seed=seed)
    if hasattr(scheduler, "bind"):
        scheduler.bind(env)
    epochs: list[list[int]] = []
    for agent, node in mara_env.node_turns(env):
        action = scheduler.act(env.observe(agent), node)
        if node == 0:
            epochs.append([])
            if after_plan is not None:
                after_plan(len(epochs) - 1, env.simulator.state.slots.copy())
        epochs[-1].append(int(action))
        env.step(action)
    return epochs


# ---------------------------------------------------------------------------- known answers
def two_task_scenario() -> TaskTable:
    """Task 0 needs 14 node-epochs by epoch 100, task 1 needs 204 by epoch 50."""
    return make_tasks(
        2, target=[target_after(14), target_after(204)], deadline=[100, 50], demand=[14, 204]
    )


def test_proportional_lara_predicts_exact_power_laws_and_drops_an_infeasible_task() -> None:
    """Two nodes explore one task each for 4 epochs. Then task 0 needs 10 more node-epochs by
    epoch 100, task 1 needs 200 by epoch 50: more than both nodes can do in 46 epochs. The
    paper's proportional rule predicts both needs, drops task 1 and gives both nodes to task 0
    (the whole chosen set) until it completes."""
    env = prepared_env(two_task_scenario())
    lara = Lara(allocation="proportional")
    seen: dict[str, Any] = {}

    def inspect(epoch: int, slots: np.ndarray) -> None:
        if epoch == 4:
            occupied = np.flatnonzero(slots >= 0)
            seen["predicted"] = lara.predicted_processing(occupied)
            seen["chosen"] = lara.last_chosen[occupied].copy()

    epochs = play_epochs(env, lara, after_plan=inspect)
    assert [sorted(actions) for actions in epochs[:4]] == [[0, 1]] * 4, "one node per explorer"
    np.testing.assert_allclose(seen["predicted"], np.array([10.0, 200.0]), rtol=1e-3)
    assert seen["chosen"].tolist() == [True, False]
    assert epochs[4:9] == [[0, 0]] * 5, "both nodes on task 0 until it completes"
    state = env.simulator.state
    assert state.status.tolist() == [
        mara_env.sim.simulator.COMPLETED,
        mara_env.sim.simulator.EXPIRED,
    ]
    assert state.end_epoch[0] == 9


@pytest.mark.parametrize("spare", [True, False])
def test_edf_lara_serves_the_set_with_whole_nodes_and_gives_spare_ones_to_excluded_tasks(
    spare: bool,
) -> None:
    """The same scenario under the default rule: task 0 is chosen and needs a share of 10 / 96
    of a node, so it gets one whole node; the spare node goes to the excluded task 1 (so its
    estimate can recover) and task 0 completes after 10 epochs. With
    ``spare_to_excluded=False`` the spare node joins task 0, which completes in 5."""
    env = prepared_env(two_task_scenario())
    lara = Lara(spare_to_excluded=spare)
    chosen: list[list[bool]] = []

    def inspect(epoch: int, slots: np.ndarray) -> None:
        if epoch == 4:
            chosen.append(lara.last_chosen[:2].tolist())

    epochs = play_epochs(env, lara, after_plan=inspect)
    assert [sorted(actions) for actions in epochs[:4]] == [[0, 1]] * 4, "one node per explorer"
    assert chosen == [[True, False]]
    epochs_needed = 10 if spare else 5
    assert [sorted(actions) for actions in epochs[4 : 4 + epochs_needed]] == (
        [[0, 1 if spare else 0]] * epochs_needed
    )
    state = env.simulator.state
    assert state.status[0] == mara_env.sim.simulator.COMPLETED
    assert state.end_epoch[0] == 4 + epochs_needed


def test_edf_lara_serves_the_chosen_set_in_deadline_order() -> None:
    """One node, three tasks that each need 5 node-epochs, deadlines 40, 20 and 30. With no
    nodes reserved for exploration, the node explores the earliest-deadline task (2 reports),
    then, the task being chosen, trains it to completion, and so on: task 1, then 2, then 0."""
    tasks = make_tasks(3, target=target_after(5), deadline=[40, 20, 30], demand=5)
    env = prepared_env(tasks, n_nodes=1)
    epochs = play_epochs(env, Lara(exploration_points=2, exploration_share=0.0))
    assert [actions[0] for actions in epochs] == [1] * 5 + [2] * 5 + [0] * 5
    assert env.episode_metrics()["completed"] == 3


def hamilton(quotas: list[float], total: int) -> list[int]:
    """Slow reference of the largest-remainder method (ties to the lower index)."""
    counts = [math.floor(q) for q in quotas]
    remainders = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in remainders[: total - sum(counts)]:
        counts[i] += 1
    return counts


def test_proportional_allocation_follows_need_over_time_left_with_largest_remainder_rounding() -> (
    None
):
    """Three nodes explore three tasks. Then the needs are 6, 40 and 80 node-epochs with 56,
    46 and 96 epochs left: all fit, so the shares are 3 * (p / T) / sum(p / T) and the nodes
    follow them by largest remainder: 0, 2 and 1 nodes."""
    needs = np.array([6.0, 40.0, 80.0])
    deadlines = np.array([60, 50, 100])
    tasks = make_tasks(
        3,
        target=[target_after(4 + need) for need in needs],
        deadline=deadlines,
        demand=4 + needs,
    )
    env = prepared_env(tasks, n_nodes=3)
    lara = Lara(stickiness=0.0, allocation="proportional")
    record: dict[str, Any] = {}

    def inspect(epoch: int, slots: np.ndarray) -> None:
        if epoch == 4:
            record["allocation"] = lara.last_allocation[:3].copy()

    epochs = play_epochs(env, lara, after_plan=inspect)
    time_left = deadlines - 4
    share = needs / time_left
    expected = 3 * share / share.sum()
    np.testing.assert_allclose(record["allocation"], expected, rtol=1e-3)
    counts = np.bincount(epochs[4], minlength=4)[:3].tolist()
    assert counts == hamilton(expected.tolist(), 3) == [0, 2, 1]


def test_carried_credit_gives_every_task_its_share_over_time() -> None:
    """With whole nodes, node-epochs received follow the real-valued shares to within one
    node-epoch per task at every epoch (stickiness off; all tasks stay in the chosen set)."""
    needs = np.array([30.0, 45.0, 60.0, 90.0])
    tasks = make_tasks(
        4,
        target=[target_after(4 + need) for need in needs],
        deadline=[200, 200, 200, 200],
        demand=4 + needs,
    )
    env = prepared_env(tasks, n_nodes=2, n_slots=4)
    lara = Lara(stickiness=0.0, exploration_points=2, allocation="proportional")
    owed = np.zeros(4)
    checked = []

    def inspect(epoch: int, slots: np.ndarray) -> None:
        if (slots < 0).any() or not lara.last_chosen[:4].all():
            return
        given = np.bincount(lara._planned, minlength=5)[:4]
        owed[:] += lara.last_allocation[:4] - given
        assert np.all(np.abs(owed) < 1.0 + 1e-9), (epoch, owed)
        checked.append(epoch)

    play_epochs(env, lara, after_plan=inspect)
    assert len(checked) >= 20


def test_stickiness_keeps_a_node_on_its_task_when_shares_are_even() -> None:
    """Two equal tasks on one node, each owed half of it: without stickiness the node moves
    every epoch; with stickiness s it stays until the other task is owed s node-epochs more,
    so it moves about every s + 1 epochs."""

    def switches(stickiness: float) -> int:
        tasks = make_tasks(2, target=target_after(60), deadline=300, demand=60)
        env = prepared_env(tasks, n_nodes=1)
        play_epochs(
            env, Lara(stickiness=stickiness, exploration_points=2, allocation="proportional")
        )
        assert env.episode_metrics()["completed"] == 2
        return int(env.simulator.state.switches)

    alternating, sticky = switches(0.0), switches(3.0)
    assert alternating > 90  # 120 epochs of training, a switch nearly every epoch
    assert sticky < alternating / 3


# ---------------------------------------------------------------------------- search and rounding
@pytest.mark.parametrize(
    ("time_left", "cost", "capacity", "kept"),
    [
        # Worked by hand: EDF order 2, 4, 5 runs out at the third job (6 > 5), which drops the
        # longest job so far (cost 3); the last two then fit (7 <= 7, 8 <= 8).
        ([2, 4, 5, 7, 8], [1, 3, 2, 4, 1], 1.0, [True, False, True, True, True]),
        # The same jobs at twice the capacity all fit.
        ([2, 4, 5, 7, 8], [1, 3, 2, 4, 1], 2.0, [True] * 5),
        # Order is by deadline, not by index; at each overflow the costliest job so far goes.
        ([6, 3, 3, 1], [5, 2, 2, 1], 1.0, [False, True, False, True]),
        # Nothing fits a machine that does nothing; zero-cost jobs always do.
        ([1, 2], [1, 0], 0.0, [False, True]),
    ],
)
def test_moore_hodgson_known_answers(
    time_left: list[float], cost: list[float], capacity: float, kept: list[bool]
) -> None:
    result = moore_hodgson(np.array(time_left, float), np.array(cost, float), capacity)
    assert result.tolist() == kept


def on_time_count_brute_force(time_left: list[float], cost: list[float], capacity: float) -> int:
    """Largest subset whose jobs, run in earliest-deadline order, all meet their deadlines."""
    jobs = range(len(cost))
    for size in range(len(cost), 0, -1):
        for subset in itertools.combinations(jobs, size):
            done = 0.0
            ok = True
            for job in sorted(subset, key=lambda j: time_left[j]):
                done += cost[job]
                ok = ok and done <= capacity * time_left[job] + 1e-9
            if ok:
                return size
    return 0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 12), st.integers(0, 10)), min_size=0, max_size=7),
    st.integers(1, 3),
)
def test_moore_hodgson_keeps_a_largest_feasible_set(
    jobs: list[tuple[int, int]], capacity: int
) -> None:
    time_left = [float(t) for t, _ in jobs]
    cost = [float(c) for _, c in jobs]
    kept = moore_hodgson(np.array(time_left), np.array(cost), capacity)
    assert kept.sum() == on_time_count_brute_force(time_left, cost, capacity)
    done = 0.0
    for job in sorted(np.flatnonzero(kept).tolist(), key=lambda j: time_left[j]):
        done += cost[job]
        assert done <= capacity * time_left[job] + 1e-9


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(0.0, 5.0), min_size=1, max_size=8),
    st.integers(1, 12),
)
def test_largest_remainder_hands_out_the_total_within_one_of_each_quota(
    weights: list[float], total: int
) -> None:
    weight_sum = sum(weights)
    if weight_sum <= 0:
        weights = [1.0] * len(weights)
        weight_sum = float(len(weights))
    quotas = np.array(weights) * total / weight_sum
    counts = largest_remainder(quotas, total)
    assert counts.sum() == total
    assert np.all(np.abs(counts - quotas) < 1.0 + 1e-9)
    assert counts.tolist() == hamilton(quotas.tolist(), total)


def test_largest_remainder_respects_caps_holders_and_overdrawn_quotas() -> None:
    assert largest_remainder(np.array([3.6, 0.4]), 4, cap=2).tolist() == [2, 2]
    held = np.array([0, 1])
    assert largest_remainder(np.array([0.6, 0.4]), 1, held=held).tolist() == [1, 0]
    assert largest_remainder(np.array([0.6, 0.4]), 1, held=held, stickiness=0.5).tolist() == [
        0,
        1,
    ]
    assert largest_remainder(np.array([1.6, -0.6]), 1, held=held, stickiness=2.0).tolist() == [
        1,
        0,
    ], "a holder owed 2.2 less than the other loses its unit at stickiness 2"
    assert largest_remainder(np.array([2.5, 1.5]), 3).tolist() == [2, 1]  # tie: lower index
    assert largest_remainder(np.array([0.5, 0.5]), 1, tiebreak=np.array([1, 0])).tolist() == [
        0,
        1,
    ]
    assert largest_remainder(np.array([-1.0, 0.2]), 2).tolist() == [0, 2]
    assert largest_remainder(np.zeros(0), 3).tolist() == []


def test_nodes_for_rate_is_linear_up_to_one_node_and_follows_alpha_beyond() -> None:
    result = nodes_for_rate(
        np.array([3.0, 20.0, 20.0]), np.array([6.0, 10.0, 10.0]), np.array([0.5, 1.0, 0.5])
    )
    np.testing.assert_allclose(result, [0.5, 2.0, 4.0])
    assert nodes_for_rate(np.array([np.inf]), np.array([5.0]), np.array([0.7]))[0] == np.inf


# ---------------------------------------------------------------------------- information boundary
def first_unseen_index(env: mara_env.raw_env) -> np.ndarray:
    """Per curve row, the first index no task of the finished episode ever reported."""
    state = env.simulator.state
    first = np.ones(env.simulator.workload.curves.shape[0], dtype=np.int64)
    np.maximum.at(first, state.tasks.curve_row, np.floor(state.progress).astype(np.int64) + 1)
    return first


def run_with_hidden_future(
    config: mara_env.ClusterConfig, seed: int, perturb: np.ndarray | None
) -> tuple[list[list[int]], mara_env.raw_env]:
    env = mara_env.raw_env(config)
    env.reset(seed=seed)
    if perturb is not None:
        workload = env.simulator.workload
        curves = workload.curves.copy()
        hidden = np.arange(curves.shape[1])[None, :] >= perturb[:, None]
        curves[hidden] *= np.random.default_rng(5).uniform(0.2, 3.0, size=int(hidden.sum()))
        env.simulator.workload = dataclasses.replace(workload, curves=curves)
    lara = Lara()
    lara.reset(config, seed=seed)
    actions: list[list[int]] = []
    for agent, node in mara_env.node_turns(env):
        action = lara.act(env.observe(agent), node)
        actions.append([node, action])
        env.step(action)
    return actions, env


@pytest.mark.parametrize("seed", [7, 8, 10])
def test_hidden_future_of_curves_never_changes_lara_actions(seed: int) -> None:
    config = mara_env.get_config("tiny", load=3.0)
    baseline, env = run_with_hidden_future(config, seed, None)
    perturbed, _ = run_with_hidden_future(config, seed, first_unseen_index(env))
    assert perturbed == baseline


def test_lara_acts_on_observations_alone() -> None:
    """Replaying the recorded observations to a fresh LARA, without any environment,
    reproduces every action."""
    env = mara_env.raw_env("tiny", load=3.0)
    env.reset(seed=4)
    lara = Lara()
    lara.reset(env.config, seed=1)
    calls = []
    for agent, node in mara_env.node_turns(env):
        observation = env.observe(agent)
        action = lara.act(observation, node)
        calls.append((observation, node, action))
        env.step(action)
    replay = Lara()
    replay.reset(env.config, seed=1)
    assert [replay.act(obs, node) for obs, node, _ in calls] == [a for *_, a in calls]


# ---------------------------------------------------------------------------- whole episodes
@pytest.mark.parametrize(
    "overrides",
    [
        {"config": "tiny", "load": 3.0},
        {"config": "tiny", "n_nodes": 1, "load": 4.0},
        {"config": "tiny", "n_nodes": 4, "max_nodes_per_task": 1, "load": 3.0},
        {"config": "tiny", "n_nodes": 5, "n_slots": 2, "max_nodes_per_task": 2},
        {"config": "training", "arrival_horizon": 30, "workload": "vision", "load": 2.8},
    ],
)
def test_lara_plays_whole_episodes_without_illegal_actions(overrides: dict[str, Any]) -> None:
    options = dict(overrides)
    config = mara_env.get_config(options.pop("config"), **options)
    env = mara_env.raw_env(config, strict=True)  # a masked action would raise
    for seed in (0, 1):
        env.reset(seed=seed)
        epochs = play_epochs(env, Lara(), seed=seed)
        assert epochs, "the episode ran"
        assert env.episode_metrics()["illegal_actions"] == 0
    rows = evaluate(make_agent("lara"), config, seeds=[2])
    assert rows[0]["illegal_actions"] == 0 and rows[0]["invalid_actions"] == 0


def test_lara_is_deterministic_given_the_seed() -> None:
    config = mara_env.get_config("training", arrival_horizon=25)
    first = evaluate(make_agent("lara"), config, seeds=[3, 4])
    second = evaluate(make_agent("lara"), config, seeds=[3, 4])
    timing = ("decision_ms_per_epoch", "episode_seconds")
    strip = [{k: v for k, v in row.items() if k not in timing} for row in first]
    assert strip == [{k: v for k, v in row.items() if k not in timing} for row in second]
    assert any(row["completed"] > 0 for row in first)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("gamma", 0.0, "gamma must be in"),
        ("gamma", 1.5, "gamma must be in"),
        ("ridge", 0.0, "ridge must be"),
        ("offset", -1.0, "offset must be"),
        ("offset", "5", "offset must be a number"),
        ("exploration_points", 1, "exploration_points must be an int >= 2"),
        ("exploration_points", 2.5, "exploration_points must be an int"),
        ("stickiness", -0.5, "stickiness must be"),
        ("stickiness", math.inf, "stickiness must be"),
    ],
)
def test_bad_settings_raise_naming_the_field(field: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Lara(**{field: value})


def test_unknown_settings_and_bad_moore_hodgson_input_raise_clear_errors() -> None:
    with pytest.raises(TypeError, match="unknown setting"):
        Lara(gama=0.9)
    assert make_agent("lara", gamma=0.9).settings.gamma == 0.9  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="one length"):
        moore_hodgson(np.ones(2), np.ones(3), 1.0)
    with pytest.raises(ValueError, match="finite"):
        moore_hodgson(np.ones(2), np.array([1.0, np.inf]), 1.0)


def test_the_closed_form_solution_equals_the_fit_theta() -> None:
    from mara_env.agents.lara import _solve
    from mara_env.predictors.wls import DiscountedLeastSquares

    rng = np.random.default_rng(0)
    for _ in range(20):
        fit = DiscountedLeastSquares(gamma=0.9, ridge=1e-6)
        for work in np.sort(rng.uniform(0, 50, size=int(rng.integers(1, 12)))):
            fit.update(np.array([np.log(work + 5.0), 1.0]), float(rng.normal()))
        np.testing.assert_allclose(_solve(fit), fit.theta, rtol=1e-7, atol=1e-9)
