"""Shipped model checkpoints: torch weights plus a JSON card with their config and hash.

A checkpoint ``name.pt`` holds a torch ``state_dict``; beside it, ``name.json`` holds the
format version, the model config, the SHA-256 of the ``.pt`` file and free-form training facts.
Loading checks all of it, so a corrupt, truncated or mismatched checkpoint gives a clear
:class:`CheckpointError` instead of a shape error deep inside torch.

Example:
    >>> import tempfile, torch
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "tiny.pt"
    >>> save_checkpoint(path, {"w": torch.ones(2)}, config={"width": 2}, facts={"seed": 0})
    >>> state, card = load_checkpoint(path, expected_config={"width": 2})
    >>> state["w"].tolist(), card["facts"]["seed"]
    ([1.0, 1.0], 0)
    >>> load_checkpoint(path, expected_config={"width": 3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mara_env.errors.CheckpointError: Checkpoint .../tiny.pt was made for another version of this code: its width: 2, expected 3...
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from mara_env.atomic_files import replace_atomically, write_atomically
from mara_env.errors import CheckpointError
from mara_env.predictors.loaded_checkpoints import note_checkpoint_load

CHECKPOINT_FORMAT = 1


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def card_path(path: Path) -> Path:
    """The JSON card beside checkpoint ``path``."""
    return path.with_suffix(".json")


def save_checkpoint(
    path: str | Path,
    state_dict: Mapping[str, torch.Tensor],
    config: Mapping[str, Any],
    facts: Mapping[str, Any] | None = None,
) -> None:
    """Write ``state_dict`` to ``path`` and its card (config, hash, ``facts``) beside it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_atomically(path, lambda handle: torch.save(dict(state_dict), handle), durable=True)
    card = {
        "format": CHECKPOINT_FORMAT,
        "config": dict(config),
        "sha256": _sha256(path),
        "facts": dict(facts or {}),
    }
    _write_card(path, card)


def rewrite_card(path: str | Path, config: Mapping[str, Any], facts: Mapping[str, Any]) -> None:
    """Replace the config and facts of checkpoint ``path``'s card, keeping its weights (e.g. a
    refitted calibration).

    Raises:
        CheckpointError: If the weights no longer match the card's hash.
    """
    path = Path(path)
    _, card = load_checkpoint(path)
    _write_card(path, {**card, "config": dict(config), "facts": dict(facts)})


def _write_card(path: Path, card: Mapping[str, Any]) -> None:
    """Write the card of checkpoint ``path`` (sorted keys, so that it diffs well)."""
    text = json.dumps(card, indent=2, sort_keys=True) + "\n"
    write_atomically(card_path(path), text, durable=True)


#: Relative tolerance within which a float setting of a card matches what this code expects.
#: NumPy's ``geomspace``, ``exp``, ``log`` and ``pow`` differ in the last bit or two across NumPy
#: versions and CPU instruction sets (about 2e-16 relative each); a real change of a setting is
#: many orders of magnitude larger than this bound.
CONFIG_RELATIVE_TOLERANCE = 1e-9


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _relative_difference(saved: float, expected: float) -> float:
    scale = max(abs(saved), abs(expected))
    return 0.0 if saved == expected else abs(saved - expected) / scale


def _short(value: Any) -> str:
    text = repr(value)
    if len(text) <= 60:
        return text
    if isinstance(value, (list, tuple)):
        return f"[{len(value)} entries]"
    return text[:57] + "..."


def config_difference(saved: Any, expected: Any) -> str | None:
    """How a card's setting ``saved`` differs from ``expected``, or ``None`` if it does not.

    Floats agree within :data:`CONFIG_RELATIVE_TOLERANCE` (relative), so that a grid computed on
    another CPU or NumPy version still matches; ints, bools and strings agree exactly; lists and
    dicts entry by entry. The description is short even for long lists: it names the length or
    the entry with the largest relative difference.

    Example:
        >>> config_difference([0.25, 0.30068833436982756], [0.25, 0.3006883343698275]) is None
        True
        >>> config_difference([0.25, 0.3], [0.25, 0.31])
        'entry 1 is 0.3, expected 0.31 (relative difference 0.032)'
        >>> config_difference([1.0] * 40, [1.0] * 36)
        '40 entries, expected 36'
        >>> config_difference(3, 3.0) is None, config_difference(True, 1)
        (True, 'True, expected 1')
    """
    if _is_number(saved) and _is_number(expected):
        if isinstance(saved, int) and isinstance(expected, int):
            return None if saved == expected else f"{saved!r}, expected {expected!r}"
        difference = _relative_difference(float(saved), float(expected))
        if difference <= CONFIG_RELATIVE_TOLERANCE:
            return None
        return f"{saved!r}, expected {expected!r} (relative difference {difference:.2g})"
    if isinstance(saved, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(saved) != len(expected):
            return f"{len(saved)} entries, expected {len(expected)}"
        differing = [
            (index, text)
            for index, (a, b) in enumerate(zip(saved, expected, strict=True))
            if (text := config_difference(a, b)) is not None
        ]
        if not differing:
            return None

        def size(entry: tuple[int, str]) -> float:
            a, b = saved[entry[0]], expected[entry[0]]
            return _relative_difference(a, b) if _is_number(a) and _is_number(b) else math.inf

        index, text = max(differing, key=size)
        others = f" and {len(differing) - 1} more" if len(differing) > 1 else ""
        return f"entry {index} is {text}{others}"
    if isinstance(saved, Mapping) and isinstance(expected, Mapping):
        if set(saved) != set(expected):
            return f"keys {sorted(saved)}, expected {sorted(expected)}"
        for key in expected:
            text = config_difference(saved[key], expected[key])
            if text is not None:
                return f"[{key!r}] is {text}"
        return None
    if type(saved) is type(expected) and saved == expected:
        return None
    return f"{_short(saved)}, expected {_short(expected)}"


def check_config(path: Path, config: Mapping[str, Any], expected: Mapping[str, Any]) -> None:
    """Check that a checkpoint card's ``config`` has every entry of ``expected``, comparing as
    :func:`config_difference` does (floats within :data:`CONFIG_RELATIVE_TOLERANCE`).

    Raises:
        CheckpointError: Naming the first entry that differs and how.
    """
    for key, value in expected.items():
        difference: str | None
        if key not in config:
            difference = f"no {key!r} in its card, expected {_short(value)}"
        else:
            difference = config_difference(config[key], value)
        if difference is not None:
            raise CheckpointError(
                f"Checkpoint {path} was made for another version of this code: its {key}: "
                f"{difference}. Use the checkpoint shipped with this version of the package, or "
                f"retrain the model with it."
            )


def load_checkpoint(
    path: str | Path, expected_config: Mapping[str, Any] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """The weights and card of checkpoint ``path``, after checking hash and config.

    Args:
        path: The ``.pt`` file.
        expected_config: Entries the card's config must have (e.g. the sizes this code's
            feature layout produces).

    Every successful load is reported to :mod:`mara_env.predictors.loaded_checkpoints` (so that the
    leaderboard can key its results by the weights an agent runs).

    Raises:
        CheckpointError: If a file is missing or corrupt, the hash differs, or the config
            disagrees with ``expected_config``.
    """
    path = Path(path)
    card_file = card_path(path)
    for needed in (path, card_file):
        if not needed.is_file():
            raise CheckpointError(
                f"Checkpoint file {needed} does not exist. A checkpoint is a .pt file with a "
                f".json card beside it, as written by save_checkpoint."
            )
    try:
        card = json.loads(card_file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CheckpointError(f"Checkpoint card {card_file} is not valid JSON: {error}.") from None
    if not isinstance(card, dict) or card.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"Checkpoint card {card_file} has format {card.get('format') if isinstance(card, dict) else None!r}; "
            f"this code reads format {CHECKPOINT_FORMAT}."
        )
    digest = _sha256(path)
    if digest != card.get("sha256"):
        raise CheckpointError(
            f"Checkpoint {path} is corrupt or was replaced: its SHA-256 is {digest[:12]}..., its "
            f"card says {str(card.get('sha256'))[:12]}.... Restore the shipped file or retrain."
        )
    check_config(path, card.get("config", {}), expected_config or {})
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several unrelated types for unreadable files
        raise CheckpointError(f"Checkpoint {path} cannot be read by torch: {error}.") from None
    note_checkpoint_load(path, digest)
    return state, card
