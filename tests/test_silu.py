"""The compiled SiLU: accurate over every float32, the same as torch's, and strict about input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mara_env.predictors.silu import add_and_silu, silu

#: Relative tolerance of the compiled SiLU, and the absolute one where the exact value is tinier.
RELATIVE, ABSOLUTE = 1e-6, 1e-30


def exact_silu(values: np.ndarray) -> np.ndarray:
    """SiLU in float64 (exact enough to judge float32 results)."""
    wide = values.astype(np.float64)
    with np.errstate(over="ignore"):
        return wide / (1.0 + np.exp(-wide))


def assert_close_to_exact(values: np.ndarray) -> None:
    got = silu(values).astype(np.float64)
    exact = exact_silu(values)
    error = np.abs(got - exact)
    bad = (error > RELATIVE * np.abs(exact)) & (error > ABSOLUTE)
    assert not bad.any(), f"silu({values[bad][:5]}) = {got[bad][:5]}, exact {exact[bad][:5]}"


def test_silu_is_accurate_over_the_whole_float32_range() -> None:
    dense = np.linspace(-120.0, 120.0, 1_000_001, dtype=np.float32)
    finfo = np.finfo(np.float32)
    edges = np.array(
        [0.0, -0.0, finfo.tiny, -finfo.tiny, 87.0, -87.0, 88.0, -88.0, 88.7, -88.7, 89.0, -89.0],
        dtype=np.float32,
    )
    magnitudes = np.geomspace(1e-38, float(finfo.max), 2_000, dtype=np.float32)
    assert_close_to_exact(np.concatenate([dense, edges, magnitudes, -magnitudes]))


@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(max_dims=3),
        elements=st.floats(width=32, allow_nan=False, allow_infinity=False),
    )
)
def test_silu_of_any_finite_array_is_accurate_and_keeps_its_shape(values: np.ndarray) -> None:
    assert silu(values).shape == values.shape
    assert_close_to_exact(values)


def test_silu_matches_torch_without_warnings() -> None:
    values = np.array([-1e4, -90.0, -1.0, 0.0, 1.0, 90.0, 1e4], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = silu(values)
    expected = torch.nn.functional.silu(torch.from_numpy(values)).numpy()
    np.testing.assert_allclose(got, expected, rtol=RELATIVE, atol=ABSOLUTE)


def test_silu_reads_strided_views_and_leaves_its_input_alone() -> None:
    values = np.arange(-12.0, 12.0, dtype=np.float32).reshape(4, 6)
    before = values.copy()
    np.testing.assert_array_equal(silu(values[:, ::2]), silu(np.ascontiguousarray(values[:, ::2])))
    np.testing.assert_array_equal(values, before)


@pytest.mark.parametrize("values", [np.zeros(3), [0.0, 1.0], np.zeros(3, dtype=np.int32)])
def test_silu_refuses_anything_but_float32_arrays(values: object) -> None:
    with pytest.raises(TypeError, match="float32"):
        silu(values)  # type: ignore[arg-type]


def test_add_and_silu_adds_then_activates_as_numpy_would() -> None:
    rng = np.random.default_rng(3)
    hidden = rng.normal(size=(6, 5)).astype(np.float32)
    addend = rng.normal(size=(6, 5)).astype(np.float32)
    bias = rng.normal(size=(1, 5)).astype(np.float32)
    expected_sum = hidden + (addend + bias)
    activated = add_and_silu(hidden, bias, addend=addend)
    np.testing.assert_array_equal(hidden, expected_sum)  # in place, with NumPy's rounding
    np.testing.assert_array_equal(activated, silu(expected_sum))


def test_add_and_silu_gives_each_group_of_rows_its_own_bias() -> None:
    hidden = np.zeros((6, 2), dtype=np.float32)
    per_task = np.array([[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]], dtype=np.float32)
    add_and_silu(hidden, per_task, rows_per_bias=2)
    np.testing.assert_array_equal(hidden, np.repeat(per_task, 2, axis=0))


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"hidden": np.zeros((2, 3)), "bias": np.zeros((1, 3), np.float32)}, TypeError),
        (
            {"hidden": np.zeros((3, 2), np.float32).T, "bias": np.zeros((1, 3), np.float32)},
            TypeError,
        ),
        (
            {"hidden": np.zeros((2, 3), np.float32), "bias": np.zeros((1, 4), np.float32)},
            ValueError,
        ),
        (
            {
                "hidden": np.zeros((4, 3), np.float32),
                "bias": np.zeros((1, 3), np.float32),
                "rows_per_bias": 2,
            },
            ValueError,
        ),
        (
            {
                "hidden": np.zeros((2, 3), np.float32),
                "bias": np.zeros((1, 3), np.float32),
                "addend": np.zeros((3, 3), np.float32),
            },
            ValueError,
        ),
    ],
)
def test_add_and_silu_refuses_arrays_that_do_not_fit(
    arguments: dict[str, np.ndarray], error: type[Exception]
) -> None:
    with pytest.raises(error, match="add_and_silu"):
        add_and_silu(**arguments)  # type: ignore[arg-type]
