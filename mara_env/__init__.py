"""mara-env: scheduling deadline-bound ML training tasks on discrete compute nodes.

PettingZoo AEC and Parallel environments (one agent per node), a Gymnasium environment (one
central scheduler), its batched vector form and a batched multi-agent entry, all over one
simulation core (state in NumPy arrays, the epoch's loops compiled with Numba) that steps a
batch of clusters driven by recorded loss curves.

Example:
    >>> import gymnasium as gym
    >>> import mara_env
    >>> env = gym.make("mara_env/Cluster-v3", config="tiny")
    >>> observation, info = env.reset(seed=0)
    >>> observation.shape == env.observation_space.shape
    True
"""

from __future__ import annotations

from types import ModuleType

from mara_env import moved
from mara_env.curves.sources import SHIPPED_TRACES, CompositeTraceSource, default_trace_source
from mara_env.curves.synthetic import SyntheticTraceSource
from mara_env.curves.traces import CurvePool, TraceFileSource, TraceSource, save_traces
from mara_env.curves.workloads import WORKLOADS
from mara_env.envs.aec_env import ENV_ID, env, node_turns, raw_env
from mara_env.envs.batched_nodes import BatchedNodesEnv
from mara_env.envs.gym_env import ClusterGymEnv
from mara_env.envs.parallel_env import ClusterParallelEnv, parallel_env
from mara_env.envs.registration import register_envs
from mara_env.envs.vector_env import ClusterVectorEnv
from mara_env.errors import (
    ActionError,
    CheckpointError,
    ConfigError,
    EnvStateError,
    InstallationError,
    MaraEnvError,
    TraceError,
    UnexpectedArgumentError,
)
from mara_env.installation import check_installation, installation_problems
from mara_env.installation import find_source_tree_packages as _find_source_tree_packages
from mara_env.installation import installed_version as _installed_version
from mara_env.sim.core import ClusterBatch
from mara_env.sim.observation import decode_observation
from mara_env.sim.simulator import ClusterSimulator
from mara_env.worlds.config import ClusterConfig, env_id
from mara_env.worlds.presets import PRESETS, TRAINING_LOAD, get_config
from mara_env.worlds.world import LATEST_WORLD_VERSION, WORLD_VERSIONS, WORLDS, World, world

_find_source_tree_packages()

#: The installed distribution's version (``pyproject.toml`` is its one home).
__version__ = _installed_version()

__all__ = [
    "ENV_ID",
    "LATEST_WORLD_VERSION",
    "PRESETS",
    "SHIPPED_TRACES",
    "TRAINING_LOAD",
    "WORKLOADS",
    "WORLDS",
    "WORLD_VERSIONS",
    "ActionError",
    "BatchedNodesEnv",
    "CheckpointError",
    "ClusterBatch",
    "ClusterConfig",
    "ClusterGymEnv",
    "ClusterParallelEnv",
    "ClusterSimulator",
    "ClusterVectorEnv",
    "CompositeTraceSource",
    "ConfigError",
    "CurvePool",
    "EnvStateError",
    "InstallationError",
    "MaraEnvError",
    "SyntheticTraceSource",
    "TraceError",
    "TraceFileSource",
    "TraceSource",
    "UnexpectedArgumentError",
    "World",
    "check_installation",
    "decode_observation",
    "default_trace_source",
    "env",
    "env_id",
    "get_config",
    "installation_problems",
    "node_turns",
    "parallel_env",
    "raw_env",
    "register_envs",
    "save_traces",
    "world",
]

register_envs()
moved.install()


def __getattr__(name: str) -> ModuleType:
    """``mara_env.config`` and the other module paths that moved in 0.4.0 (:mod:`mara_env.moved`)."""
    if f"mara_env.{name}" in moved.MOVED:
        return moved.moved_module(f"mara_env.{name}")
    raise AttributeError(f"module 'mara_env' has no attribute {name!r}")
