"""The worlds the prediction audits play side by side (the leak audit, the information ladder, the
"When does loss prediction pay?" study): every registered world, and world options beside them.

An :class:`AuditWorld` is a registered world's rules (its version) and the curves it plays: the
package's own, or those curves smoothed as practitioners judge convergence
(:class:`mara_env.curves.smoothed.SmoothedTraceSource`). ``v3-smoothed`` is Cluster-v3 with every
curve an EMA of weight :data:`SMOOTHING_WEIGHT`: a task reports, and is judged on, the trend of
its run rather than the noisy dip of one step. It is an option, never a change of Cluster-v3.

Example:
    >>> v3s = WORLDS["v3-smoothed"]
    >>> v3s.config("evaluation").world_version, v3s.trace_source().weight
    (3, 0.9)
    >>> WORLDS["v3"].trace_source() is default_trace_source()
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mara_env import ClusterConfig, get_config
from mara_env.curves.smoothed import SmoothedTraceSource
from mara_env.curves.sources import default_trace_source
from mara_env.curves.traces import TraceSource
from mara_env.worlds.world import LATEST_WORLD_VERSION, world
from mara_env.worlds.world import WORLDS as REGISTERED_WORLDS

#: The EMA weight of the smoothed-loss option: about the last ten recorded points of a run.
SMOOTHING_WEIGHT = 0.9


@dataclass(frozen=True)
class AuditWorld:
    """One world an audit plays: a registered world's rules on the package's curves, smoothed by
    an EMA of weight ``smoothing`` where it is above 0.

    Attributes:
        name: What the pages call it (``v3``, ``v3-smoothed``).
        version: The registered world whose rules it plays.
        smoothing: The EMA weight of its curves (0: the curves as recorded).
    """

    name: str
    version: int
    smoothing: float = 0.0

    @property
    def description(self) -> str:
        """What the world is, as the results pages say it."""
        rules = f"Cluster-v{self.version}'s rules: {world(self.version).summary}"
        if not self.smoothing:
            return rules
        return (
            f"{rules}; every curve smoothed by an exponential moving average of weight "
            f"{self.smoothing:g} (a task reports and is judged on its run's trend)"
        )

    def config(self, preset: str, **changes: Any) -> ClusterConfig:
        """``preset`` in this world's rules, with ``changes``."""
        return get_config(preset, world_version=self.version, **changes)

    def trace_source(self) -> TraceSource:
        """The curves this world plays (pass it as ``trace_source`` to an env)."""
        source = default_trace_source()
        return SmoothedTraceSource(source, self.smoothing) if self.smoothing else source


#: Every world the audits know, by name: the registered ones, then the smoothed-loss option.
WORLDS: Mapping[str, AuditWorld] = {
    **{entry.name: AuditWorld(entry.name, entry.version) for entry in REGISTERED_WORLDS},
    "v3-smoothed": AuditWorld("v3-smoothed", 3, SMOOTHING_WEIGHT),
}
#: The world the audits play unless told otherwise: the library's default.
DEFAULT_WORLD = world(LATEST_WORLD_VERSION).name
