"""The rl family collector: its grid, its curves' validity and loss scale, determinism, the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mara_env.benchmarks.collect import rl
from mara_env.benchmarks.collect.__main__ import main
from mara_env.benchmarks.collect.spec import LOSS_FLOOR, MIN_POINTS, Curve, RunSpec
from mara_env.benchmarks.collect.store import CurveStore


@pytest.fixture(scope="module")
def smoke_curves() -> dict[str, tuple[RunSpec, Curve]]:
    """Every smoke run's curve, by run id (trained once for the module)."""
    return {spec.run_id: (spec, rl.run(spec)) for spec in rl.grid(smoke=True)}


def _kind(spec: RunSpec) -> str:
    return str(spec.params["kind"])


def test_grid_has_enough_unique_runs_of_each_kind() -> None:
    specs = rl.grid()
    ids = [spec.run_id for spec in specs]
    assert len(set(ids)) == len(ids)
    assert len({spec.run_id for spec in specs if _kind(spec) == "deep"}) >= 100
    assert len({spec.run_id for spec in specs if _kind(spec) == "tabular"}) >= 200
    assert {spec.family for spec in specs} == {rl.FAMILY} == {"rl"}


def test_grid_order_is_deterministic() -> None:
    assert [spec.run_id for spec in rl.grid()] == [spec.run_id for spec in rl.grid()]


def test_grid_covers_every_task_and_algorithm_with_every_seed() -> None:
    specs = rl.grid()
    pairs = {(spec.params["task"], spec.params["algorithm"]) for spec in specs}
    assert pairs == {(name, algo) for name, task in rl.TASKS.items() for algo in task.algorithms}
    assert {spec.seed for spec in specs} == set(rl.SEEDS)


def test_budgets_fall_on_the_work_grid() -> None:
    """Every grid point is a whole number of (vectorised) environment steps."""
    for spec in rl.grid() + rl.grid(smoke=True):
        n_envs = spec.params.get("n_envs", 1)
        assert spec.params["budget"] % (rl.POINTS * n_envs) == 0, spec.params


def test_smoke_grid_is_tiny_and_has_both_kinds() -> None:
    specs = rl.grid(smoke=True)
    assert 2 <= len(specs) <= 3
    assert {_kind(spec) for spec in specs} == {"deep", "tabular"}
    assert all(spec.params["budget"] <= 2000 for spec in specs)


def test_smoke_runs_give_valid_curves(smoke_curves: dict[str, tuple[RunSpec, Curve]]) -> None:
    for spec, curve in smoke_curves.values():
        assert curve.losses.size == curve.work.size >= MIN_POINTS
        assert np.all(np.isfinite(curve.losses))
        assert np.all(curve.losses >= LOSS_FLOOR)
        assert np.all(curve.losses <= rl.MAX_LOSS)
        assert np.all(np.diff(curve.work) > 0)
        assert curve.work[-1] == spec.params["budget"]
        assert curve.work_unit == "env steps"
        task = rl.TASKS[spec.params["task"]]
        assert curve.metadata["env_id"] == task.env_id
        assert curve.metadata["algorithm"] == spec.params["algorithm"]
        assert curve.metadata["random_return"] == task.random_return
        assert curve.metadata["solved_return"] == task.solved_return
        assert np.isfinite(curve.metadata["final_return"])
        assert curve.metadata["episodes"] > 0


@pytest.mark.parametrize("kind", ["deep", "tabular"])
def test_same_spec_gives_the_same_curve(
    smoke_curves: dict[str, tuple[RunSpec, Curve]], kind: str
) -> None:
    spec, curve = next((s, c) for s, c in smoke_curves.values() if _kind(s) == kind)
    again = rl.run(spec)
    np.testing.assert_array_equal(again.losses, curve.losses)
    np.testing.assert_array_equal(again.work, curve.work)
    assert again.metadata["final_return"] == curve.metadata["final_return"]


def test_other_seed_gives_another_curve(smoke_curves: dict[str, tuple[RunSpec, Curve]]) -> None:
    spec, curve = next((s, c) for s, c in smoke_curves.values() if _kind(s) == "tabular")
    other = rl.run(RunSpec(spec.family, spec.params, spec.seed + 1))
    assert not np.array_equal(other.losses, curve.losses)


@pytest.mark.parametrize("name", list(rl.TASKS))
def test_loss_is_one_at_random_return_and_floored_at_solved(name: str) -> None:
    task = rl.TASKS[name]
    assert rl.return_gap(task.random_return, task) == pytest.approx(1.0)
    assert rl.return_gap(task.solved_return, task) == 0.0
    halfway = (task.random_return + task.solved_return) / 2
    assert rl.return_gap(halfway, task) == pytest.approx(0.5)
    worst = task.random_return - 10 * abs(task.solved_return - task.random_return)
    assert rl.return_gap(worst, task) == rl.MAX_LOSS
    better = task.solved_return + abs(task.solved_return - task.random_return)
    losses = [rl.return_gap(r, task) for r in (task.solved_return, better)] * (MIN_POINTS // 2)
    curve = Curve(np.array(losses), np.arange(1.0, MIN_POINTS + 1), "env steps", 0.0)
    assert np.all(curve.losses == LOSS_FLOOR)


def test_return_log_averages_the_last_window_of_episodes() -> None:
    task = rl.TASKS["CartPole-v1"]
    log = rl.ReturnLog(task, budget=1000, window=2)
    log.advance(25)  # no finished episode yet: a random policy's loss
    assert log.losses == [pytest.approx(1.0, abs=1e-12)] * 2
    for episode_return in (100.0, 200.0, task.solved_return):
        log.add_episode(episode_return, 30)
    log.advance(30)
    expected = rl.return_gap((200.0 + task.solved_return) / 2, task)
    assert log.losses[-1] == pytest.approx(expected)
    assert log.first_episode_step == 30
    log.advance(10**6)
    assert log.complete and len(log.losses) == rl.POINTS


def test_epsilon_schedule_decays_linearly_then_stays() -> None:
    params = {"epsilon_start": 1.0, "epsilon_end": 0.1, "epsilon_decay_fraction": 0.5}
    params["budget"] = 1000
    assert rl.epsilon_at(params, 0) == 1.0
    assert rl.epsilon_at(params, 250) == pytest.approx(0.55)
    assert rl.epsilon_at(params, 500) == rl.epsilon_at(params, 900) == 0.1
    constant = {**params, "epsilon_start": 0.1, "epsilon_decay_fraction": 0.0}
    assert rl.epsilon_at(constant, 0) == 0.1


@pytest.mark.parametrize("name", ["CartPole-v1", "FrozenLake-v1-slippery"])
def test_random_returns_are_reproduced_by_their_measurement(name: str) -> None:
    """The cheap ones; the rest are measured the same way (see the module docstring)."""
    assert rl.measure_random_return(name) == pytest.approx(rl.TASKS[name].random_return, abs=5e-4)


def test_cli_collects_the_smoke_grid_then_skips_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    smoke_curves: dict[str, tuple[RunSpec, Curve]],
) -> None:
    argv = ["run", "--families", "rl", "--smoke", "--workers", "0", "--store", str(tmp_path)]
    assert main(argv) == 0
    stored = CurveStore(tmp_path).load_family("rl")
    assert sorted(record["run_id"] for record, _, _ in stored) == sorted(smoke_curves)
    for record, losses, _ in stored:
        np.testing.assert_array_equal(losses, smoke_curves[record["run_id"]][1].losses)
    capsys.readouterr()
    assert main(argv) == 0
    count = len(smoke_curves)
    assert f"collected 0 runs, skipped {count} already stored" in capsys.readouterr().out
