"""A policy trained on the Gymnasium form, acting as a scheduler: :class:`GymPolicyScheduler`,
and :func:`load_sb3_policy`, which makes one of a MaskablePPO model's file (``--agents
sb3:model.zip`` on the leaderboard).

The Gymnasium form (``gym.make("mara_env/Cluster-v3")``) asks a central policy for every node's
choice at once, from the state vector, with a flat action mask (sb3-contrib's format); the
:class:`~mara_env.agents.base.Scheduler` protocol asks each node in turn, from its own AEC
observation. At the first node of an epoch the adapter rebuilds the state vector the Gymnasium
form would give (:func:`central_state`: the first node's observation without its node-specific
entries, then each node's previous slot and, as no node has chosen yet, idle choices) and the
flat mask (every node may take what the first node may), asks the policy once, and replays its
choices to the later nodes; a choice a later node may not make (its task reached
``max_nodes_per_task``) becomes idle, as the Gymnasium form makes such a conflict idle.

A policy is any callable ``policy(state, masks) -> actions``: ``state`` the float32 state
vector, ``masks`` the flat boolean mask of ``n_nodes * (n_slots + 1)`` values, and ``actions``
one int per node. A plain torch policy joins the same way (``docs/agents.md``).

Example:
    >>> import numpy as np
    >>> from mara_env.agents.evaluation import evaluate
    >>> def first_legal(state, masks):  # every node takes its first legal action
    ...     return masks.reshape(2, -1).argmax(axis=1)
    >>> rows = evaluate(GymPolicyScheduler(first_legal, name="first_legal"), "tiny", seeds=[0])
    >>> rows[0]["agent"], rows[0]["illegal_actions"]
    ('first_legal', 0.0)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mara_env import ClusterConfig
from mara_env.agents.base import EpochScheduler, Observation
from mara_env.errors import CheckpointError
from mara_env.sim.observation import (
    SlotView,
    observation_size,
    shared_features,
    state_size,
    state_vector,
)

#: What a policy trained on the Gymnasium form is: ``(state, flat masks) -> one action per node``.
GymPolicy = Callable[[np.ndarray, np.ndarray], Any]


def central_state(
    observation: np.ndarray, previous_slots: np.ndarray, config: ClusterConfig
) -> np.ndarray:
    """The Gymnasium form's observation (the state vector) at the start of an epoch, from the
    first node's AEC observation and each node's previous slot (``config.n_slots``: idle, or its
    task left).

    Raises:
        ValueError: If ``observation`` is not one node's observation of ``config``.
    """
    size = observation_size(config)
    if np.shape(observation)[-1:] != (size,):
        raise ValueError(
            f"central_state: expected one node's observation of {size} values for "
            f"{config.n_nodes} nodes and {config.n_slots} slots, got shape "
            f"{np.shape(observation)}; pass observation['observation'] of an unwrapped env."
        )
    undecided = np.full(config.n_nodes, config.n_slots)
    return state_vector(shared_features(observation), previous_slots, undecided, config.n_slots)


class GymPolicyScheduler(EpochScheduler):
    """A policy of the Gymnasium form as a scheduler (see the module's docstring).

    Args:
        policy: ``policy(state, masks) -> actions`` (:data:`GymPolicy`).
        name: What result tables call it.
        fingerprint: A text that changes whenever the policy's behaviour does (e.g. its weights'
            SHA-256): the leaderboard keys its episodes by it.
        state_shape: The state shape the policy was trained on, if known: a cluster of another
            size is then refused at :meth:`reset`, not deep inside the policy.
    """

    def __init__(
        self,
        policy: GymPolicy,
        name: str = "gym_policy",
        fingerprint: str | None = None,
        state_shape: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__()
        if not callable(policy):
            raise TypeError(
                f"GymPolicyScheduler: policy must be callable as policy(state, masks), got "
                f"{type(policy).__name__}."
            )
        self.policy = policy
        self.name = name
        self.fingerprint = fingerprint
        self.state_shape = state_shape
        self._observation = np.zeros(0, dtype=np.float32)

    def on_reset(self) -> None:
        expected = (state_size(self.config),)
        if self.state_shape is not None and tuple(self.state_shape) != expected:
            raise ValueError(
                f"{self.name}: the policy was trained on states of shape {self.state_shape}, "
                f"but a cluster of {self.config.n_nodes} nodes and {self.config.n_slots} slots "
                f"has states of shape {expected}; evaluate it on the cluster size it was "
                "trained on (e.g. --config tiny)."
            )

    def act(self, observation: Observation, node: int) -> int:
        self._observation = np.asarray(observation["observation"])
        return super().act(observation, node)

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        config = self.config
        state = central_state(self._observation, self.previous_slots, config)
        masks = np.tile(np.asarray(mask, dtype=bool), config.n_nodes)
        actions = np.asarray(self.policy(state, masks))
        if actions.shape != (config.n_nodes,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                f"{self.name}: the policy must return one int action per node, shape "
                f"({config.n_nodes},), got dtype {actions.dtype} and shape {actions.shape}."
            )
        return actions.astype(np.int64)


def load_sb3_policy(path: str | Path, deterministic: bool = True) -> GymPolicyScheduler:
    """A scheduler of the sb3-contrib ``MaskablePPO`` model saved at ``path`` (a ``.zip`` of
    ``model.save``), trained on the Gymnasium form; named after the file's stem and keyed by its
    SHA-256.

    Raises:
        CheckpointError: If there is no such file, or it is not a MaskablePPO model.
        ImportError: Without sb3-contrib (``pip install "mara-env[torch]"``).
    """
    file = Path(path)
    if not file.is_file():
        raise CheckpointError(
            f"no model file {str(path)!r}: give the .zip that MaskablePPO.save wrote, as "
            "sb3:PATH.zip."
        )
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as error:
        raise ImportError(
            f'loading {file} needs sb3-contrib: pip install "mara-env[torch]" ({error}).'
        ) from error
    try:
        model = MaskablePPO.load(file, device="cpu")
    except Exception as error:  # a zip of another algorithm, or not a model at all
        raise CheckpointError(
            f"{file} is not a MaskablePPO model ({type(error).__name__}: {error}); save one "
            "with MaskablePPO(...).save(path)."
        ) from error

    def policy(state: np.ndarray, masks: np.ndarray) -> Any:
        action, _ = model.predict(state, action_masks=masks, deterministic=deterministic)
        return action

    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    return GymPolicyScheduler(
        policy,
        name=file.stem,
        fingerprint=f"MaskablePPO {digest} deterministic={deterministic}",
        state_shape=model.observation_space.shape,
    )
