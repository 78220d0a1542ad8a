"""The batched core against the per-cluster reference it replaced (``reference_cluster``).

Whole episodes with random legal choices: after every epoch the events, metrics, per-task records,
queue, privileged answers and every node's observation and mask must agree, so that a seed
plays the same episode as before the core was batched. The core's compiled ``**`` and the
reference's ``np.power`` may round differently in the last bit on some CPUs, so integer outcomes
and masks are compared exactly and floats within :data:`mara_env.portability.MAX_ULPS`.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from agreement import assert_agree
from reference_cluster import ReferenceObservationBuilder, ReferenceSimulator

from mara_env import get_config
from mara_env.sim.observation import ObservationBuilder
from mara_env.sim.simulator import ClusterSimulator

CASES = [
    ("tiny", {}),
    ("tiny", {"load": 4.0}),
    ("tiny", {"n_nodes": 4, "n_slots": 2, "load": 3.0}),
    ("tiny", {"n_nodes": 4, "max_nodes_per_task": 1, "load": 2.0}),
    ("tiny", {"shaping_weight": 1.0, "load": 4.0, "switch_cost": 0.3}),
    ("tiny", {"shaping_weight": 0.5, "shaping_discount": 0.9, "load": 3.0}),
    ("training", {"arrival_horizon": 30}),
    ("load_2x", {"arrival_horizon": 30}),
]


def outcome(simulator: ClusterSimulator | ReferenceSimulator) -> dict[str, object]:
    """Everything the two must agree on after an epoch."""
    state = simulator.state
    facts: dict[str, object] = {
        name: getattr(state, name)
        for name in ("status", "progress", "work", "loss", "end_epoch", "node_task")
    }
    return {
        **facts,
        "metrics": simulator.episode_metrics(),
        "queue": list(state.queue),
        "slots": state.slots.tolist(),
        "history_loss": state.history_loss,
        "history_progress": state.history_progress,
        "remaining_work": simulator.privileged_remaining_work(),
        "ended": (simulator.terminated, simulator.truncated),
    }


def play_against_reference(config_name: str, overrides: dict, seed: int) -> int:
    config = get_config(config_name, **overrides)
    fast, slow = ClusterSimulator(config), ReferenceSimulator(config)
    fast.reset(np.random.default_rng(seed))
    slow.reset(np.random.default_rng(seed))
    fast_view, slow_view = ObservationBuilder(fast), ReferenceObservationBuilder(slow)
    fast_view.refresh()
    slow_view.refresh()
    rng = np.random.default_rng(seed + 1000)
    epochs = 0
    while not (fast.terminated or fast.truncated):
        mask = fast_view.mask()
        assert np.array_equal(mask, slow_view.mask())
        for node in range(config.n_nodes):
            assert_agree(fast_view.observe(node), slow_view.observe(node), f"node {node}")
        choice = rng.choice(np.flatnonzero(mask), size=config.n_nodes)
        events = dataclasses.asdict(fast.advance(choice)), dataclasses.asdict(slow.advance(choice))
        assert_agree(*events, "events")
        fast_view.refresh()
        slow_view.refresh()
        assert_agree(outcome(fast), outcome(slow), f"epoch {epochs}")
        epochs += 1
    return epochs


@pytest.mark.parametrize(("config_name", "overrides"), CASES)
@pytest.mark.parametrize("seed", [0, 7])
def test_the_core_plays_the_reference_episode(config_name: str, overrides: dict, seed: int) -> None:
    assert play_against_reference(config_name, overrides, seed) > 0
