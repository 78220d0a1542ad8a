"""The recorded learning curves shipped in the package: present, valid, large enough, usable."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest

import mara_env
from mara_env.curves.sources import SHIPPED_TRACES
from mara_env.curves.traces import TraceFileSource
from mara_env.curves.workloads import WORKLOADS

#: Minimum curves per family the collection promises (rl: >= 100 deep-RL + >= 200 tabular-RL).
MIN_CURVES = {"vision": 300, "rl": 300, "tabular": 300}


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any attempt to open a network connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


def test_shipped_file_is_small_valid_and_complete() -> None:
    """Every family has enough curves of >= 100 points, on both sides of a disjoint split."""
    assert SHIPPED_TRACES.stat().st_size <= 20 * 1024 * 1024
    source = TraceFileSource(SHIPPED_TRACES)
    assert set(MIN_CURVES) <= set(source.families)
    for family, minimum in MIN_CURVES.items():
        train, test = source.pool(family, "train"), source.pool(family, "test")
        assert train.n_curves + test.n_curves >= minimum
        assert min(train.lengths.min(), test.lengths.min()) >= 100
        assert not set(train.curve_ids.tolist()) & set(test.curve_ids.tolist())
        assert 0.1 < test.n_curves / (train.n_curves + test.n_curves) < 0.3
        records = source.metadata["curves"][family]
        assert all({"params", "seed", "run_id", "work_unit"} <= set(r) for r in records)
    assert (SHIPPED_TRACES.parent / "TRACES.md").is_file()


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("split", ["train", "test"])
def test_every_workload_runs_offline(no_network: None, workload: str, split: str) -> None:
    """An episode runs on each workload and split of the default source with no network."""
    env = mara_env.raw_env(config="tiny", workload=workload, split=split)
    env.reset(seed=3)
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        legal = np.flatnonzero(observation["action_mask"])
        env.step(None if terminated or truncated else int(legal[0]))
    metrics = env.unwrapped.episode_metrics()
    assert metrics["arrived"] > 0
    assert 0.0 <= metrics["completion_rate"] <= 1.0
