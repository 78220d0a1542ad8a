"""The committed results follow from the code: every row of every results store under
``benchmarks/results`` carries the key the current code gives it (:mod:`mara_env.benchmarks.stores`), so
its documented command resumes it instead of replaying it, and the README's figures are the
code's. A docstring-, comment- or layout-only edit keeps it so; a change of behaviour does not.

When the first test fails after a code change, it names the stores, what changed and the command
that replays them (``python -m mara_env.benchmarks.stores`` prints the same)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

import mara_env.benchmarks.stores
from mara_env.benchmarks.common import source_closure
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.store import ResultsStore, Row
from mara_env.benchmarks.stores import STORES, CommittedStore

ROOT = Path(__file__).resolve().parents[1]
#: Results files that are reports written whole from a store, not stores themselves.
EXPORTS = (
    "verdicts/verdicts.csv",
    "v3/leaderboard/episodes.csv",
    "v3/leaderboard_quick/episodes.csv",
    "v1/leaderboard/episodes.csv",
    "v2/leaderboard/episodes.csv",
    "v3/leaderboard_philly/episodes.csv",
    "v3/leaderboard_pollux/episodes.csv",
    "v3/leaderboard_pollux_recorded/episodes.csv",
    "leak_audit/audit.csv",
    "ladder/ladder.csv",
    "ladder/bandwidths.csv",
    "ladder/feature_swaps.csv",
    *(
        f"v{world}/reach/{name}.csv"
        for world in (1, 2, 3)
        for name in ("scores", "search", "reliability", "fit_log")
    ),
)
#: The modules the acceptance edits: the simulator's core and the flow-matching predictor.
EDITED = ("mara_env/sim/core.py", "predictors/flow_matching.py")


def clear_caches() -> None:
    for value in vars(mara_env.benchmarks.stores).values():
        if isinstance(value, functools._lru_cache_wrapper):
            value.cache_clear()


def stale_stores() -> dict[str, dict[str, int]]:
    clear_caches()
    found = {}
    for store in STORES:
        assert store.path.exists(), f"{store.name}: no file {store.path}; run `{store.command}`"
        _, stale = store.status()
        if stale:
            found[f"{store.name} (replay: {store.command})"] = stale
    return found


def test_every_committed_row_follows_from_the_current_code() -> None:
    stale = stale_stores()
    assert not stale, f"committed rows of other code: {stale}"


def edited(path: Path, change: str) -> bytes:
    """``path``'s source with every docstring reworded and comments and blank lines added
    (``"layout"``), or one setting added (``"behaviour"``)."""
    text = path.read_text()
    if change == "behaviour":
        return (text + "\nADDED_SETTING = 1\n").encode()
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                first = value.lineno - 1
                lines[first] = lines[first].replace('"""', '"""Reworded. ', 1)
    reworded = "".join(lines)
    return ("# an added comment\n\n" + reworded.replace("\n\n\n", "\n\n\n# a comment\n")).encode()


# (one edit of the docstrings, comments and layout together: each full check costs a minute)
@pytest.mark.parametrize("change", ["layout", "behaviour"])
def test_only_a_change_of_behaviour_makes_committed_rows_stale(
    change: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = {ROOT / name: edited(ROOT / name, change) for name in EDITED}
    assert all(source != (path.read_bytes()) for path, source in sources.items())
    original = source_closure.read_source
    monkeypatch.setattr(
        source_closure, "read_source", lambda path: sources.get(path) or original(path)
    )
    clear_caches()
    stale = {store.name for store in STORES if store.status()[1]}
    if change == "behaviour":
        assert stale == {store.name for store in STORES}
    else:
        assert not stale


def test_the_catalogue_names_every_results_file_with_a_key() -> None:
    keyed = {
        path.relative_to(ROOT)
        for path in (ROOT / "benchmarks" / "results").rglob("*")
        if path.suffix in (".csv", ".jsonl")
        and "_training" not in path.stem
        and path.relative_to(ROOT / "benchmarks" / "results").as_posix() not in EXPORTS
    }
    assert keyed == {store.path.relative_to(ROOT) for store in STORES}


def test_the_stores_command_says_why_rows_are_stale_and_prunes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = Manifest({"mara_env.agents.lara": "1"}), Manifest({"mara_env.agents.lara": "2"})
    path = tmp_path / "trials.jsonl"
    columns = {"seed": int, "code": str, "score": float}
    store = ResultsStore(path, columns, key=("seed", "code"))
    store.record_manifest(old)
    store.extend([{"seed": 0, "code": old.digest, "score": 0.5}])
    store.record_manifest(new)
    store.extend([{"seed": 1, "code": new.digest, "score": 0.25}])

    open_store = catalogue_of_one(monkeypatch, "x", path, columns, lambda row: new)
    assert mara_env.benchmarks.stores.main([]) == 1
    printed = capsys.readouterr().out
    assert "x: 1 of 2 rows were produced by other code" in printed
    assert "1 rows: mara_env.agents.lara changed" in printed and "`replay x`" in printed
    assert mara_env.benchmarks.stores.main(["--prune"]) == 0
    assert "dropped 1 of 2 rows" in capsys.readouterr().out
    assert [row["seed"] for row in open_store(path).rows] == [1]
    assert mara_env.benchmarks.stores.main([]) == 0
    assert "x: all 1 rows current" in capsys.readouterr().out


def test_the_stores_command_says_which_store_needs_a_missing_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mara_env.predictors.checkpoint import CheckpointError

    path = tmp_path / "rows.jsonl"
    columns = {"seed": int, "code": str}
    store = ResultsStore(path, columns, key=("seed", "code"))
    store.record_manifest(Manifest({"mara_env.agents.mara": "1"}))
    store.extend([{"seed": 0, "code": Manifest({"mara_env.agents.mara": "1"}).digest}])

    def missing(row: object) -> Manifest:
        raise CheckpointError("no checkpoint at agents/worlds/v3/mara.pt")

    catalogue_of_one(monkeypatch, "m", path, columns, missing)
    assert mara_env.benchmarks.stores.main([]) == 1
    printed = capsys.readouterr().out
    assert "m: its current key needs a checkpoint that does not load" in printed
    assert "agents/worlds/v3/mara.pt" in printed and "`replay m`" in printed


def catalogue_of_one(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    path: Path,
    columns: dict[str, type],
    current: Callable[[Row], Manifest],
) -> Callable[[Path], ResultsStore]:
    """Make ``mara_env.benchmarks.stores`` see one store, ``name`` at ``path`` (replayed by
    ``replay <name>``); returns how it opens the file."""

    def open_store(where: Path) -> ResultsStore:
        return ResultsStore(where, columns, key=("seed", "code"))

    entry = CommittedStore(name, path, "code", f"replay {name}", open_store, current)
    monkeypatch.setattr(mara_env.benchmarks.stores, "SOURCE_ROOT", path.parent)
    monkeypatch.setattr(mara_env.benchmarks.stores, "STORES", (entry,))
    return open_store
