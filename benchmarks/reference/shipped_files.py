"""The manifest of the shipped data files, written from the source tree.

Every file in the packages' source folders that is not Python code ships in the wheel (the
package data of ``pyproject.toml`` takes them by glob), except the repository's results and
figures (:data:`NOT_SHIPPED`), which nothing in the packages reads. The manifest
``mara_env/data/shipped_files.json`` lists each shipped file with its SHA-256, so that
:func:`mara_env.installation.shipped_file_problems` can tell an installation that lacks one, or
holds another, from the one that was measured.

Run ``python -m mara_env.benchmarks.reference.shipped_files`` (or ``python -m
mara_env.benchmarks.reference.shipped_files``) after adding or changing a data file (a retrained
checkpoint, new tuned settings); ``--check`` exits 1 if the committed manifest differs from the
tree. A checkpoint that does not match its card is refused rather than listed.

Example:
    >>> files = tree_data_files()
    >>> "agents/worlds/v3/tuned_settings.json" in files, "benchmarks/results/rankings.md" in files
    (True, False)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mara_env.atomic_files import write_atomically
from mara_env.installation import (
    MANIFEST,
    PACKAGES_ROOT,
    SOURCE_FOLDERS,
    card_problems,
    file_sha256,
    read_manifest,
)

#: Folders of the source tree that hold the repository's results, not package data.
NOT_SHIPPED = ("benchmarks/results/", "benchmarks/figures/")


def tree_data_files(root: Path = PACKAGES_ROOT) -> dict[str, str]:
    """``{path relative to root: SHA-256}`` of every file in the packages' source folders under
    ``root`` that is neither Python source nor bytecode, outside :data:`NOT_SHIPPED`, the
    manifest itself excepted: what a wheel built from that tree must hold beside the code."""
    found = {}
    for folder in SOURCE_FOLDERS.values():
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and path.suffix not in (".py", ".pyc")
                and relative != MANIFEST
                and not relative.startswith(NOT_SHIPPED)
            ):
                found[relative] = file_sha256(path)
    return found


def manifest_text(root: Path = PACKAGES_ROOT) -> str:
    """The manifest of the tree ``root``, as :func:`main` writes it.

    Raises:
        ValueError: If a checkpoint does not match its card (a manifest must not bless a file
            its card disowns: retrain it, or restore it).
    """
    files = tree_data_files(root)
    problems = card_problems(root, files)
    if problems:
        raise ValueError("\n".join(problems))
    return json.dumps({"files": files}, indent=1, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the manifest, or with ``--check`` compare it; returns 1 if the committed one differs
    from the tree, 2 if a checkpoint does not match its card."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.reference.shipped_files",
        description=f"Write {MANIFEST}, the list of the shipped data files with their SHA-256, "
        "from the source tree (or check it).",
    )
    parser.add_argument("--check", action="store_true", help="Only compare; exit 1 if it differs.")
    args = parser.parse_args(argv)
    try:
        text = manifest_text()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    path = PACKAGES_ROOT / MANIFEST
    if args.check:
        try:
            committed = read_manifest()
        except (FileNotFoundError, ValueError):
            committed = {}
        tree = json.loads(text)["files"]
        differing = sorted(
            name for name in set(committed) | set(tree) if committed.get(name) != tree.get(name)
        )
        if differing:
            print(f"{MANIFEST} differs from the tree for: {', '.join(differing)}; regenerate it.")
            return 1
        print(f"{MANIFEST} lists the tree's {len(tree)} data files.")
        return 0
    write_atomically(path, text)
    print(f"Wrote {MANIFEST} ({len(json.loads(text)['files'])} files).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
