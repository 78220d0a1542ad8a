"""How agents are named in the leaderboard's tables.

A shipped agent (any name without a colon) is listed under its registered name (``edf``,
``lara``). A scheduler of your own, given by import path, is listed under its ``name`` attribute
(``most_progress`` rather than ``my_sched:MostProgressFirst``), unless that name would be
ambiguous: a name of a shipped agent, one shared by two of the run's own schedulers, or no usable
name at all. Such a scheduler keeps its import path as its label, and :func:`agent_labels` says
why.

Example:
    >>> class Mine:
    ...     name = "mine"
    >>> class Impostor:
    ...     name = "edf"
    >>> labels, notes = agent_labels({"edf": Impostor(), "a.b:Mine": Mine(), "c:Impostor": Impostor()})
    >>> labels
    {'edf': 'edf', 'a.b:Mine': 'mine', 'c:Impostor': 'c:Impostor'}
    >>> notes  # doctest: +ELLIPSIS
    ["c:Impostor is named 'edf', like the shipped agent edf: labelled by its import path..."]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from mara_env.agents import known_agents


def agent_labels(schedulers: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """The table label of each agent, and a note for each import path that keeps its path.

    Args:
        schedulers: ``{registered name or import path: the scheduler built from it}``.

    Returns:
        ``({spec: label}, notes)``: labels are unique, and never a shipped agent's name for
        anything but that agent.
    """
    shipped = {*known_agents(), *(spec for spec in schedulers if ":" not in spec)}
    names = {
        spec: getattr(s, "name", None) for spec, s in schedulers.items() if spec not in shipped
    }
    counts = Counter(name for name in names.values() if isinstance(name, str))
    labels: dict[str, str] = {}
    notes: list[str] = []
    for spec in schedulers:
        name = names.get(spec)
        reason = None
        if spec in shipped:
            labels[spec] = spec
            continue
        if not isinstance(name, str) or not name.strip() or ":" in name:
            reason = f"has no usable name ({name!r})"
        elif name in shipped:
            reason = f"is named {name!r}, like the shipped agent {name}"
        elif counts[name] > 1 or name in schedulers:
            reason = f"shares its name {name!r} with another agent of this run"
        if reason is None and isinstance(name, str):
            labels[spec] = name
        else:
            labels[spec] = spec
            notes.append(
                f"{spec} {reason}: labelled by its import path. Give its class a name attribute "
                "of its own to list it under that name."
            )
    return labels, notes
