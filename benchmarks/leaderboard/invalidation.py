"""Why finished episodes play again: what changed since the journal's copy of each cell.

A cell whose key is not in the journal may still have been played before, under another key:
the same agent, config label and seed, but other code, weights, trace data or config. Those
are *invalidated* episodes; :func:`invalidations` finds them and says, per agent, what changed,
naming the modules or checkpoints from the code manifests the journal keeps.

Example:
    >>> from mara_env import get_config
    >>> from mara_env.benchmarks.leaderboard.grid import Cell
    >>> cell = Cell("lara", 1000, get_config("tiny"), "tiny", fingerprint="s", agent_fingerprint="new")
    >>> old = {"agent": "lara", "agent_spec": "lara", "config": "tiny", "seed": 1000,
    ...        "agent_code": "old", "shared_code": "s", "config_hash": "x"}
    >>> manifests = {"old": {"mara_env.agents.lara": "1"}, "new": {"mara_env.agents.lara": "2"}}
    >>> invalidations([cell], [old], {**manifests, "s": {}}, manifests)
    {'lara': {'its code changed (mara_env.agents.lara changed); its config changed': 1}}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mara_env.benchmarks.common.manifest import Manifest, describe_changes
from mara_env.benchmarks.leaderboard.grid import Cell, config_hash


def invalidations(
    todo: Sequence[Cell],
    rows: Iterable[dict[str, Any]],
    current: Mapping[str, Mapping[str, str]],
    recorded: Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, int]]:
    """``{agent: {reason: episodes}}`` for the cells of ``todo`` that were played before.

    Args:
        todo: The cells about to run.
        rows: The journal's episode rows.
        current: ``{digest: manifest items}`` of the installed code (shared and agents').
        recorded: ``{digest: manifest items}`` the journal holds.
    """
    latest = {(row.get("agent"), row.get("config"), row.get("seed")): row for row in rows}
    found: dict[str, dict[str, int]] = {}
    for cell in todo:
        old = latest.get((cell.name, cell.config_name, cell.seed))
        if old is None:
            continue  # never played: not invalidated
        reason = "; ".join(_reasons(cell, old, current, recorded)) or "its cell key changed"
        counts = found.setdefault(cell.name, {})
        counts[reason] = counts.get(reason, 0) + 1
    return found


def format_invalidations(found: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Lines for the terminal: a total, then one line per agent and reason."""
    total = sum(sum(reasons.values()) for reasons in found.values())
    if not total:
        return []
    lines = [f"{total} finished episodes were invalidated and play again:"]
    for agent, reasons in found.items():
        lines += [f"  {agent}: {count} ({reason})" for reason, count in reasons.items()]
    return lines


def _reasons(
    cell: Cell,
    old: dict[str, Any],
    current: Mapping[str, Mapping[str, str]],
    recorded: Mapping[str, Mapping[str, str]],
) -> list[str]:
    reasons = []
    if old.get("agent_spec") != cell.agent:
        reasons.append(f"it was {old.get('agent_spec')!r}, now {cell.agent!r}")
    if old.get("agent_code") != cell.agent_fingerprint:
        changes = _changes(current, recorded, cell.agent_fingerprint, old.get("agent_code"))
        reasons.append(f"its code changed ({changes})")
    if old.get("shared_code") != cell.fingerprint:
        changes = _changes(current, recorded, cell.fingerprint, old.get("shared_code"))
        reasons.append(f"the code, data or version every agent shares changed ({changes})")
    if old.get("config_hash") != config_hash(cell.config):
        reasons.append("its config changed")
    return reasons


def _changes(
    current: Mapping[str, Mapping[str, str]],
    recorded: Mapping[str, Mapping[str, str]],
    new: str,
    old: Any,
) -> str:
    if new not in current:
        return "no record of the old code"
    return describe_changes(Manifest(current[new]), recorded, old)
