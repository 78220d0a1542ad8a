"""``bundle.csv``: the rows of finished seeds, appended one seed at a time, read back on resume.

Each row names its ``setup``: a fingerprint of the bundle's definition and of the code it ran
(:func:`setup_fingerprint`). Rows of other setups (the other bundle, older code) stay in the
file but are never reused, so a resumed run after a code change plays its episodes again.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "bundle.csv"
    >>> log = BundleLog(path, resume=True)
    >>> log.append([{"setup": "s1", "bundle": "paper", "agent": "edf", "seed": 0, "completed": 3,
    ...              "arrived": 10, "completion_rate": 0.3, "switches": 9, "utilisation": 1.0,
    ...              "epochs": 40, "illegal_actions": 0}])
    >>> BundleLog(path, resume=True).done("s1"), BundleLog(path, resume=True).done("s2")
    ({('edf', 0)}, set())
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from pathlib import Path
from typing import Any

from benchmarks.source_fingerprint import EPISODE_CODE, source_fingerprint
from benchmarks.static_bundle.bundles import N_TASKS, BundleSpec
from mara_env import ClusterConfig, TraceSource

#: Columns of ``bundle.csv``, in order.
COLUMNS = (
    "setup",
    "bundle",
    "agent",
    "seed",
    "completed",
    "arrived",
    "completion_rate",
    "switches",
    "utilisation",
    "epochs",
    "illegal_actions",
)
_TEXT_COLUMNS = ("setup", "bundle", "agent")
_CODE = (*EPISODE_CODE, "benchmarks/static_bundle")


def setup_fingerprint(spec: BundleSpec, config: ClusterConfig, source: TraceSource) -> str:
    """Identifies the bundle definition and the code that plays it, so rows of another bundle
    or of other code are never reused."""
    text = f"{N_TASKS}|{spec!r}|{config!r}|{source.fingerprint}|{source_fingerprint(_CODE)}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class BundleLog:
    """``bundle.csv``: every row in the file, and appends of whole seeds.

    Args:
        path: The CSV file.
        resume: Keep the rows already in the file; otherwise start it afresh.

    Raises:
        ValueError: If the file exists with other columns or a malformed row.
    """

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        if resume and path.exists():
            self._read()
        else:
            path.write_text(",".join(COLUMNS) + "\n")

    def _read(self) -> None:
        text = self.path.read_text()
        complete = text[: text.rfind("\n") + 1]  # a line cut by an interruption is dropped
        reader = csv.DictReader(io.StringIO(complete))
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(
                f"{self.path} does not have the columns {list(COLUMNS)}; it was not written by "
                "this script. Use another --output directory or --no-resume."
            )
        if complete != text:
            self.path.write_text(complete)
        for row in reader:
            try:
                parsed: dict[str, Any] = {
                    key: float(row[key]) for key in COLUMNS if key not in (*_TEXT_COLUMNS, "seed")
                }
                parsed.update({key: str(row[key]) for key in _TEXT_COLUMNS})
                parsed["seed"] = int(row["seed"])
            except (TypeError, ValueError) as error:
                raise ValueError(
                    f"{self.path} has a malformed row {row} ({error}); delete it or use "
                    "--no-resume."
                ) from error
            self.rows.append(parsed)

    def rows_of(self, setup: str) -> list[dict[str, Any]]:
        """The rows of one setup."""
        return [row for row in self.rows if row["setup"] == setup]

    def done(self, setup: str) -> set[tuple[str, int]]:
        """(agent, seed) pairs already in the file for ``setup``."""
        return {(row["agent"], row["seed"]) for row in self.rows_of(setup)}

    def append(self, rows: list[dict[str, Any]]) -> None:
        """Append ``rows`` in one write and flush them to disk."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writerows(rows)
        with self.path.open("a") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        self.rows.extend(rows)
