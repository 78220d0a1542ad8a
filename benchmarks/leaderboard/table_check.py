"""Do a leaderboard's written tables agree with the tables its journal recomputes?

``--validate`` rebuilds the grid a recorded run played from its journal (:func:`recorded_grid`),
recomputes every table (Markdown, CSV, JSON) from the journal's rows and compares it with the
file on disk line by line (:func:`check_tables`); numbers agree when they are equal to the
digits written (:func:`lines_agree`), so a table rounded for display is not reported as
different.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mara_env import ClusterConfig, ConfigError
from mara_env.benchmarks.leaderboard.grid import (
    EVALUATION_SEED_BASE,
    Grid,
    config_from_fields,
    config_hash,
)
from mara_env.benchmarks.leaderboard.records import JournalContents
from mara_env.benchmarks.leaderboard.report import render_tables
from mara_env.benchmarks.leaderboard.summary import build_leaderboard
from mara_env.portability import MAX_ULPS, differences

if TYPE_CHECKING:
    from mara_env.benchmarks.leaderboard.validate import Findings


def check_tables(
    directory: Path, run: dict[str, Any], contents: JournalContents, findings: Findings
) -> tuple[Grid | None, list[dict[str, Any]]]:
    """Render the run's tables again from the journal and compare them with the files."""
    grid, problems = recorded_grid(run, contents)
    rows: list[dict[str, Any]] = []
    names = "the tables"
    if grid is not None:
        board = build_leaderboard(
            grid, contents.rows, reference=run["reference"], n_resamples=run["resamples"]
        )
        rows = list(board.rows)
        tables = render_tables(
            board,
            provenance=run["provenance"],
            command=run["command"],
            plots=[(title, name) for title, name in run["plots"]],
        )
        names = ", ".join(tables)
        found, close = compare_tables(directory, tables)
        problems += found
        if close and not found:
            findings.notes.append(
                f"{close} table line(s) agree with their recomputation within {MAX_ULPS} ulps, "
                "not bit for bit (statistics computed on another machine or NumPy version)."
            )
        missing = len(grid.cells()) - len(rows)
        if missing:
            findings.notes.append(f"{missing} cells of the run's grid have no episode.")
    findings.check(
        "tables",
        problems,
        f"{names} equal their recomputation from the journal's {len(rows)} episodes (plots "
        "not compared).",
    )
    return grid, rows


def compare_tables(directory: Path, tables: dict[str, str]) -> tuple[list[str], int]:
    """The tables' differences from their recomputation, and how many lines agree only within
    :data:`MAX_ULPS` (statistics recomputed on another machine may differ in the last bits)."""
    problems = []
    close = 0
    for name, text in tables.items():
        path = directory / name
        if not path.is_file():
            problems.append(f"{name} is missing")
            continue
        written = path.read_text().splitlines()
        expected = text.splitlines()
        pairs = list(zip(written, expected, strict=False))
        number = next(
            (i for i, (a, b) in enumerate(pairs) if not lines_agree(a, b)),
            len(pairs) if len(written) != len(expected) else None,
        )
        if number is not None:
            problems.append(
                f"{name} line {number + 1} differs from its recomputation: "
                f"{_line(written, number)} in the file, {_line(expected, number)} recomputed"
            )
        close += sum(a != b for a, b in pairs)
    return problems, close


#: A number in a table: an optional sign, digits, an optional fraction and exponent.
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def lines_agree(written: str, recomputed: str) -> bool:
    """Equal, or equal but for numbers with a fraction or exponent that agree within
    :data:`MAX_ULPS` (whole numbers must be equal).

    Example:
        >>> lines_agree('"low": 0.4999390695236999,', '"low": 0.49993906952369976,')
        True
        >>> lines_agree("| 1 | edf | 0.52 |", "| 2 | edf | 0.52 |")
        False
    """
    if written == recomputed:
        return True
    if _NUMBER.sub("#", written) != _NUMBER.sub("#", recomputed):
        return False
    for a, b in zip(_NUMBER.findall(written), _NUMBER.findall(recomputed), strict=True):
        if a == b:
            continue
        fractional = any(mark in a + b for mark in ".eE")
        if not fractional or differences(float(a), float(b)):
            return False
    return True


def _line(lines: list[str], number: int) -> str:
    if number >= len(lines):
        return "(no such line)"
    line = lines[number]
    return repr(line if len(line) <= 120 else line[:117] + "...")


def recorded_grid(run: dict[str, Any], contents: JournalContents) -> tuple[Grid | None, list[str]]:
    """The grid of a recorded run, with the configs and fingerprints it ran with."""
    configs: dict[str, ClusterConfig] = {}
    problems = []
    for label, key in run["configs"].items():
        fields = contents.configs.get(key)
        try:
            if fields is None:
                raise ConfigError("the journal has no config record of that hash")
            config = config_from_fields(fields)
            if config_hash(config) != key:
                raise ConfigError("its fields do not give back the recorded hash")
            configs[label] = config
        except ConfigError as error:
            problems.append(f"config {label} (hash {key}): {error}")
    if problems:
        return None, problems
    grid_facts = run["grid"]
    specs = {agent: spec for agent, spec in run["specs"].items() if agent != spec}
    grid = Grid(
        agents=tuple(grid_facts["agents"]),
        workloads=tuple(grid_facts["workloads"]),
        load_factors=tuple(grid_facts["load_factors"]),
        n_seeds=grid_facts["n_seeds"],
        first_seed=grid_facts.get("first_seed", EVALUATION_SEED_BASE),
        base=grid_facts["base"],
        # runs recorded before there were two worlds played Cluster-v1
        world_version=grid_facts.get("world_version", 1),
        quick=grid_facts["quick"],
        fingerprint=run["fingerprints"]["shared"],
        specs=specs,
        agent_fingerprints=run["fingerprints"]["agents"],
        configs=configs,
        traces=grid_facts.get("traces"),
        arrivals=grid_facts.get("arrivals", "poisson"),
        own_families=tuple(tuple(pair) for pair in grid_facts.get("own_families", [])),
        curve_durations=grid_facts.get("curve_durations", "stretched"),
        hopeless_curve_share=grid_facts.get("hopeless_curve_share"),
    )
    return grid, []
