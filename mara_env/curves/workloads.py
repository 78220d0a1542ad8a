"""Named workloads: which task families an episode draws from, and in what proportion.

Pass one by name wherever a config is built: ``mara_env.env(workload="rl")``,
``get_config("training", workload="vision")``; it sets ``ClusterConfig.family_weights``.

| workload | families |
|---|---|
| ``in_distribution`` | tabular, vision and rl in equal shares: the mix schedulers train on |
| ``rl`` | reinforcement-learning runs only |
| ``vision`` | vision runs only |
| ``tabular`` | tabular runs only |
| ``synthetic`` | parametric synthetic curves only |
"""

from __future__ import annotations

from collections.abc import Mapping

from mara_env.errors import ConfigError

FamilyWeights = tuple[tuple[str, float], ...]

WORKLOADS: Mapping[str, FamilyWeights] = {
    "in_distribution": (("tabular", 1.0), ("vision", 1.0), ("rl", 1.0)),
    "rl": (("rl", 1.0),),
    "vision": (("vision", 1.0),),
    "tabular": (("tabular", 1.0),),
    "synthetic": (("synthetic", 1.0),),
}


def workload_weights(name: str) -> FamilyWeights:
    """The family weights of workload ``name``.

    Raises:
        ConfigError: For an unknown workload.

    Example:
        >>> workload_weights("rl")
        (('rl', 1.0),)
    """
    if name not in WORKLOADS:
        raise ConfigError(f"Unknown workload {name!r}. Known workloads: {sorted(WORKLOADS)}.")
    return WORKLOADS[name]
