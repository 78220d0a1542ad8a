"""A policy of the Gymnasium form as a scheduler: it is asked what the Gymnasium form would ask."""

from __future__ import annotations

import numpy as np
import pytest

import mara_env
from mara_env.agents.gym_policy import GymPolicyScheduler, central_state


@pytest.mark.parametrize(
    ("config", "overrides"), [("tiny", {}), ("training", {"max_nodes_per_task": 3})]
)
def test_the_policy_sees_the_state_and_masks_of_the_gymnasium_form_at_every_epoch(
    config: str, overrides: dict[str, int]
) -> None:
    env = mara_env.raw_env(config=config, **overrides)
    rng = np.random.default_rng(0)
    asked: list[tuple[np.ndarray, np.ndarray]] = []

    def random_legal(state: np.ndarray, masks: np.ndarray) -> np.ndarray:
        asked.append((state.copy(), masks.copy()))
        rows = masks.reshape(env.config.n_nodes, -1)
        return np.array([rng.choice(np.flatnonzero(row)) for row in rows])

    scheduler = GymPolicyScheduler(random_legal)
    env.reset(seed=3)
    scheduler.reset(env.config, seed=3)
    epochs = 0
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        before = len(asked)
        action = scheduler.act(observation, int(agent.removeprefix("node_")))
        if len(asked) > before:  # the epoch's first node: the policy was asked
            epochs += 1
            state, masks = asked[-1]
            np.testing.assert_array_equal(state, env.state())
            expected = np.tile(observation["action_mask"].astype(bool), env.config.n_nodes)
            np.testing.assert_array_equal(masks, expected)
        env.step(action)
    assert epochs > 20 and len(asked) == epochs
    assert env.unwrapped.simulator.episode_metrics()["illegal_actions"] == 0


def test_bad_policies_and_observations_are_refused_clearly() -> None:
    config = mara_env.get_config("tiny")
    with pytest.raises(TypeError, match="policy must be callable"):
        GymPolicyScheduler("not a policy")  # type: ignore[arg-type]
    scheduler = GymPolicyScheduler(lambda state, masks: np.zeros(5), name="wrong")
    env = mara_env.raw_env(config=config)
    env.reset(seed=0)
    scheduler.reset(env.config, seed=0)
    with pytest.raises(ValueError, match=r"wrong: the policy must return one int action per node"):
        scheduler.act(env.observe("node_0"), 0)
    with pytest.raises(ValueError, match="expected one node's observation of 68 values"):
        central_state(np.zeros(10), np.zeros(2), config)
