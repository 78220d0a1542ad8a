"""The episode metrics that say where the node-epochs went: useful (on tasks that completed),
wasted (on tasks that expired) and idle while a feasible task could have used the node."""

from __future__ import annotations

import numpy as np
import pytest

from mara_env import get_config, node_turns, raw_env
from mara_env.agents import evaluate, make_agent

WORLDS = [1, 2]


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("agent", ["random", "edf", "clairvoyant"])
def test_every_busy_node_epoch_is_useful_or_wasted_once_the_episode_ends(
    world: int, agent: str
) -> None:
    config = get_config("training", world_version=world, arrival_horizon=30)
    for row in evaluate(make_agent(agent), config, seeds=[3, 4]):
        node_epochs = row["epochs"] * config.n_nodes
        busy = round(row["utilisation"] * node_epochs)
        assert row["useful_node_epochs"] + row["wasted_node_epochs"] == busy
        assert row["useful_utilisation"] == pytest.approx(row["useful_node_epochs"] / node_epochs)
        assert 0 <= row["idle_while_feasible"] <= node_epochs - busy
        for name in ("useful_node_epochs", "wasted_node_epochs", "idle_while_feasible"):
            assert float(row[name]).is_integer()


@pytest.mark.parametrize("world", WORLDS)
def test_a_scheduler_that_always_idles_wastes_nothing_and_idles_while_tasks_could_finish(
    world: int,
) -> None:
    env = raw_env("training", world_version=world, arrival_horizon=20)
    env.reset(seed=5)
    for _ in node_turns(env):
        env.step(env.config.idle_action)
    metrics = env.episode_metrics()
    assert metrics["useful_node_epochs"] == metrics["wasted_node_epochs"] == 0
    assert metrics["utilisation"] == metrics["useful_utilisation"] == 0
    feasible = np.isfinite(env.simulator.state.tasks.demand).sum()
    assert feasible > 0 and metrics["idle_while_feasible"] >= env.config.n_nodes
