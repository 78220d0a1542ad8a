"""Packing a store of raw curves into a trace file and data card, and loading it back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env import TraceFileSource
from mara_env.benchmarks.collect.pack import pack, split_by_hash
from mara_env.benchmarks.collect.spec import Curve, RunSpec
from mara_env.benchmarks.collect.store import CurveStore
from mara_env.curves.sources import CompositeTraceSource
from mara_env.curves.synthetic import SyntheticTraceSource

FAMILIES = ["tabular", "vision", "rl"]


def fake_store(root: Path, runs_per_family: int = 10) -> CurveStore:
    """A store of noisy power-law curves standing in for collected runs."""
    store = CurveStore(root)
    for family in FAMILIES:
        for seed in range(runs_per_family):
            rng = np.random.default_rng(seed)
            work = np.arange(1.0, 101.0 + seed)
            losses = 2.0 * work ** -rng.uniform(0.2, 1.0) * np.exp(rng.normal(0, 0.02, work.size))
            spec = RunSpec(family, {"model": "fake", "index": seed}, seed=seed)
            store.save(spec, Curve(losses, work, "epochs", wall_seconds=0.1))
    store.log_session({"families": FAMILIES, "seconds": 1.5, "done": 30, "failed": 0})
    return store


def test_pack_round_trip_and_data_card(tmp_path: Path) -> None:
    """The packed file loads with every curve, a disjoint split and a complete data card."""
    store = fake_store(tmp_path / "raw")
    output = tmp_path / "data" / "traces.npz"
    facts = pack(store, FAMILIES, output, figure=False)
    source = TraceFileSource(output)
    assert source.families == ("rl", "tabular", "vision")
    for family in FAMILIES:
        train, test = source.pool(family, "train"), source.pool(family, "test")
        assert train.n_curves + test.n_curves == 10
        assert test.n_curves >= 1 and train.n_curves >= 1
        assert not set(train.curve_ids) & set(test.curve_ids)
        assert train.work is not None and np.all(np.diff(train.work, axis=1) > 0)
        assert len(source.metadata["curves"][family]) == 10
    card = (output.parent / "TRACES.md").read_text()
    vision = facts["families"]["vision"]
    row = f"| vision | 10 | {vision['train']} | {vision['test']} | 100-109 | epochs |"
    assert row in card
    assert facts["sha256"] in card


def test_split_is_stable_when_runs_are_added() -> None:
    """A run keeps its side of the split when more runs join the family; about 20% are test."""
    ids = [f"run-{i}" for i in range(300)]
    first = split_by_hash(ids)
    second = split_by_hash([*ids, *(f"run-{i}" for i in range(300, 600))])
    np.testing.assert_array_equal(first, second[:300])
    assert 0.15 < second.mean() < 0.25


@pytest.mark.parametrize("workload", ["in_distribution", "rl", "vision", "tabular", "synthetic"])
def test_env_runs_on_every_workload(tmp_path: Path, workload: str) -> None:
    """An environment builds and runs an episode on each workload of a packed file."""
    output = tmp_path / "traces.npz"
    pack(fake_store(tmp_path / "raw"), FAMILIES, output, figure=False)
    source = CompositeTraceSource(TraceFileSource(output), SyntheticTraceSource(n_curves=50))
    env = mara_env.parallel_env(config="tiny", trace_source=source, workload=workload)
    env.reset(seed=0)
    while env.agents:
        env.step({agent: 0 for agent in env.agents})
    assert env.episode_metrics()["arrived"] > 0
