"""The tabular curve collector: its grid, its runs, determinism and the command line."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mara_env.benchmarks.collect import tabular, tabular_datasets
from mara_env.benchmarks.collect.__main__ import main
from mara_env.benchmarks.collect.spec import LOSS_FLOOR, MIN_POINTS, Curve, RunSpec
from mara_env.benchmarks.collect.store import CurveStore

SMOKE = tabular.grid(smoke=True)

#: One cheap run of every learner on a data set of the task its smoke run does not cover.
CHEAP_PARAMS: list[dict[str, Any]] = [
    {"learner": "sgd", "dataset": "diabetes", "alpha": 1e-3, "schedule": "constant", "eta0": 0.01},
    {
        "learner": "mlp",
        "dataset": "iris",
        "hidden": [16],
        "solver": "adam",
        "lr": 0.01,
        "batch_size": 32,
        "alpha": 1e-4,
    },
    {
        "learner": "mlp",
        "dataset": "diabetes",
        "hidden": [16],
        "solver": "sgd",
        "lr": 0.01,
        "batch_size": 128,
        "alpha": 1e-2,
    },
    {
        "learner": "boosting",
        "dataset": "iris",
        "lr": 0.5,
        "max_depth": 2,
        "subsample": 1.0,
        "max_features": "sqrt",
    },
    {
        "learner": "torch",
        "dataset": "diabetes",
        "hidden": [],
        "optimiser": "momentum",
        "lr": 0.01,
        "batch_size": 512,
        "weight_decay": 1e-3,
    },
]


@pytest.fixture(scope="module")
def smoke_curves() -> list[Curve]:
    """The smoke grid's curves, run once for the module."""
    return [tabular.run(spec) for spec in SMOKE]


def assert_valid_curve(curve: Curve) -> None:
    assert curve.losses.size >= MIN_POINTS
    assert np.all(np.isfinite(curve.losses))
    assert np.all(curve.losses >= LOSS_FLOOR)
    assert np.all(np.diff(curve.work) > 0)
    assert curve.work_unit in ("epochs", "boosting stages")
    assert curve.wall_seconds > 0


# ---------------------------------------------------------------------------- grid
def test_full_grid_has_enough_distinct_valid_runs() -> None:
    specs = tabular.grid()
    assert len(specs) >= 300
    assert len({spec.run_id for spec in specs}) == len(specs)
    for spec in specs:
        assert spec.family == tabular.FAMILY == "tabular"
        assert spec.seed in tabular.SEEDS
        tabular.check_params(spec.params)
        axes = tabular.axes_of(spec.params["learner"], spec.params["dataset"])
        for name, values in axes.items():
            assert spec.params[name] in values, (name, spec.params)


def test_grid_is_deterministic_and_covers_every_cell_and_axis_value() -> None:
    specs = tabular.grid()
    assert [s.run_id for s in specs] == [s.run_id for s in tabular.grid()]
    cells = Counter((s.params["learner"], s.params["dataset"]) for s in specs)
    assert set(cells) == {(lr, ds) for lr in tabular.LEARNERS for ds in tabular.DATASETS}
    for (learner, dataset), count in cells.items():
        assert count == tabular.LEARNERS[learner].runs_per_dataset
        cell = [
            s for s in specs if (s.params["learner"], s.params["dataset"]) == (learner, dataset)
        ]
        for name, values in tabular.axes_of(learner, dataset).items():
            used = Counter(repr(s.params[name]) for s in cell)
            # balanced design: counts of an axis' values differ by at most one
            counts = [used[repr(v)] for v in values]
            assert max(counts) - min(counts) <= 1, (learner, dataset, name, counts)


def test_smoke_grid_is_small_and_distinct() -> None:
    assert 2 <= len(SMOKE) <= 3
    assert len({spec.run_id for spec in SMOKE}) == len(SMOKE)
    for spec in SMOKE:
        tabular.check_params(spec.params)


@pytest.mark.parametrize(
    "params",
    [
        {"learner": "forest", "dataset": "iris"},
        {"learner": "sgd", "dataset": "mnist"},
        {"learner": "sgd", "dataset": "iris", "alpha": 1e-4},
    ],
    ids=["learner", "dataset", "missing-axis"],
)
def test_bad_params_are_rejected(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        tabular.check_params(params)
    with pytest.raises(ValueError):
        tabular.run(RunSpec("tabular", params))


def test_datasets_match_the_documented_sizes_and_are_standardised() -> None:
    doc = tabular_datasets.__doc__ or ""
    rows = re.findall(r"^\| (\w+) \| ([\d,]+) \| (\d+) \| ([^|]+) \|", doc, flags=re.MULTILINE)
    documented = {name: (int(n.replace(",", "")), int(d), task) for name, n, d, task in rows}
    assert set(documented) == set(tabular.DATASETS)
    for name, (n_samples, n_features, task) in documented.items():
        data = tabular.load_dataset(name)
        assert data.x.shape == (n_samples, n_features)
        assert data.task == tabular.DATASETS[name].task
        if data.task == "classification":
            assert task.strip() == f"{len(data.classes)} classes"
            assert data.y.dtype == np.int64
        else:
            assert task.strip() == "regression"
            np.testing.assert_allclose([data.y.mean(), data.y.std()], [0.0, 1.0], atol=1e-9)
        np.testing.assert_allclose(data.x.mean(axis=0), 0.0, atol=1e-9)
        assert np.all(np.isclose(data.x.std(axis=0), 1.0) | (data.x.std(axis=0) == 0))


# ---------------------------------------------------------------------------- runs
def test_smoke_runs_give_valid_curves(smoke_curves: list[Curve]) -> None:
    for spec, curve in zip(SMOKE, smoke_curves, strict=True):
        assert_valid_curve(curve)
        metadata = curve.metadata
        assert metadata["dataset"] == spec.params["dataset"]
        assert metadata["learner"] == spec.params["learner"]
        assert metadata["n_samples"] > 0 and metadata["n_features"] > 0
        assert metadata["diverged_at"] is None
        assert metadata["final_loss"] == pytest.approx(curve.losses[-1])
        metric = metadata.get("train_accuracy", metadata.get("train_r2"))
        assert metric is not None and np.isfinite(metric)
        # a real learner learns: the last loss is below the first
        assert curve.losses[-1] < curve.losses[0]


def test_same_spec_gives_the_same_curve(smoke_curves: list[Curve]) -> None:
    for spec, first in zip(SMOKE, smoke_curves, strict=True):
        again = tabular.run(spec)
        np.testing.assert_array_equal(again.losses, first.losses)
        np.testing.assert_array_equal(again.work, first.work)


def test_seed_changes_the_curve(smoke_curves: list[Curve]) -> None:
    spec = SMOKE[-1]  # torch: the seed sets initial weights and batch order
    other = tabular.run(RunSpec(spec.family, spec.params, seed=spec.seed + 1))
    assert not np.array_equal(other.losses, smoke_curves[-1].losses)


@pytest.mark.parametrize("params", CHEAP_PARAMS, ids=lambda p: f"{p['learner']}-{p['dataset']}")
def test_every_learner_runs_on_both_tasks(params: dict[str, Any]) -> None:
    curve = tabular.run(RunSpec("tabular", params, seed=0))
    assert_valid_curve(curve)
    assert curve.metadata["diverged_at"] is None
    assert curve.losses[-1] < curve.losses[0]


@pytest.mark.parametrize(
    "params",
    [
        {"learner": "sgd", "dataset": "linear", "alpha": 1e-4, "schedule": "constant", "eta0": 1.0},
        {
            "learner": "torch",
            "dataset": "diabetes",
            "hidden": [8],
            "optimiser": "sgd",
            "lr": 10.0,
            "batch_size": 512,
            "weight_decay": 0.0,
        },
    ],
    ids=["sgd", "torch"],
)
def test_diverging_runs_are_capped_not_crashed(params: dict[str, Any]) -> None:
    curve = tabular.run(RunSpec("tabular", params))
    diverged_at = curve.metadata["diverged_at"]
    assert diverged_at is not None
    assert np.all(curve.losses[diverged_at:] == tabular.LOSS_CAP)
    assert np.all(curve.losses[:diverged_at] < tabular.LOSS_CAP)
    assert curve.metadata["train_r2"] is None
    assert_valid_curve(curve)


# ---------------------------------------------------------------------------- command line
def test_command_line_collects_then_skips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--families", "tabular", "--smoke", "--workers", "0", "--no-progress"]
    argv += ["--store", str(tmp_path)]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert f"collected {len(SMOKE)} runs, skipped 0" in first
    stored = CurveStore(tmp_path).load_family("tabular")
    assert sorted(record["run_id"] for record, _, _ in stored) == sorted(s.run_id for s in SMOKE)
    for record, losses, work in stored:
        assert losses.size >= MIN_POINTS and work.shape == losses.shape
        assert record["metadata"]["learner"] == record["params"]["learner"]

    assert main(argv) == 0
    second = capsys.readouterr().out
    assert f"collected 0 runs, skipped {len(SMOKE)} already stored" in second
