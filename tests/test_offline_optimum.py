"""The offline optimum (``mara_env.agents.optimum``): its schedule is played by the environment
exactly as the program counts it, it is never below the clairvoyant reference, and the certified
bound is never below it; node schedules realise the counts the program chose; bad input is refused."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate
from mara_env.agents.clairvoyant import Clairvoyant
from mara_env.agents.optimum.agent import OfflineOptimum
from mara_env.agents.optimum.bound import completion_bound, least_node_epochs
from mara_env.agents.optimum.instance import instance_of, landing_intervals
from mara_env.agents.optimum.model import IDLE, node_schedule, solve

#: Tiny episodes the program solves in a second or two.
QUICK_SEEDS = (2, 3, 5)


@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_optimum_is_played_as_counted_and_bounds_hold(seed: int) -> None:
    optimum = OfflineOptimum(time_limit=120.0)
    played = evaluate(optimum, "tiny", seeds=[seed])[0]
    clairvoyant = evaluate(Clairvoyant(), "tiny", seeds=[seed])[0]
    solution = optimum.solution
    assert solution is not None and solution.status == "optimal"
    assert played["completed"] == solution.completed == solution.bound
    assert played["completed"] >= clairvoyant["completed"]
    assert optimum.from_clairvoyant == (played["completed"] == clairvoyant["completed"])
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=seed)
    instance = instance_of(env.simulator)
    assert solution.completed <= completion_bound(instance) <= len(instance.hopeful_tasks)


def test_where_the_program_beats_the_clairvoyant_its_schedule_is_played() -> None:
    optimum = OfflineOptimum(time_limit=120.0)
    played = evaluate(optimum, "tiny", seeds=[4])[0]
    clairvoyant = evaluate(Clairvoyant(), "tiny", seeds=[4])[0]
    assert not optimum.from_clairvoyant
    assert played["completed"] > clairvoyant["completed"]


def test_a_cut_short_solve_says_so_and_its_bound_holds() -> None:
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=1)
    solution = solve(instance_of(env.simulator), time_limit=1e-3)
    assert solution.status in ("time_limit", "no_schedule")
    assert solution.bound >= max(solution.completed, 0)
    if solution.status == "no_schedule":
        assert (solution.schedule == IDLE).all()


def test_landing_intervals_follow_the_reported_loss() -> None:
    curve = np.array([1.0, 0.4, 0.6, 0.5, 0.45, 0.7])
    intervals = landing_intervals(curve, target=0.5, reach=7.9)
    for progress in np.linspace(0.0, 7.9, 200):
        inside = any(first <= progress < end for first, end in intervals)
        reported = curve[min(int(progress), len(curve) - 1)]
        assert inside == (reported <= 0.5)


def test_node_schedule_realises_counts_and_stays() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        n_nodes, n_tasks, epochs = int(rng.integers(1, 6)), int(rng.integers(1, 5)), 6
        truth = rng.integers(-1, n_tasks, size=(epochs, n_nodes))
        counts = np.zeros((epochs, n_tasks), dtype=np.int64)
        stays = np.zeros_like(counts)
        for t in range(epochs):
            for node, task in enumerate(truth[t].tolist()):
                if task >= 0:
                    counts[t, task] += 1
                    stays[t, task] += int(t > 0 and truth[t - 1, node] == task)
        schedule = node_schedule(counts, stays, n_nodes)
        for t in range(epochs):
            for task in range(n_tasks):
                on = schedule[t] == task
                assert on.sum() == counts[t, task]
                stayed = on & (schedule[t - 1] == task) if t else np.zeros(n_nodes, dtype=bool)
                assert stayed.sum() == stays[t, task]


def test_least_node_epochs_never_exceed_what_one_held_node_needs() -> None:
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=4)
    instance = instance_of(env.simulator)
    for task, need in least_node_epochs(instance).items():
        one_node = instance.tasks[task].gain(1, 1, instance.config.switch_cost)
        assert need * one_node >= instance.tasks[task].landing[0, 0]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="time_limit"):
        OfflineOptimum(time_limit=0.0)
    optimum = OfflineOptimum(time_limit=10.0)
    optimum.reset(mara_env.get_config("tiny"), seed=0)
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="bind"):
        optimum.act(env.observe("node_0"), node=0)
    with pytest.raises(ValueError, match="config"):
        optimum.bind(mara_env.raw_env(config="single_node"))
    parallel = mara_env.parallel_env(config="tiny")
    parallel.reset(seed=0)
    with pytest.raises(TypeError, match="raw_env"):
        optimum.bind(parallel)
    env.reset(seed=3)
    with pytest.raises(ValueError, match="time_limit"):
        solve(instance_of(env.simulator), time_limit=-1.0)


def test_the_committed_ladder_holds_the_optimum_above_the_clairvoyant_and_below_the_bound() -> None:
    from mara_env.benchmarks.ceiling.ladder_episodes import BOUND, OPTIMUM, OUTPUT, RUNGS

    rows = list(csv.DictReader((OUTPUT / "ladder.csv").open()))
    completed = {(row["rung"], row["load"], row["seed"]): int(row["completed"]) for row in rows}
    proven = {(row["load"], row["seed"]) for row in rows if row["status"] == "optimal"}
    solved = {(row["load"], row["seed"]): row for row in rows if row["rung"] == OPTIMUM}
    assert len(solved) >= 10 and proven
    for (load, seed), row in solved.items():
        optimum = int(row["completed"])
        assert completed["clairvoyant", load, seed] <= optimum <= int(row["solver_bound"])
        if (load, seed) in proven:  # the exact optimum: no rung above it, the bound not below
            assert completed[BOUND, load, seed] >= optimum, (load, seed)
            assert all(completed[rung, load, seed] <= optimum for rung in RUNGS), (load, seed)


def test_the_ladder_command_writes_its_page_and_resumes(tmp_path: Path) -> None:
    from mara_env.benchmarks.ceiling import ladder

    arguments = ["--seeds", "1", "--loads", "1.4", "--time-limit", "60", "--no-progress"]
    assert ladder.main([*arguments, "--output", str(tmp_path)]) == 0
    rows = (tmp_path / "ladder.csv").read_text().splitlines()
    assert len(rows) == 1 + 8  # the header, then one row a rung
    assert "| optimum |" in (tmp_path / "ladder.md").read_text()
    assert (tmp_path / "ladder.png").stat().st_size > 0
    assert ladder.main([*arguments, "--output", str(tmp_path)]) == 0
    assert (tmp_path / "ladder.csv").read_text().splitlines() == rows  # nothing replayed
    with pytest.raises(SystemExit):
        ladder.main(["--time-limit", "0", "--output", str(tmp_path)])
