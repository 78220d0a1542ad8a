"""Pack a store of raw curves into the trace file shipped with mara-env, with its data card.

Writes ``mara_env/data/traces.npz`` (the format of :func:`mara_env.save_traces`, with each run's
record in the metadata), ``mara_env/data/TRACES.md`` (the data card) and
``mara_env/data/trace_samples.png`` (sample curves per family).

The train/test split is fixed by run: a run is a test run when the hash of its run id falls
below ``TEST_SHARE`` (:func:`split_by_hash`), so about 20% of each family's runs are test runs and
a run's side never changes when other runs are added. Test curves are never used to train
anything.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from dataclasses import dataclass
from importlib import metadata as package_metadata
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.collect.pack_table import data_card as data_card_of_table
from mara_env.benchmarks.collect.pack_table import pack_table
from mara_env.benchmarks.collect.realism import realism_statistics
from mara_env.benchmarks.collect.runner import collector
from mara_env.benchmarks.collect.store import CurveStore
from mara_env.benchmarks.common.figures import pyplot, save_png
from mara_env.benchmarks.common.write_faults import UNCHANGED, write_faults_end
from mara_env.curves.sources import SHIPPED_TRACES
from mara_env.curves.traces import CurvePool, save_traces
from mara_env.errors import TraceError

TEST_SHARE = 0.2
LIBRARIES = ("numpy", "torch", "scikit-learn", "stable-baselines3", "gymnasium")


@dataclass(frozen=True)
class FamilyPack:
    """One family's packed curves."""

    family: str
    records: list[dict[str, Any]]
    losses: list[np.ndarray]
    work: list[np.ndarray]
    is_test: np.ndarray


def split_by_hash(run_ids: list[str], test_share: float = TEST_SHARE) -> np.ndarray:
    """Boolean test flags: a run is in the test split when the hash of its id, read as a number
    in [0, 1), is below ``test_share``.

    A run's side depends on its id alone, so it never changes when runs are added; each family
    gets about ``test_share`` of its runs as test curves (at least one on each side).

    Example:
        >>> flags = split_by_hash([f"run-{i}" for i in range(1000)])
        >>> bool(0.15 < flags.mean() < 0.25)
        True
    """
    unit = np.array(
        [
            int(hashlib.sha256(f"split:{run_id}".encode()).hexdigest()[:12], 16) / 16**12
            for run_id in run_ids
        ]
    )
    is_test = unit < test_share
    if not is_test.any():
        is_test[np.argmin(unit)] = True
    if is_test.all():
        is_test[np.argmax(unit)] = False
    return is_test


def load_family(store: CurveStore, family: str) -> FamilyPack:
    """Read and split one family's runs from the store."""
    runs = store.load_family(family)
    if len(runs) < 2:
        raise SystemExit(f"the store {store.root} has {len(runs)} {family} runs; collect first")
    records = [record for record, _, _ in runs]
    return FamilyPack(
        family=family,
        records=records,
        losses=[losses for _, losses, _ in runs],
        work=[work for _, _, work in runs],
        is_test=split_by_hash([record["run_id"] for record in records]),
    )


def library_versions() -> dict[str, str]:
    """Versions of Python and the libraries that produced the curves."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = package_metadata.version(name)
        except package_metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def pack(
    store: CurveStore,
    families: list[str],
    output: Path = SHIPPED_TRACES,
    *,
    figure: bool = True,
) -> dict[str, Any]:
    """Write the trace file, the data card and the figure; return the card's facts."""
    packs = [load_family(store, family) for family in families]
    collection = store.collection_log()
    facts: dict[str, Any] = {
        "test_share": TEST_SHARE,
        "libraries": library_versions(),
        "collection_sessions": collection,
        "collection_seconds": round(sum(s["seconds"] for s in collection), 1),
        "collection_span_seconds": (
            round(
                max(s["finished_at"] for s in collection)
                - min(s["started_at"] for s in collection),
                1,
            )
            if collection and all("started_at" in s for s in collection)
            else None
        ),
        "families": {},
    }
    pools: dict[str, tuple[CurvePool, np.ndarray]] = {}
    for family_pack in packs:
        pool = CurvePool.from_curves(family_pack.family, family_pack.losses, work=family_pack.work)
        pools[family_pack.family] = (pool, family_pack.is_test)
        points = np.array([len(losses) for losses in family_pack.losses])
        facts["families"][family_pack.family] = {
            "curves": len(family_pack.losses),
            "train": int((~family_pack.is_test).sum()),
            "test": int(family_pack.is_test.sum()),
            "points_min": int(points.min()),
            "points_max": int(points.max()),
            "wall_seconds_total": round(sum(r["wall_seconds"] for r in family_pack.records), 1),
            "work_units": sorted({r["work_unit"] for r in family_pack.records}),
            "realism": realism_statistics(
                list(zip(family_pack.losses, family_pack.work, strict=True))
            ),
        }
    metadata = {
        "description": "Loss curves of real training runs collected by mara_env.benchmarks.collect.",
        "collection": {key: value for key, value in facts.items() if key != "families"},
        "curves": {p.family: p.records for p in packs},
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    save_traces(output, pools, metadata)
    facts["file"] = output.name
    facts["file_bytes"] = output.stat().st_size
    facts["sha256"] = hashlib.sha256(output.read_bytes()).hexdigest()
    if figure:
        plot_samples(packs, output.parent / "trace_samples.png")
    write_atomically(output.parent / "TRACES.md", data_card(facts, families))
    return facts


def plot_samples(packs: list[FamilyPack], path: Path, per_family: int = 12) -> None:
    """Sample curves of each family on log axes, train in colour and test in black."""
    figure, axes = pyplot().subplots(1, len(packs), figsize=(4.2 * len(packs), 3.4), squeeze=False)
    for axis, family_pack in zip(axes[0], packs, strict=True):
        rng = np.random.default_rng(0)
        chosen = rng.choice(
            len(family_pack.losses), min(per_family, len(family_pack.losses)), replace=False
        )
        for index in chosen:
            work = family_pack.work[index]
            axis.plot(
                work - work[0] + 1,
                family_pack.losses[index],
                linewidth=0.9,
                color="black" if family_pack.is_test[index] else None,
            )
        axis.set_xscale("log")
        axis.set_yscale("log")
        units = sorted({r["work_unit"] for r in family_pack.records})
        axis.set_xlabel("work + 1 (" + ", ".join(units) + ")", fontsize=8)
        axis.set_ylabel("loss")
        axis.set_title(f"{family_pack.family}: {len(family_pack.losses)} curves", fontsize=10)
    figure.suptitle("Sample recorded learning curves (black: test split)", fontsize=10)
    figure.tight_layout()
    save_png(figure, path, dpi=110)


def data_card(facts: dict[str, Any], families: list[str]) -> str:
    """The data card (Markdown) of the shipped traces."""
    lines = [
        "# Data card: recorded learning curves",
        "",
        "Loss curves of real training runs, collected on CPU by `python -m mara_env.benchmarks.collect run`",
        "and packed by `python -m mara_env.benchmarks.collect pack` into `traces.npz` (the format of",
        "`mara_env.save_traces`; each curve's run record, hyperparameters and seed are in its",
        "metadata). Nothing was downloaded: data sets are scikit-learn's bundled ones, generated",
        "ones and Gymnasium's environments.",
        "",
        f"File: `{facts['file']}`, {facts['file_bytes'] / 1e6:.2f} MB, sha256 `{facts['sha256']}`.",
        "",
        "## Counts",
        "",
        "| family | curves | train | test | points per curve | work unit | summed run time |",
        "|---|---|---|---|---|---|---|",
    ]
    for family in families:
        f = facts["families"][family]
        lines.append(
            f"| {family} | {f['curves']} | {f['train']} | {f['test']} | "
            f"{f['points_min']}-{f['points_max']} | {', '.join(f['work_units'])} | "
            f"{f['wall_seconds_total'] / 60:.1f} min |"
        )
    lines += [
        "",
        f"Collection wall time: {facts['collection_seconds'] / 60:.1f} min summed over "
        f"{len(facts['collection_sessions'])} session(s) of the resumable collector on a "
        "2-core machine (sessions that overlapped are counted in full)"
        + (
            f"; {facts['collection_span_seconds'] / 60:.1f} min from the first start to the "
            "last finish."
            if facts.get("collection_span_seconds") is not None
            else "."
        ),
        "",
        "## Split",
        "",
        "Fixed by run: a run is a test run when the SHA-256 of `split:<run id>`, read as a",
        f"number in [0, 1), is below {facts['test_share']}, so each run's side depends on its id",
        "alone and about 20% of each family is held out. Test curves are never used to train",
        'any predictor or policy; `ClusterConfig(split="test")` evaluates on them.',
        "",
        "## Realism",
        "",
        "Measured by `mara_env.benchmarks.collect.realism` (definitions there): share of curves that",
        "rebound more than 10% above their best earlier loss; share whose final loss a power law",
        "fitted to the first 30% of the work axis predicts within 10%; quantiles of final /",
        "initial loss.",
        "",
        "| family | non-monotone | power law within 10% | final/initial q10 | q50 | q90 |",
        "|---|---|---|---|---|---|",
    ]
    for family in families:
        r = facts["families"][family]["realism"]
        lines.append(
            f"| {family} | {r['non_monotone_share']:.1%} | "
            f"{r['power_law_within_10pct_share']:.1%} | {r['final_over_initial_q10']:.3f} | "
            f"{r['final_over_initial_q50']:.3f} | {r['final_over_initial_q90']:.3f} |"
        )
    lines += ["", "![Sample curves](trace_samples.png)", "", "## Library versions", ""]
    lines += [f"- {name}: {version}" for name, version in facts["libraries"].items()]
    lines += ["", "## Grids", ""]
    for family in families:
        doc = (collector(family).__doc__ or "").strip()
        lines += [f"### {family}", "", doc, ""]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m mara_env.benchmarks.collect pack`` entry point (see :mod:`mara_env.benchmarks.collect`)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m mara_env.benchmarks.collect pack")
    parser.add_argument(
        "--store",
        type=Path,
        default=Path("traces_raw"),
        help="raw curve folder (default: %(default)s)",
    )
    parser.add_argument(
        "--families",
        nargs="+",
        default=["tabular", "vision", "rl"],
        help="families to pack (default: %(default)s)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="trace file (default: the shipped one; required with --from)",
    )
    parser.add_argument("--no-figure", action="store_true", help="skip the data card's figure")
    parser.add_argument(
        "--from",
        dest="table",
        type=Path,
        default=None,
        metavar="FILE",
        help="pack your own curves instead: a curve table (CSV, see mara_env.curves.curve_tables)",
    )
    args = parser.parse_args(argv)
    if args.table is not None:
        if args.output is None:
            parser.error("--from needs --output (a .npz path for your trace file).")
        try:
            with write_faults_end("pack", lambda: UNCHANGED, "it packs again"):
                table_facts = pack_table(args.table, args.output)
        except (TraceError, ValueError) as error:
            parser.exit(2, f"pack: {error}\n")
        print(data_card_of_table(table_facts), end="")
        return 0
    args.output = args.output or SHIPPED_TRACES
    with write_faults_end("pack", lambda: UNCHANGED, "it packs again"):
        facts = pack(CurveStore(args.store), args.families, args.output, figure=not args.no_figure)
    print(json.dumps({k: v for k, v in facts.items() if k != "collection_sessions"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
