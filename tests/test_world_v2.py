"""Cluster-v2's task drawing (:mod:`mara_env.sim.hidden_effort`): what it promises a scheduler does
not learn from a task's target and deadline, and that Cluster-v1 stays as it was."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pettingzoo
import pytest

import mara_env
from mara_env import ClusterConfig, ConfigError, TraceError, get_config
from mara_env.benchmarks.common.statistics import auc, spearman
from mara_env.benchmarks.leaderboard.cli import main as leaderboard_main
from mara_env.curves.sources import default_trace_source
from mara_env.curves.synthetic import SyntheticTraceSource
from mara_env.sim.hidden_effort import family_tables, typical_demand
from mara_env.sim.rules import deadline_of, lowest_recorded_loss, progress_gain
from mara_env.sim.workload import build_workload, draw_tasks


def _many_tasks(config: ClusterConfig, n: int = 6000, seed: int = 3):
    workload = build_workload(config, default_trace_source())
    tasks, offered = draw_tasks(workload, np.zeros(n, dtype=np.int64), np.random.default_rng(seed))
    return workload, tasks, offered


@pytest.fixture(scope="module")
def v2_draw():
    return _many_tasks(get_config("evaluation", world_version=2, max_epochs=10_000))


@pytest.mark.parametrize("version", mara_env.WORLD_VERSIONS)
def test_each_id_runs_its_own_rules_in_every_form(version: int) -> None:
    name = f"mara_env/Cluster-v{version}"
    gym_env = gym.make(name, config="tiny").unwrapped
    aec = pettingzoo.make("aec", name, config="tiny")
    parallel = pettingzoo.make("parallel", name, config="tiny")
    vector = gym.make_vec(name, num_envs=2, vectorization_mode="vector_entry_point", config="tiny")
    envs: tuple[Any, ...] = (gym_env, aec.unwrapped, parallel.unwrapped, vector.unwrapped)
    for env in envs:
        assert env.config.world_version == version
    assert aec.metadata["name"] == parallel.metadata["name"] == name


def test_a_config_names_its_rules_and_rejects_unknown_ones() -> None:
    assert get_config("training").env_id == mara_env.ENV_ID
    assert get_config("training", world_version=2).env_id == "mara_env/Cluster-v2"
    assert get_config("training").world_version == 3
    with pytest.raises(ConfigError, match="world_version"):
        get_config("training", world_version=4)
    with pytest.raises(ConfigError, match="estimate_spread"):
        get_config("training", estimate_spread=-0.1)
    with pytest.raises(ConfigError, match="hopeless_curve_share"):
        get_config("training", hopeless_curve_share=1.5)


@pytest.mark.parametrize("field", [("hopeless_curve_share", 1.0), ("estimate_spread", 0.5)])
def test_cluster_v1_refuses_the_fields_of_later_worlds(field: tuple[str, float]) -> None:
    name, value = field
    with pytest.raises(ConfigError, match=f"{name} has no effect in Cluster-v1"):
        get_config("training", world_version=1, **{name: value})
    assert get_config("training", world_version=1).effective_hopeless_curve_share == 1.0


def test_cluster_v3_is_cluster_v2_with_near_miss_hopeless_tasks() -> None:
    """Every task of Cluster-v3 is drawn exactly as Cluster-v2 draws it with
    ``hopeless_curve_share=0.1``; setting the share explicitly overrides the world's."""
    v3 = get_config("evaluation", world_version=3, max_epochs=10_000)
    near_v2 = v3.replace(world_version=2, hopeless_curve_share=0.1)
    assert v3.effective_hopeless_curve_share == near_v2.effective_hopeless_curve_share == 0.1
    assert v3.replace(world_version=2).effective_hopeless_curve_share == 1.0
    _, tasks_v3, offered_v3 = _many_tasks(v3, n=2000)
    _, tasks_v2, offered_v2 = _many_tasks(near_v2, n=2000)
    for name in ("curve_row", "target", "demand", "deadline", "initial_loss"):
        np.testing.assert_array_equal(getattr(tasks_v3, name), getattr(tasks_v2, name))
    np.testing.assert_array_equal(offered_v3, offered_v2)


def test_hopeless_targets_lie_below_their_curve_and_the_others_are_reached(v2_draw) -> None:
    workload, tasks, offered = v2_draw
    hopeless = ~np.isfinite(tasks.demand)
    lowest = workload.curve_minimum[tasks.curve_row]
    assert 0.06 < hopeless.mean() < 0.14  # infeasible_share 0.1
    assert np.all(tasks.target[hopeless] < lowest[hopeless])
    assert np.all(tasks.target[~hopeless] >= lowest[~hopeless])
    assert np.all((tasks.target > 0) & (tasks.target < tasks.initial_loss))
    assert np.all(np.isfinite(offered))
    # a feasible task is on the curve its target was drawn from: its demand is what it offered
    np.testing.assert_array_equal(tasks.demand[~hopeless], offered[~hopeless])


def test_near_miss_hopeless_tasks_run_the_curves_nearest_above_their_targets(v2_draw) -> None:
    """With ``hopeless_curve_share=0.1`` every hopeless task runs one of the tenth of its
    family's never-reaching curves whose lowest loss lies nearest above its target, and those
    curves stall nearer their targets than v2's; the feasible tasks are drawn as in v2."""
    config = get_config("evaluation", world_version=2, max_epochs=10_000)
    _, everywhere, _ = v2_draw
    workload, near, _ = _many_tasks(config.replace(hopeless_curve_share=0.1))
    hopeless = ~np.isfinite(near.demand)
    np.testing.assert_array_equal(hopeless, ~np.isfinite(everywhere.demand))
    for name in ("curve_row", "target", "demand", "deadline"):
        np.testing.assert_array_equal(
            getattr(near, name)[~hopeless], getattr(everywhere, name)[~hopeless]
        )
    tables = workload.family_tables
    slot_of = {int(row): slot for slot, rows in enumerate(workload.rows_by_family) for row in rows}
    ratio = near.target / near.initial_loss
    for task in np.flatnonzero(hopeless):
        slot = slot_of[int(near.curve_row[task])]
        low, high = tables.depth_start[slot], tables.depth_start[slot + 1]
        if near.curve_row[task] == tables.depth_rows[high - 1]:
            continue  # the shallowest curve: also where a target too shallow to hide goes
        shallower = low + np.searchsorted(tables.depth_ratio[low:high], ratio[task], "right")
        nearest = tables.depth_rows[shallower : shallower + (high - shallower) // 10 + 2]
        assert near.curve_row[task] in nearest
    lowest = workload.curve_minimum
    gap_near = np.log(lowest[near.curve_row[hopeless]] / near.target[hopeless])
    gap_all = np.log(lowest[everywhere.curve_row[hopeless]] / everywhere.target[hopeless])
    assert np.all(gap_near > 0) and np.median(gap_near) < 0.5 * np.median(gap_all)


@pytest.mark.parametrize("workload", ["in_distribution", "rl", "vision"])
def test_every_target_lies_below_the_initial_loss(workload: str) -> None:
    """Also where the drawn point of a curve is followed only by points at or above its first
    loss (on the train split such curves exist): the target then comes from an earlier point."""
    config = get_config("training", workload=workload, world_version=2)
    _, tasks, _ = _many_tasks(config, n=20_000)
    assert np.all(tasks.target < tasks.initial_loss)


def test_a_target_ratio_does_not_mark_a_hopeless_task(v2_draw) -> None:
    _, tasks, _ = v2_draw
    hopeless = ~np.isfinite(tasks.demand)
    ratio = np.log(tasks.target / tasks.initial_loss)
    separation = auc(ratio, hopeless)
    assert 0.44 < separation < 0.56
    _, counts = np.unique(ratio, return_counts=True)
    assert counts.max() / len(ratio) < 0.05  # no common default ratio


def test_the_deadline_window_ranks_the_true_demand_no_better_than_the_target_does(v2_draw) -> None:
    _, tasks, _ = v2_draw
    window = (tasks.deadline - tasks.arrival).astype(float)
    need = np.where(np.isfinite(tasks.demand), tasks.demand, 1e12)
    depth = -np.log(tasks.target / tasks.initial_loss)
    for family in np.unique(tasks.family):
        mine = tasks.family == family
        by_window = spearman(window[mine], need[mine])
        by_depth = spearman(depth[mine], need[mine])
        assert by_window < 0.3 and by_window < by_depth + 0.1, (family, by_window, by_depth)


def test_a_deadline_is_the_typical_demand_of_the_family_for_the_target() -> None:
    """With no estimate error and a fixed slack, a feasible task's deadline follows from its
    family and target ratio alone, by the documented formula."""
    config = get_config(
        "evaluation", world_version=2, estimate_spread=0.0, slack_range=(2.0, 2.0), max_epochs=9999
    )
    workload, tasks, _ = _many_tasks(config, n=500)
    tables = workload.family_tables
    slot = {family: index for index, family in enumerate(config.families)}
    mean_epochs = float(np.mean(config.epochs_per_curve))
    for task in np.flatnonzero(np.isfinite(tasks.demand)):
        family = mara_env.curves.families.FAMILY_NAMES[tasks.family[task]]
        log_ratio = math.log(tasks.target[task] / tasks.initial_loss[task])
        estimate = typical_demand(
            tables.log_levels, tables.typical_fraction, slot[family], log_ratio, mean_epochs
        )
        allowed = 2.0 * estimate / float(progress_gain(1.0, 1.0, tasks.alpha[task]))
        assert tasks.deadline[task] == deadline_of(0, allowed, config.max_epochs)


def test_typical_fractions_grow_with_the_depth_of_the_target() -> None:
    workload = build_workload(get_config("training", world_version=2), default_trace_source())
    tables = workload.family_tables
    assert np.all(np.diff(tables.typical_fraction, axis=1) >= 0)
    assert np.all((tables.typical_fraction > 0) & (tables.typical_fraction <= 1))
    assert np.all(np.diff(tables.depth_ratio[tables.depth_start[0] : tables.depth_start[1]]) >= 0)


def test_a_family_whose_curves_never_improve_is_refused_with_a_clear_error() -> None:
    curves = np.array([[1.0, 1.0, 1.2], [0.5, 0.6, 0.7]])
    lengths = np.array([3, 3])
    with pytest.raises(TraceError, match="no curve whose loss ever falls below its first"):
        family_tables(curves, lengths, (np.array([0, 1]),))
    assert lowest_recorded_loss(curves, lengths).tolist() == [1.0, 0.5]


@pytest.mark.parametrize("version", [1, 2])
def test_same_seed_same_tasks(version: int) -> None:
    config = get_config("tiny", workload="synthetic", world_version=version)
    workload = build_workload(config, SyntheticTraceSource(n_curves=30))
    arrivals = np.arange(50, dtype=np.int64) // 5
    first, _ = draw_tasks(workload, arrivals, np.random.default_rng(9))
    again, _ = draw_tasks(workload, arrivals, np.random.default_rng(9))
    for name in ("curve_row", "deadline", "target", "speed", "demand"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))


def test_a_hopeless_task_no_curve_can_hide_takes_the_shallowest_below_its_lowest_loss() -> None:
    from mara_env.sim.hidden_effort import EffortDraws, hidden_effort_terms

    curves = np.array([[1.0, 0.5, 0.4], [2.0, 1.8, 1.6]])  # lowest ratios 0.4 and 0.8
    lengths = np.array([3, 3])
    tables = family_tables(curves, lengths, (np.array([0, 1]),))
    n = 2
    draws = EffortDraws(
        epochs=np.full(n, 10.0),
        position=np.array([0.9, 0.9]),  # step 2: ratios 0.4 (curve 0) and 0.8 (curve 1)
        hopeless=np.ones(n, dtype=bool),
        hopeless_share=np.full(n, 0.5),
        slack=np.ones(n),
        swap=np.zeros(n),
        log_error=np.zeros(n),
        mean_epochs=10.0,
        deadline_nodes=1.0,
        hopeless_curve_share=1.0,
    )
    curve_row, _, target, demand, offered, _ = hidden_effort_terms(
        curves,
        lengths,
        np.ones(len(lengths)),
        np.zeros(n, dtype=np.int64),
        np.array([0, 1]),
        np.ones(n),
        tables.depth_rows,
        tables.depth_ratio,
        tables.depth_start,
        tables.log_levels,
        tables.typical_fraction,
        draws,
    )
    # ratio 0.4: curve 1 never gets that low, so the task runs it with target 0.4 * 2.0
    assert curve_row[0] == 1 and target[0] == pytest.approx(0.8)
    # ratio 0.8: no curve stays above it; the shallowest takes 0.5 of its lowest loss
    assert curve_row[1] == 1 and target[1] == pytest.approx(0.5 * 0.8 * 2.0)
    assert np.all(np.isinf(demand)) and np.all(np.isfinite(offered))
    assert np.all(target < lowest_recorded_loss(curves[curve_row], lengths[curve_row]))


def test_the_leaderboard_plays_near_miss_hopeless_tasks_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "board"
    quiet = ["--no-progress", "--no-plots", "--workers", "1", "--seeds", "1", "--loads", "1"]
    command = ["--agents", "edf", "--workloads", "rl", "--hopeless-curves", "0.1", *quiet]
    assert leaderboard_main([*command, "--quick", "--output", str(out)]) == 0
    page = (out / "leaderboard.md").read_text()
    assert "hopeless tasks on the nearest 0.1 of their family's never-reaching curves" in page
    assert "rl@1x quick hopeless 0.1" in (out / "episodes.csv").read_text()
    assert leaderboard_main(["--validate", str(out), "--sample", "all", *quiet[:4]]) == 0
    with pytest.raises(SystemExit):
        leaderboard_main(["--hopeless-curves", "1.5", *quiet])
    with pytest.raises(SystemExit):
        leaderboard_main(["--hopeless-curves", "0.1", "--world-version", "1", *quiet])
    assert "hopeless_curve_share has no effect in Cluster-v1" in capsys.readouterr().err
