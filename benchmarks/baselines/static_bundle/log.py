"""``bundle.csv``: the rows of finished seeds, appended one seed at a time, read back on resume.

Each row names its ``setup``: a fingerprint of the bundle's definition and of the code it ran
(:func:`setup_fingerprint`). Rows of other setups (the other bundle, older code) stay in the
file but are never reused, so a resumed run after a code change plays its episodes again.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "bundle.csv"
    >>> log = BundleLog(path, resume=True)
    >>> log.append([{"setup": "s1", "bundle": "paper", "agent": "edf", "seed": 0, "completed": 3,
    ...              "arrived": 10, "completion_rate": 0.3, "switches": 9, "utilisation": 1.0,
    ...              "epochs": 40, "illegal_actions": 0}])
    >>> BundleLog(path, resume=True).done("s1"), BundleLog(path, resume=True).done("s2")
    ({('edf', 0)}, set())
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mara_env import ClusterConfig, TraceSource
from mara_env.benchmarks.baselines.static_bundle.bundles import N_TASKS, BundleSpec
from mara_env.benchmarks.common.keys import Manifest, code_manifest
from mara_env.benchmarks.common.store import ResultsStore

#: Columns of ``bundle.csv``, in order, and their types.
SCHEMA: dict[str, type] = {
    "setup": str,
    "bundle": str,
    "agent": str,
    "seed": int,
    "completed": float,
    "arrived": float,
    "completion_rate": float,
    "switches": float,
    "utilisation": float,
    "epochs": float,
    "illegal_actions": float,
}
COLUMNS = tuple(SCHEMA)
#: The entry points of a bundle's episodes: the player and the schedulers' registry.
PLAYING_CODE = ("mara_env.benchmarks.baselines.static_bundle.play", "mara_env.agents.registry")


def setup_manifest(spec: BundleSpec, config: ClusterConfig, source: TraceSource) -> Manifest:
    """What a bundle's rows depend on: :func:`mara_env.benchmarks.common.keys.code_manifest` of
    :data:`PLAYING_CODE` with the bundle, its config and its trace source as settings."""
    settings = {"tasks": N_TASKS, "bundle": repr(spec), "config": repr(config)}
    settings["traces"] = source.fingerprint
    return code_manifest(PLAYING_CODE, world_version=config.world_version, settings=settings)


def setup_fingerprint(spec: BundleSpec, config: ClusterConfig, source: TraceSource) -> str:
    """The ``setup`` key of a bundle's rows: the digest of :func:`setup_manifest`, so rows of
    another bundle or of other code are never reused."""
    return setup_manifest(spec, config, source).digest


class BundleLog:
    """``bundle.csv``: every row in the file, and appends of whole seeds.

    A thin use of :class:`mara_env.benchmarks.common.store.ResultsStore` keyed by setup, agent and seed.

    Args:
        path: The CSV file.
        resume: Keep the rows already in the file; otherwise start it afresh (the first append
            replaces it).

    Raises:
        mara_env.benchmarks.common.store.ResultsFileError: If the file exists with other columns or a
            malformed row (a ``ValueError``).
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.store = ResultsStore(
            path,
            SCHEMA,
            key=("setup", "agent", "seed"),
            fresh=not resume,
            advice="Use another --output directory or --no-resume.",
        )

    def rows_of(self, setup: str) -> list[dict[str, Any]]:
        """The rows of one setup."""
        return self.store.rows_where(setup=setup)

    def done(self, setup: str) -> set[tuple[str, int]]:
        """(agent, seed) pairs already in the file for ``setup``."""
        return {(row["agent"], row["seed"]) for row in self.rows_of(setup)}

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` (their columns) in one write and flush them to disk."""
        self.store.extend(rows)
