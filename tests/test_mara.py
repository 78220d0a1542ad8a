"""The MARA policy: masks, autoregression, checkpoints, training and determinism."""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch
from agreement import assert_agree

import mara_env
from mara_env.agents import evaluate
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.features import (
    SLOT_INPUTS,
    FeatureBuilder,
    NoPredictions,
    prediction_features,
)
from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
from mara_env.benchmarks.mara import ppo as mara_ppo
from mara_env.benchmarks.mara import train as train_mara
from mara_env.benchmarks.mara.batches import merge_steps
from mara_env.benchmarks.mara.imitation import imitate
from mara_env.benchmarks.mara.returns import ValueNorm
from mara_env.benchmarks.mara.rollouts import ClusterVector, StepBatch, agent_seed
from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
from mara_env.benchmarks.mara.trainer import Trainer
from mara_env.predictors.checkpoint import CheckpointError
from mara_env.predictors.registry import make_predictor
from mara_env.sim.observation import GLOBAL_FEATURES

SMALL = PolicyConfig(width=16, layers=1, heads=2)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def random_batch(batch: int, n_slots: int, seed: int) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    slots = torch.randn(batch, n_slots, SLOT_INPUTS, generator=generator)
    occupied = torch.rand(batch, n_slots, generator=generator) < 0.6
    slots[..., 0] = occupied.float()
    slots[~occupied] = 0.0
    globals_ = torch.randn(batch, 5, generator=generator)
    mask = torch.cat((occupied, torch.ones(batch, 1, dtype=torch.bool)), dim=1)
    return slots, globals_, mask


def small_policy(seed: int = 0, **changes: object) -> MaraPolicy:
    torch.manual_seed(seed)
    config = PolicyConfig(**{**SMALL.as_dict(), **changes})
    return MaraPolicy(config)


# ---------------------------------------------------------------------------- the policy
@pytest.mark.parametrize("cap", [None, 1, 2])
def test_a_masked_action_is_never_sampled(cap: int | None) -> None:
    policy = small_policy()
    n_slots, n_nodes = 5, 6
    slots, globals_, mask = random_batch(64, n_slots, seed=1)
    previous = torch.randint(
        0, n_slots + 1, (64, n_nodes), generator=torch.Generator().manual_seed(2)
    )
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        encoded = policy.encode(slots, globals_)
        for _ in range(20):
            actions = policy.decode(
                encoded, mask, previous, generator=generator, max_nodes_per_task=cap
            ).actions
            legal = torch.gather(mask, 1, actions)
            assert bool(legal.all())
            if cap is not None:
                for row in actions.tolist():
                    slots_taken = [a for a in row if a < n_slots]
                    assert all(slots_taken.count(a) <= cap for a in slots_taken)


@pytest.mark.parametrize("draw", [0.0, 0.5, 1.0 - 1e-7])
def test_inverse_cdf_draws_at_the_edges_stay_legal(draw: float) -> None:
    policy = small_policy()
    slots, globals_, mask = random_batch(32, 5, seed=8)
    previous = torch.full((32, 4), 5)
    with torch.no_grad():
        encoded = policy.encode(slots, globals_)
        uniforms = torch.full((32, 4), draw)
        actions = policy.decode(encoded, mask, previous, uniforms=uniforms).actions
    assert bool(torch.gather(mask, 1, actions).all())


def test_masked_actions_have_zero_probability_even_with_huge_logits() -> None:
    policy = small_policy()
    slots, globals_, mask = random_batch(8, 4, seed=4)
    with torch.no_grad():
        policy.slot_out.bias.fill_(1e4)  # slot logits dwarf idle
        encoded = policy.encode(slots, globals_)
        previous = torch.full((8, 3), 4)
        actions = policy.decode(encoded, mask, previous, greedy=True).actions
    assert bool(torch.gather(mask, 1, actions).all())


def node_one_distribution(policy: MaraPolicy, node_zero_action: int) -> torch.Tensor:
    slots, globals_, mask = random_batch(1, 4, seed=5)
    slots[0, :, 0] = 1.0
    mask[:] = True
    with torch.no_grad():
        encoded = policy.encode(slots, globals_)
        counts = torch.zeros(1, 4)
        counts[0, node_zero_action] = 1.0
        logits = policy.node_logits(encoded, counts, torch.tensor([4]), 1 / 3, 3)
    return torch.softmax(logits, dim=-1)[0]


def test_changing_node_zeros_choice_changes_node_ones_distribution() -> None:
    policy = small_policy()
    first, second = node_one_distribution(policy, 0), node_one_distribution(policy, 2)
    assert float((first - second).abs().max()) > 1e-4


def test_without_autoregression_node_one_ignores_node_zero() -> None:
    policy = small_policy(autoregressive=False)
    first, second = node_one_distribution(policy, 0), node_one_distribution(policy, 2)
    torch.testing.assert_close(first, second)


@pytest.mark.parametrize("max_nodes", [None, 2])
@pytest.mark.parametrize("temperature", [1.0, 0.35])
def test_decode_scores_given_actions_with_the_probabilities_it_samples_with(
    max_nodes: int | None, temperature: float
) -> None:
    """Scoring sampled actions (PPO; every node at once) reproduces the log-probabilities and
    entropies of sampling them (one node after another), within the promised ulps: the two
    multiply matrices of other shapes, which may round differently on some CPUs."""
    policy = small_policy()
    slots, globals_, mask = random_batch(16, 5, seed=6)
    previous = torch.randint(0, 6, (16, 4), generator=torch.Generator().manual_seed(1))
    options = {"max_nodes_per_task": max_nodes, "temperature": temperature}
    with torch.no_grad():
        encoded = policy.encode(slots, globals_)
        sampled = policy.decode(
            encoded, mask, previous, generator=torch.Generator().manual_seed(0), **options
        )
        scored = policy.decode(encoded, mask, previous, actions=sampled.actions, **options)
    for name in ("log_prob", "entropy"):
        assert_agree(getattr(sampled, name).numpy(), getattr(scored, name).numpy(), name)


def test_slot_embeddings_are_permutation_equivariant() -> None:
    policy = small_policy()
    slots, globals_, _ = random_batch(2, 6, seed=7)
    order = torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad():
        plain = policy.encode(slots, globals_)
        permuted = policy.encode(slots[:, order], globals_)
    torch.testing.assert_close(
        plain.slot_scores[:, order], permuted.slot_scores, atol=1e-5, rtol=1e-5
    )
    torch.testing.assert_close(plain.value, permuted.value, atol=1e-5, rtol=1e-5)


def test_policy_config_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="must divide width"):
        PolicyConfig(width=10, heads=4)
    with pytest.raises(ValueError, match="width must be an int >= 1"):
        PolicyConfig(width=0)


# ---------------------------------------------------------------------------- features
def test_prediction_features_known_answer() -> None:
    samples = np.array([[4.0, 8.0, 12.0, 16.0], [np.inf] * 4])
    features = prediction_features(
        samples, np.array([4.0, 5.0]), np.array([2.0, 1.0]), np.array([0.5, 1.0]), max_nodes=4
    )
    # Task 0: quantiles 4, 8, 16 curve steps -> 2, 4, 8 node-epochs over 4 epochs left; one node
    # advances 8 steps by the deadline (2 of 4 samples), four nodes 8 * 4**0.5 = 16 (all 4).
    np.testing.assert_allclose(features[0], [0.5, 1.0, 2.0, 0.5, 1.0])
    np.testing.assert_allclose(features[1], [10.0, 10.0, 10.0, 0.0, 0.0])


def test_features_come_from_observations_and_empty_slots_are_zero() -> None:
    env = mara_env.raw_env(config="tiny", load=0.3)
    env.reset(seed=1)
    builder = FeatureBuilder(make_predictor("wls"), n_samples=8)
    builder.reset(env.config, seed=0)
    observation = env.observe("node_0")
    features = builder.build(observation["observation"], observation["action_mask"])
    occupied = observation["action_mask"][:-1] > 0
    assert np.all(features.slots[~occupied] == 0.0)
    assert np.all(features.slots[occupied, 0] == 1.0)
    vector = observation["observation"]
    np.testing.assert_array_equal(features.globals, vector[:5])
    assert features.slots.dtype == np.float32 and np.isfinite(features.slots).all()
    with pytest.raises(ValueError, match="action mask must have shape"):
        builder.build(vector, observation["action_mask"][:-1])
    assert GLOBAL_FEATURES == 8


# ---------------------------------------------------------------------------- the agent
def test_agent_plays_legally_and_deterministically() -> None:
    agent = Mara(small_policy(), make_predictor("wls"), n_samples=4)
    config = mara_env.get_config("tiny", max_nodes_per_task=1)
    first = evaluate(agent, config, seeds=[0, 1])
    second = evaluate(agent, config, seeds=[0, 1])
    assert [row["completion_rate"] for row in first] == [row["completion_rate"] for row in second]
    assert all(row["illegal_actions"] == 0 for row in first)


def test_training_rollouts_act_like_the_agent_in_the_environment() -> None:
    """The vectorised training loop and the AEC environment play the same episode."""
    policy = small_policy(3)
    config = mara_env.get_config("tiny")
    vector = ClusterVector([config, config], policy, 0, n_samples=4, episode_seeds=[[7], [8]])
    while vector.live:
        vector.step()
    assert [row["seed"] for row in vector.finished] in ([7, 8], [8, 7])
    for row in vector.finished:
        expected = play_alone(policy, config, int(row["seed"]), int(row["cluster"]))
        for key in ("completed", "arrived", "switches", "epochs", "utilisation"):
            assert row[key] == expected[key], key


def play_alone(
    policy: MaraPolicy, config: mara_env.ClusterConfig, seed: int, cluster: int
) -> dict[str, float]:
    agent = Mara(policy, make_predictor("wls"), n_samples=4)
    env = mara_env.raw_env(config)
    env.reset(seed=seed)
    agent.reset(config, seed=agent_seed(seed, cluster))
    for name, node in mara_env.node_turns(env):
        env.step(agent.act(env.observe(name), node))
    return env.episode_metrics()


def test_checkpoint_round_trip_and_clear_errors(tmp_path: Path) -> None:
    policy = small_policy(4)
    agent = Mara(policy, NoPredictions(), n_samples=4)
    path = tmp_path / "mara.pt"
    agent.save(path, facts={"note": "test"})
    loaded = Mara.load(path)
    for key, value in policy.state_dict().items():
        torch.testing.assert_close(loaded.policy.state_dict()[key], value)
    assert loaded.features.predictor.name == "none"
    config = mara_env.get_config("tiny")
    assert (
        evaluate(loaded, config, seeds=[2])[0]["completed"]
        == evaluate(agent, config, seeds=[2])[0]["completed"]
    )

    card = json.loads(path.with_suffix(".json").read_text())
    card["config"]["slot_inputs"] = SLOT_INPUTS + 1
    path.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(CheckpointError, match="slot_inputs"):
        Mara.load(path)
    path.write_bytes(path.read_bytes() + b"x")
    with pytest.raises(CheckpointError, match="corrupt"):
        Mara.load(path)
    with pytest.raises(CheckpointError, match="does not exist"):
        Mara.load(tmp_path / "missing.pt")


def test_shipped_checkpoint_loads_by_name() -> None:
    from mara_env.agents import make_agent

    agent = make_agent("mara")
    assert agent.name == "mara"
    assert isinstance(agent, Mara)
    assert agent.policy.config.autoregressive


# ---------------------------------------------------------------------------- training
def tiny_settings(**changes: object) -> TrainSettings:
    values = {**QUICK, **changes}
    return TrainSettings(**values)  # type: ignore[arg-type]


def test_a_tiny_training_run_improves_on_its_initial_policy(tmp_path: Path) -> None:
    settings = tiny_settings(
        dagger_rounds=4, dagger_epochs=80, imitation_passes=4, updates=0, validation_seeds=4
    )
    assert settings.temperature == 0.35  # validated as deployed
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    before = trainer.selection.validate(trainer.policy)
    imitate(trainer)
    after = trainer.selection.validate(trainer.policy)
    # the same validation episodes before and after (paired); in Cluster-v2 and -v3, where EDF-like
    # play is already fair, the gain of four short DAgger rounds is smaller than in v1
    assert after > before + 0.02, (before, after)


def test_same_seed_same_training_run(tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.pt"
        assert train_mara.main(["--quick", "--output", str(out), "--no-progress"]) == 0
        with out.with_suffix(".csv").open() as handle:
            rows = [
                {k: v for k, v in row.items() if k not in ("wall_seconds", "epochs_per_second")}
                for row in csv.DictReader(handle)
            ]
        runs.append((rows, torch.load(out, weights_only=True)))
    assert runs[0][0] == runs[1][0]
    for key, value in runs[0][1].items():
        torch.testing.assert_close(runs[1][1][key], value)
    assert any(row["phase"] == "ppo" and row["policy_loss"] for row in runs[0][0])


def test_training_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="ablation must be one of"):
        TrainSettings(ablation="no_brain")
    with pytest.raises(ValueError, match="preset must be"):
        TrainSettings(preset="evaluation")
    with pytest.raises(ValueError, match="validation_seeds must be <="):
        TrainSettings(validation_seeds=99)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        TrainSettings(temperature=0.0)
    with pytest.raises(ValueError, match="target_kl must be >= 0"):
        TrainSettings(target_kl=-1.0)
    with pytest.raises(ValueError, match="lr_schedule must be one of"):
        TrainSettings(lr_schedule="cosine")


@pytest.mark.parametrize("schedule", ["constant", "linear"])
def test_the_policy_learning_rate_follows_its_schedule(tmp_path: Path, schedule: str) -> None:
    settings = tiny_settings(predictor="wls", lr=1e-3, updates=4, lr_schedule=schedule)
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    optimiser = torch.optim.Adam(trainer.policy.parameters(), lr=settings.lr)
    now = time.perf_counter()
    rates = [mara_ppo.set_policy_lr(settings, optimiser, update, now) for update in (1, 2, 3, 4)]
    assert optimiser.param_groups[0]["lr"] == pytest.approx(rates[-1])
    expected = [1e-3] * 4 if schedule == "constant" else [1e-3, 7.5e-4, 5e-4, 2.5e-4]
    assert rates == pytest.approx(expected, rel=1e-6)
    # the wall-clock budget counts too: half the minutes spent, at most half the rate is left
    if schedule == "linear":
        half_spent = now - 30.0 * settings.minutes
        assert mara_ppo.set_policy_lr(settings, optimiser, 1, half_spent) == pytest.approx(
            5e-4, rel=1e-2
        )


def test_temperature_sharpens_the_node_distribution() -> None:
    policy = small_policy()
    slots, globals_, mask = random_batch(16, 5, seed=9)
    previous = torch.full((16, 3), 5)
    with torch.no_grad():
        encoded = policy.encode(slots, globals_)
        warm = policy.decode(encoded, mask, previous, uniforms=torch.full((16, 3), 0.3))
        cool = policy.decode(
            encoded, mask, previous, uniforms=torch.full((16, 3), 0.3), temperature=0.3
        )
    assert float(cool.entropy.mean()) < float(warm.entropy.mean())
    assert bool(torch.gather(mask, 1, cool.actions).all())
    with pytest.raises(ValueError, match="temperature must be > 0"):
        policy.decode(encoded, mask, previous, temperature=0.0)


def test_agent_decides_on_its_own_thread_count_and_restores_it() -> None:
    with pytest.raises(ValueError, match="threads must be an int >= 1"):
        Mara(small_policy(), make_predictor("wls"), threads=0)
    seen: list[int] = []
    policy = small_policy()
    original = policy.act

    def act(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    policy.act = act  # type: ignore[method-assign]
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        evaluate(Mara(policy, make_predictor("wls"), n_samples=4), "tiny", seeds=[0])
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}


@pytest.mark.parametrize("name", ["mara", "mara_imitation"])
def test_each_shipped_card_records_the_command_that_made_it(name: str) -> None:
    from mara_env.agents.mara.agent import default_checkpoint

    card = json.loads(default_checkpoint().with_name(f"{name}.json").read_text())
    facts = card["facts"]
    command = facts["command"]
    # the module's name when the card was written: benchmarks.mara.train before 0.4.0
    assert command[:2] == ["python", "-m"]
    assert command[2] in ("mara_env.benchmarks.mara.train", "benchmarks.mara.train")
    settings = train_mara.settings_of(train_mara.parse_args(command[3:]))
    # a setting added after the card was made ran as its default does (e.g. rollout_lag 0)
    added = {k: v for k, v in asdict(TrainSettings()).items() if k not in facts["settings"]}
    assert asdict(settings) == {**facts["settings"], **added}
    assert card["config"]["temperature"] == settings.temperature  # trained at what it ships at
    assert facts["confirmation"]["episodes"] >= 30


def test_mara_imitation_is_registered_beside_mara() -> None:
    from mara_env.agents import VARIANTS, make_agent
    from mara_env.agents.mara.agent import imitation_checkpoint

    agent = make_agent("mara_imitation")
    assert isinstance(agent, Mara) and agent.name == "mara_imitation"
    assert "mara_imitation" in VARIANTS
    assert agent.checkpoint_sha256 == Mara.load(imitation_checkpoint()).checkpoint_sha256


# ---------------------------------------------------------------------------- PPO
def tiny_rollout(
    trainer: Trainer,
    configs: list[mara_env.ClusterConfig],
    epochs: int,
    **options: object,
) -> list[StepBatch]:
    settings = trainer.settings
    vector = ClusterVector(
        configs,
        trainer.policy,
        5,
        predictor="wls",
        n_samples=settings.n_samples,
        temperature=settings.temperature,
        **options,  # type: ignore[arg-type]
    )
    return [vector.step() for _ in range(epochs)]


def test_the_updates_log_probs_are_the_rollouts_at_the_deployed_temperature(
    tmp_path: Path,
) -> None:
    """Recomputed on the rollout batch at the same weights, every node's ratio is 1."""
    settings = tiny_settings(temperature=0.35, predictor="wls")
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    config = mara_env.get_config("tiny", n_nodes=4, max_nodes_per_task=1, load=4.0)
    trainer.max_nodes_per_task = config.max_nodes_per_task
    batch = merge_steps(tiny_rollout(trainer, [config] * 3, 12))
    assert bool((batch.log_prob < 0).any())  # some nodes had a real choice
    with torch.no_grad():
        log_prob, _ = trainer.scores(batch, batch.actions)
    torch.testing.assert_close((log_prob - batch.log_prob).exp(), torch.ones_like(log_prob))
    # The check can fail: at temperature 1, or without the per-task node cap, ratios move.
    with torch.no_grad():
        untempered, _ = trainer.scores(batch, batch.actions, temperature=1.0)
        trainer.max_nodes_per_task = None
        uncapped, _ = trainer.scores(batch, batch.actions)
    assert float((untempered - batch.log_prob).abs().max()) > 1e-3
    assert float((uncapped - batch.log_prob).abs().max()) > 1e-3


def test_the_critics_gradient_never_reaches_the_policy(tmp_path: Path) -> None:
    settings = tiny_settings(predictor="wls", minibatch=8, target_kl=0.0)
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    critic = mara_ppo.Critic(trainer.policy, settings.critic_lr)
    network = critic.network
    assert not {id(p) for p in network.parameters()} & {id(p) for p in trainer.policy.parameters()}
    batch = merge_steps(tiny_rollout(trainer, trainer.settings.configs(3), 8, critic=network))
    policy_before = {k: v.clone() for k, v in trainer.policy.state_dict().items()}
    critic_before = {k: v.clone() for k, v in network.state_dict().items()}
    critic.fit(batch, torch.randn(len(batch.reward)), settings, trainer.generator)
    assert all(p.grad is None for p in trainer.policy.parameters())
    for key, value in trainer.policy.state_dict().items():
        torch.testing.assert_close(value, policy_before[key], rtol=0, atol=0)
    assert any(not torch.equal(network.state_dict()[k], v) for k, v in critic_before.items())
    # and the policy's update leaves the critic alone
    network.zero_grad(set_to_none=True)
    critic_before = {k: v.clone() for k, v in network.state_dict().items()}
    optimiser = torch.optim.Adam(trainer.policy.parameters(), lr=1e-2)
    advantages = torch.randn(len(batch.reward), generator=torch.Generator().manual_seed(0))
    stats = mara_ppo.policy_update(trainer, batch, advantages, batch.log_prob, optimiser)
    assert stats["policy_epochs"] == 1
    assert all(p.grad is None for p in network.parameters())
    for key, value in network.state_dict().items():
        torch.testing.assert_close(value, critic_before[key], rtol=0, atol=0)
    assert any(not torch.equal(trainer.policy.state_dict()[k], v) for k, v in policy_before.items())


def test_kl_control_stops_an_update_that_moves_too_far(tmp_path: Path) -> None:
    settings = tiny_settings(predictor="wls", minibatch=4, ppo_epochs=3, target_kl=1e-6)
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    batch = merge_steps(tiny_rollout(trainer, trainer.settings.configs(3), 8))
    optimiser = torch.optim.Adam(trainer.policy.parameters(), lr=0.1)
    advantages = torch.randn(len(batch.reward), generator=torch.Generator().manual_seed(1))
    stats = mara_ppo.policy_update(trainer, batch, advantages, batch.log_prob, optimiser)
    assert stats["policy_epochs"] == "0+stop"


def test_rollout_rewards_telescope_in_the_simulator_at_the_discount_used() -> None:
    """A played episode of the training configs: discounted shaped return = discounted
    completions - Phi(s_0), and over its first T epochs the shaping adds
    gamma**T Phi(s_T) - Phi(s_0)."""
    gamma = 0.9
    settings = tiny_settings(gamma=gamma, preset="tiny")
    assert settings.configs(1)[0].shaping_discount == gamma
    policy = small_policy(2)
    played = {}
    for shaping in (0.0, 1.0):
        config = settings.configs(1)[0].replace(load=4.0, shaping_weight=shaping)
        vector = ClusterVector([config], policy, 0, n_samples=4, episode_seeds=[[11]])
        rewards, potentials = [], [float(vector.batches[0].core.potential[0])]
        while vector.live:
            batch = vector.step()
            rewards.append(float(batch.reward[0]))
            potentials.append(float(vector.batches[0].core.potential[0]))
        played[shaping] = (np.array(rewards), np.array(potentials))
    completions, _ = played[0.0]
    shaped, potentials = played[1.0]
    assert completions.sum() > 0 and potentials.max() > 0
    discount = gamma ** np.arange(len(shaped))
    assert discount @ shaped == pytest.approx(discount @ completions - potentials[0], abs=1e-5)
    cut = len(shaped) // 2
    window = discount[:cut] @ shaped[:cut]
    expected = discount[:cut] @ completions[:cut] + gamma**cut * potentials[cut] - potentials[0]
    assert window == pytest.approx(expected, abs=1e-5)
    # Shaping at gamma = 1 (Phi(s') - Phi(s)) would not telescope at this gamma.
    undiscounted_shaping = completions + np.diff(potentials)
    assert abs(discount @ undiscounted_shaping - (discount @ completions - potentials[0])) > 1e-3


def test_value_norm_tracks_and_inverts() -> None:
    norm = ValueNorm(beta=0.9)
    values = torch.tensor([2.0, 4.0, 6.0, 8.0])
    for _ in range(50):
        norm.update(values)
    assert float(norm.mean) == pytest.approx(5.0)
    assert float(norm.std) == pytest.approx(float(values.std(unbiased=False)))
    torch.testing.assert_close(norm.denormalise(norm.normalise(values)), values)
    with pytest.raises(ValueError, match="beta"):
        ValueNorm(beta=1.0)
