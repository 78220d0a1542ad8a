"""A fingerprint of the code, weights and data a script's results depend on.

Resumable scripts keep finished rows on disk and skip them when run again; a row that other code
produced must never be reused. :func:`source_fingerprint` hashes every Python file below the
given folders of the source tree and every JSON file there (checkpoint cards, the baselines' tuned
settings), the SHA-256 of every shipped checkpoint (from its card) and the trace data's
fingerprint. Any change to that code invalidates every row: coarse, but the scripts
that use it re-run in minutes, and it cannot serve a stale row.

Example:
    >>> first = source_fingerprint(("agents",))
    >>> first == source_fingerprint(("agents",)), len(first)
    (True, 16)
    >>> first != source_fingerprint(("agents", "predictors"))
    True
    >>> first != source_fingerprint(("agents",), exclude=("agents/tuned_settings.json",))
    True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import lru_cache

from benchmarks.leaderboard.provenance import SOURCE_ROOT, checkpoint_hashes, data_hashes

#: What a scheduler's episode depends on: the simulator, the schedulers and the predictors.
EPISODE_CODE = ("mara_env", "agents", "predictors")


def source_fingerprint(folders: Sequence[str] = EPISODE_CODE, exclude: Sequence[str] = ()) -> str:
    """A 16-hex-digit hash of the ``*.py`` and ``*.json`` files below ``folders`` (paths
    relative to the source root), the shipped checkpoints and the trace data.

    Args:
        folders: The folders hashed.
        exclude: Files left out (paths relative to the source root), e.g. a script's own
            output, which must not key the rows that produced it.

    Raises:
        FileNotFoundError: If a folder does not exist in the source tree.
    """
    return _fingerprint(tuple(folders), tuple(exclude))


@lru_cache(maxsize=16)
def _fingerprint(folders: tuple[str, ...], exclude: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        root = SOURCE_ROOT / folder
        if not root.is_dir():
            raise FileNotFoundError(
                f"source_fingerprint: no folder {folder!r} in the source tree {SOURCE_ROOT}."
            )
        for path in sorted([*root.rglob("*.py"), *root.rglob("*.json")]):
            if path.relative_to(SOURCE_ROOT).as_posix() in exclude:
                continue
            digest.update(path.relative_to(SOURCE_ROOT).as_posix().encode())
            digest.update(path.read_bytes())
    facts = [checkpoint_hashes(), data_hashes()["trace_fingerprint"]]
    digest.update(json.dumps(facts, sort_keys=True).encode())
    return digest.hexdigest()[:16]
