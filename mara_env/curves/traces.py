"""Trace sources: pools of recorded loss curves per family, with a fixed train/test split.

A *curve* is the loss a training run reports after each step of a fixed work grid. The simulator
measures a task's progress in curve steps and reports ``losses[min(floor(progress), length-1)]``.

Any object with a ``families`` tuple, a ``pool(family, split)`` method and a ``fingerprint``
string is a trace source. Two ship with the package:

* :class:`TraceFileSource` reads the on-disk format (``.npz``, see :func:`save_traces`), validating
  everything on first use.
* :class:`mara_env.curves.synthetic.SyntheticTraceSource` draws parametric curves from a fixed seed.

Example:
    >>> import numpy as np
    >>> from mara_env.curves.traces import CurvePool
    >>> pool = CurvePool.from_curves("synthetic", [np.array([2.0, 1.0, 0.5]), np.array([1.0, 0.8])])
    >>> pool.losses.shape, pool.lengths.tolist()
    ((2, 3), [3, 2])
    >>> float(pool.losses[1, 2])  # padded with the curve's last value
    0.8
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mara_env.atomic_files import replace_atomically
from mara_env.errors import TraceError

TRACE_FORMAT_VERSION = 1
SPLITS = ("train", "test")


@dataclass(frozen=True, eq=False)
class CurvePool:
    """Loss curves of one family and split, padded to a rectangle.

    Attributes:
        family: The family the curves belong to.
        losses: ``(n_curves, max_length)`` float64, read-only; each row is padded with its last
            recorded value (whatever the given array held there).
        lengths: ``(n_curves,)`` number of recorded points of each curve (>= 2).
        curve_ids: ``(n_curves,)`` index of each curve in its source (for provenance).
        work: Optional ``(n_curves, max_length)`` work done at each recorded point, in the
            source's physical unit (epochs, samples, environment steps...), strictly increasing
            within each curve. The simulator counts progress in curve steps; predictors may use
            this axis.
    """

    family: str
    losses: np.ndarray
    lengths: np.ndarray
    curve_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    work: np.ndarray | None = None

    def __post_init__(self) -> None:
        _validate_pool_arrays(self.family, self.losses, self.lengths, where="CurvePool")
        # Whatever is stored past a curve's length, the simulator must see its last value.
        losses = self.losses.astype(np.float64, copy=True)
        beyond = np.arange(losses.shape[1])[None, :] >= self.lengths[:, None]
        losses[beyond] = np.broadcast_to(
            losses[np.arange(len(losses)), self.lengths - 1][:, None], losses.shape
        )[beyond]
        losses.setflags(write=False)
        object.__setattr__(self, "losses", losses)
        if self.curve_ids.size == 0:
            object.__setattr__(self, "curve_ids", np.arange(len(self.lengths), dtype=np.int64))
        if self.curve_ids.shape != self.lengths.shape:
            raise TraceError(
                f"CurvePool({self.family!r}): curve_ids has shape {self.curve_ids.shape}, "
                f"expected {self.lengths.shape}."
            )
        if self.work is not None:
            _validate_work(self.family, self.work, self.losses.shape, self.lengths, "CurvePool")

    @classmethod
    def from_curves(
        cls,
        family: str,
        curves: Sequence[np.ndarray],
        curve_ids: np.ndarray | None = None,
        work: Sequence[np.ndarray] | None = None,
    ) -> CurvePool:
        """Build a pool from 1-d loss arrays of any lengths (and their work axes, if given).

        A 2-d array is read as ``(n_curves, length)``, one curve per row; one that looks
        transposed (many more rows than columns, and fewer than 8 points per row) is refused.

        Raises:
            TraceError: For no curves, a curve with fewer than 2 points, a flat or rising curve
                (:func:`check_falls`, as a curve table's are), a transposed-looking array, or a
                work axis that does not match its curve.
        """
        if len(curves) == 0:
            raise TraceError(f"CurvePool({family!r}): no curves given.")
        shape = np.shape(curves) if isinstance(curves, np.ndarray) else ()
        if len(shape) == 2 and shape[1] < 8 and shape[0] > 4 * shape[1]:
            raise TraceError(
                f"CurvePool({family!r}): got a {shape} array, read as {shape[0]} curves of "
                f"{shape[1]} points; is it transposed? Pass one curve per row, "
                "(n_curves, length), e.g. curves.T, or a list of 1-d arrays."
            )
        lengths = np.array([len(c) for c in curves], dtype=np.int64)
        losses = np.empty((len(curves), int(lengths.max())), dtype=np.float64)
        for row, curve in enumerate(curves):
            values = np.asarray(curve, dtype=np.float64)
            if values.ndim != 1 or values.size < 2:
                raise TraceError(
                    f"CurvePool({family!r}): curve {row} must be 1-d with >= 2 points, "
                    f"got shape {values.shape}."
                )
            losses[row, : values.size] = values
            losses[row, values.size :] = values[-1]
        ids = np.arange(len(curves), dtype=np.int64) if curve_ids is None else curve_ids
        work_matrix = None
        if work is not None:
            work_matrix = np.empty_like(losses)
            for row, axis in enumerate(work):
                values = np.asarray(axis, dtype=np.float64)
                if values.shape != (lengths[row],):
                    raise TraceError(
                        f"CurvePool({family!r}): work axis {row} has shape {values.shape}, "
                        f"its curve has {lengths[row]} points."
                    )
                work_matrix[row, : values.size] = values
                # beyond the curve: keep increasing, one unit per point
                work_matrix[row, values.size :] = values[-1] + np.arange(
                    1, losses.shape[1] - values.size + 1
                )
        pool = cls(family, losses, lengths, np.asarray(ids, dtype=np.int64), work_matrix)
        for row, length in enumerate(lengths.tolist()):  # after the pool's own checks
            check_falls(losses[row, :length], f"CurvePool({family!r}): curve {row}")
        return pool

    @property
    def n_curves(self) -> int:
        """Number of curves in the pool."""
        return len(self.lengths)


#: A curve is flat when its values span less than this fraction of its largest.
FLAT = 1e-6


def check_falls(
    values: np.ndarray, where: str, error: type[TraceError] = TraceError, hint: str = ""
) -> None:
    """Refuse a loss curve that is flat (it never improves, so no target below its first value can
    be set) or rising (its last quarter's mean at or above its first quarter's), with ``error``
    naming ``where`` and ending with ``hint``: the one rule of every curve a pool is made from.

    Example:
        >>> check_falls(np.array([2.0, 1.5, 1.0, 0.8]), "curve 0")
        >>> check_falls(np.array([0.2, 0.5, 0.9, 1.0]), "curve 1")
        Traceback (most recent call last):
        ...
        mara_env.errors.TraceError: curve 1: the curve rises (its last quarter averages 1, its first 0.2); a loss curve must fall.
    """
    if values.max() - values.min() < FLAT * values.max():
        raise error(f"{where}: the curve is flat; it never improves on its first value.{hint}")
    quarter = max(len(values) // 4, 1)
    first, last = values[:quarter].mean(), values[-quarter:].mean()
    if last >= first:
        raise error(
            f"{where}: the curve rises (its last quarter averages {last:.4g}, its first "
            f"{first:.4g}); a loss curve must fall.{hint}"
        )


def _validate_pool_arrays(family: str, losses: Any, lengths: Any, *, where: str) -> None:
    """Raise :class:`TraceError` unless ``losses``/``lengths`` form a valid pool."""
    prefix = f"{where} family {family!r}"
    if not (isinstance(family, str) and family.strip() == family != ""):
        raise TraceError(f"{prefix}: a family's name must be non-empty text without edge spaces.")
    if not isinstance(losses, np.ndarray) or losses.dtype.kind != "f" or losses.ndim != 2:
        raise TraceError(
            f"{prefix}: losses must be a 2-d float array (n_curves, length), got "
            f"{getattr(losses, 'dtype', type(losses))} with shape {getattr(losses, 'shape', '?')}."
        )
    if not isinstance(lengths, np.ndarray) or lengths.dtype.kind not in "iu":
        raise TraceError(f"{prefix}: lengths must be an integer array.")
    if lengths.shape != (losses.shape[0],) or losses.shape[0] == 0:
        raise TraceError(
            f"{prefix}: expected one length per curve and at least one curve, got lengths of "
            f"shape {lengths.shape} for losses of shape {losses.shape}."
        )
    if lengths.min() < 2 or lengths.max() > losses.shape[1]:
        raise TraceError(
            f"{prefix}: every length must be in [2, {losses.shape[1]}], got range "
            f"[{lengths.min()}, {lengths.max()}]."
        )
    recorded = np.arange(losses.shape[1])[None, :] < lengths[:, None]
    values = losses[recorded]
    if not np.all(np.isfinite(values)):
        bad = int(np.argwhere(~np.isfinite(losses) & recorded)[0, 0])
        raise TraceError(f"{prefix}: curve {bad} contains NaN or inf losses.")
    if np.any(values <= 0):
        bad = int(np.argwhere((losses <= 0) & recorded)[0, 0])
        raise TraceError(
            f"{prefix}: curve {bad} has a loss <= 0; losses must be positive (the simulator "
            "works in log-loss). Clip them to a small floor when recording."
        )


def _validate_work(
    family: str, work: Any, shape: tuple[int, ...], lengths: np.ndarray, where: str
) -> None:
    """Raise :class:`TraceError` unless ``work`` is a finite, increasing axis per curve."""
    prefix = f"{where} family {family!r}"
    if not isinstance(work, np.ndarray) or work.dtype.kind != "f" or work.shape != shape:
        raise TraceError(f"{prefix}: work must be a float array of shape {shape}.")
    recorded = np.arange(shape[1])[None, :] < lengths[:, None]
    steps = np.diff(work, axis=1)
    bad = ~np.isfinite(work) & recorded
    bad[:, 1:] |= (steps <= 0) & recorded[:, 1:]
    if bad.any():
        row = int(np.argwhere(bad)[0, 0])
        raise TraceError(f"{prefix}: the work axis of curve {row} is not finite and increasing.")


@runtime_checkable
class TraceSource(Protocol):
    """Where the simulator gets its loss curves from."""

    @property
    def families(self) -> tuple[str, ...]:
        """Families this source provides."""
        ...

    @property
    def fingerprint(self) -> str:
        """A short content hash identifying the curves (for caches and provenance)."""
        ...

    def pool(self, family: str, split: str) -> CurvePool:
        """The curves of ``family`` on side ``split`` ("train" or "test") of the fixed split."""
        ...


#: What a ``trace_source`` argument may be: a source, or the path of a trace file.
TraceSourceLike = TraceSource | str | os.PathLike[str]


def check_split(split: str) -> None:
    """Raise :class:`TraceError` unless ``split`` is "train" or "test"."""
    if split not in SPLITS:
        raise TraceError(f"Unknown split {split!r}; use one of {SPLITS}.")


def save_traces(
    path: str | Path,
    pools: dict[str, tuple[CurvePool, np.ndarray]],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Write curves in the on-disk trace format (a NumPy ``.npz``).

    Args:
        path: Destination file.
        pools: ``family -> (pool of all curves, boolean is_test array)``.
        metadata: JSON-serialisable provenance (data card fields, per-curve records under
            ``"curves": {family: [...]}``).

    The file holds ``format_version``, ``families`` and, per family, ``<family>.losses``
    (float32), ``<family>.lengths``, ``<family>.is_test`` and optionally ``<family>.work``
    (float64), plus ``metadata`` as JSON text.
    """
    arrays: dict[str, np.ndarray] = {
        "format_version": np.array(TRACE_FORMAT_VERSION, dtype=np.int64),
        "families": np.array(sorted(pools), dtype=np.str_),
        "metadata": np.array(json.dumps(metadata or {}, sort_keys=True), dtype=np.str_),
    }
    for family, (pool, is_test) in pools.items():
        arrays[f"{family}.losses"] = pool.losses.astype(np.float32)
        arrays[f"{family}.lengths"] = pool.lengths.astype(np.int64)
        arrays[f"{family}.is_test"] = np.asarray(is_test, dtype=bool)
        if pool.work is not None:
            arrays[f"{family}.work"] = pool.work
    replace_atomically(Path(path), lambda handle: np.savez_compressed(handle, **arrays))  # type: ignore[arg-type]


class TraceFileSource:
    """Curves read from a trace file written by :func:`save_traces`.

    The file is opened lazily and validated once (shapes, dtypes, NaN/inf, positive losses,
    format version, metadata schema); any problem raises :class:`TraceError` naming the file.

    Args:
        path: The ``.npz`` trace file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"TraceFileSource({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}  # re-read lazily after unpickling

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]

    @cached_property
    def _contents(self) -> tuple[dict[tuple[str, str], CurvePool], dict[str, Any], str]:
        where = f"trace file {self.path}"
        if not self.path.is_file():
            raise TraceError(f"{where}: no such file.")
        raw = self.path.read_bytes()
        try:
            with np.load(self.path, allow_pickle=False) as data:
                arrays = {key: data[key] for key in data.files}
        except Exception as error:  # zip, header and pickle errors all mean "not our format"
            raise TraceError(f"{where}: not a readable .npz trace file ({error}).") from error
        for key in ("format_version", "families", "metadata"):
            if key not in arrays:
                raise TraceError(f"{where}: missing the {key!r} entry; not a mara-env trace file.")
        raw_version = arrays["format_version"]
        if raw_version.shape != () or raw_version.dtype.kind not in "iu":
            raise TraceError(
                f"{where}: format_version must be a single integer, got {raw_version!r}."
            )
        version = int(raw_version)
        if version != TRACE_FORMAT_VERSION:
            raise TraceError(
                f"{where}: format version {version}, this mara-env reads version "
                f"{TRACE_FORMAT_VERSION}. Regenerate the file with this version's collector."
            )
        try:
            metadata = json.loads(str(arrays["metadata"]))
        except json.JSONDecodeError as error:
            raise TraceError(f"{where}: metadata is not valid JSON ({error}).") from error
        _check_metadata(metadata, where)
        pools: dict[tuple[str, str], CurvePool] = {}
        for family in [str(name) for name in arrays["families"]]:
            pools.update(_read_family(arrays, family, metadata, where))
        fingerprint = hashlib.sha256(raw).hexdigest()[:16]
        return pools, metadata, fingerprint

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(sorted({family for family, _ in self._contents[0]}))

    @property
    def metadata(self) -> dict[str, Any]:
        """The file's provenance metadata."""
        return self._contents[1]

    @property
    def fingerprint(self) -> str:
        return self._contents[2]

    def pool(self, family: str, split: str) -> CurvePool:
        check_split(split)
        pools = self._contents[0]
        if (family, split) not in pools:
            raise TraceError(
                f"trace file {self.path} has no family {family!r}; it has {list(self.families)}."
            )
        return pools[(family, split)]


def _check_metadata(metadata: Any, where: str) -> None:
    """Raise :class:`TraceError` unless ``metadata`` follows the trace metadata schema.

    The schema: a JSON object; its optional ``"curves"`` entry maps family names to lists of
    per-curve records (JSON objects).
    """
    if not isinstance(metadata, dict):
        raise TraceError(f"{where}: metadata must be a JSON object.")
    curves = metadata.get("curves", {})
    if not isinstance(curves, dict):
        raise TraceError(
            f"{where}: metadata['curves'] must map family names to lists of curve records."
        )
    for family, records in curves.items():
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise TraceError(
                f"{where}: metadata['curves'][{family!r}] must be a list of JSON objects "
                "(one record per curve)."
            )


def _read_family(
    arrays: dict[str, np.ndarray], family: str, metadata: dict[str, Any], where: str
) -> dict[tuple[str, str], CurvePool]:
    keys = [f"{family}.{part}" for part in ("losses", "lengths", "is_test")]
    for key in keys:
        if key not in arrays:
            raise TraceError(f"{where}: missing the {key!r} entry.")
    losses, lengths, is_test = (arrays[key] for key in keys)
    _validate_pool_arrays(family, losses, lengths, where=where)
    if is_test.dtype != bool or is_test.shape != lengths.shape:
        raise TraceError(
            f"{where}: {family}.is_test must be a boolean array of shape {lengths.shape}."
        )
    if is_test.all() or not is_test.any():
        raise TraceError(f"{where}: family {family!r} needs curves on both sides of the split.")
    records = metadata.get("curves", {}).get(family)
    if records is not None and len(records) != len(lengths):
        raise TraceError(
            f"{where}: metadata lists {len(records)} curves for {family!r}, the arrays hold "
            f"{len(lengths)}."
        )
    work = arrays.get(f"{family}.work")
    if work is not None:
        _validate_work(family, work, losses.shape, lengths, where)
    losses = losses.astype(np.float64)
    ids = np.arange(len(lengths), dtype=np.int64)
    return {
        (family, split): CurvePool(
            family, losses[mask], lengths[mask], ids[mask], None if work is None else work[mask]
        )
        for split, mask in (("train", ~is_test), ("test", is_test))
    }
