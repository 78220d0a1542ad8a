"""MARA's acting path takes the actions of the network's batched encode and decode.

:meth:`mara_env.agents.mara.policy.MaraPolicy.act` (what :class:`mara_env.agents.mara.agent.Mara` decides with)
reads each node's logits from tables built in one pass and leaves a node to
:meth:`~mara_env.agents.mara.policy.MaraPolicy.decode`'s own step only where rounding could decide it.
These tests hold it to ``decode(encode(...))`` on random networks and inputs, with the exact
step forced and not, and hold the shipped agent to the actions it took on evaluation episodes
before the acting path existed (digests of every action of each episode; that agent's weights
are kept as ``benchmarks/results/v1/mara/mara_ppo_first_recipe.pt``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import torch

import mara_env
from mara_env.agents.evaluation import start_episode
from mara_env.agents.mara import sampling
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.features import SLOT_INPUTS
from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig

pytestmark = pytest.mark.usefixtures("one_torch_thread")

#: The ``mara`` agent shipped when the acting path was written (PPO's first recipe).
RECORDED_AGENT = Path(__file__).parents[1] / "benchmarks/results/v1/mara/mara_ppo_first_recipe.pt"
#: SHA-256 (first 16 hex digits) of the int64 actions of every node turn of that agent on
#: ``evaluation`` episodes, as recorded with the per-node ``decode`` loop.
SHIPPED_ACTIONS = {
    1000: "694265ab48852346",
    1001: "1757d8c267a132e3",
    1002: "3424756ad7c9ca5e",
}


def random_cluster(
    n_slots: int, n_nodes: int, generator: torch.Generator
) -> tuple[torch.Tensor, ...]:
    """One cluster's policy inputs (batch of one) with random occupancy and previous slots."""
    slots = torch.randn(1, n_slots, SLOT_INPUTS, generator=generator)
    occupied = torch.rand(1, n_slots, generator=generator) < 0.7
    slots[..., 0] = occupied.float()
    slots[~occupied] = 0.0
    globals_ = torch.randn(1, 5, generator=generator)
    mask = torch.cat((occupied, torch.ones(1, 1, dtype=torch.bool)), dim=1)
    previous = torch.randint(0, n_slots + 1, (1, n_nodes), generator=generator)
    return slots, globals_, mask, previous


def decoded_actions(
    policy: MaraPolicy, inputs: tuple[torch.Tensor, ...], **options: object
) -> np.ndarray:
    slots, globals_, mask, previous = inputs
    with torch.inference_mode():
        encoded = policy.encode(slots, globals_)
        return (
            policy.decode(encoded, mask, previous, with_entropy=False, **options).actions[0].numpy()
        )  # type: ignore[arg-type]


@pytest.mark.parametrize("exact_everywhere", [False, True])
@pytest.mark.parametrize(
    ("config", "n_slots", "n_nodes", "cap", "temperature"),
    [
        (PolicyConfig(width=16, layers=1, heads=2), 5, 6, None, 1.0),
        (PolicyConfig(width=32, layers=2, heads=4), 16, 8, None, 0.35),
        (PolicyConfig(width=16, layers=1, heads=2), 4, 12, 2, 0.5),
        (PolicyConfig(width=16, layers=1, heads=1), 3, 4, 1, 1.0),  # odd heads: unfused path
        (PolicyConfig(width=16, layers=1, heads=2, autoregressive=False), 6, 5, 2, 0.35),
    ],
)
def test_act_takes_the_actions_of_encode_and_decode(
    config: PolicyConfig,
    n_slots: int,
    n_nodes: int,
    cap: int | None,
    temperature: float,
    exact_everywhere: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if exact_everywhere:  # every node's step through decode's own code
        monkeypatch.setattr(sampling, "EXACT_MARGIN", 2.0)
    torch.manual_seed(n_slots * 100 + n_nodes)
    policy = MaraPolicy(config).eval()
    generator = torch.Generator().manual_seed(7)
    for _ in range(25):
        inputs = random_cluster(n_slots, n_nodes, generator)
        uniforms = torch.rand(1, n_nodes, generator=generator)
        options = {"max_nodes_per_task": cap, "temperature": temperature}
        with torch.inference_mode():
            sampled = policy.act(*inputs, uniforms=uniforms, **options)  # type: ignore[arg-type]
            greedy = policy.act(*inputs, **options)  # type: ignore[arg-type]
        assert (
            sampled.tolist()
            == decoded_actions(policy, inputs, uniforms=uniforms, **options).tolist()
        )
        assert greedy.tolist() == decoded_actions(policy, inputs, greedy=True, **options).tolist()


def test_draws_on_a_cdf_step_are_decided_by_decode() -> None:
    """Uniforms placed exactly on the steps of node 0's CDF (where rounding decides)."""
    torch.manual_seed(3)
    policy = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2)).eval()
    inputs = random_cluster(6, 4, torch.Generator().manual_seed(5))
    slots, globals_, mask, previous = inputs
    with torch.inference_mode():
        encoded = policy.encode(slots, globals_)
        fractions = torch.arange(4, dtype=torch.float32) / 4
        terms = policy._epoch_terms(encoded.slot_scores, encoded.context, previous, fractions)
        counts = torch.zeros(1, 7)
        cdf = policy._log_policy(terms, counts, mask, 0, 4, 1.0).exp().cumsum(dim=-1)[0]
        for step in cdf[:-1].tolist():
            uniforms = torch.full((1, 4), step)
            assert (
                policy.act(*inputs, uniforms=uniforms).tolist()
                == decoded_actions(policy, inputs, uniforms=uniforms).tolist()
            )


def test_the_fused_encoder_layers_give_the_modules_numbers() -> None:
    torch.manual_seed(0)
    policy = MaraPolicy(PolicyConfig(width=32, layers=2, heads=4)).eval()
    generator = torch.Generator().manual_seed(1)
    tokens = torch.randn(3, 9, 32, generator=generator)
    padding = torch.rand(3, 9, generator=generator) < 0.4
    padding[:, 0] = False
    with torch.inference_mode():
        assert policy._fused_path(tokens)
        fused = policy._encoder(tokens, padding)
        module = policy.encoder(tokens, src_key_padding_mask=padding)
    assert torch.equal(fused, module)
    assert not policy._fused_path(tokens)  # gradients on: the module runs, and trains
    policy._encoder(tokens, padding).sum().backward()
    assert policy.encoder.layers[0].linear1.weight.grad is not None


def test_act_refuses_a_batch() -> None:
    policy = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
    slots, globals_, mask, previous = random_cluster(3, 2, torch.Generator().manual_seed(0))
    with pytest.raises(ValueError, match="one cluster"):
        policy.act(slots.repeat(2, 1, 1), globals_, mask, previous)
    with pytest.raises(ValueError, match="temperature"):
        policy.act(slots, globals_, mask, previous, temperature=0.0)


@pytest.mark.parametrize("seed", sorted(SHIPPED_ACTIONS))
def test_the_recorded_agent_takes_its_recorded_actions(seed: int) -> None:
    agent = Mara.load(RECORDED_AGENT)
    env = mara_env.raw_env("evaluation", world_version=1)  # the world it was recorded in
    env.reset(seed=seed)
    start_episode(agent, env, seed)
    actions = []
    for name, node in mara_env.node_turns(env):
        action = agent.act(env.observe(name), node)
        actions.append(action)
        env.step(action)
    digest = hashlib.sha256(np.array(actions, dtype=np.int64).tobytes()).hexdigest()[:16]
    assert digest == SHIPPED_ACTIONS[seed]
