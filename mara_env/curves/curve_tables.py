"""Your own learning curves: the curve table, a long-form CSV, checked and turned into pools.

A **curve table** has one row per reported value of a training run:

| column | required | meaning |
|---|---|---|
| ``run`` | yes | the run's id (any text); all its rows form one curve |
| ``step`` | yes | the report's step: integers, evenly spaced within a run (any start) |
| ``value`` | yes | the reported loss, or a score (see ``kind``) |
| ``family`` | yes | the task family: a shipped one (:data:`mara_env.curves.families.FAMILIES`) or your own, declared with its alpha in ``ClusterConfig.own_families`` when played |
| ``split`` | yes | ``train`` or ``test``: which side of the fixed split the run is on |
| ``work`` | no | the work done at the report (samples, seconds...), increasing within a run |
| ``kind`` | no | ``loss`` (the default) or ``score``: a score in [0, 1] where higher is better (accuracy, hit rate), turned into the loss ``1 - score`` |

Rows may come in any order; a run's rows are sorted by step. Everything is checked before any
curve is used, and each problem raises :class:`CurveTableError` naming the file, the run and
what to do:

* a missing or unknown column, an empty table, a value that is not a number;
* a run whose steps repeat or are unevenly spaced (the simulator advances along an even grid:
  resample the run first), with fewer than two reports, or spread over two families or splits;
* a loss that is not finite and above 0, or a score outside [0, 1];
* a **rising** curve (its last quarter's mean above its first quarter's: an accuracy left
  unconverted? mark it ``kind=score``) or a **flat** one (it never improves, so no target below
  its first value can be set);
* a family without curves on both sides of the split, or without a name.

:func:`read_curve_table` returns the checked table, a trace source itself
(``trace_source="curves.csv"`` reads it so anywhere); ``python -m mara_env.benchmarks.collect pack --from
FILE --output OUT.npz`` packs it into a trace file (:func:`mara_env.curves.traces.save_traces`) with a
data card, to share or ship.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "curves.csv"
    >>> rows = ["run,step,value,family,split"]
    >>> for run, split in (("a", "train"), ("b", "test")):
    ...     rows += [f"{run},{step},{1.0 / (1 + step)},vision,{split}" for step in range(5)]
    >>> _ = path.write_text("\\n".join(rows) + "\\n")
    >>> table = read_curve_table(path)
    >>> pool, is_test = table.pools["vision"]
    >>> pool.losses.shape, is_test.tolist(), table.runs["vision"]
    ((2, 5), [False, True], ['a', 'b'])
    >>> table.families, table.pool("vision", "test").n_curves
    (('vision',), 1)
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mara_env.curves.text_files import utf8_text
from mara_env.curves.traces import SPLITS, CurvePool, check_falls, check_split
from mara_env.errors import TraceError

#: Columns every curve table has.
REQUIRED = ("run", "step", "value", "family", "split")
#: Columns it may have.
OPTIONAL = ("work", "kind")
#: What ``kind`` may say.
KINDS = ("loss", "score")
#: A score of 1 becomes this loss, not 0 (losses must be positive).
SCORE_FLOOR = 1e-6


class CurveTableError(TraceError):
    """A curve table that cannot be used as it is (the message says where and what to do)."""


@dataclass(frozen=True)
class CurveTable:
    """A checked curve table, and a trace source (:class:`mara_env.curves.traces.TraceSource`).

    Attributes:
        path: The file it was read from.
        pools: ``family -> (pool of its curves, is_test flags)``, ready for
            :func:`mara_env.curves.traces.save_traces`.
        runs: ``family -> run ids``, in the pool's row order.
        scores: Run ids whose values were scores, turned into losses.
        fingerprint: The first 16 hex digits of the file's SHA-256.
    """

    path: Path
    pools: Mapping[str, tuple[CurvePool, np.ndarray]]
    runs: Mapping[str, list[str]]
    scores: tuple[str, ...]
    fingerprint: str = ""

    @property
    def families(self) -> tuple[str, ...]:
        """The families it has curves of."""
        return tuple(sorted(self.pools))

    def pool(self, family: str, split: str) -> CurvePool:
        """The curves of ``family`` on side ``split`` of the table's split."""
        check_split(split)
        if family not in self.pools:
            raise TraceError(f"{self.path} has no family {family!r}; it has {self.families}.")
        pool, is_test = self.pools[family]
        side = is_test if split == "test" else ~is_test
        work = None if pool.work is None else pool.work[side]
        return CurvePool(family, pool.losses[side], pool.lengths[side], pool.curve_ids[side], work)


@dataclass
class _Run:
    family: str
    split: str
    kind: str
    steps: list[int]
    values: list[float]
    work: list[float]


def read_curve_table(path: str | Path) -> CurveTable:
    """Read and check the curve table at ``path`` (module docstring).

    Raises:
        CurveTableError: For anything that makes it unusable, naming the file and the run.
    """
    path = Path(path)
    where = f"curve table {path}"
    if path.suffix.lower() != ".csv":
        raise CurveTableError(
            f"{where}: expected a .csv file (long form: {', '.join(REQUIRED)}[, work, kind]); "
            "save a spreadsheet or a DataFrame as CSV first (DataFrame.to_csv(path, index=False))."
        )
    if not path.is_file():
        raise CurveTableError(f"{where}: no such file.")
    runs = _read_runs(path, where)
    by_family: dict[str, list[tuple[str, _Run]]] = {}
    for run_id, run in runs.items():
        by_family.setdefault(run.family, []).append((run_id, run))
    pools: dict[str, tuple[CurvePool, np.ndarray]] = {}
    ids: dict[str, list[str]] = {}
    scores: list[str] = []
    for family, members in sorted(by_family.items()):
        curves, axes = [], []
        for run_id, run in members:
            losses = _losses(run, f"{where}, run {run_id!r}")
            if run.kind == "score":
                scores.append(run_id)
            curves.append(losses)
            axes.append(np.array(run.work) if run.work else None)
        sides = {run.split for _, run in members}
        if sides != set(SPLITS):
            raise CurveTableError(
                f"{where}: family {family!r} has runs only in {sorted(sides)}; it needs runs in "
                "both 'train' and 'test' (the test runs are held out for evaluation)."
            )
        with_work = [axis is not None for axis in axes]
        if any(with_work) and not all(with_work):
            raise CurveTableError(f"{where}: family {family!r}: give work for every run or none.")
        work = [axis for axis in axes if axis is not None] if all(with_work) else None
        pool = CurvePool.from_curves(family, curves, work=work)
        pools[family] = (pool, np.array([run.split == "test" for _, run in members]))
        ids[family] = [run_id for run_id, _ in members]
    fingerprint = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return CurveTable(path, pools, ids, tuple(scores), fingerprint)


def _read_runs(path: Path, where: str) -> dict[str, _Run]:
    """The table's rows gathered by run, each run's steps sorted and checked."""
    with utf8_text(path, "a curves CSV", CurveTableError) as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        missing = [name for name in REQUIRED if name not in columns]
        unknown = [name for name in columns if name not in REQUIRED + OPTIONAL]
        if missing or unknown:
            raise CurveTableError(
                f"{where}: columns {columns}; missing {missing}, unknown {unknown}. A curve table "
                f"has the columns {', '.join(REQUIRED)} and optionally {', '.join(OPTIONAL)} "
                "(long form: one row per reported value)."
            )
        runs: dict[str, _Run] = {}
        for line, row in enumerate(reader, start=2):
            _add_row(runs, row, f"{where}, line {line}")
    if not runs:
        raise CurveTableError(f"{where}: no rows.")
    for run_id, run in runs.items():
        _check_steps(run, f"{where}, run {run_id!r}")
    return runs


def _add_row(runs: dict[str, _Run], row: dict[str, str], where: str) -> None:
    missing = [name for name in REQUIRED if row.get(name) is None]
    if missing or None in row:  # a row cut short, or one with more cells than the header
        raise CurveTableError(
            f"{where}: the row has {'too few' if missing else 'too many'} cells for the header "
            f"({', '.join(name for name in row if name is not None)}); a file cut short, or a "
            "comma inside a value (quote it)."
        )
    try:
        step = int(row["step"])
        value = float(row["value"])
        work = float(row["work"]) if row.get("work") not in (None, "") else None
    except ValueError:
        raise CurveTableError(
            f"{where}: step must be an integer and value (and work) numbers, got step "
            f"{row['step']!r}, value {row['value']!r}, work {row.get('work')!r}."
        ) from None
    family, split = row["family"], row["split"]
    kind = row.get("kind") or "loss"
    if not family.strip():
        raise CurveTableError(f"{where}: empty family; name the family every run belongs to.")
    if split not in SPLITS or kind not in KINDS:
        raise CurveTableError(
            f"{where}: split must be one of {SPLITS} and kind one of {KINDS}, got {split!r} "
            f"and {kind!r}."
        )
    run = runs.setdefault(row["run"], _Run(family, split, kind, [], [], []))
    if (run.family, run.split, run.kind) != (family, split, kind):
        raise CurveTableError(
            f"{where}: run {row['run']!r} changes its family, split or kind "
            f"({run.family}, {run.split}, {run.kind} -> {family}, {split}, {kind}); a run is one "
            "curve of one family, on one side of the split."
        )
    if (work is None) != (not run.work) and run.steps:
        raise CurveTableError(f"{where}: run {row['run']!r} gives work on some rows only.")
    run.steps.append(step)
    run.values.append(value)
    if work is not None:
        run.work.append(work)


def _check_steps(run: _Run, where: str) -> None:
    """Sort the run by step; refuse repeated or uneven steps, too few points, bad work."""
    order = np.argsort(run.steps, kind="stable")
    steps = np.array(run.steps)[order]
    run.steps = steps.tolist()
    run.values = np.array(run.values)[order].tolist()
    if run.work:
        run.work = np.array(run.work)[order].tolist()
    if len(steps) < 2:
        raise CurveTableError(f"{where}: one report; a curve needs at least two.")
    gaps = np.diff(steps)
    if (gaps <= 0).any():
        raise CurveTableError(f"{where}: step {int(steps[np.argmin(gaps)])} is reported twice.")
    if (gaps != gaps[0]).any():
        raise CurveTableError(
            f"{where}: uneven steps (gaps {sorted(set(gaps.tolist()))[:5]}); the simulator "
            "advances along an even grid, so resample the run to evenly spaced steps (e.g. "
            "interpolate its log-loss at every k-th step) before packing."
        )
    if run.work:
        work = np.array(run.work)
        bad = ~np.isfinite(work)
        with np.errstate(invalid="ignore"):  # inf - inf: already marked
            bad[1:] |= np.diff(work) <= 0
        if bad.any():
            raise CurveTableError(
                f"{where}, step {steps[np.argmax(bad)]}: work {work[np.argmax(bad)]}; work must "
                "be finite and increase with the step."
            )


def _losses(run: _Run, where: str) -> np.ndarray:
    """The run's losses: scores turned into ``1 - score``; refused when rising or flat."""
    values = np.array(run.values)
    if not np.all(np.isfinite(values)):
        bad = int(np.argmin(np.isfinite(values)))
        raise CurveTableError(
            f"{where}, step {run.steps[bad]}: value {values[bad]}; values must be finite (drop "
            "the steps a run did not report, or stop the run where it diverged)."
        )
    if run.kind == "score":
        if values.min() < 0 or values.max() > 1:
            raise CurveTableError(
                f"{where}: scores must lie in [0, 1] (turned into the loss 1 - score), got "
                f"[{values.min():g}, {values.max():g}]; give such values as kind=loss instead."
            )
        values = np.maximum(1.0 - values, SCORE_FLOOR)
    elif values.min() <= 0:
        raise CurveTableError(
            f"{where}: a loss <= 0 ({values.min():g}); losses must be positive (clip them to a "
            "small floor), or mark scores with kind=score."
        )
    hint = (
        " Is it a score (accuracy, reward) left unconverted? Mark it kind=score."
        if run.kind == "loss"
        else ""
    )
    check_falls(values, where, CurveTableError, hint)
    return values


def describe(table: CurveTable) -> dict[str, dict[str, float | bool]]:
    """Per family: runs on each side of the split and the points per curve (for data cards).

    Example:
        >>> import numpy as np
        >>> pool = CurvePool.from_curves("rl", [np.array([2.0, 1.0]), np.array([3.0, 2.0, 1.0])])
        >>> table = CurveTable(Path("x.csv"), {"rl": (pool, np.array([False, True]))}, {}, ())
        >>> describe(table)["rl"]["test runs"], describe(table)["rl"]["max points"]
        (1, 3)
    """
    facts: dict[str, dict[str, float | bool]] = {}
    for family, (pool, is_test) in table.pools.items():
        facts[family] = {
            "train runs": int((~is_test).sum()),
            "test runs": int(is_test.sum()),
            "min points": int(pool.lengths.min()),
            "median points": float(np.median(pool.lengths)),
            "max points": int(pool.lengths.max()),
            "work axis": pool.work is not None,
        }
    return facts
