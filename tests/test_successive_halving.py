"""Classical successive halving: known answers on hand-made bundles, cohorts over time, no idling."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mara_env
from conftest import make_tasks, play, prepared_env
from mara_env.agents import SuccessiveHalving, evaluate, make_agent
from mara_env.agents.successive_halving import halving_rounds
from mara_env.agents.successive_halving_stream import SuccessiveHalvingStream

pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

#: Task k's curve falls as exp(-RATES[k] * step): after equal work, a larger rate means more
#: progress toward the (unreachable) target.
RATES = (0.03, 0.01, 0.05, 0.02, 0.04)
TARGET = 0.001  # below every curve: no task completes, so only the halving decides


def curves(rates: tuple[float, ...] = RATES, length: int = 80) -> list[list[float]]:
    return [np.exp(-rate * np.arange(length)).tolist() for rate in rates]


def test_a_bracket_of_four_halves_twice_with_doubling_budgets() -> None:
    """One node, E = 24 epochs: R = 2 rounds, b_0 = floor(24 / (2 * 4)) = 3 epochs each, in turn;
    tasks 2 and 0 progress most and survive; b_1 = floor(24 / (2 * 2)) = 6 each; task 2 wins and
    trains alone until its deadline (30)."""
    tasks = make_tasks(4, curve_row=[0, 1, 2, 3], target=TARGET, deadline=30, demand=math.inf)
    env = prepared_env(tasks, curves(RATES[:4]))
    scheduler = SuccessiveHalving(bracket_epochs=24)
    actions = play(env, scheduler)
    expected = [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3 + [0] * 6 + [2] * 6 + [2] * 6
    assert actions == expected
    assert scheduler.dropped == {0, 1, 3}


def test_the_default_budget_is_the_cohorts_time_and_an_odd_cohort_keeps_the_ceiling() -> None:
    """Five tasks, deadlines 40 (the latest) and 35: E = 40, R = 3 rounds; b_0 = floor(40 / 15)
    = 2; ceil(5 / 2) = 3 survive (tasks 2, 4, 0), b_1 = floor(40 / 9) = 4; 2 survive (2, 4),
    b_2 = floor(40 / 6) = 6; task 2 wins and trains until its deadline."""
    deadlines = [35, 35, 40, 35, 35]
    tasks = make_tasks(5, curve_row=list(range(5)), target=TARGET, deadline=deadlines)
    env = prepared_env(tasks, curves(), n_slots=5)
    scheduler = SuccessiveHalving()
    actions = play(env, scheduler)
    round_0 = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    round_1 = [4] * 4 + [0] * 4 + [2] * 4  # task 4 holds the node, so it goes first
    round_2 = [2] * 6 + [4] * 6
    assert actions[:34] == round_0 + round_1 + round_2
    assert actions[34:] == [2] * 6  # epochs 34..39, then task 2 expires too
    assert scheduler.dropped == {0, 1, 3, 4}


def test_halving_uses_observed_progress_not_the_hidden_curve() -> None:
    """E = 10: each of two tasks gets 5 epochs, then the one that progressed more trains alone;
    swapping the curves swaps the winner."""
    tasks = make_tasks(2, curve_row=[0, 1], target=TARGET, deadline=30)
    first = play(prepared_env(tasks, curves((0.01, 0.05))), SuccessiveHalving(bracket_epochs=10))
    second = play(prepared_env(tasks, curves((0.05, 0.01))), SuccessiveHalving(bracket_epochs=10))
    assert first == [0] * 5 + [1] * 25
    assert second == [0] * 5 + [1] * 5 + [0] * 20


def test_tasks_arriving_during_a_bracket_wait_for_the_next_one() -> None:
    """E = 12. Tasks 0 and 1 form the first cohort (b_0 = 6 each); task 2 arrives at epoch 2 and
    waits. Task 1 wins and holds the node until the bracket's 12 epochs are over (epoch 13);
    the next cohort is task 1 (carried over) and task 2 (b_0 = 6 each); task 1, further along,
    wins again and trains until its deadline; task 2 is dropped, so the node then idles."""
    tasks = make_tasks(
        3, curve_row=[0, 1, 2], target=TARGET, arrival=[0, 0, 2], deadline=[30, 30, 40]
    )
    env = prepared_env(tasks, curves((0.01, 0.05, 0.03)), arrival_horizon=3)
    scheduler = SuccessiveHalving(bracket_epochs=12)
    actions = play(env, scheduler)
    idle = env.config.idle_action
    first_bracket = [0] * 6 + [1] * 6 + [1]
    second_bracket = [1] * 6 + [2] * 6 + [1]
    assert actions == first_bracket + second_bracket + [1] * 4 + [idle] * 10
    assert scheduler.dropped == {0, 2}


@pytest.mark.parametrize(
    "overrides",
    [
        {"config": "tiny"},
        {"config": "tiny", "n_nodes": 1, "load": 8.0},
        {"config": "tiny", "n_nodes": 4, "max_nodes_per_task": 1, "load": 2.0},
        {"config": "training", "arrival_horizon": 30},
    ],
    ids=["tiny", "one_node", "one_node_per_task", "training"],
)
def test_no_node_idles_while_a_survivor_or_waiting_task_could_take_it(
    overrides: dict[str, object],
) -> None:
    fields = dict(overrides)
    config = mara_env.get_config(str(fields.pop("config")), **fields)
    cap = config.n_nodes if config.max_nodes_per_task is None else config.max_nodes_per_task
    for seed in range(3):
        env = mara_env.raw_env(config)
        env.reset(seed=seed)
        scheduler = SuccessiveHalving()
        scheduler.reset(config, seed=seed)
        chosen: list[int] = []
        epochs_with_survivors = 0
        for agent, node in mara_env.node_turns(env):
            action = scheduler.act(env.observe(agent), node)
            chosen.append(action)
            if node == config.n_nodes - 1:
                ids = scheduler.tracker.task_ids
                usable = (ids >= 0) & ~np.isin(ids, list(scheduler.dropped))
                counts = np.bincount(chosen, minlength=config.n_actions)
                if counts[config.idle_action]:
                    assert np.all(counts[:-1][usable] >= cap), (seed, ids.tolist(), counts)
                epochs_with_survivors += bool(scheduler.survivors)
                chosen = []
            env.step(action)
        assert epochs_with_survivors > 0


def test_a_tiny_evaluation_runs_and_the_streaming_rule_keeps_its_own_name() -> None:
    rows = evaluate(make_agent("successive_halving"), "tiny", seeds=[0, 1])
    assert [row["agent"] for row in rows] == ["successive_halving"] * 2
    assert all(row["illegal_actions"] == 0 and row["arrived"] > 0 for row in rows)
    assert all(0 <= row["completion_rate"] <= 1 for row in rows)
    stream = make_agent("successive_halving_stream")
    assert isinstance(stream, SuccessiveHalvingStream)
    assert evaluate(stream, "tiny", seeds=[0])[0]["agent"] == "successive_halving_stream"


def test_halving_rounds_and_bad_settings() -> None:
    assert [halving_rounds(n, eta=3) for n in (1, 3, 4, 9, 10)] == [0, 1, 2, 2, 3]
    for bad in ({"eta": 1}, {"eta": 2.0}, {"bracket_epochs": 0}, {"bracket_epochs": 2.5}):
        with pytest.raises(ValueError, match="SuccessiveHalving"):
            SuccessiveHalving(**bad)  # type: ignore[arg-type]
