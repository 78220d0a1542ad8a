"""The prediction benchmark: remaining-work predictions against the truth on held-out curves.

For every predictor x workload x observed fraction, the predictor sees the cases of
:mod:`predictors.cases` (test-split tasks drawn as the simulator draws them, observed by one node
up to the fraction of their curve, unless already done) and samples their remaining work. Scores
(:mod:`predictors.metrics`):

* ``median_log_error``: median ``|ln(c(median) / c(truth))|`` over feasible cases, ``c`` clipping
  to ``[1, cap]`` curve steps; a "never" median scores ``ln(cap / c(truth))``;
* ``infeasibility_auc``: ROC AUC of P(never) for the infeasible cases (0.5 = chance);
* ``coverage_80``: share of cases inside the 10-90% sample interval (nominal 0.785 with 64
  samples, see :mod:`predictors.metrics`); "never" is covered iff the 90% quantile is never;
* ``crps_log``: CRPS of ``ln(1 + min(work, cap))``, mean over cases;
* ``brier``: Brier score of P(reaching the target by the deadline at one node);
* ``latency_ms``: median wall time of one ``predict`` call for one epoch's worth of tasks
  (16 of the row's cases, evenly spaced, 32 samples each), after warm-up, with torch on one
  thread when a predictor uses torch.

Usage::

    python -m benchmarks.predictors                           # every registered predictor
    python -m benchmarks.predictors --predictors wls --fractions 0.2 0.4 --quick

Outputs in ``--out`` (default ``benchmarks/results/predictors``):

* ``results.csv``: one row per predictor x workload x fraction (and seed, samples, draws per
  curve), rewritten atomically after every finished row. A re-run skips the rows already there;
  a file with other columns, or one that cannot be parsed, is refused with an error.
* ``results.md``: one table per metric (rows: predictors; columns: workload x fraction), the
  case counts and the machine; also printed.
* ``trajectories.png``: for two test tasks per workload (one feasible, one infeasible) at the
  middle requested fraction (40% by default), the observed losses, the true future and sampled future trajectories of every predictor that
  implements :class:`predictors.cases.TrajectoryPredictor`; beside it, every predictor's
  remaining-work samples against the true value.

Every row draws from its own generator, seeded by (seed, predictor, workload, fraction), so a
row's figures do not depend on which other rows run or were resumed.

Example:
    >>> import tempfile
    >>> from benchmarks.predictors import main
    >>> with tempfile.TemporaryDirectory() as out:
    ...     main(["--predictors", "wls", "--workloads", "rl", "--fractions", "0.4", "--quick",
    ...           "--no-progress", "--no-figure", "--out", out])  # doctest: +ELLIPSIS
    # Prediction benchmark...
    0
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import platform
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from benchmarks.arguments import non_negative_int, positive_int
from benchmarks.collect.threads import one_torch_thread_if_loaded
from benchmarks.leaderboard import available_cores
from mara_env import WORKLOADS
from predictors.base import Predictor, TaskHistory
from predictors.cases import (
    BENCHMARK_WORKLOADS,
    CAP_CURVE_LENGTHS,
    DEFAULT_DRAWS_PER_CURVE,
    CaseError,
    PredictionCases,
    PredictionTask,
    draw_tasks,
    make_cases,
    sample_trajectories,
)
from predictors.metrics import score_predictions
from predictors.registry import UnknownPredictorError, known_predictors, make_predictor

#: Observed fractions run by default.
DEFAULT_FRACTIONS = (0.1, 0.2, 0.4, 0.8)
#: Samples per case by default.
DEFAULT_SAMPLES = 64
#: Where results go by default.
DEFAULT_OUT = Path("benchmarks/results/predictors")
#: One epoch's worth of tasks for the latency figure, and the samples each.
LATENCY_TASKS = 16
LATENCY_SAMPLES = 32
#: Untimed and timed ``predict`` calls per latency figure (full run, ``--quick``).
LATENCY_WARMUP = 3
LATENCY_REPEATS = 21
QUICK_LATENCY_REPEATS = 3
#: Cases per ``predict`` call (bounds memory; learned predictors batch within a call).
PREDICT_CHUNK = 256
#: Target draws per test curve with ``--quick``.
QUICK_DRAWS_PER_CURVE = 1
#: Sampled trajectories drawn per predictor and task in the figure.
FIGURE_TRAJECTORIES = 16

KEY_COLUMNS = ("predictor", "workload", "fraction", "seed", "samples", "draws_per_curve")
METRIC_COLUMNS = (
    "cases",
    "infeasible_cases",
    "median_log_error",
    "infeasibility_auc",
    "coverage_80",
    "crps_log",
    "brier",
    "latency_ms",
)
COLUMNS = (*KEY_COLUMNS, *METRIC_COLUMNS)
#: The Markdown tables: (column, heading, format, what it is).
TABLES = (
    ("median_log_error", "Remaining-work error", ".3f", "median |ln(pred / true)| on feasible cases, lower is better"),
    ("coverage_80", "80% interval coverage", ".3f", "share of outcomes inside the 10-90% sample interval; nominal 0.785 at 64 samples"),
    ("crps_log", "CRPS", ".3f", "of ln(1 + min(work, cap)), lower is better"),
    ("infeasibility_auc", "Infeasibility AUC", ".3f", "ROC AUC of P(never) for infeasible tasks, 0.5 is chance"),
    ("brier", "Deadline Brier score", ".3f", "of P(target reached by the deadline at one node), lower is better"),
    ("latency_ms", "Latency (ms)", ".2f", f"median time of one predict call: {LATENCY_TASKS} tasks x {LATENCY_SAMPLES} samples, torch on one thread"),
)  # fmt: skip


class ResultsFileError(ValueError):
    """An existing ``results.csv`` that this benchmark cannot resume from."""


class PredictionOutputError(ValueError):
    """A predictor returned samples of the wrong shape or with NaN / negative work."""


@dataclass(frozen=True)
class RowKey:
    """What identifies one row of ``results.csv``."""

    predictor: str
    workload: str
    fraction: float
    seed: int
    samples: int
    draws_per_curve: int

    @classmethod
    def of(cls, row: dict[str, Any]) -> RowKey:
        """The key of a parsed row."""
        return cls(*(row[column] for column in KEY_COLUMNS))

    def rng(self) -> np.random.Generator:
        """The row's own generator (independent of other rows)."""
        salt = [zlib.crc32(self.predictor.encode()), zlib.crc32(self.workload.encode())]
        return np.random.default_rng([self.seed, *salt, round(self.fraction * 1_000_000)])


# --------------------------------------------------------------------------------- results file
class ResultsTable:
    """``results.csv``: parsed rows, rewritten atomically (temporary file, then rename) per row.

    Args:
        path: The CSV file.
        resume: Keep the rows already in the file; otherwise start afresh.

    Raises:
        ResultsFileError: If the existing file has other columns or a row that cannot be parsed.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        if resume and path.exists() and path.stat().st_size > 0:
            self.rows = self._read()

    def _read(self) -> list[dict[str, Any]]:
        with self.path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise ResultsFileError(
                    f"{self.path} has columns {reader.fieldnames}, not this benchmark's "
                    f"{list(COLUMNS)}. Use another --out directory, or --no-resume to replace it."
                )
            rows = []
            for line, row in enumerate(reader, start=2):
                try:
                    rows.append(_parse_row(row))
                except (TypeError, ValueError) as error:
                    raise ResultsFileError(
                        f"{self.path}, line {line}: malformed row ({error}). Fix or delete the "
                        "line, or use --no-resume to start afresh."
                    ) from None
        return rows

    def done(self) -> set[RowKey]:
        """Keys of the rows already in the file."""
        return {RowKey.of(row) for row in self.rows}

    def add(self, row: dict[str, Any]) -> None:
        """Add ``row`` and rewrite the file atomically."""
        self.rows.append(row)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows)
        write_atomic(self.path, buffer.getvalue())


def _parse_row(row: dict[str, str | None]) -> dict[str, Any]:
    if None in row or any(value is None or value == "" for value in row.values()):
        raise ValueError("wrong number of fields")
    parsed: dict[str, Any] = {}
    for column in COLUMNS:
        value = str(row[column])
        if column in ("predictor", "workload"):
            parsed[column] = value
        elif column in ("seed", "samples", "draws_per_curve"):
            parsed[column] = int(value)
        else:
            parsed[column] = float(value)
    return parsed


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


# --------------------------------------------------------------------------------- evaluation
def predict_samples(
    predictor: Predictor,
    histories: Sequence[TaskHistory],
    n_samples: int,
    rng: np.random.Generator,
    *,
    on_chunk: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``(len(histories), n_samples)`` remaining-work samples, predicted in chunks of
    :data:`PREDICT_CHUNK` cases.

    Raises:
        PredictionOutputError: If the predictor returns a wrong shape, NaN or negative work.
    """
    parts = []
    for start in range(0, len(histories), PREDICT_CHUNK):
        chunk = histories[start : start + PREDICT_CHUNK]
        samples = np.asarray(predictor.predict(chunk, n_samples, rng).samples, dtype=np.float64)
        if samples.shape != (len(chunk), n_samples):
            raise PredictionOutputError(
                f"{predictor.name}.predict returned samples of shape {samples.shape} for "
                f"{len(chunk)} tasks x {n_samples} samples."
            )
        if np.isnan(samples).any() or (samples < 0).any():
            raise PredictionOutputError(
                f"{predictor.name}.predict returned NaN or negative remaining work; use inf for "
                "never and 0 for a reached target."
            )
        parts.append(samples)
        if on_chunk is not None:
            on_chunk(len(chunk))
    return np.concatenate(parts)


def latency_cases(cases: PredictionCases) -> PredictionCases:
    """:data:`LATENCY_TASKS` cases evenly spaced through ``cases`` (all families)."""
    count = min(LATENCY_TASKS, len(cases))
    return cases.subset(np.linspace(0, len(cases) - 1, count).round().astype(np.int64))


def measure_latency_ms(predictor: Predictor, cases: PredictionCases, repeats: int) -> float:
    """Median milliseconds of ``predict`` on ``cases`` with :data:`LATENCY_SAMPLES` samples,
    after :data:`LATENCY_WARMUP` untimed calls; torch (if used) on one thread."""
    histories = cases.histories
    for _ in range(LATENCY_WARMUP):
        predictor.predict(histories, LATENCY_SAMPLES, np.random.default_rng(0))
    timings = []
    with one_torch_thread_if_loaded():
        predictor.predict(histories, LATENCY_SAMPLES, np.random.default_rng(0))
        for repeat in range(repeats):
            rng = np.random.default_rng(repeat)
            start = time.perf_counter()
            predictor.predict(histories, LATENCY_SAMPLES, rng)
            timings.append(time.perf_counter() - start)
    return 1000.0 * float(np.median(timings))


def evaluate_row(
    predictor: Predictor,
    key: RowKey,
    cases: PredictionCases,
    *,
    latency_repeats: int,
    on_chunk: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Score ``predictor`` on ``cases``; the finished ``results.csv`` row."""
    samples = predict_samples(predictor, cases.histories, key.samples, key.rng(), on_chunk=on_chunk)
    scores = score_predictions(samples, cases.truth, cases.cap, cases.budget)
    scores["latency_ms"] = measure_latency_ms(predictor, latency_cases(cases), latency_repeats)
    return {**{column: getattr(key, column) for column in KEY_COLUMNS}, **scores}


# --------------------------------------------------------------------------------- Markdown
def _column_label(workload: str, fraction: float) -> str:
    return f"{workload} {fraction:.0%}"


def format_markdown(
    rows: Sequence[dict[str, Any]],
    predictors: Sequence[str],
    workloads: Sequence[str],
    fractions: Sequence[float],
    *,
    settings: str,
) -> str:
    """``results.md``: the case counts, then one table per metric."""
    by_key = {(row["predictor"], row["workload"], row["fraction"]): row for row in rows}
    columns = [(workload, fraction) for workload in workloads for fraction in fractions]
    labels = [_column_label(workload, fraction) for workload, fraction in columns]

    def table(first: str, body: list[list[str]]) -> list[str]:
        rule = ["---", *(["---:"] * len(labels))]
        return ["| " + " | ".join(cells) + " |" for cells in [[first, *labels], rule, *body]]

    counts = []
    for label, field in (("cases", "cases"), ("infeasible", "infeasible_cases")):
        cells = []
        for workload, fraction in columns:
            found = [
                row for row in rows if (row["workload"], row["fraction"]) == (workload, fraction)
            ]
            cells.append(f"{found[0][field]:.0f}" if found else "")
        counts.append([label, *cells])
    lines = [
        "# Prediction benchmark",
        "",
        f"{settings} Generated by `python -m benchmarks.predictors`; definitions in "
        "`benchmarks/predictors.py`, `predictors/cases.py` and `predictors/metrics.py`.",
        "",
        "## Cases",
        "",
        *table("", counts),
    ]
    for column, heading, spec, meaning in TABLES:
        body = []
        for predictor in predictors:
            cells = []
            for workload, fraction in columns:
                row = by_key.get((predictor, workload, fraction))
                cells.append("" if row is None else _format_value(row[column], spec))
            body.append([predictor, *cells])
        lines += ["", f"## {heading}", "", f"{meaning[0].upper()}{meaning[1:]}.", ""]
        lines += table("predictor", body)
    return "\n".join(lines) + "\n"


def _format_value(value: float, spec: str) -> str:
    return "n/a" if math.isnan(value) else format(value, spec)


# --------------------------------------------------------------------------------- figure
def figure_tasks(
    tasks: Sequence[PredictionTask], fraction: float, seed: int
) -> list[PredictionTask]:
    """Two tasks of a workload for the figure: the first feasible and the first infeasible one
    in a seeded shuffle that still have work left at ``fraction``."""
    order = np.random.default_rng([seed, 0xF16]).permutation(len(tasks))
    chosen: list[PredictionTask] = []
    for wanted in (False, True):
        for index in order.tolist():
            task = tasks[index]
            if task.infeasible == wanted and task.true_remaining(fraction) > 0:
                chosen.append(tasks[index])
                break
    return chosen


def plot_figure(
    path: Path,
    predictors: dict[str, Predictor],
    tasks_by_workload: dict[str, list[PredictionTask]],
    fraction: float,
    *,
    n_samples: int,
    seed: int,
) -> None:
    """Write ``trajectories.png`` (see the module docstring). Needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(workload, task) for workload, tasks in tasks_by_workload.items() for task in tasks]
    figure, axes = plt.subplots(
        len(panels), 2, figsize=(13, 3.2 * len(panels)), squeeze=False, width_ratios=(3, 2)
    )
    colors = [f"C{index}" for index in range(10)]
    for row, (workload, task) in enumerate(panels):
        history = task.history(fraction)
        rng = np.random.default_rng([seed, row])
        _plot_trajectories(axes[row, 0], task, history, predictors, colors, rng)
        axes[row, 0].set_title(
            f"{workload}: {task.family} curve {task.curve_id}, {fraction:.0%} observed"
            + (" (infeasible)" if task.infeasible else ""),
            fontsize=9,
        )
        truth = task.true_remaining(fraction)
        _plot_remaining(axes[row, 1], task, history, truth, predictors, colors, n_samples, rng)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp.png")
    figure.savefig(temporary, dpi=90)
    plt.close(figure)
    os.replace(temporary, path)


def _plot_trajectories(
    axis: Any,
    task: PredictionTask,
    history: TaskHistory,
    predictors: dict[str, Predictor],
    colors: Sequence[Any],
    rng: np.random.Generator,
) -> None:
    scale = task.curve[0]
    steps = np.arange(task.length)
    last = float(history.work[-1])
    future = steps >= last
    axis.plot(steps[future], np.log(task.curve[future] / scale), color="0.6", label="true future")
    axis.plot(history.work, np.log(history.loss), "o", color="black", ms=3, label="observed")
    axis.axhline(np.log(history.target), color="tab:red", ls="--", lw=1, label="target")
    if not task.infeasible:
        axis.axvline(task.steps_to_target, color="tab:red", lw=0.8, alpha=0.5)
    offsets = np.linspace(1.0, max(task.length - last, 2.0), 50)
    for index, (name, predictor) in enumerate(predictors.items()):
        paths = sample_trajectories(predictor, [history], offsets, FIGURE_TRAJECTORIES, rng)
        if paths is None:
            continue
        color = colors[index % len(colors)]
        for j, path in enumerate(paths[0]):
            axis.plot(last + offsets, path, color=color, lw=0.7, alpha=0.35,
                      label=name if j == 0 else None)  # fmt: skip
    axis.set_xlabel("curve steps")
    axis.set_ylabel("ln(loss / loss at arrival)")
    axis.legend(fontsize=7, loc="upper right")


def _plot_remaining(
    axis: Any,
    task: PredictionTask,
    history: TaskHistory,
    truth: float,
    predictors: dict[str, Predictor],
    colors: Sequence[Any],
    n_samples: int,
    rng: np.random.Generator,
) -> None:
    never_at = np.log10(1.0 + task.cap) + 0.3
    names = list(predictors)
    for index, name in enumerate(names):
        samples = predictors[name].predict([history], n_samples, rng).samples[0]
        x = np.where(np.isinf(samples), never_at, np.log10(1.0 + np.minimum(samples, task.cap)))
        jitter = rng.uniform(-0.18, 0.18, size=len(x))
        axis.scatter(x, index + jitter, s=8, alpha=0.5, color=colors[index % len(colors)])
        median = np.quantile(x, 0.5, method="inverted_cdf")
        axis.plot(median, index, "|", color="black", ms=16, mew=2)
        axis.text(0.02, index + 0.25, f"P(never) {np.mean(np.isinf(samples)):.2f}", fontsize=7,
                  transform=axis.get_yaxis_transform())  # fmt: skip
    true_at = never_at if math.isinf(truth) else np.log10(1.0 + truth)
    axis.axvline(true_at, color="tab:red", lw=1.5, label="truth")
    axis.set_yticks(range(len(names)), names)
    axis.set_ylim(-0.6, len(names) - 0.4)
    axis.set_xlim(-0.1, never_at + 0.3)
    values = [v for v in (0, 10, 100, 1000, 10_000) if np.log10(1.0 + v) < never_at - 0.25]
    axis.set_xticks([*np.log10(1.0 + np.array(values)), never_at], [*map(str, values), "never"])
    axis.set_xlabel(
        f"remaining curve steps (log scale; beyond {CAP_CURVE_LENGTHS:g} curve lengths = never)"
    )
    axis.legend(fontsize=7, loc="lower right")


# --------------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.predictors",
        description="Score remaining-work predictors on held-out tasks at several observed "
        "fractions; write results.csv, results.md and trajectories.png.",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"Registered predictor names (default: all registered: {' '.join(known_predictors())}).",
    )
    parser.add_argument(
        "--workloads",
        nargs="+",
        default=list(BENCHMARK_WORKLOADS),
        choices=sorted(WORKLOADS),
        metavar="WORKLOAD",
        help=f"Workloads (default: {' '.join(BENCHMARK_WORKLOADS)}).",
    )
    parser.add_argument(
        "--fractions",
        nargs="+",
        type=float,
        default=list(DEFAULT_FRACTIONS),
        help="Observed fractions of the steps to the target, each in (0, 1) (default: "
        f"{' '.join(map(str, DEFAULT_FRACTIONS))}).",
    )
    parser.add_argument(
        "--samples",
        type=positive_int,
        default=DEFAULT_SAMPLES,
        help=f"Remaining-work samples per case (default {DEFAULT_SAMPLES}).",
    )
    parser.add_argument(
        "--seed", type=non_negative_int, default=0, help="Seed of cases and samples (default 0)."
    )
    parser.add_argument(
        "--draws",
        type=positive_int,
        default=None,
        help=f"Target draws per test curve (default {DEFAULT_DRAWS_PER_CURVE}; "
        f"{QUICK_DRAWS_PER_CURVE} with --quick).",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"Output folder (default {DEFAULT_OUT})."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_DRAWS_PER_CURVE} draw per curve and {QUICK_LATENCY_REPEATS} timed latency calls.",
    )
    parser.add_argument(
        "--no-resume", action="store_true", help="Replace results.csv instead of reusing its rows."
    )
    parser.add_argument("--no-figure", action="store_true", help="Skip trajectories.png.")
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    names = list(dict.fromkeys(args.predictors or known_predictors()))
    workloads = list(dict.fromkeys(args.workloads))
    fractions = sorted(set(args.fractions))
    bad = [fraction for fraction in fractions if not 0.0 < fraction < 1.0]
    if bad:
        parser.error(f"--fractions must lie in (0, 1); got {bad}.")
    draws = args.draws or (QUICK_DRAWS_PER_CURVE if args.quick else DEFAULT_DRAWS_PER_CURVE)
    repeats = QUICK_LATENCY_REPEATS if args.quick else LATENCY_REPEATS
    predictors: dict[str, Predictor] = {}
    for name in names:
        try:
            predictors[name] = make_predictor(name)
        except UnknownPredictorError as error:
            parser.error(str(error))
    try:
        table = ResultsTable(args.out / "results.csv", resume=not args.no_resume)
    except ResultsFileError as error:
        parser.error(str(error))

    try:
        tasks = {
            workload: draw_tasks(workload, seed=args.seed, draws_per_curve=draws)
            for workload in workloads
        }
    except CaseError as error:
        parser.error(str(error))
    cases = {(w, f): make_cases(tasks[w], f) for w in workloads for f in fractions}
    keys = [
        RowKey(name, workload, fraction, args.seed, args.samples, draws)
        for name in names
        for workload in workloads
        for fraction in fractions
    ]
    done = table.done()
    todo = [key for key in keys if key not in done]
    total = sum(len(cases[key.workload, key.fraction]) for key in todo)
    start = time.perf_counter()
    try:
        with tqdm(total=total, unit="case", disable=args.no_progress) as bar:
            for key in todo:
                bar.set_description(f"{key.predictor} {_column_label(key.workload, key.fraction)}")
                row = evaluate_row(
                    predictors[key.predictor],
                    key,
                    cases[key.workload, key.fraction],
                    latency_repeats=repeats,
                    on_chunk=bar.update,
                )
                table.add(row)
    except KeyboardInterrupt:
        print(f"\nInterrupted: finished rows are in {table.path}; run again to resume.")
        return 130
    elapsed = time.perf_counter() - start

    wanted = set(keys)
    rows = [row for row in table.rows if RowKey.of(row) in wanted]
    settings = (
        f"Test split; seed {args.seed}; {draws} target draw(s) per test curve"
        f"{' (--quick)' if args.quick else ''}; {args.samples} samples per case; latency over "
        f"{repeats} calls. Machine: {available_cores()} CPU cores ({platform.machine()}), "
        f"Python {platform.python_version()}."
    )
    markdown = format_markdown(rows, names, workloads, fractions, settings=settings)
    write_atomic(args.out / "results.md", markdown)
    print(markdown)
    reused = len(keys) - len(todo)
    print(
        f"{len(todo)} row(s) run in {elapsed:.1f} s"
        + (f", {reused} reused from {table.path}" if reused else "")
        + f". Wrote {table.path} and {args.out / 'results.md'}."
    )
    if not args.no_figure:
        _write_figure(args, predictors, tasks, fractions)
    return 0


def _write_figure(
    args: argparse.Namespace,
    predictors: dict[str, Predictor],
    tasks: dict[str, tuple[PredictionTask, ...]],
    fractions: Sequence[float],
) -> None:
    """``trajectories.png`` at the middle requested fraction (a note if matplotlib is missing)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("No trajectories.png: it needs matplotlib (pip install 'mara-env[plot]').")
        return
    fraction = fractions[len(fractions) // 2]
    chosen = {
        workload: figure_tasks(workload_tasks, fraction, args.seed)
        for workload, workload_tasks in tasks.items()
    }
    path = args.out / "trajectories.png"
    plot_figure(path, predictors, chosen, fraction, n_samples=args.samples, seed=args.seed)
    print(f"Wrote {path} ({fraction:.0%} observed).")


if __name__ == "__main__":
    raise SystemExit(main())
