"""A record of the checkpoints loaded while some code runs (what a cached result depends on).

:func:`mara_env.predictors.checkpoint.load_checkpoint` is the one place a checkpoint is read; it reports
every load (path and verified SHA-256) here. Inside :func:`recording_checkpoint_loads`, those
loads are collected, so that code building a scheduler can learn which weights it runs, and key
cached results by them. This module does not import torch.

Example:
    >>> with recording_checkpoint_loads() as loads:
    ...     note_checkpoint_load("model.pt", "ab" * 32)
    >>> [(load.path.name, load.sha256[:4]) for load in loads]
    [('model.pt', 'abab')]
    >>> note_checkpoint_load("model.pt", "ab" * 32)  # nobody recording: nothing happens
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LoadedCheckpoint:
    """One checkpoint load.

    Attributes:
        path: The ``.pt`` file, resolved.
        sha256: Its SHA-256, as verified against its card.
    """

    path: Path
    sha256: str


_RECORDING: ContextVar[list[LoadedCheckpoint] | None] = ContextVar("checkpoint_loads", default=None)


@contextmanager
def recording_checkpoint_loads() -> Iterator[list[LoadedCheckpoint]]:
    """Collect the checkpoints loaded inside the ``with`` block into the list it yields."""
    loads: list[LoadedCheckpoint] = []
    token = _RECORDING.set(loads)
    try:
        yield loads
    finally:
        _RECORDING.reset(token)


def note_checkpoint_load(path: str | Path, sha256: str) -> None:
    """Report a load of checkpoint ``path`` (whose SHA-256 was verified) to any recording."""
    loads = _RECORDING.get()
    if loads is not None:
        loads.append(LoadedCheckpoint(Path(path).resolve(), sha256))
