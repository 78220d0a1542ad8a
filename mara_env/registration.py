"""Registration of the environment ids with Gymnasium and PettingZoo (done at import)."""

from __future__ import annotations

import gymnasium
import pettingzoo

from mara_env.aec_env import ENV_ID


def register_envs() -> None:
    """Register ``mara_env/Cluster-v1`` with Gymnasium (central scheduler, with the batched
    vector entry point) and with PettingZoo's registry (AEC and Parallel forms). Safe to call
    more than once."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(
            id=ENV_ID,
            entry_point="mara_env.gym_env:ClusterGymEnv",
            vector_entry_point="mara_env.vector_env:make_vector_env",
        )
    if ENV_ID not in pettingzoo.aec_registry:
        pettingzoo.register("aec", ENV_ID, entry_point="mara_env.aec_env:env")
    if ENV_ID not in pettingzoo.parallel_registry:
        pettingzoo.register("parallel", ENV_ID, entry_point="mara_env.parallel_env:parallel_env")
