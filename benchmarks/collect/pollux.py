"""The Pollux curves as a curve table: an example of bringing your own curves and families.

The Pollux artifact (Qiao et al., OSDI 2021; https://github.com/petuum/adaptdl, commit
``de25dcc``, ``simulator/traces/<application>/validation-<batch size>.csv``, Apache License
2.0) records, for five deep-learning applications trained at several batch sizes, a validation
metric after each epoch. ``python -m mara_env.benchmarks.collect pollux --traces DIR --output
docs/examples/pollux/curves.csv`` turns them into a curve table (:mod:`mara_env.curves.curve_tables`),
one run per application and batch size:

| application | family | value |
|---|---|---|
| cifar10, imagenet | vision | top-1 accuracy, as a score (the loss ``1 - accuracy``) |
| yolov3 | vision | the detection loss, as recorded |
| ncf | recommendation (your own) | hit rate, as a score |
| deepspeech2 | speech (your own) | word error rate in percent, as a loss |

``step`` is the epoch (the row of the recorded file) and ``work`` the samples processed
(the file's ``progress``). The split is by run, with the shipped traces' rule
(:func:`mara_env.benchmarks.collect.pack.split_by_hash`). BERT's runs are left out: two reports each.

Example:
    >>> rows = table_rows("cifar10", "256", [(390.7, 0.42), (782.3, 0.44)])
    >>> rows[0]["family"], rows[0]["kind"], rows[1]["step"]
    ('vision', 'score', 1)
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from mara_env.benchmarks.collect.pack import split_by_hash

#: Each application's family and whether its metric is a score (higher is better) or a loss.
APPLICATIONS = {
    "cifar10": ("vision", "score"),
    "imagenet": ("vision", "score"),
    "yolov3": ("vision", "loss"),
    "ncf": ("recommendation", "score"),
    "deepspeech2": ("speech", "loss"),
}
#: The curve table's columns.
COLUMNS = ("run", "step", "value", "family", "split", "work", "kind")


def table_rows(application: str, batch_size: str, points: list[tuple[float, float]]) -> list[dict]:
    """The curve-table rows of one recorded run: ``points`` are its (progress, metric) per
    epoch, in order; the split is filled in by :func:`convert`."""
    family, kind = APPLICATIONS[application]
    run = f"{application}-{batch_size}"
    return [
        {"run": run, "step": step, "value": metric, "family": family, "split": "",
         "work": progress, "kind": kind}
        for step, (progress, metric) in enumerate(points)
    ]  # fmt: skip


def convert(traces: Path, output: Path) -> int:
    """Write the curve table of every application's recorded runs under ``traces``; returns
    the number of runs."""
    rows: list[dict] = []
    for application in APPLICATIONS:
        for path in sorted((traces / application).glob("validation-*.csv")):
            with open(path, newline="") as handle:
                points = [
                    (float(r["progress"]), float(r["metric"])) for r in csv.DictReader(handle)
                ]
            rows += table_rows(application, path.stem.split("-")[1], points)
    by_family: dict[str, list[str]] = {}
    for row in rows:
        runs = by_family.setdefault(row["family"], [])
        if row["run"] not in runs:
            runs.append(row["run"])
    side: dict[str, bool] = {}
    for runs in by_family.values():
        side.update(zip(runs, split_by_hash(runs), strict=True))
    for row in rows:
        row["split"] = "test" if side[row["run"]] else "train"
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(side)


def main(argv: list[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.collect pollux`` entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.collect pollux", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--traces", type=Path, required=True, metavar="DIR",
        help="the artifact's simulator/traces folder (one folder per application)",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the curve table (.csv)")
    args = parser.parse_args(argv)
    if not (args.traces / "cifar10").is_dir():
        parser.error(f"--traces {args.traces}: no cifar10 folder; give simulator/traces.")
    print(f"Wrote {convert(args.traces, args.output)} runs to {args.output}.")
    return 0
