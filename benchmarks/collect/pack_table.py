"""Pack your own curves: a curve table (CSV) into a trace file with its data card.

``python -m mara_env.benchmarks.collect pack --from curves.csv --output my_traces.npz`` checks the table
(:func:`mara_env.curves.curve_tables.read_curve_table`: every problem is refused with what to do),
writes the trace file (the format of :func:`mara_env.save_traces`, each run's id and split in
its metadata) and its data card, ``my_traces.md`` beside it: the source file and its SHA-256,
the runs per family and split, the points per curve, which runs were scores turned into losses.
The trace file is then a ``trace_source`` anywhere (``raw_env(trace_source="my_traces.npz")``).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> rows = ["run,step,value,family,split"] + [
    ...     f"{run},{step},{2.0 / (1 + step)},tabular,{split}"
    ...     for run, split in (("a", "train"), ("b", "test")) for step in range(6)]
    >>> _ = (folder / "curves.csv").write_text("\\n".join(rows) + "\\n")
    >>> facts = pack_table(folder / "curves.csv", folder / "mine.npz")
    >>> facts["families"]["tabular"]["test runs"], (folder / "mine.md").is_file()
    (1, True)
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mara_env.atomic_files import write_atomically
from mara_env.curves.curve_tables import describe, read_curve_table
from mara_env.curves.traces import save_traces


def pack_table(source: Path, output: Path) -> dict[str, Any]:
    """Check ``source``, write ``output`` (``.npz``) and its data card (``.md``); return the
    card's facts.

    Raises:
        mara_env.curves.curve_tables.CurveTableError: If the table cannot be used.
        ValueError: If ``output`` is not a ``.npz`` path.
    """
    if output.suffix != ".npz":
        raise ValueError(f"--output must be a .npz path, got {output}.")
    table = read_curve_table(source)
    facts: dict[str, Any] = {
        "source": str(source),
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "families": describe(table),
        "scores_converted": list(table.scores),
    }
    metadata = {
        "source": {key: facts[key] for key in ("source", "source_sha256")},
        "curves": {
            family: [
                {"run": run, "split": "test" if test else "train"}
                for run, test in zip(table.runs[family], table.pools[family][1], strict=True)
            ]
            for family in table.pools
        },
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    save_traces(output, dict(table.pools), metadata)
    facts["output"] = str(output)
    facts["output_sha256"] = hashlib.sha256(output.read_bytes()).hexdigest()
    write_atomically(output.with_suffix(".md"), data_card(facts))
    return facts


def data_card(facts: dict[str, Any]) -> str:
    """The data card (Markdown) of a packed curve table."""
    lines = [
        f"# Data card: {Path(facts['output']).name}",
        "",
        f"Packed by `python -m mara_env.benchmarks.collect pack --from {facts['source']} --output "
        f"{facts['output']}`.",
        "",
        f"- source: `{facts['source']}`, SHA-256 `{facts['source_sha256']}`",
        f"- trace file SHA-256 `{facts['output_sha256']}`",
        f"- runs given as scores and turned into the loss 1 - score: "
        f"{len(facts['scores_converted'])}",
        "",
        "| family | train runs | test runs | points per curve (min, median, max) | work axis |",
        "|---|---|---|---|---|",
    ]
    for family, f in facts["families"].items():
        lines.append(
            f"| {family} | {f['train runs']} | {f['test runs']} | {f['min points']}, "
            f"{f['median points']:g}, {f['max points']} | {'yes' if f['work axis'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"
