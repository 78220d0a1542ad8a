"""The prediction benchmark: remaining-work predictions against the truth, in and out of distribution.

Every predictor is scored on **cells** = (protocol, set, observed fraction), all made from one
draw of test-split tasks of the ``in_distribution`` workload (:mod:`mara_env.predictors.cases`: tasks
drawn as the simulator draws them, observed by one node up to the fraction of their curve,
unless already done); :mod:`mara_env.benchmarks.prediction.protocols` defines them:

* ``test``: each family's tasks (rl, tabular, vision) and all of them (``pooled``), scored by the
  shipped predictors;
* ``held_out`` (leave one family out): each family's tasks scored by predictor versions trained
  without that family, told the family ``unknown``; WLS and DKF (not trained) as shipped, flow
  matching from ``predictors/checkpoints/held_out/flow_matching_without_<family>.pt``
  (``--held-out-dir``); predictors without held-out versions are not scored here. A missing
  checkpoint stops the run with the command that trains it, unless ``--skip-missing-held-out``
  is given (that predictor is then left out of the protocol, with a note in the report);
* ``shift``: every task on its curve at twice the resolution (``resolution_x2``: speed doubled)
  or twice the length (``duration_x2``: deadline doubled), :mod:`mara_env.predictors.shifted_curves`.

Scores per cell (:mod:`mara_env.predictors.metrics`; samples beyond ``cap`` read as "never"): cases,
feasible cases; median ``|ln(c(median) / c(truth))|`` over feasible cases (``c`` clips to ``[1,
cap]`` curve steps, a "never" median scores ``ln(cap / c(truth))``) with a 95% bootstrap
interval; the 10-90% interval coverage with its 95% bootstrap interval (nominal 0.785 with 64
samples; "never" is covered iff the 90% quantile is never; both bootstraps resample whole
curves, since a curve's cases are not independent) and the shares of outcomes below and above
that interval; CRPS of ``ln(1 + min(work, cap))``; the
infeasibility AUC of P(never); the Brier score of P(reaching the target by the deadline at one
node), that probability's calibration error (with a 95% bootstrap interval) and its reliability
table; the share of reachable targets predicted "never", before and after the recorded curve's
last point; and ``latency_ms``, the median wall time of one ``predict`` call for one epoch's
worth of tasks (16 of the cell's cases, 32 samples each), after warm-up, with the torch models
on one thread.

Usage::

    python -m mara_env.benchmarks.prediction.benchmark                                  # everything
    python -m mara_env.benchmarks.prediction.benchmark --protocols test shift --predictors wls dkf --quick
    python -m mara_env.benchmarks.prediction.benchmark --flow-matching mine/flow_matching.pt \
        --held-out-dir mine/held_out --output mine/results           # your own trained checkpoints

Outputs in ``--output`` (default ``benchmarks/results/predictors``):

* ``results.csv``: one row per predictor x cell, keyed as :mod:`mara_env.benchmarks.prediction.results`
  says (code and weights included), appended and flushed to disk as each row finishes. A re-run
  skips the rows already there; a file with other columns (an earlier version's included), or one
  that cannot be parsed, is refused with an error.
* ``pairs.csv`` (:mod:`mara_env.benchmarks.prediction.pairs`): for every cell of the acceptance summary,
  ``flow_matching``'s median error minus each baseline's on the same cases, with a paired 95%
  interval; resumed like ``results.csv``.
* ``results.md`` (:mod:`mara_env.benchmarks.prediction.report`): an acceptance summary, then per protocol
  the case counts and one table per metric; cells with fewer than 30 feasible cases read
  ``too small (n=..)``. Also printed.
* ``trajectories.png`` (:mod:`mara_env.benchmarks.prediction.figure`): two test tasks per family at the
  middle requested fraction, with sampled futures and remaining work.
* ``cells.png`` (:mod:`mara_env.benchmarks.prediction.cells_figure`): every reported cell's median error
  and coverage, with their intervals, per protocol, and the paired differences of ``pairs.csv``.
* ``reliability.png`` (:mod:`mara_env.benchmarks.prediction.reliability_figure`): whether each
  predictor's probability of meeting the deadline comes true as often as it says.

Every row draws from its own generator, seeded by (seed, predictor, protocol, set, fraction), so
a row's figures do not depend on which other rows run or were resumed.

Example:
    >>> import tempfile
    >>> from mara_env.benchmarks.prediction.benchmark import main
    >>> with tempfile.TemporaryDirectory() as out:
    ...     main(["--predictors", "wls", "--protocols", "shift", "--fractions", "0.4", "--quick",
    ...           "--no-progress", "--no-figure", "--output", out])  # doctest: +ELLIPSIS
    # Prediction benchmark...
    0
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Sequence
from pathlib import Path

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.arguments import add_output, non_negative_int, positive_int
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.prediction.pairs import (
    PairKey,
    PairsTable,
    pair_keys,
)
from mara_env.benchmarks.prediction.protocols import (
    DEFAULT_HELD_OUT_DIR,
    FAMILIES,
    PROTOCOLS,
    TASK_WORKLOAD,
    Cell,
    PredictorBank,
    build_cells,
    train_command,
)
from mara_env.benchmarks.prediction.report import (
    ACCEPTANCE_FRACTIONS,
    ACCEPTANCE_PREDICTOR,
    BASELINES,
    format_markdown,
)
from mara_env.benchmarks.prediction.results import (
    ResultsFileError,
    ResultsTable,
    RowKey,
)
from mara_env.benchmarks.prediction.runs import (
    _write_figures,
    make_keys,
    run_pairs,
    run_rows,
    scored_manifest,
)
from mara_env.predictors.base import Predictor
from mara_env.predictors.bootstrap import BOOTSTRAP_RESAMPLES
from mara_env.predictors.cases import DEFAULT_DRAWS_PER_CURVE, CaseError, draw_tasks
from mara_env.predictors.checkpoint import CheckpointError
from mara_env.predictors.registry import known_predictors, make_predictor, require_observation_only

#: Observed fractions run by default.
DEFAULT_FRACTIONS = (0.1, 0.2, 0.4, 0.8)
#: Samples per case by default.
DEFAULT_SAMPLES = 64
#: Where results go by default.
DEFAULT_OUT = Path("benchmarks/results/predictors")
#: Timed ``predict`` calls per latency figure (full run, ``--quick``).
LATENCY_REPEATS = 21
QUICK_LATENCY_REPEATS = 3
#: Target draws per test curve with ``--quick``.
QUICK_DRAWS_PER_CURVE = 1


# --------------------------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.benchmark",
        description="Score remaining-work predictors in and out of distribution at several "
        "observed fractions; write results.csv, results.md, trajectories.png, cells.png and "
        "reliability.png.",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"Registered predictor names (default: all registered: {' '.join(known_predictors())}).",
    )
    parser.add_argument(
        "--protocols",
        nargs="+",
        default=list(PROTOCOLS),
        choices=PROTOCOLS,
        metavar="PROTOCOL",
        help=f"Protocols (default: all: {' '.join(PROTOCOLS)}).",
    )
    parser.add_argument(
        "--fractions",
        nargs="+",
        type=float,
        default=list(DEFAULT_FRACTIONS),
        help="Observed fractions of the curve, each in (0, 1) (default: "
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
        "--held-out-dir",
        type=Path,
        default=DEFAULT_HELD_OUT_DIR,
        help="Folder of the <predictor>_without_<family>.pt checkpoints of the held_out "
        "protocol (default: predictors/checkpoints/held_out).",
    )
    parser.add_argument(
        "--flow-matching",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="Score this flow-matching checkpoint (e.g. one written by "
        "`python -m mara_env.benchmarks.prediction.train --output FILE`) as `flow_matching` instead of the "
        "shipped one; its rows are keyed by its weights (give --output to keep the shipped results "
        "apart, and --held-out-dir for its held-out versions).",
    )
    parser.add_argument(
        "--skip-missing-held-out",
        action="store_true",
        help="Leave a predictor whose held-out checkpoints are missing out of the held_out "
        "protocol (with a note) instead of stopping.",
    )
    add_output(parser, default=DEFAULT_OUT, help=f"Output folder (default {DEFAULT_OUT}).")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_DRAWS_PER_CURVE} draw per curve and {QUICK_LATENCY_REPEATS} timed latency calls.",
    )
    parser.add_argument(
        "--no-resume", action="store_true", help="Replace results.csv instead of reusing its rows."
    )
    parser.add_argument(
        "--no-figure",
        action="store_true",
        help="Skip trajectories.png, cells.png and reliability.png.",
    )
    parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")
    return parser


def held_out_plan(
    bank: PredictorBank, *, skip_missing: bool
) -> tuple[list[str], list[str], list[str]]:
    """The predictors scored in the ``held_out`` protocol, the report's notes on the others, and
    the errors that stop the run (missing checkpoints, unless ``skip_missing``)."""
    scored, notes, errors = [], [], []
    for name in bank.names:
        missing = bank.missing(name)
        if not bank.has_held_out_version(name):
            notes.append(f"`{name}`: not scored, it has no versions trained without a family.")
        elif missing and skip_missing:
            files = ", ".join(f"`{path}`" for path in missing.values())
            notes.append(f"`{name}`: not scored (--skip-missing-held-out), missing {files}.")
        elif missing:
            errors += [
                f"missing {path}; train it with `{train_command(name, family, path)}`"
                for family, path in missing.items()
            ]
        else:
            scored.append(name)
    return scored, notes, errors


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    names = list(dict.fromkeys(args.predictors or known_predictors()))
    protocols = [protocol for protocol in PROTOCOLS if protocol in args.protocols]
    fractions = sorted(set(args.fractions))
    bad = [fraction for fraction in fractions if not 0.0 < fraction < 1.0]
    if bad:
        parser.error(f"--fractions must lie in (0, 1); got {bad}.")
    try:
        require_observation_only(names, "the prediction benchmark")
    except ValueError as error:
        parser.error(str(error))
    if args.flow_matching is not None and not args.flow_matching.is_file():
        parser.error(f"--flow-matching: no checkpoint file at {args.flow_matching}.")
    draws = args.draws or (QUICK_DRAWS_PER_CURVE if args.quick else DEFAULT_DRAWS_PER_CURVE)
    repeats = QUICK_LATENCY_REPEATS if args.quick else LATENCY_REPEATS
    try:
        table = ResultsTable(args.out / "results.csv", resume=not args.no_resume)
        pairs_table = PairsTable(args.out / "pairs.csv", resume=not args.no_resume)
        for written in (table, pairs_table):
            written.store.record_manifest(scored_manifest())
    except ResultsFileError as error:
        parser.error(str(error))
    try:
        bank = PredictorBank(predictor_factories(names, args.flow_matching), args.held_out_dir)
    except CheckpointError as error:
        parser.error(str(error))
    held_out_names, held_out_notes, errors = held_out_plan(
        bank, skip_missing=args.skip_missing_held_out
    )
    if "held_out" in protocols and errors:
        parser.error(
            "the held_out protocol needs checkpoints that are not there:\n  "
            + "\n  ".join(errors)
            + "\nor pass --skip-missing-held-out (or --protocols without held_out)."
        )
    try:
        tasks = draw_tasks(TASK_WORKLOAD, seed=args.seed, draws_per_curve=draws)
        cells = build_cells(tasks, protocols, fractions)
    except CaseError as error:
        parser.error(str(error))
    try:
        keys = make_keys(bank, cells, names, held_out_names, args, draws)
    except CheckpointError as error:
        parser.error(str(error))

    done = table.done()
    todo = [key for key in keys if key not in done]
    start = time.perf_counter()
    try:
        run_rows(table, bank, todo, cells, repeats=repeats, progress=not args.no_progress)
        by_key = {RowKey.of(row): row for row in table.rows}
        pairs = pair_keys(keys, by_key, ACCEPTANCE_PREDICTOR, BASELINES, ACCEPTANCE_FRACTIONS)
        done_pairs = pairs_table.done()
        pairs_todo = [pair for pair in pairs if PairKey.between(*pair) not in done_pairs]
        run_pairs(pairs_table, bank, pairs_todo, cells, progress=not args.no_progress)
    except KeyboardInterrupt:
        print(
            f"\nInterrupted: finished rows are in {table.path} and {pairs_table.path}; run again "
            "to resume."
        )
        return 130
    elapsed = time.perf_counter() - start

    wanted = set(keys)
    rows = {
        (row["predictor"], Cell(row["protocol"], row["set"], row["fraction"])): row
        for row in table.rows
        if RowKey.of(row) in wanted
    }
    wanted_pairs = {PairKey.between(*pair) for pair in pairs}
    paired = {
        (row["predictor"], row["baseline"], Cell(row["protocol"], row["set"], row["fraction"])): row
        for row in pairs_table.rows
        if PairKey.of(row) in wanted_pairs
    }
    settings = (
        f"Test split of the `{TASK_WORKLOAD}` workload; seed {args.seed}; {draws} target draw(s) "
        f"per test curve{' (--quick)' if args.quick else ''}; {args.samples} samples per case; "
        f"{BOOTSTRAP_RESAMPLES} bootstrap resamples; latency over {repeats} calls. Machine: "
        f"{available_cores()} CPU cores; {platform_line()}."
    )
    if args.flow_matching is not None and "flow_matching" in names:
        settings += f" `flow_matching` is the checkpoint {args.flow_matching}, not the shipped one."
    markdown = format_markdown(
        rows,
        names,
        list(cells),
        settings=settings,
        notes={"held_out": held_out_notes},
        pairs=paired,
    )
    write_atomically(args.out / "results.md", markdown)
    print(markdown)
    reused = len(keys) - len(todo)
    print(
        f"{len(todo)} row(s) and {len(pairs_todo)} pair(s) run in {elapsed:.1f} s"
        + (f", {reused} row(s) reused from {table.path}" if reused else "")
        + f". Wrote {table.path}, {pairs_table.path} and {args.out / 'results.md'}."
    )
    if not args.no_figure:
        by_family = {family: [t for t in tasks if t.family == family] for family in FAMILIES}
        _write_figures(args, bank, by_family, fractions, rows, names, list(cells), paired)
    return 0


def predictor_factories(
    names: Sequence[str], flow_matching: Path | None = None
) -> dict[str, functools.partial[Predictor]]:
    """A factory of each named predictor; ``flow_matching`` loads from that checkpoint if given.

    Example:
        >>> factories = predictor_factories(["wls", "flow_matching"], Path("mine.pt"))
        >>> factories["wls"].args, str(factories["flow_matching"].keywords["path"])
        (('wls',), 'mine.pt')
    """
    factories = {name: functools.partial(make_predictor, name) for name in names}
    if flow_matching is not None and "flow_matching" in factories:
        factories["flow_matching"] = functools.partial(
            make_predictor, "flow_matching", path=flow_matching
        )
    return factories


if __name__ == "__main__":
    raise SystemExit(main())
