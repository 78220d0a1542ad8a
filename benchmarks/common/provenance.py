"""What produced a leaderboard: package version, git revision, data and checkpoint hashes.

Everything a reader needs to trust or reproduce a table: the package version, the git revision
of the source tree (when it is a git checkout), the trace data's fingerprint and the SHA-256 of
the shipped trace file, the SHA-256 of every shipped checkpoint (read from the JSON cards beside
them in ``predictors/checkpoints/`` and ``agents/worlds/v<N>/``), the library versions, the
machine and its platform line (:func:`mara_env.benchmarks.common.machine.platform_line`: CPU model,
NumPy's SIMD extensions, NumPy, Numba, torch, Python). What a cell's result depends on (and its key holds) is in
:mod:`mara_env.benchmarks.leaderboard.fingerprints`.

Example:
    >>> facts = provenance()
    >>> sorted(facts)[:3]
    ['checkpoints', 'data', 'git_revision']
    >>> len(facts["data"]["traces_sha256"])
    64
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

import mara_env
from mara_env import SHIPPED_TRACES, default_trace_source
from mara_env.benchmarks.common.machine import available_cores, installed_version, platform_line
from mara_env.installation import data_path
from mara_env.worlds.world import WORLDS

#: The source tree's root (a git checkout in development; the installed ``mara_env`` folder,
#: which holds ``benchmarks/`` too, when installed).
SOURCE_ROOT = Path(__file__).resolve().parents[2]
#: Where shipped checkpoints and their JSON cards live, relative to :data:`SOURCE_ROOT`.
CHECKPOINT_DIRECTORIES = ("predictors/checkpoints", *(entry.shipped for entry in WORLDS))


def package_version() -> str:
    """The installed mara-env version (``pyproject.toml`` is its one home)."""
    return mara_env.__version__


#: Tracked paths that are outputs or prose, not what a run runs: uncommitted changes there (the
#: results a run is writing, a page being edited) do not make its revision ``+dirty``.
NOT_RUN = ("benchmarks/results", "benchmarks/figures", "docs", "*.md")


def git_revision() -> str:
    """``<commit>`` of the source tree, with ``+dirty`` when code or data differ from it
    (uncommitted changes outside :data:`NOT_RUN`), or ``unknown`` and why: an installed package
    (its folder named, so that a run from inside a clone is not mistaken for the clone's), or no
    git."""
    if not (SOURCE_ROOT / ".git").exists():
        return (
            f"unknown (the installed mara-env {package_version()} in {SOURCE_ROOT}, not a git "
            "checkout)"
        )
    try:
        commit = _git("rev-parse", "HEAD")
        excluded = [f":(exclude){path}" for path in NOT_RUN]
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".", *excluded)
    except (OSError, subprocess.SubprocessError):
        return "unknown (git unavailable)"
    return commit + ("+dirty" if dirty else "")


def _git(*arguments: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(SOURCE_ROOT), *arguments],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    return result.stdout.strip()


@lru_cache(maxsize=1)
def data_hashes() -> dict[str, str]:
    """The default trace source's fingerprint and the shipped trace file's SHA-256."""
    return {
        "trace_fingerprint": default_trace_source().fingerprint,
        "traces_file": SHIPPED_TRACES.name,
        "traces_sha256": hashlib.sha256(SHIPPED_TRACES.read_bytes()).hexdigest(),
    }


def checkpoint_hashes() -> dict[str, str]:
    """``{card path: SHA-256 of its checkpoint}`` for every shipped checkpoint card."""
    hashes: dict[str, str] = {}
    for directory in CHECKPOINT_DIRECTORIES:
        for card in sorted(data_path(directory).glob("*.json")):
            if not card.with_suffix(".pt").is_file():
                continue  # not a checkpoint's card (a world's tuned settings)
            try:
                digest = json.loads(card.read_text()).get("sha256")
            except (OSError, ValueError, AttributeError):
                digest = None
            name = f"{directory}/{card.name}"
            hashes[name] = digest if isinstance(digest, str) else "unreadable card"
    return hashes


def provenance() -> dict[str, Any]:
    """Every provenance fact as a JSON-ready dict."""
    return {
        "package": "mara-env",
        "version": package_version(),
        "git_revision": git_revision(),
        "data": data_hashes(),
        "checkpoints": checkpoint_hashes(),
        "python": platform.python_version(),
        "libraries": {"numpy": np.__version__, **_versions("gymnasium", "pettingzoo", "torch")},
        "machine": f"{available_cores()} CPU cores ({platform.machine()}, {platform.system()})",
        "platform": platform_line(),
    }


def _versions(*names: str) -> dict[str, str]:
    """``{distribution: version}`` of those of ``names`` that are installed."""
    return {name: version for name in names if (version := installed_version(name)) is not None}
