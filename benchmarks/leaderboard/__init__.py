"""The leaderboard: rank schedulers by completion rate over agents x workloads x loads x seeds.

The suite's main job. By default every registered agent runs on the ``in_distribution``, ``rl``
and ``vision`` workloads at 1.0x, 1.5x and 2.0x the training load (``mara_env.TRAINING_LOAD``)
of the ``evaluation`` preset (held-out test curves), for the evaluation seeds 1000-1009, which
no training or tuning code uses. One cell = one episode; cells run in local worker processes
over the available cores, or as Ray tasks (``--backend ray``), with the same numbers either way.

Usage::

    mara-leaderboard                                    # the default grid (a few minutes)
    mara-leaderboard --quick                            # about a minute
    mara-leaderboard --agent my_pkg.my_module:MyScheduler   # yours beside the shipped agents
    mara-leaderboard --agents edf lara --workloads rl --loads 1 2 --seeds 20
    mara-leaderboard --backend ray --ray-address auto   # on an existing Ray cluster
    mara-leaderboard --validate benchmarks/results/v3/leaderboard   # check published results

Statistics (:mod:`mara_env.benchmarks.common.statistics`): mean completion rate with a 95% stratified-bootstrap
interval (seeds resampled within each workload and load), the interquartile mean, ranks per
workload and overall, and the probability of improvement over LARA.

Output (``--output``, default ``./leaderboard_results``): ``episodes.jsonl``, the resumable
journal every finished episode is appended to atomically as it ends (a re-run skips finished
cells; a killed run loses at most the episodes in flight; a foreign, corrupt or edited file is
reported, never overwritten), and, derived from it, ``episodes.csv`` and ``episodes.json``
(every episode), ``leaderboard.md`` (the tables, plots, provenance and the regenerating
command), ``leaderboard.json`` (the statistics), ``completion_vs_load.png`` and ``gantt.png``.

Every episode is keyed by what produced it, code included (:mod:`.fingerprints`): changing an
agent's code or weights plays that agent's episodes again, changing the simulator plays them
all, and the command says how many finished episodes were invalidated and why.
``--validate DIR`` checks a results folder against its journal and the installed code
(:mod:`.validate`).

Modules: ``grid`` (what runs), ``cells`` (one episode), ``backends`` (where it runs) and
``lifeline`` (workers that end with the main process), ``source_closure`` and ``fingerprints``
(what an episode depends on), ``labels`` (agent names in tables), ``records`` and ``journal``
(the results file), ``invalidation`` (why episodes play again), ``summary`` and ``report``
(statistics and tables), ``plots``, ``provenance``, ``session`` (one run), ``validate`` and
``cli`` (the command).

Example:
    >>> import tempfile
    >>> from mara_env.benchmarks.leaderboard import main
    >>> main(["--agents", "edf", "random", "--config", "tiny", "--workloads", "rl",
    ...       "--loads", "1", "--seeds", "2", "--workers", "1", "--no-progress", "--no-plots",
    ...       "--output", tempfile.mkdtemp()])  # doctest: +ELLIPSIS
    rank  agent ...
    0
"""

from __future__ import annotations

from mara_env.benchmarks.common.keys import BuiltAgent, Manifest, build_agent
from mara_env.benchmarks.leaderboard.backends import (
    Backend,
    BackendError,
    LocalBackend,
    RayBackend,
    available_cores,
    execute_cells,
    run_cells,
)
from mara_env.benchmarks.leaderboard.building import check_agents
from mara_env.benchmarks.leaderboard.cells import CellError, CellOutcome, execute_cell, run_cell
from mara_env.benchmarks.leaderboard.cli import main
from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
from mara_env.benchmarks.leaderboard.grid import (
    DEFAULT_LOAD_FACTORS,
    DEFAULT_SEEDS,
    DEFAULT_WORKLOADS,
    EVALUATION_SEED_BASE,
    Cell,
    Grid,
    config_hash,
)
from mara_env.benchmarks.leaderboard.journal import EpisodeJournal, ResultsFileError, read_journal
from mara_env.benchmarks.leaderboard.options import build_parser
from mara_env.benchmarks.leaderboard.summary import Leaderboard, build_leaderboard
from mara_env.benchmarks.leaderboard.validate import validate_results

__all__ = [
    "DEFAULT_LOAD_FACTORS",
    "DEFAULT_SEEDS",
    "DEFAULT_WORKLOADS",
    "EVALUATION_SEED_BASE",
    "Backend",
    "BackendError",
    "BuiltAgent",
    "Cell",
    "CellError",
    "CellOutcome",
    "EpisodeJournal",
    "Grid",
    "Leaderboard",
    "LocalBackend",
    "Manifest",
    "RayBackend",
    "ResultsFileError",
    "available_cores",
    "build_agent",
    "build_leaderboard",
    "build_parser",
    "check_agents",
    "config_hash",
    "execute_cell",
    "execute_cells",
    "main",
    "read_journal",
    "run_cell",
    "run_cells",
    "shared_manifest",
    "validate_results",
]
