"""The leaderboard on your own workload: ``--traces``, ``--own-families`` and the workloads
they make playable.

Example:
    >>> family_and_alpha("speech=0.8")
    ('speech', 0.8)
"""

from __future__ import annotations

import argparse
import math

from mara_env import WORKLOADS
from mara_env.benchmarks.common.arguments import data_error
from mara_env.benchmarks.leaderboard.grid import DEFAULT_WORKLOADS, Grid
from mara_env.curves.arrivals import NAMED, load_arrivals
from mara_env.curves.families import FAMILIES
from mara_env.curves.sources import resolve_trace_source
from mara_env.errors import ConfigError, TraceError
from mara_env.sim.workload import build_workload


def family_and_alpha(text: str) -> tuple[str, float]:
    """``--own-families``: ``NAME=ALPHA`` as ``(name, alpha)``."""
    name, _, alpha = text.partition("=")
    try:
        value = float(alpha)
    except ValueError:
        value = math.nan
    if not name or not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give NAME=ALPHA with ALPHA in (0, 1], e.g. speech=0.8."
        )
    return name, value


def traces_and_workloads(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[str | None, tuple[str, ...]]:
    """``--traces`` as a path string (checked: it loads) and the workloads to play: those
    given, each refused if the curves lack one of its families, or by default the shipped
    default workloads, or with ``--traces`` every workload its families can play."""
    given = None if args.workloads is None else tuple(dict.fromkeys(args.workloads))
    if args.traces is None:
        return None, given or tuple(DEFAULT_WORKLOADS)
    try:
        families = set(resolve_trace_source(args.traces).families)
    except TraceError as error:
        data_error(parser, f"--traces: {error}")
    own = [name for name, _ in args.own_families]
    undeclared = sorted(families - set(FAMILIES) - set(own))
    if undeclared:
        parser.error(
            f"--traces {args.traces} has families of your own, {undeclared}: declare each with "
            f"its parallel-scaling exponent, e.g. --own-families {undeclared[0]}=0.8."
        )
    playable = [w for w, mix in WORKLOADS.items() if {f for f, _ in mix} <= families]
    playable += [name for name in own if name in families]
    if not playable:
        parser.error(f"--traces {args.traces}: its families {sorted(families)} make no workload.")
    for workload in given or ():
        missing = sorted({f for f, _ in WORKLOADS.get(workload, ((workload, 1.0),))} - families)
        if missing:
            parser.error(
                f"--workloads {workload}: draws {missing}, of which {args.traces} has no "
                f"curves (its families: {sorted(families)}); workloads it can play: {playable}."
            )
    return str(args.traces), given or tuple(playable)


def check_workloads(parser: argparse.ArgumentParser, grid: Grid) -> None:
    """Build every stratum's workload here, before any episode, so that curves that cannot
    serve the grid's configs (e.g. ``--durations recorded`` on curves without a work axis) are
    refused with the reason instead of failing in every worker."""
    source = resolve_trace_source(grid.traces)
    for stratum in grid.strata:
        try:
            build_workload(grid.config(*stratum), source)
        except TraceError as error:
            data_error(parser, f"{grid.label(*stratum)}: {error}")


def check_arrivals_file(parser: argparse.ArgumentParser, arrivals: str) -> None:
    """Read ``--arrivals`` here, before any episode, when it names a file: one that is not an
    arrival trace (or not text) is refused with the reason instead of failing in every worker."""
    if arrivals in NAMED:
        return
    try:
        load_arrivals(arrivals)
    except ConfigError as error:
        data_error(parser, f"--arrivals: {error}")
