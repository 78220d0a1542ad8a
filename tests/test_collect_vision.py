"""The vision curve collector: its grid, its generated data, and tiny real training runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from mara_env.benchmarks.collect import vision
from mara_env.benchmarks.collect.__main__ import main
from mara_env.benchmarks.collect.spec import MIN_POINTS, Curve, RunSpec
from mara_env.benchmarks.collect.store import CurveStore

#: Axis name -> allowed values, for the axes that do not depend on another one.
FREE_AXES = {
    "dataset": vision.DATASETS,
    "arch": vision.ARCHS,
    "depth": vision.DEPTHS,
    "activation": vision.ACTIVATIONS,
    "optimizer": tuple(vision.LEARNING_RATES),
    "batch_size": vision.BATCH_SIZES,
    "weight_decay": vision.WEIGHT_DECAYS,
    "augment": vision.AUGMENTS,
    "schedule": vision.SCHEDULES,
    "epochs": vision.EPOCHS,
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def smoke_spec(index: int) -> RunSpec:
    return vision.grid(smoke=True)[index]


def assert_valid(curve: Curve) -> None:
    assert curve.losses.size >= MIN_POINTS
    assert np.all(np.isfinite(curve.losses))
    assert np.all(curve.losses > 0)
    assert np.all(np.diff(curve.work) > 0)
    assert curve.work_unit == "samples"
    json.dumps(curve.metadata)


# ---------------------------------------------------------------------------- grid
def test_grid_is_large_unique_and_deterministic() -> None:
    specs = vision.grid()
    ids = [spec.run_id for spec in specs]
    assert len(ids) >= 300
    assert len(set(ids)) == len(ids)
    assert ids == [spec.run_id for spec in vision.grid()]
    assert {spec.family for spec in specs} == {vision.FAMILY}


def test_grid_varies_every_axis() -> None:
    specs = vision.grid()
    for axis, values in FREE_AXES.items():
        assert {spec.params[axis] for spec in specs} == set(values), axis
    assert {spec.seed for spec in specs} == {0, 1, 2}


def test_grid_params_are_valid() -> None:
    for spec in vision.grid():
        params = spec.params
        for axis, values in FREE_AXES.items():
            assert params[axis] in values, (axis, params)
        assert params["width"] in vision.WIDTHS[params["arch"]]
        assert params["lr"] in vision.LEARNING_RATES[params["optimizer"]]
        json.dumps(params)
        images, labels = vision.load_dataset(params["dataset"])
        model = vision.build_model(params, images.shape[-1], int(labels.max()) + 1)
        vision.build_optimizer(params, model)


def test_smoke_grid_is_small() -> None:
    specs = vision.grid(smoke=True)
    assert 2 <= len(specs) <= 3
    assert len({spec.run_id for spec in specs}) == len(specs)


# ---------------------------------------------------------------------------- data
@pytest.mark.parametrize("make", [vision.make_shapes, vision.make_textures])
def test_generated_data_is_deterministic_and_balanced(make: object) -> None:
    assert callable(make)
    images, labels = make()
    again_images, again_labels = make()
    np.testing.assert_array_equal(images, again_images)
    np.testing.assert_array_equal(labels, again_labels)
    other, _ = make(seed=1)
    assert not np.array_equal(images, other)
    counts = np.bincount(labels)
    assert np.all(counts == counts[0])
    assert images.shape == (labels.size, 12, 12)
    assert np.all(np.isfinite(images))


@pytest.mark.parametrize("name", vision.DATASETS)
def test_loaded_data_is_standardised_and_read_only(name: str) -> None:
    images, labels = vision.load_dataset(name)
    assert images.dtype == np.float32 and labels.dtype == np.int64
    assert images.ndim == 4 and images.shape[:2] == (labels.size, 1)
    assert abs(float(images.mean())) < 1e-4 and abs(float(images.std()) - 1) < 1e-3
    assert not images.flags.writeable and not labels.flags.writeable


def test_random_shift_translates_by_at_most_one_pixel() -> None:
    image = torch.arange(16.0).reshape(1, 1, 4, 4).repeat(64, 1, 1, 1)
    shifted = vision.random_shift(image, torch.Generator().manual_seed(0))
    assert shifted.shape == image.shape
    padded = torch.nn.functional.pad(image[0, 0], (1, 1, 1, 1))
    windows = {
        tuple(padded[r : r + 4, c : c + 4].flatten().tolist()) for r in range(3) for c in range(3)
    }
    seen = {tuple(s.flatten().tolist()) for s in shifted[:, 0]}
    assert seen <= windows
    assert len(seen) > 1


@pytest.mark.parametrize("arch", vision.ARCHS)
@pytest.mark.parametrize("depth", vision.DEPTHS)
@pytest.mark.parametrize("side", [8, 12])
def test_models_classify_every_image_size(arch: str, depth: int, side: int) -> None:
    params = {"arch": arch, "width": 4, "depth": depth, "activation": "relu"}
    model = vision.build_model(params, side, 7)
    assert model(torch.zeros(3, 1, side, side)).shape == (3, 7)


# ---------------------------------------------------------------------------- runs
def test_smoke_run_gives_a_valid_curve() -> None:
    spec = smoke_spec(0)
    curve = vision.run(spec)
    assert_valid(curve)
    assert curve.losses.size == spec.params["points"]
    assert curve.metadata["dataset"] == spec.params["dataset"]
    assert curve.metadata["n_parameters"] > 0
    assert 0 <= curve.metadata["final_train_accuracy"] <= 1
    assert curve.losses[-10:].mean() < curve.losses[:10].mean()
    per_point = curve.metadata["samples_per_point"]
    np.testing.assert_array_equal(curve.work, per_point * np.arange(1, curve.losses.size + 1))


def test_same_spec_gives_identical_curve() -> None:
    spec = smoke_spec(1)  # a CNN with both augmentations: every random source is used
    first, second = vision.run(spec), vision.run(spec)
    np.testing.assert_array_equal(first.losses, second.losses)
    np.testing.assert_array_equal(first.work, second.work)
    assert first.metadata == second.metadata
    other = vision.run(RunSpec(spec.family, spec.params, seed=spec.seed + 1))
    assert not np.array_equal(first.losses, other.losses)


def test_run_leaves_global_torch_rng_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    vision.run(smoke_spec(0))
    np.testing.assert_array_equal(torch.rand(3), expected)


def test_diverging_run_records_the_cap() -> None:
    params = {**smoke_spec(0).params, "optimizer": "sgd", "lr": 1e8}
    curve = vision.run(RunSpec(vision.FAMILY, params))
    assert_valid(curve)
    cap = vision.DIVERGED_FACTOR * math.log(10)
    assert curve.metadata["diverged"]
    assert curve.metadata["final_train_accuracy"] is None
    assert curve.losses.max() <= cap
    assert curve.losses[-1] == pytest.approx(cap)
    assert curve.metadata["capped_points"] >= 1


def test_cli_collects_the_smoke_grid_then_skips_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--families", "vision", "--smoke", "--workers", "0"]
    argv += ["--store", str(tmp_path), "--no-progress"]
    n = len(vision.grid(smoke=True))
    assert main(argv) == 0
    assert f"collected {n} runs, skipped 0" in capsys.readouterr().out
    runs = CurveStore(tmp_path).load_family(vision.FAMILY)
    assert len(runs) == n
    for record, losses, work in runs:
        assert record["work_unit"] == "samples"
        assert losses.size >= MIN_POINTS and np.all(np.diff(work) > 0)
    assert main(argv) == 0
    assert f"collected 0 runs, skipped {n}" in capsys.readouterr().out
