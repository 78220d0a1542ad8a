"""Pack a file of job submission times into an arrival trace, with its data card.

``python -m mara_env.benchmarks.collect arrivals --from submissions.csv --output my_arrivals.npz``
bins the CSV's ``timestamp`` column into submission counts per 15 minutes
(:func:`mara_env.curves.arrivals.arrivals_from_csv`), writes them
(:func:`mara_env.curves.arrivals.save_arrivals`; ``ClusterConfig(arrivals="my_arrivals.npz")`` replays
them) and a data card beside them (``.md``): the source and its SHA-256, the span, how bursty the
counts are, and the hour-of-day profile. Only the counts are written: no job's record.

The shipped ``mara_env/data/arrivals_philly.npz`` was made this way from the Philly submissions
in the Pollux artifact (see :data:`PHILLY_NOTICE`), fetched beside the project, not downloaded
at run time.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "jobs.csv").write_text("timestamp\\n0\\n30\\n1000\\n1900\\n1901\\n")
    >>> facts = pack_arrivals(folder / "jobs.csv", folder / "jobs.npz")
    >>> facts["bins"], facts["submissions"], (folder / "jobs.md").is_file()
    (3, 5, True)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.write_faults import UNCHANGED, write_faults_end
from mara_env.curves.arrivals import arrivals_from_csv, save_arrivals
from mara_env.errors import ConfigError

#: Where the shipped Philly arrivals come from, and the terms they are shipped under.
PHILLY_NOTICE = """\
Source: the job submission times of Microsoft's Philly GPU clusters, 2017, as distributed in the
Pollux artifact (https://github.com/petuum/adaptdl, commit de25dcc, file
`simulator/traces/philly.csv`), which is licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0). The Philly trace itself is described in Jeon et
al., "Analysis of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX
ATC 2019 (https://github.com/msr-fiddle/philly-traces), whose authors ask that work using it
cite that paper. Shipped here: only the number of submissions in each 15-minute bin, derived by
the command above; no job's record, user, duration or size."""


def pack_arrivals(source: Path, output: Path, notice: str = "") -> dict[str, Any]:
    """Bin ``source``'s submissions, write ``output`` (``.npz``) and its card (``.md``); return
    the card's facts.

    Raises:
        ConfigError: If ``source`` has no usable timestamps or ``output`` is not a ``.npz``.
    """
    if output.suffix != ".npz":
        raise ConfigError(f"--output must be a .npz path, got {output}.")
    trace = arrivals_from_csv(source)
    save_arrivals(output, trace)
    counts = trace.counts
    # the bins of each hour of the day, counted from the first submission's bin
    first = _first_bin_hour(source, trace.bin_seconds)
    hours = (first + np.arange(len(counts)) * trace.bin_seconds / 3600.0).astype(int) % 24
    bins_by_hour = np.bincount(hours, minlength=24)
    by_hour = np.bincount(hours, weights=counts, minlength=24) / np.maximum(bins_by_hour, 1)
    facts = {
        "source": str(source),
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "output": str(output),
        "output_sha256": hashlib.sha256(output.read_bytes()).hexdigest(),
        "bins": len(counts),
        "bin_seconds": trace.bin_seconds,
        "submissions": int(counts.sum()),
        "mean_per_bin": float(counts.mean()),
        "variance_over_mean": float(counts.var() / counts.mean()),
        "empty_bins": float((counts == 0).mean()),
        "hour_profile": (by_hour / by_hour.mean()).round(2).tolist(),
        "notice": notice,
    }
    write_atomically(output.with_suffix(".md"), data_card(facts))
    return facts


def _first_bin_hour(source: Path, bin_seconds: float) -> float:
    """The hour of the day (UTC, fractional) at which the first bin starts."""
    from mara_env.curves.arrivals import _seconds  # one reading of timestamps for both

    with open(source, newline="", encoding="utf-8") as handle:
        rows = csv.DictReader(handle)
        first = min(_seconds(row["timestamp"], source, line) for line, row in enumerate(rows, 2))
    return (first % 86400) / 3600.0


def data_card(facts: dict[str, Any]) -> str:
    """The arrival trace's data card (Markdown)."""
    hours = " | ".join(f"{value:.2f}" for value in facts["hour_profile"])
    lines = [
        f"# Data card: {Path(facts['output']).name}",
        "",
        f"Made by `python -m mara_env.benchmarks.collect arrivals --from {Path(facts['source']).name} "
        f"--output {facts['output']}{' --philly' if facts['notice'] else ''}`.",
        "",
        f"- source SHA-256 `{facts['source_sha256']}`; file SHA-256 `{facts['output_sha256']}`",
        f"- {facts['submissions']} submissions in {facts['bins']} bins of "
        f"{facts['bin_seconds']:g} s ({facts['bins'] * facts['bin_seconds'] / 86400:.1f} days)",
        f"- per bin: mean {facts['mean_per_bin']:.2f}, variance / mean "
        f"{facts['variance_over_mean']:.1f} (1 for a Poisson stream), "
        f"{facts['empty_bins']:.0%} of bins empty",
        "",
        "Submissions by hour of the day (UTC), relative to the mean:",
        "",
        "| " + " | ".join(str(hour) for hour in range(24)) + " |",
        "|" + "---|" * 24,
        f"| {hours} |",
        "",
    ]
    if facts["notice"]:
        lines += ["## Source and licence", "", facts["notice"], ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.collect arrivals`` entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.collect arrivals", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--from", dest="source", type=Path, required=True, metavar="FILE",
        help="a CSV with a 'timestamp' column (seconds, or dates YYYY-MM-DD HH:MM:SS)",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the arrival trace (.npz)")
    parser.add_argument(
        "--philly", action="store_true", help="add the notice of the shipped Philly arrivals"
    )
    args = parser.parse_args(argv)
    try:
        with write_faults_end("arrivals", lambda: UNCHANGED, "it bins them again"):
            facts = pack_arrivals(args.source, args.output, PHILLY_NOTICE if args.philly else "")
    except ConfigError as error:
        parser.exit(2, f"arrivals: {error}\n")
    print(data_card(facts), end="")
    return 0
