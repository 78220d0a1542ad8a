"""What a result was computed from: a :class:`Manifest` of hashes, its digest, and what changed.

A manifest maps what was hashed (a module name, ``file:<path>``, ``checkpoint:<file>``,
``settings``, ``python``, ...) to its hash; its :attr:`~Manifest.digest` is the key a result
carries (:mod:`mara_env.benchmarks.common.keys` builds manifests). Keeping the manifests of the keys a
results file holds lets a later run say why a row no longer counts
(:func:`describe_changes`).

Example:
    >>> old, new = Manifest({"mara_env.agents.lara": "1"}), Manifest({"mara_env.agents.lara": "2"})
    >>> describe_changes(new, {old.digest: dict(old.items)}, old.digest)
    'mara_env.agents.lara changed'
    >>> describe_changes(new, {}, "0123")
    'no record of the old code'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass

#: Changed items named in a description before "and N more".
NAMED_CHANGES = 3


@dataclass(frozen=True)
class Manifest:
    """What a fingerprint was computed from.

    Attributes:
        items: ``{module name, "checkpoint:<file>", "registry:<name>", ...: hash}``.
    """

    items: Mapping[str, str]

    @property
    def digest(self) -> str:
        """The fingerprint: a short hash of every item."""
        text = json.dumps(sorted(self.items.items()), separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def changes_since(self, older: Mapping[str, str]) -> list[str]:
        """What differs from an ``older`` manifest's items, e.g. ``["mara_env.agents.lara changed"]``.

        Example:
            >>> Manifest({"a": "1", "b": "2"}).changes_since({"a": "0", "c": "3"})
            ['a changed', 'b added', 'c removed']
        """
        changed = [
            f"{key} changed" for key in self.items if key in older and older[key] != self.items[key]
        ]
        added = [f"{key} added" for key in self.items if key not in older]
        removed = [f"{key} removed" for key in older if key not in self.items]
        return sorted(changed) + sorted(added) + sorted(removed)


def describe_changes(
    current: Manifest, recorded: Mapping[str, Mapping[str, str]], old_digest: object
) -> str:
    """What changed between the manifest of ``old_digest`` (looked up in ``recorded``) and
    ``current``: the first :data:`NAMED_CHANGES` changes and how many more."""
    if not isinstance(old_digest, str) or old_digest not in recorded:
        return "no record of the old code"
    changes = current.changes_since(recorded[old_digest])
    more = len(changes) - NAMED_CHANGES
    return ", ".join(changes[:NAMED_CHANGES]) + (f" and {more} more" if more > 0 else "")
