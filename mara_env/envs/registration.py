"""Registration of the environment ids with Gymnasium and PettingZoo (done at import)."""

from __future__ import annotations

import gymnasium
import pettingzoo

from mara_env.worlds.world import WORLDS


def register_envs() -> None:
    """Register each world's id (:data:`mara_env.worlds.world.WORLDS`: ``mara_env/Cluster-v1``
    to ``-v3``; each id sets ``ClusterConfig.world_version``) with Gymnasium (central scheduler, with the batched vector
    entry point) and with PettingZoo's registry (AEC and Parallel forms). Safe to call more than
    once."""
    for entry in WORLDS:
        name, kwargs = entry.env_id, {"world_version": entry.version}
        if name not in gymnasium.registry:
            gymnasium.register(
                id=name,
                entry_point="mara_env.envs.gym_env:ClusterGymEnv",
                vector_entry_point="mara_env.envs.vector_env:make_vector_env",
                kwargs=kwargs,
            )
        if name not in pettingzoo.aec_registry:
            pettingzoo.register("aec", name, entry_point="mara_env.envs.aec_env:env", kwargs=kwargs)
        if name not in pettingzoo.parallel_registry:
            pettingzoo.register(
                "parallel",
                name,
                entry_point="mara_env.envs.parallel_env:parallel_env",
                kwargs=kwargs,
            )
