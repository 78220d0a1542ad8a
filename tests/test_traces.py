"""Trace sources: the on-disk format round trip, lazy cached loading, fingerprints, and the
synthetic source's determinism and split."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import mara_env
from conftest import run_aec_episode
from mara_env import (
    ClusterConfig,
    ClusterSimulator,
    CurvePool,
    SyntheticTraceSource,
    TraceFileSource,
    TraceSource,
    default_trace_source,
    save_traces,
)
from mara_env.curves.families import FAMILY_NAMES
from mara_env.sim.workload import build_workload

#: Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = pytest.mark.usefixtures("isolated_workload_cache")


def random_pools(seed: int) -> dict[str, tuple[CurvePool, np.ndarray]]:
    """Two families of positive curves of varied lengths, each with both splits used."""
    rng = np.random.default_rng(seed)
    pools = {}
    for family, n_curves in (("synthetic", 7), ("vision", 5)):
        lengths = rng.integers(2, 30, size=n_curves)
        curves = [
            np.exp(-np.cumsum(rng.uniform(0.0, 0.2, size=n))) * rng.uniform(0.5, 3.0)
            for n in lengths
        ]
        is_test = np.zeros(n_curves, dtype=bool)
        is_test[rng.choice(n_curves, size=2, replace=False)] = True
        pools[family] = (CurvePool.from_curves(family, curves), is_test)
    return pools


@pytest.fixture
def trace_file(tmp_path: Path) -> tuple[Path, dict[str, tuple[CurvePool, np.ndarray]], dict]:
    pools = random_pools(0)
    metadata = {
        "card": "unit test",
        "curves": {
            family: [{"run": i} for i in range(pool.n_curves)]
            for family, (pool, _) in pools.items()
        },
    }
    path = tmp_path / "traces.npz"
    save_traces(path, pools, metadata)
    return path, pools, metadata


def test_save_then_load_round_trips_curves_split_and_metadata(trace_file) -> None:
    """Loaded pools equal the saved ones at float32 precision, split by is_test, with the
    curves' indices as ids; metadata comes back unchanged."""
    path, pools, metadata = trace_file
    source = TraceFileSource(path)
    assert isinstance(source, TraceSource)
    assert source.families == ("synthetic", "vision")
    assert source.metadata == metadata
    for family, (pool, is_test) in pools.items():
        for split, rows in (("train", ~is_test), ("test", is_test)):
            loaded = source.pool(family, split)
            assert loaded.family == family
            assert loaded.curve_ids.tolist() == np.flatnonzero(rows).tolist()
            np.testing.assert_array_equal(loaded.lengths, pool.lengths[rows])
            expected = pool.losses[rows].astype(np.float32).astype(np.float64)
            np.testing.assert_array_equal(loaded.losses, expected)
            np.testing.assert_allclose(loaded.losses, pool.losses[rows], rtol=1e-6)
            assert loaded.losses.dtype == np.float64


def test_trace_file_is_read_lazily_and_once(trace_file, monkeypatch) -> None:
    """Constructing a TraceFileSource reads nothing; the first use reads the file once and
    later uses hit the cache (even after the file is gone)."""
    path, _, _ = trace_file
    reads: list[Path] = []
    original = Path.read_bytes

    def counting_read_bytes(self: Path) -> bytes:
        reads.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counting_read_bytes)
    later = path.with_name("written_later.npz")
    source = TraceFileSource(later)  # does not exist yet: construction must not look
    assert reads == []
    later.write_bytes(original(path))
    assert source.families == ("synthetic", "vision")
    assert len(reads) == 1
    source.pool("vision", "test")
    fingerprint = source.fingerprint
    later.unlink()
    assert source.fingerprint == fingerprint
    assert source.pool("synthetic", "train").n_curves > 0
    assert len(reads) == 1


def test_fingerprint_identifies_content(trace_file, tmp_path: Path) -> None:
    """Same content (even saved again elsewhere) gives the same fingerprint; other curves
    give another one."""
    path, pools, metadata = trace_file
    copy = tmp_path / "again.npz"
    save_traces(copy, pools, metadata)
    assert TraceFileSource(path).fingerprint == TraceFileSource(path).fingerprint
    assert TraceFileSource(copy).fingerprint == TraceFileSource(path).fingerprint
    other = tmp_path / "other.npz"
    save_traces(other, random_pools(1), metadata={})
    assert TraceFileSource(other).fingerprint != TraceFileSource(path).fingerprint
    assert isinstance(TraceFileSource(path).fingerprint, str)


def test_env_runs_on_a_trace_file(trace_file) -> None:
    """An AEC episode runs on file curves of two families; tasks use only those families and
    rows, and the test split draws only test curves."""
    path, _, _ = trace_file
    source = TraceFileSource(path)
    config = ClusterConfig(
        n_nodes=2,
        n_slots=3,
        arrival_horizon=15,
        load=2.0,
        family_weights=(("synthetic", 1.0), ("vision", 2.0)),
    )
    result = run_aec_episode(mara_env.raw_env(config, trace_source=source), seed=0)
    assert result["steps"] > 0
    for split in ("train", "test"):
        sim = ClusterSimulator(config.replace(split=split), trace_source=source)
        sim.reset(np.random.default_rng(1))
        tasks = sim.state.tasks
        assert len(tasks) > 0
        families = {FAMILY_NAMES[i] for i in tasks.family.tolist()}
        assert families <= {"synthetic", "vision"}
        workload = sim.workload
        expected_rows = sum(source.pool(f, split).n_curves for f in config.families)
        assert workload.curves.shape[0] == expected_rows
        assert ((tasks.curve_row >= 0) & (tasks.curve_row < expected_rows)).all()
        assert np.array_equal(workload.curve_family[tasks.curve_row], tasks.family)


def test_workload_pads_families_to_a_common_width_with_last_values(trace_file) -> None:
    """Joining families pads each curve with its own last recorded value."""
    path, _, _ = trace_file
    source = TraceFileSource(path)
    config = ClusterConfig(family_weights=(("synthetic", 1.0), ("vision", 1.0)))
    workload = build_workload(config, source)
    for row, length in enumerate(workload.lengths.tolist()):
        curve = workload.curves[row]
        assert (curve[length:] == curve[length - 1]).all()
    assert not workload.curves.flags.writeable


def test_trace_file_source_pickles_by_path(trace_file) -> None:
    """A pickled TraceFileSource re-reads its file lazily and yields the same curves."""
    path, _, _ = trace_file
    source = TraceFileSource(path)
    source.families  # noqa: B018 - load before pickling
    clone = pickle.loads(pickle.dumps(source))
    assert len(pickle.dumps(source)) < 1000, "the curves themselves are not pickled"
    assert clone.fingerprint == source.fingerprint
    np.testing.assert_array_equal(
        clone.pool("vision", "train").losses, source.pool("vision", "train").losses
    )


# ---------------------------------------------------------------------------- synthetic curves
def test_synthetic_source_is_deterministic() -> None:
    """Two sources with the same arguments draw identical pools and fingerprints; another seed
    draws other curves."""
    first, second = SyntheticTraceSource(50, 40, seed=3), SyntheticTraceSource(50, 40, seed=3)
    for split in ("train", "test"):
        np.testing.assert_array_equal(
            first.pool("synthetic", split).losses, second.pool("synthetic", split).losses
        )
    assert first.fingerprint == second.fingerprint
    other = SyntheticTraceSource(50, 40, seed=4)
    assert other.fingerprint != first.fingerprint
    assert not np.array_equal(
        other.pool("synthetic", "train").losses[:5], first.pool("synthetic", "train").losses[:5]
    )


@pytest.mark.parametrize(("n_curves", "test_share"), [(50, 0.2), (10, 0.5), (2, 0.01), (7, 0.99)])
def test_synthetic_split_is_disjoint_and_complete(n_curves: int, test_share: float) -> None:
    """Train and test curve ids partition the pool; the test side has round(share * n) curves
    (at least one on each side)."""
    source = SyntheticTraceSource(n_curves, 20, test_share=test_share, seed=1)
    train = source.pool("synthetic", "train").curve_ids.tolist()
    test = source.pool("synthetic", "test").curve_ids.tolist()
    assert not set(train) & set(test)
    assert sorted(train + test) == list(range(n_curves))
    expected = max(1, min(n_curves - 1, round(test_share * n_curves)))
    assert len(test) == expected


def test_synthetic_curves_are_positive_and_finite() -> None:
    """Synthetic losses are finite and positive (the simulator works in log-loss)."""
    pool = SyntheticTraceSource(100, 80, seed=9).pool("synthetic", "train")
    assert np.isfinite(pool.losses).all() and (pool.losses > 0).all()
    assert (pool.lengths == 80).all()


def test_synthetic_source_pickles_without_its_curves() -> None:
    """A pickled synthetic source redraws the same curves from its seed."""
    source = SyntheticTraceSource(30, 25, seed=5)
    expected = source.pool("synthetic", "test").losses
    payload = pickle.dumps(source)
    assert len(payload) < 1000
    np.testing.assert_array_equal(pickle.loads(payload).pool("synthetic", "test").losses, expected)


def test_default_trace_source_is_shared() -> None:
    """The default source is built once per process and is synthetic."""
    assert default_trace_source() is default_trace_source()
    assert default_trace_source().families == ("rl", "tabular", "vision", "synthetic")


def test_work_axes_round_trip_and_bad_axes_are_rejected(tmp_path) -> None:
    """Work axes survive save/load; a non-increasing or non-finite axis raises TraceError."""
    losses = [np.array([1.0, 0.8, 0.5]), np.array([2.0, 1.0])]
    good = mara_env.CurvePool.from_curves(
        "vision", losses, work=[np.array([10.0, 20.0, 30.0]), np.array([5.0, 6.0])]
    )
    path = tmp_path / "work.npz"
    mara_env.save_traces(path, {"vision": (good, np.array([False, True]))})
    loaded = mara_env.TraceFileSource(path).pool("vision", "train")
    assert loaded.work is not None
    np.testing.assert_array_equal(loaded.work[0], [10.0, 20.0, 30.0])
    for bad_axis in (np.array([10.0, 10.0, 30.0]), np.array([10.0, np.nan, 30.0])):
        with pytest.raises(mara_env.TraceError, match="work axis"):
            mara_env.CurvePool.from_curves("vision", losses, work=[bad_axis, np.array([5.0, 6.0])])
