"""Registration of the environment ids with Gymnasium and PettingZoo (done at import)."""

from __future__ import annotations

import gymnasium
import pettingzoo

from mara_env.config import WORLD_VERSIONS, env_id


def register_envs() -> None:
    """Register ``mara_env/Cluster-v1``, ``-v2`` and ``-v3`` (each id sets
    ``ClusterConfig.world_version``) with Gymnasium (central scheduler, with the batched vector
    entry point) and with PettingZoo's registry (AEC and Parallel forms). Safe to call more than
    once."""
    for version in WORLD_VERSIONS:
        name, kwargs = env_id(version), {"world_version": version}
        if name not in gymnasium.registry:
            gymnasium.register(
                id=name,
                entry_point="mara_env.gym_env:ClusterGymEnv",
                vector_entry_point="mara_env.vector_env:make_vector_env",
                kwargs=kwargs,
            )
        if name not in pettingzoo.aec_registry:
            pettingzoo.register("aec", name, entry_point="mara_env.aec_env:env", kwargs=kwargs)
        if name not in pettingzoo.parallel_registry:
            pettingzoo.register(
                "parallel", name, entry_point="mara_env.parallel_env:parallel_env", kwargs=kwargs
            )
