"""The MARA scheduler: the trained autoregressive policy behind the scheduler protocol.

At the first node of each epoch :class:`Mara` builds the epoch's features from the observation
(:class:`mara_env.agents.mara.features.FeatureBuilder`: observed histories and predictions), encodes the
slots once and decodes the nodes one after another (:class:`mara_env.agents.mara.policy.MaraPolicy`),
each node conditioned on the earlier nodes' choices; later nodes of the epoch get their decoded
action (idle if their mask forbids it). The training script drives the same
:meth:`Mara.begin_epoch` / :meth:`Mara.end_epoch` calls for a vector of clusters and decodes
them in one batch, so training and acting see the same features.

``make_agent("mara")`` loads the shipped checkpoint of the latest world,
``agents/worlds/v3/mara.pt`` (``make_agent("mara", world_version=N)``: the one trained on
an older world, ``agents/worlds/v<N>/mara.pt``), and ``make_agent("mara_imitation")`` the
imitation warm start ``mara_imitation.pt`` beside it (each card
``mara.json`` holds the network config, the predictor's name, the feature layout and the
SHA-256 of the weights; a mismatch raises :class:`mara_env.predictors.checkpoint.CheckpointError`).

Example:
    >>> from mara_env.agents import evaluate
    >>> from mara_env.agents.mara.agent import Mara
    >>> rows = evaluate(Mara.load(), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('mara', 0.0)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from mara_env import ClusterConfig
from mara_env.agents.base import NotResetError, Observation
from mara_env.agents.mara.features import (
    GLOBAL_INPUTS,
    PREDICTION_FEATURES,
    SLOT_INPUTS,
    EpochFeatures,
    FeatureBuilder,
    NoPredictions,
)
from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
from mara_env.errors import ConfigError
from mara_env.predictors.base import Predictor, is_privileged
from mara_env.predictors.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from mara_env.predictors.flow_matching import check_threads, torch_threads
from mara_env.predictors.registry import make_predictor
from mara_env.sim.observation import nodes_decided
from mara_env.worlds.world import LATEST_WORLD_VERSION, world

#: Version of the feature layout; checkpoints made for another layout are refused.
FEATURE_LAYOUT = 1
_LAYOUT = {
    "feature_layout": FEATURE_LAYOUT,
    "slot_inputs": SLOT_INPUTS,
    "global_inputs": GLOBAL_INPUTS,
    "prediction_features": PREDICTION_FEATURES,
}


def default_checkpoint(world_version: int = LATEST_WORLD_VERSION) -> Path:
    """Path of the checkpoint shipped for the world ``world_version``.

    Raises:
        mara_env.predictors.checkpoint.CheckpointError: For a world without a shipped checkpoint.
    """
    try:
        return world(world_version).folder / "mara.pt"
    except ConfigError as error:
        raise CheckpointError(f"No MARA checkpoint ships: {error}") from None


def imitation_checkpoint(world_version: int = LATEST_WORLD_VERSION) -> Path:
    """Path of the imitation warm start shipped for ``world_version``
    (``make_agent("mara_imitation")``), the weights PPO started from."""
    return default_checkpoint(world_version).with_name("mara_imitation.pt")


def batch_tensors(features: list[EpochFeatures]) -> tuple[torch.Tensor, ...]:
    """Stack epoch features of several clusters: slots, globals, mask, previous slots."""
    return (
        torch.from_numpy(np.stack([f.slots for f in features])),
        torch.from_numpy(np.stack([f.globals for f in features])),
        torch.from_numpy(np.stack([f.mask for f in features])),
        torch.from_numpy(np.stack([f.previous_slots for f in features])),
    )


class Mara:
    """The MARA scheduler (autoregressive policy over nodes, predictions as features).

    Args:
        policy: The network.
        predictor: The predictor behind the prediction features (the one it was trained with).
        n_samples: Prediction samples per task.
        greedy: Take each node's most likely action instead of sampling from the policy (the
            default samples, with the generator seeded by ``reset``, so the same seed gives the
            same actions). Greedy decoding one node after another tends to send every node to
            the single most likely task, so it is off by default.
        predictor_name: Name recorded in checkpoints.
        temperature: Sampling temperature (below 1 sharpens each node's distribution); the
            shipped checkpoint's card records the one chosen on validation episodes.
        threads: Torch threads while deciding (restored afterwards). One is fastest for these
            small per-epoch batches, and keeps parallel evaluation workers from competing.

    Example:
        >>> agent = Mara(MaraPolicy(PolicyConfig(width=16, layers=1, heads=2)), make_predictor("wls"))
        >>> agent.name
        'mara'
    """

    name = "mara"

    def __init__(
        self,
        policy: MaraPolicy,
        predictor: Predictor,
        n_samples: int = 16,
        *,
        greedy: bool = False,
        predictor_name: str | None = None,
        temperature: float = 1.0,
        threads: int = 1,
    ) -> None:
        if not temperature > 0:
            raise ValueError(f"Mara: temperature must be > 0, got {temperature!r}.")
        self.threads = check_threads(threads)
        self.policy = policy.eval()
        self.features = FeatureBuilder(predictor, n_samples)
        self.greedy = greedy
        self.temperature = float(temperature)
        self.predictor_name = predictor.name if predictor_name is None else predictor_name
        #: SHA-256 of the weights when loaded from a checkpoint (results name what made them).
        self.checkpoint_sha256: str | None = None
        self._config: ClusterConfig | None = None
        self._generator = torch.Generator()
        self._planned = np.zeros(0, dtype=np.int64)
        self._last_node = 0

    # ------------------------------------------------------------------ checkpoints
    @classmethod
    def load(
        cls,
        path: str | Path | None = None,
        *,
        world_version: int = LATEST_WORLD_VERSION,
        **options: Any,
    ) -> Mara:
        """The scheduler from a checkpoint (default: the one shipped for ``world_version``).

        Raises:
            mara_env.predictors.checkpoint.CheckpointError: If the checkpoint is missing, corrupt, or was
                made for another feature layout.
        """
        path = default_checkpoint(world_version) if path is None else Path(path)
        state, card = load_checkpoint(path, expected_config=_LAYOUT)
        config = card["config"]
        try:  # the card's settings, each checked where it is used
            policy = MaraPolicy(
                PolicyConfig(
                    width=config["width"],
                    layers=config["layers"],
                    heads=config["heads"],
                    autoregressive=config["autoregressive"],
                )
            )
            policy.load_state_dict(state)
            name = config["predictor"]
            predictor = NoPredictions() if name == NoPredictions.name else make_predictor(name)
            card_settings = dict(
                n_samples=config["n_samples"],
                predictor_name=name,
                temperature=config.get("temperature", 1.0),
            )
            agent = cls(policy, predictor, **card_settings)
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(
                f"Checkpoint {path}: its card does not describe a MARA network this code can "
                f"build ({type(error).__name__}: {error}). Use the checkpoint shipped with this "
                "version of the package, or retrain the model with it."
            ) from None
        if options:  # the caller's own settings: their errors are theirs
            agent = cls(policy, predictor, **{**card_settings, **options})
        agent.checkpoint_sha256 = card["sha256"]
        return agent

    def save(self, path: str | Path, facts: dict[str, Any] | None = None) -> None:
        """Write the network and its card (config, predictor, feature layout, ``facts``)."""
        config = {
            **self.policy.config.as_dict(),
            **_LAYOUT,
            "predictor": self.predictor_name,
            "n_samples": self.features.n_samples,
            "temperature": self.temperature,
        }
        save_checkpoint(path, self.policy.state_dict(), config=config, facts=facts)

    # ------------------------------------------------------------------ protocol
    @property
    def privileged(self) -> bool:
        """Whether it reads hidden state: exactly when its predictor does (the oracle)."""
        return is_privileged(self.features.predictor)

    def bind(self, env: Any) -> None:
        """Hand a privileged predictor the environment's simulator for the episode ahead (the
        harnesses call this every episode; nothing to do otherwise)."""
        if self.privileged:
            cast(Any, self.features.predictor).bind(env)

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Start an episode of ``config``; predictions and sampling are seeded by ``seed``."""
        self._config = config
        sequence = np.random.SeedSequence(seed)
        predictor_seed, torch_seed = sequence.generate_state(2)
        self.features.reset(config, int(predictor_seed))
        self._generator = torch.Generator().manual_seed(int(torch_seed))
        self._planned = np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        self._last_node = config.n_nodes

    @property
    def config(self) -> ClusterConfig:
        """The configuration of the current episode."""
        if self._config is None:
            raise NotResetError("Mara has no configuration yet: call reset(config, seed) first.")
        return self._config

    def begin_epoch(self, observation: np.ndarray, mask: np.ndarray) -> EpochFeatures:
        """Features of the epoch that starts with node 0's ``observation`` and ``mask``."""
        return self.features.build(observation, mask)

    def end_epoch(self, actions: np.ndarray) -> None:
        """Record the nodes' actions of this epoch (and replay them to later nodes)."""
        self.features.record(actions)
        self._planned = np.asarray(actions, dtype=np.int64).copy()

    def draws(self) -> torch.Tensor:
        """This epoch's ``(n_nodes,)`` uniform numbers for sampling (from the seeded generator)."""
        return torch.rand(self.config.n_nodes, generator=self._generator)

    @torch.inference_mode()
    def decide(self, features: EpochFeatures) -> np.ndarray:
        """Every node's action for one epoch (:meth:`MaraPolicy.act`: the actions of
        ``encode`` and ``decode`` for a batch of one)."""
        return self.policy.act(
            torch.from_numpy(features.slots[None]),
            torch.from_numpy(features.globals[None]),
            torch.from_numpy(features.mask[None]),
            torch.from_numpy(features.previous_slots[None]),
            uniforms=None if self.greedy else self.draws()[None, :],
            max_nodes_per_task=self.config.max_nodes_per_task,
            temperature=self.temperature,
        )

    def act(self, observation: Observation, node: int) -> int:
        """Node ``node``'s action: the epoch is decoded at its first node, replayed after."""
        config = self.config
        if not 0 <= node < config.n_nodes:
            raise ValueError(
                f"Mara.act: node {node} is outside 0..{config.n_nodes - 1} for this config; "
                "pass the index of the acting node (node_i -> i)."
            )
        vector = np.asarray(observation["observation"])
        mask = np.asarray(observation["action_mask"])
        if nodes_decided(vector, config) == 0 and node <= self._last_node:
            with torch_threads(self.threads):
                self.end_epoch(self.decide(self.begin_epoch(vector, mask)))
        self._last_node = node
        action = int(self._planned[node])
        return action if mask[action] else config.idle_action
