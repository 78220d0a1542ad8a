"""Where settings are chosen: a world's ``training`` preset at the training load, train split.

Every setting a benchmark chooses (the baselines' tuning, the reach planner's model and its
settings) is chosen on these configs, one per reported workload
(:data:`~mara_env.benchmarks.common.protocol.EVALUATION_WORKLOADS`), and on training seeds
(:mod:`mara_env.benchmarks.common.seeds`), so test curves and evaluation seeds stay untouched.

Example:
    >>> configs = tuning_configs(world_version=3)
    >>> sorted(configs), sorted({config.split for config in configs.values()})
    (['in_distribution', 'rl', 'vision'], ['train'])
"""

from __future__ import annotations

from mara_env import TRAINING_LOAD, ClusterConfig, get_config
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.worlds.config import LATEST_WORLD_VERSION

#: Arrival epochs of a ``quick`` (smoke-run) config.
QUICK_ARRIVAL_HORIZON = 20


def tuning_configs(
    *, quick: bool = False, world_version: int = LATEST_WORLD_VERSION
) -> dict[str, ClusterConfig]:
    """The ``training`` preset of ``world_version`` at the training load, one config per
    workload, train split (arrivals during :data:`QUICK_ARRIVAL_HORIZON` epochs if ``quick``).

    Raises:
        ValueError: If a config would draw test curves (it never should: a guard against a
            changed preset).
    """
    configs = {}
    for workload in EVALUATION_WORKLOADS:
        config = get_config(
            "training", workload=workload, load=TRAINING_LOAD, world_version=world_version
        )
        if quick:
            config = config.replace(arrival_horizon=QUICK_ARRIVAL_HORIZON)
        if config.split != "train":
            raise ValueError(
                f"Settings must be chosen on the train split, but the training preset for "
                f"{workload!r} draws {config.split!r} curves."
            )
        configs[workload] = config
    return configs
