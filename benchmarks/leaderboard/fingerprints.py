"""What every leaderboard episode depends on whatever its agent (the cell key's shared half).

A cell key (:attr:`mara_env.benchmarks.leaderboard.grid.Cell.key`) holds two digests of the one key
recipe (:mod:`mara_env.benchmarks.common.keys`): its agent's (:func:`mara_env.benchmarks.common.keys.build_agent`)
and the shared one, :func:`shared_manifest`: the harness (:mod:`mara_env.agents.evaluation`), the
leaderboard's cell code and, through their imports, the simulator and environments; the trace
data, the interpreter's minor version and the package version. So changing LARA's module plays
again the cells of the agents that import it and no others; changing the simulator plays every
cell again; editing a docstring plays nothing again.

Example:
    >>> shared = shared_manifest()
    >>> "mara_env.sim.core" in shared.items, shared.items[VERSION] == package_version()
    (True, True)
"""

from __future__ import annotations

from mara_env.benchmarks.common.keys import Manifest, code_manifest
from mara_env.benchmarks.common.provenance import package_version
from mara_env.curves.sources import resolve_trace_source

#: The code every episode runs: the harness, the leaderboard's cells, and what they import.
SHARED_ROOTS = ("mara_env.agents.evaluation", "mara_env.benchmarks.leaderboard.cells")
#: The manifest item holding the package version.
VERSION = "mara-env version"
#: The manifest item holding the fingerprint of a leaderboard's own curves (``--traces``).
TRACES = "traces"


def shared_manifest(traces: str | None = None) -> Manifest:
    """The code, data, interpreter and version every episode depends on, whatever its agent;
    with ``traces`` (a leaderboard on your own curves), that file's content too."""
    manifest = code_manifest(SHARED_ROOTS)
    items = {**manifest.items, VERSION: package_version()}
    if traces is not None:
        items[TRACES] = resolve_trace_source(traces).fingerprint
    return Manifest(items)
