"""The prediction benchmark: its cases against the simulator, and the script's outputs."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from mara_env import ClusterConfig, default_trace_source, get_config
from mara_env.benchmarks.prediction import benchmark as bench
from mara_env.benchmarks.prediction import cells_figure as prediction_cells_figure
from mara_env.benchmarks.prediction import figure as prediction_figure
from mara_env.benchmarks.prediction import protocols as prediction_protocols
from mara_env.benchmarks.prediction import reliability_figure as prediction_reliability_figure
from mara_env.benchmarks.prediction import report as prediction_report
from mara_env.benchmarks.prediction import results
from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors import WLS, RemainingWork, TaskHistory
from mara_env.predictors.base import UNKNOWN_FAMILY
from mara_env.predictors.cases import (
    CaseError,
    PredictionTask,
    TrajectoryPredictor,
    draw_tasks,
    make_cases,
    sample_trajectories,
)
from mara_env.sim.simulator import ACTIVE, EXPIRED, ClusterSimulator
from mara_env.sim.workload import TaskTable

FRACTIONS = (0.1, 0.2, 0.4, 0.8)


@pytest.fixture(scope="module")
def rl_tasks() -> tuple[PredictionTask, ...]:
    return draw_tasks("rl", seed=3, draws_per_curve=2)


@pytest.fixture(scope="module")
def mixed_tasks() -> tuple[PredictionTask, ...]:
    return draw_tasks("in_distribution", seed=5, draws_per_curve=1)


# --- cases ----------------------------------------------------------------------------------------


def run_on_one_node(task: PredictionTask, epochs: int) -> ClusterSimulator:
    """A single-node episode of ``task`` alone, trained for ``epochs`` epochs (no switch cost)."""
    config = ClusterConfig(
        n_nodes=1,
        n_slots=1,
        arrival_horizon=1,
        max_epochs=5000,
        family_weights=((task.family, 1.0),),
        split="test",
        switch_cost=0.0,
    )
    simulator = ClusterSimulator(config, default_trace_source())
    row = int(simulator.workload.rows_by_family[0][task.curve_id])
    one = lambda value, dtype=np.float64: np.array([value], dtype=dtype)  # noqa: E731
    tasks = TaskTable(
        family=one(FAMILY_NAMES.index(task.family), np.int64),
        curve_row=one(row, np.int64),
        arrival=one(0, np.int64),
        deadline=one(task.deadline, np.int64),
        target=one(task.target),
        speed=one(task.speed),
        alpha=one(config.alpha_for(task.family)),
        initial_loss=one(task.curve[0]),
        demand=one(task.steps_to_target / task.speed),
    )
    simulator.reset(np.random.default_rng(0), tasks=tasks)
    for _ in range(epochs):
        if simulator.state.status[0] != ACTIVE:
            break
        simulator.advance(np.zeros(1, dtype=np.int64))
    return simulator


def test_cases_equal_what_a_single_node_simulator_episode_reports(
    mixed_tasks: Sequence[PredictionTask],
) -> None:
    """History, true remaining work and time left match the simulator's own records."""
    chosen = [t for t in mixed_tasks if not t.infeasible][::40] + [
        t for t in mixed_tasks if t.infeasible
    ][::15]
    assert len(chosen) >= 8 and any(task.infeasible for task in chosen)
    for task in chosen:
        for fraction in FRACTIONS:
            if task.true_remaining(fraction) <= 0:
                continue  # reached its target by then: not a case
            history = task.history(fraction)
            reports = len(history.work) - 1
            simulator = run_on_one_node(task, reports)
            state = simulator.state
            seen = min(reports, task.deadline) + 1
            np.testing.assert_array_equal(state.history_progress[0], history.work[:seen])
            reported = np.array(state.history_loss[0])
            np.testing.assert_array_equal(reported / task.curve[0], history.loss[:seen])
            assert history.target * task.curve[0] == pytest.approx(task.target, rel=1e-12)
            if history.time_left > 0:
                assert state.status[0] == ACTIVE
                assert task.deadline - state.epoch == history.time_left
                privileged = simulator.privileged_remaining_work()[0] * task.speed
                assert privileged == pytest.approx(task.true_remaining(fraction), rel=1e-9)
            else:
                assert state.status[0] == EXPIRED


def test_histories_respect_the_fraction(mixed_tasks: Sequence[PredictionTask]) -> None:
    for fraction in FRACTIONS:
        cases = make_cases(mixed_tasks, fraction)
        for task, history, truth in zip(cases.tasks, cases.histories, cases.truth, strict=True):
            budget = fraction * task.horizon
            last = history.work[-1]
            assert len(history.work) >= 2 and history.work[0] == 0.0 and history.loss[0] == 1.0
            assert last <= budget or len(history.work) == 2  # one report at least
            assert last + task.speed > budget  # and no report fewer than fit
            np.testing.assert_allclose(np.diff(history.work), task.speed, rtol=1e-9)
            if task.infeasible:
                assert math.isinf(truth) and history.target < task.curve.min() / task.curve[0]
            else:
                assert 0 < truth == task.steps_to_target - last
                assert np.all(history.loss > history.target)  # not completed yet
            assert history.time_left == max(task.deadline - (len(history.work) - 1), 0)
        np.testing.assert_allclose(cases.budget, [h.time_left * h.speed for h in cases.histories])
        assert np.all(cases.cap == [4.0 * task.length for task in cases.tasks])


@pytest.mark.parametrize("world", [1, 2])
def test_tasks_follow_the_simulator_draw_rules(world: int) -> None:
    config = ClusterConfig(split="test", world_version=world)
    mixed_tasks = draw_tasks("in_distribution", seed=5, draws_per_curve=1, config=config)
    for task in mixed_tasks:
        low, high = config.epochs_per_curve
        assert task.length / high <= task.speed <= task.length / low
        first_hit = np.flatnonzero(task.curve[1:] <= task.target)
        assert task.steps_to_target == (first_hit[0] + 1 if len(first_hit) else math.inf)
        assert task.speed < task.horizon  # a task done at its first report is dropped
        if task.infeasible:
            assert task.target < task.curve.min()
        elif world == 1:
            assert task.target <= 0.99 * task.curve[0]
            demand = task.steps_to_target / task.speed
            assert max(1, math.ceil(1.5 * demand)) <= task.deadline <= math.ceil(3.0 * demand)
        else:  # a point of its own curve; the deadline comes from an estimate, not the demand
            assert task.target in task.curve[1:] and task.target < task.curve[0]
    families = Counter(task.family for task in mixed_tasks)
    assert set(families) == {"tabular", "vision", "rl"}
    assert max(families.values()) - min(families.values()) < 0.1 * len(mixed_tasks)
    share = np.mean([task.infeasible for task in mixed_tasks])
    assert 0.05 < share < 0.35


def test_each_curve_is_dealt_before_any_is_reused() -> None:
    """In Cluster-v1 (Cluster-v2 picks the curves by its own rule)."""
    config = get_config("evaluation", workload="rl", world_version=1)
    rl_tasks = draw_tasks("rl", seed=3, draws_per_curve=2, config=config)
    n_curves = default_trace_source().pool("rl", "test").n_curves
    uses = Counter(task.curve_id for task in rl_tasks)
    assert max(uses.values()) <= 2
    assert len(rl_tasks) > 1.5 * n_curves  # few drops


def test_cases_are_deterministic_and_seeded() -> None:
    def signature(tasks: Sequence[PredictionTask]) -> list[tuple[int, float, float, int]]:
        return [(t.curve_id, t.speed, t.target, t.deadline) for t in tasks]

    first = draw_tasks("vision", seed=1, draws_per_curve=1)
    assert signature(first) == signature(draw_tasks("vision", seed=1, draws_per_curve=1))
    assert signature(first) != signature(draw_tasks("vision", seed=2, draws_per_curve=1))
    a, b = make_cases(first, 0.4), make_cases(first, 0.4)
    np.testing.assert_array_equal(a.truth, b.truth)
    assert all(
        np.array_equal(x.loss, y.loss) for x, y in zip(a.histories, b.histories, strict=True)
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: draw_tasks("rl", seed=-1), "seed"),
        (lambda: draw_tasks("rl", draws_per_curve=0), "draws_per_curve"),
        (lambda: draw_tasks("nlp"), "Unknown workload"),
        (lambda: make_cases(draw_tasks("rl", draws_per_curve=1), 1.0), r"in \(0, 1\)"),
        (lambda: make_cases(draw_tasks("rl", draws_per_curve=1), 0.0), r"in \(0, 1\)"),
        (lambda: make_cases([], 0.5), "no task is left"),
    ],
)
def test_bad_case_requests_raise(call: object, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        call()  # type: ignore[operator]


# --- trajectories ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Persistence:
    """Test predictor: the loss stays where it is, with noise (trajectories and remaining work)."""

    name: str = "persistence"
    bad_shape: bool = False

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        reached = np.array([h.loss[-1] <= h.target for h in histories])
        samples = np.where(reached[:, None], 0.0, np.inf)
        return RemainingWork(np.repeat(samples, n_samples, axis=1))

    def sample_trajectories(
        self,
        histories: Sequence[TaskHistory],
        steps: np.ndarray,
        n_samples: int,
        rng: np.random.Generator,
    ) -> np.ndarray:
        last = np.log([h.loss[-1] for h in histories])
        noise = rng.normal(0.0, 0.01, size=(len(histories), n_samples, len(steps)))
        paths = last[:, None, None] + noise
        return paths[:, :, :-1] if self.bad_shape else paths


def test_trajectory_protocol_is_optional_and_checked(rl_tasks: Sequence[PredictionTask]) -> None:
    histories = [task.history(0.4) for task in rl_tasks[:3]]
    steps = np.array([1.0, 5.0, 10.0])
    rng = np.random.default_rng(0)
    assert isinstance(Persistence(), TrajectoryPredictor)
    paths = sample_trajectories(Persistence(), histories, steps, 7, rng)
    assert paths is not None and paths.shape == (3, 7, 3)
    assert sample_trajectories(object(), histories, steps, 7, rng) is None
    with pytest.raises(CaseError, match="shape"):
        sample_trajectories(Persistence(bad_shape=True), histories, steps, 7, rng)
    with pytest.raises(CaseError, match="increasing"):
        sample_trajectories(Persistence(), histories, np.array([0.0, 1.0]), 7, rng)


def test_figure_draws_trajectories_and_distributions(
    tmp_path: Path, rl_tasks: Sequence[PredictionTask]
) -> None:
    path = tmp_path / "trajectories.png"
    chosen = {"rl": prediction_figure.figure_tasks(rl_tasks, 0.4, seed=0)}
    assert [task.infeasible for task in chosen["rl"]] == [False, True]
    assert all(task.true_remaining(0.4) > 0 for task in chosen["rl"])
    prediction_figure.plot_figure(
        path, {"wls": WLS(), "persistence": Persistence()}, chosen, 0.4, n_samples=16, seed=0
    )
    assert path.stat().st_size > 10_000


# --- protocols ------------------------------------------------------------------------------------


@dataclass
class Recorder:
    """Test predictor: remembers the families of the histories it is asked about."""

    name: str = "recorder"
    seen: list[str] | None = None

    def predict(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> RemainingWork:
        if self.seen is None:
            self.seen = []
        self.seen += [history.family for history in histories]
        return RemainingWork(np.full((len(histories), n_samples), 10.0))


def recording_bank(
    tmp_path: Path,
) -> tuple[prediction_protocols.PredictorBank, dict[str, Recorder]]:
    """A bank whose "recorder" is a trained predictor with one held-out version per family."""
    versions = {"shipped": Recorder()}
    for family in prediction_protocols.FAMILIES:
        path = prediction_protocols.held_out_checkpoint(tmp_path, "recorder", family)
        path.write_text("")
        versions[path.name] = Recorder()
    bank = prediction_protocols.PredictorBank(
        {"recorder": lambda: versions["shipped"]},
        tmp_path,
        loaders={"recorder": lambda path: versions[path.name]},
    )
    return bank, versions


def test_held_out_cells_never_tell_a_predictor_the_held_out_family(
    tmp_path: Path, mixed_tasks: Sequence[PredictionTask]
) -> None:
    bank, versions = recording_bank(tmp_path)
    cells = prediction_protocols.build_cells(mixed_tasks, ["test", "held_out"], [0.2])
    for cell, cell_cases in cells.items():
        key = results.RowKey("recorder", cell.protocol, cell.set, 0.2, 0, 4, 1, "code", "none")
        results.evaluate_row(bank, key, cell_cases, latency_repeats=1)
    for family in prediction_protocols.FAMILIES:
        seen = versions[f"recorder_without_{family}.pt"].seen or []
        # Its own family's cases (family cell, pooled cell, latency calls), all unnamed.
        held_out = cells[prediction_protocols.Cell("held_out", family, 0.2)]
        assert len(seen) >= 2 * len(held_out) and set(seen) == {UNKNOWN_FAMILY}
        assert family not in seen
    assert UNKNOWN_FAMILY not in FAMILY_NAMES
    shipped = versions["shipped"].seen or []
    assert set(shipped) == set(prediction_protocols.FAMILIES)  # the test protocol names them


def test_the_pooled_cell_is_the_union_of_the_family_cells(
    mixed_tasks: Sequence[PredictionTask],
) -> None:
    cells = prediction_protocols.build_cells(mixed_tasks, ["test", "held_out", "shift"], [0.4])
    for protocol in ("test", "held_out"):
        pooled = cells[prediction_protocols.Cell(protocol, "pooled", 0.4)].cases
        parts = [
            cells[prediction_protocols.Cell(protocol, f, 0.4)].cases
            for f in prediction_protocols.FAMILIES
        ]
        assert pooled.tasks == tuple(task for part in parts for task in part.tasks)
        assert pooled.feasible_count == sum(part.feasible_count for part in parts)
    shifted = cells[prediction_protocols.Cell("shift", "resolution_x2", 0.4)].cases
    assert {task.source_length for task in shifted.tasks} == {100, 120}


def small_row(feasible: float) -> dict[str, float]:
    row = dict.fromkeys(results.METRIC_COLUMNS, 0.5)
    row.update(cases=feasible + 10, feasible_cases=feasible, infeasible_cases=10.0)
    return row


def test_cells_under_thirty_feasible_cases_are_reported_as_too_small() -> None:
    assert prediction_report.MIN_FEASIBLE_CASES == 30
    small, large = small_row(29.0), small_row(30.0)
    table = prediction_report.TABLE_OF["median_log_error"]
    assert prediction_report.format_metric(small, table) == "too small (n=29)"
    assert prediction_report.format_metric(large, table) == "0.50 [0.50, 0.50]"
    latency = prediction_report.TABLE_OF["latency_ms"]
    assert prediction_report.format_metric(small, latency) == "0.50"
    assert prediction_report.format_share(0.25, 12) == "too small (n=12)"
    cells = [prediction_protocols.Cell("test", name, 0.2) for name in ("rl", "pooled")]
    rows = {(name, cells[0]): small for name in ("flow_matching", "wls", "dkf")} | {
        (name, cells[1]): large for name in ("flow_matching", "wls", "dkf")
    }
    markdown = prediction_report.format_markdown(rows, ["flow_matching", "wls", "dkf"], cells,
                                                 settings="Settings.")  # fmt: skip
    assert "| test rl 20% | 29 | too small (n=29) |" in markdown
    assert "Of 1 cells with at least 30 feasible cases" in markdown


def test_the_acceptance_summary_reads_error_and_coverage_by_name() -> None:
    row = small_row(40.0) | {"median_log_ratio": -0.25, "coverage_80": 0.75}
    row |= {"coverage_80_low": 0.7, "coverage_80_high": 0.8}
    cell = prediction_protocols.Cell("test", "rl", 0.2)
    rows = {(name, cell): row for name in ("flow_matching", "wls", "dkf")}
    markdown = prediction_report.format_markdown(rows, ["flow_matching", "wls", "dkf"], [cell],
                                                 settings="Settings.")  # fmt: skip
    summary = next(line for line in markdown.splitlines() if line.startswith("| test rl 20% |"))
    assert "| 0.75 [0.70, 0.80] | yes |" in summary and "-0.25" not in summary
    assert "| rl | 20% | -0.25 | -0.25 | -0.25 |" in markdown  # the bias table


# --- the script -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def held_out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny flow-matching checkpoints trained without each family (``--quick --hold-out``)."""
    folder = tmp_path_factory.mktemp("held_out")
    for family in prediction_protocols.FAMILIES:
        path = prediction_protocols.held_out_checkpoint(folder, "flow_matching", family)
        subprocess.run(
            [sys.executable, "-m", "mara_env.benchmarks.prediction.train", "--model", "flow_matching",
             "--quick", "--no-progress", "--hold-out", family, "--output", str(path)],
            check=True, capture_output=True,
        )  # fmt: skip
    return folder


def quick_args(out: Path, *extra: str) -> list[str]:
    return ["--predictors", "wls", "--protocols", "test", "--quick", "--no-progress", "--output",
            str(out), *extra]  # fmt: skip


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_quick_run_writes_every_output_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(quick_args(tmp_path, "--fractions", "0.2", "0.4")) == 0
    out = capsys.readouterr().out
    for name in ("results.csv", "results.md", "trajectories.png", "cells.png", "reliability.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    markdown = (tmp_path / "results.md").read_text()
    assert markdown in out
    for heading in ("Acceptance summary", "Protocol `test`"):
        assert f"## {heading}" in markdown
    for heading in (
        "Cases",
        "Remaining-work error",
        "Remaining-work bias",
        "80% interval coverage",
        "CRPS",
        "Deadline calibration error",
        "Latency (ms)",
    ):
        assert f"### {heading}" in markdown
    assert "| rl | 20% |" in markdown and "| pooled | 40% |" in markdown
    rows = read_rows(tmp_path / "results.csv")
    assert [(r["protocol"], r["set"], float(r["fraction"])) for r in rows] == [
        ("test", name, fraction)
        for name in ("rl", "tabular", "vision", "pooled")
        for fraction in (0.2, 0.4)
    ]
    for row in rows:
        assert float(row["latency_ms"]) > 0 and float(row["feasible_cases"]) > 20
        low, estimate, high = (float(row[f"median_log_error{s}"]) for s in ("_low", "", "_high"))
        assert low <= estimate <= high and row["weights"] == "none"
        bins = [float(row[f"success_bin{k}_cases"]) for k in range(5)]
        assert sum(bins) == float(row["cases"])

    # A re-run reuses every row; a new fraction adds its rows and leaves the others alone.
    assert bench.main(quick_args(tmp_path, "--fractions", "0.2", "0.4", "--no-figure")) == 0
    assert "0 row(s) and 0 pair(s) run" in capsys.readouterr().out
    assert read_rows(tmp_path / "results.csv") == rows
    assert bench.main(quick_args(tmp_path, "--fractions", "0.4", "0.8", "--no-figure")) == 0
    assert "4 row(s) and 0 pair(s) run" in capsys.readouterr().out
    again = read_rows(tmp_path / "results.csv")
    assert again[: len(rows)] == rows and len(again) == len(rows) + 4


def test_pairs_compare_the_rows_own_samples_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each pair's difference is the difference of its two rows' median errors (the same
    samples), every reported cell at an acceptance fraction gets one pair per baseline, and a
    re-run reuses them."""
    args = ["--predictors", "wls", "dkf", "flow_matching", "--protocols", "test", "--quick",
            "--no-progress", "--no-figure", "--fractions", "0.2", "0.8", "--output", str(tmp_path)]  # fmt: skip
    assert bench.main(args) == 0
    rows = {
        (r["predictor"], r["set"], r["fraction"]): r for r in read_rows(tmp_path / "results.csv")
    }
    pairs = read_rows(tmp_path / "pairs.csv")
    reported = sorted(
        name for (predictor, name, fraction), row in rows.items()
        if predictor == "flow_matching" and fraction == "0.2" and float(row["feasible_cases"]) >= 30
    )  # fmt: skip
    assert reported and sorted({p["set"] for p in pairs}) == reported
    assert {p["fraction"] for p in pairs} == {"0.2"}  # 80% observed is not an acceptance fraction
    for pair in pairs:
        first = rows[pair["predictor"], pair["set"], pair["fraction"]]
        second = rows[pair["baseline"], pair["set"], pair["fraction"]]
        expected = float(first["median_log_error"]) - float(second["median_log_error"])
        assert float(pair["difference"]) == pytest.approx(expected, abs=1e-12)
        assert float(pair["difference_low"]) <= float(pair["difference_high"])
        assert pair["weights"] == f"{first['weights']}/{second['weights']}"
    markdown = (tmp_path / "results.md").read_text()
    assert "minus dkf (paired)" in markdown and "against dkf it is below 0 in" in markdown
    capsys.readouterr()
    assert bench.main(args) == 0
    assert "0 row(s) and 0 pair(s) run" in capsys.readouterr().out
    assert read_rows(tmp_path / "pairs.csv") == pairs


def test_the_shift_protocol_reports_never_before_and_after_the_recorded_length(
    tmp_path: Path,
) -> None:
    args = quick_args(tmp_path, "--fractions", "0.2", "--no-figure")
    assert bench.main([*args, "--protocols", "shift"]) == 0
    rows = read_rows(tmp_path / "results.csv")
    assert [r["set"] for r in rows] == ["resolution_x2", "duration_x2"]
    for row in rows:
        before, after = float(row["never_before_cases"]), float(row["never_after_cases"])
        assert before > 30 and after > 30 and before + after == float(row["feasible_cases"])
    markdown = (tmp_path / "results.md").read_text()
    assert '### "Never" on reachable targets' in markdown
    assert "| resolution_x2 | 20% | wls |" in markdown


def test_the_test_protocol_reports_never_before_and_after_the_middle_as_a_control(
    tmp_path: Path,
) -> None:
    args = quick_args(tmp_path, "--fractions", "0.2", "--no-figure")
    assert bench.main([*args, "--protocols", "test"]) == 0
    rows = read_rows(tmp_path / "results.csv")
    for row in rows:
        before, after = float(row["never_before_cases"]), float(row["never_after_cases"])
        assert before > 0 and after > 0 and before + after == float(row["feasible_cases"])
    markdown = (tmp_path / "results.md").read_text()
    assert "the control for that split" in markdown


def test_the_held_out_protocol_scores_held_out_checkpoints(
    tmp_path: Path, held_out_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--predictors", "wls", "flow_matching", "spline_flow", "--protocols", "held_out",
            "--fractions", "0.2", "--quick", "--no-progress", "--no-figure", "--output",
            str(tmp_path), "--held-out-dir", str(held_out_dir)]  # fmt: skip
    assert bench.main(args) == 0
    rows = read_rows(tmp_path / "results.csv")
    assert {(r["predictor"], r["set"]) for r in rows} == {
        (name, cell) for name in ("wls", "flow_matching")
        for cell in ("rl", "tabular", "vision", "pooled")
    }  # fmt: skip
    weights = {r["weights"] for r in rows if r["predictor"] == "flow_matching"}
    # each family's cell names its own checkpoint; the pooled cell names all three
    assert len(weights) == 4 and "none" not in weights
    markdown = capsys.readouterr().out
    assert "`spline_flow`: not scored" in markdown
    assert "| held_out pooled 20% |" in markdown


def test_a_missing_held_out_checkpoint_names_the_command_or_is_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--predictors", "wls", "flow_matching", "--protocols", "held_out", "--fractions",
            "0.2", "--quick", "--no-progress", "--no-figure", "--output", str(tmp_path / "out"),
            "--held-out-dir", str(tmp_path)]  # fmt: skip
    with pytest.raises(SystemExit):
        bench.main(args)
    error = capsys.readouterr().err
    missing = tmp_path / "flow_matching_without_tabular.pt"
    assert f"missing {missing}" in error
    assert (
        f"python -m mara_env.benchmarks.prediction.train --model flow_matching --hold-out tabular --output {missing}"
        in error
    )
    assert bench.main([*args, "--skip-missing-held-out"]) == 0
    assert "`flow_matching`: not scored (--skip-missing-held-out)" in capsys.readouterr().out
    assert {r["predictor"] for r in read_rows(tmp_path / "out" / "results.csv")} == {"wls"}


def test_a_checkpoint_of_ones_own_is_scored_as_flow_matching(
    tmp_path: Path, held_out_dir: Path
) -> None:
    mine = prediction_protocols.held_out_checkpoint(held_out_dir, "flow_matching", "rl")
    args = ["--predictors", "flow_matching", "--protocols", "test", "--fractions", "0.4",
            "--quick", "--no-progress", "--no-figure"]  # fmt: skip
    assert (
        bench.main([*args, "--output", str(tmp_path / "mine"), "--flow-matching", str(mine)]) == 0
    )
    assert bench.main([*args, "--output", str(tmp_path / "shipped")]) == 0
    ours = read_rows(tmp_path / "mine" / "results.csv")
    shipped = read_rows(tmp_path / "shipped" / "results.csv")
    assert len({r["weights"] for r in ours}) == len({r["weights"] for r in shipped}) == 1
    assert ours[0]["weights"] != shipped[0]["weights"]
    assert [r["median_log_error"] for r in ours] != [r["median_log_error"] for r in shipped]
    report = (tmp_path / "mine" / "results.md").read_text()
    assert f"`flow_matching` is the checkpoint {mine}, not the shipped one." in report


def test_rows_do_not_depend_on_which_other_rows_run(tmp_path: Path) -> None:
    bench.main(quick_args(tmp_path / "a", "--fractions", "0.2", "--no-figure"))
    bench.main(quick_args(tmp_path / "b", "--fractions", "0.1", "0.2", "--no-figure"))
    alone = read_rows(tmp_path / "a" / "results.csv")[0]
    together = next(r for r in read_rows(tmp_path / "b" / "results.csv") if r["fraction"] == "0.2")
    alone.pop("latency_ms"), together.pop("latency_ms")
    assert alone == together


def test_old_foreign_or_corrupt_results_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = ("predictor,workload,fraction,seed,samples,draws_per_curve,cases,infeasible_cases,"
           "median_log_error,infeasibility_auc,coverage_80,crps_log,brier,latency_ms")  # fmt: skip
    (tmp_path / "results.csv").write_text(f"{old}\nwls,rl,0.2,0,64,4,10,1,1,1,1,1,1,1\n")
    with pytest.raises(SystemExit):
        bench.main(quick_args(tmp_path, "--no-figure"))
    assert "written by an earlier version of this benchmark" in capsys.readouterr().err
    (tmp_path / "results.csv").write_text("agent,config,seed\nedf,x,1\n")
    with pytest.raises(SystemExit):
        bench.main(quick_args(tmp_path, "--no-figure"))
    assert "written by another script or an older version" in capsys.readouterr().err
    header = ",".join(results.COLUMNS)
    (tmp_path / "results.csv").write_text(f"{header}\nwls,test,rl,0.2,0,64\n")
    with pytest.raises(SystemExit):
        bench.main(quick_args(tmp_path, "--no-figure"))
    assert "line 2: malformed row" in capsys.readouterr().err
    assert bench.main(quick_args(tmp_path, "--no-figure", "--fractions", "0.2", "--no-resume")) == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fractions", "1.5"], "must lie in (0, 1)"),
        (["--predictors", "nope"], "Unknown predictor 'nope'"),
        (["--samples", "0"], "whole number >= 1"),
        (["--protocols", "future"], "invalid choice: 'future'"),
        (["--flow-matching", "nowhere.pt"], "--flow-matching: no checkpoint file at nowhere.pt"),
    ],
)
def test_bad_arguments_fail_early(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    args = quick_args(tmp_path, "--no-figure")
    if extra[0] == "--predictors":
        args = args[2:]
    with pytest.raises(SystemExit):
        bench.main([*args, *extra])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "results.csv").exists()


def test_a_predictor_with_wrong_output_is_named(rl_tasks: Sequence[PredictionTask]) -> None:
    @dataclass(frozen=True)
    class Short:
        name: str = "short"

        def predict(
            self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
        ) -> RemainingWork:
            return RemainingWork(np.ones((len(histories), n_samples - 1)))

    histories = [task.history(0.2) for task in rl_tasks[:4]]
    with pytest.raises(results.PredictionOutputError, match=r"short\.predict"):
        results.predict_samples(Short(), histories, 8, np.random.default_rng(0))


def test_latency_uses_one_epoch_of_tasks_spread_over_the_cases(
    mixed_tasks: Sequence[PredictionTask],
) -> None:
    cases = make_cases(mixed_tasks, 0.2)
    chosen = results.latency_cases(cases)
    assert len(chosen) == results.LATENCY_TASKS
    assert {task.family for task in chosen.tasks} == {"tabular", "vision", "rl"}
    assert 0 < results.measure_latency_ms(WLS(), chosen, repeats=2) < 10_000


def test_a_held_out_checkpoint_that_knows_its_family_is_refused(tmp_path) -> None:
    from types import SimpleNamespace

    from mara_env.benchmarks.prediction.protocols import PredictorBank, held_out_checkpoint

    path = held_out_checkpoint(tmp_path, "flow_matching", "rl")
    path.write_bytes(b"")
    knows_rl = SimpleNamespace(config=SimpleNamespace(known_families=("rl", "vision")))
    bank = PredictorBank(
        {"flow_matching": lambda: knows_rl},
        tmp_path,
        loaders={"flow_matching": lambda _: knows_rl},
    )
    with pytest.raises(ValueError, match="was trained on rl"):
        bank.version("flow_matching", "rl")


def test_the_cells_figure_needs_a_cell_with_enough_feasible_cases(tmp_path: Path) -> None:
    small = prediction_protocols.Cell("test", "rl", 0.8)
    with pytest.raises(ValueError, match="no cell has 30 feasible cases"):
        prediction_cells_figure.plot_cells(
            tmp_path / "cells.png", {("wls", small): {"feasible_cases": 4.0}}, ["wls"], [small]
        )
    assert not (tmp_path / "cells.png").exists()
    with pytest.raises(ValueError, match="no cell has 30 feasible cases"):
        prediction_reliability_figure.plot_reliability(
            tmp_path / "reliability.png",
            {("wls", small): {"feasible_cases": 4.0}},
            ["wls"],
            [small],
        )
    assert not (tmp_path / "reliability.png").exists()


def test_the_cells_figure_draws_the_pairs_in_a_third_row(tmp_path: Path) -> None:
    cell = prediction_protocols.Cell("test", "rl", 0.2)
    row = {"feasible_cases": 100.0}
    for metric in ("median_log_error", "coverage_80"):
        row |= {metric: 0.5, f"{metric}_low": 0.4, f"{metric}_high": 0.6}
    rows = {(name, cell): row for name in ("wls", "flow_matching")}
    pair = {"difference": -0.2, "difference_low": -0.3, "difference_high": -0.1}
    for pairs, rows_drawn in ((None, 2), ({("flow_matching", "wls", cell): pair}, 3)):
        path = tmp_path / f"cells_{rows_drawn}.png"
        prediction_cells_figure.plot_cells(path, rows, ["wls", "flow_matching"], [cell], pairs)
        assert path.read_bytes()[:4] == b"\x89PNG"
    # the third row makes the figure taller
    from PIL import Image

    heights = [Image.open(tmp_path / f"cells_{n}.png").size[1] for n in (2, 3)]
    assert heights[1] > heights[0]


def test_the_reliability_figure_shows_the_pooled_sets_and_every_set_without_one() -> None:
    cells = [
        prediction_protocols.Cell(protocol, name, fraction)
        for protocol, name in (("test", "rl"), ("test", "pooled"), ("shift", "duration_x2"))
        for fraction in (0.1, 0.8)
    ]
    feasible = {0.1: 100.0, 0.8: 5.0}  # the 80% cells are too small to report
    rows = {("wls", cell): {"feasible_cases": feasible[cell.fraction]} for cell in cells}
    panels = prediction_reliability_figure.reliability_panels(rows, cells)
    assert panels == {
        ("test", "pooled"): [prediction_protocols.Cell("test", "pooled", 0.1)],
        ("shift", "duration_x2"): [prediction_protocols.Cell("shift", "duration_x2", 0.1)],
    }
