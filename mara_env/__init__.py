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

from mara_env.aec_env import ENV_ID, env, node_turns, raw_env
from mara_env.batched_nodes import BatchedNodesEnv
from mara_env.config import (
    LATEST_WORLD_VERSION,
    PRESETS,
    TRAINING_LOAD,
    WORLD_VERSIONS,
    ClusterConfig,
    env_id,
    get_config,
)
from mara_env.core import ClusterBatch
from mara_env.errors import (
    ActionError,
    ConfigError,
    EnvStateError,
    InstallationError,
    MaraEnvError,
    TraceError,
    UnexpectedArgumentError,
)
from mara_env.gym_env import ClusterGymEnv
from mara_env.installation import check_installation, installation_problems
from mara_env.observation import decode_observation
from mara_env.parallel_env import ClusterParallelEnv, parallel_env
from mara_env.registration import register_envs
from mara_env.simulator import ClusterSimulator
from mara_env.sources import SHIPPED_TRACES, CompositeTraceSource, default_trace_source
from mara_env.synthetic import SyntheticTraceSource
from mara_env.traces import CurvePool, TraceFileSource, TraceSource, save_traces
from mara_env.vector_env import ClusterVectorEnv
from mara_env.workloads import WORKLOADS

__version__ = "0.3.0"

__all__ = [
    "ENV_ID",
    "LATEST_WORLD_VERSION",
    "PRESETS",
    "SHIPPED_TRACES",
    "TRAINING_LOAD",
    "WORKLOADS",
    "WORLD_VERSIONS",
    "ActionError",
    "BatchedNodesEnv",
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
]

register_envs()
