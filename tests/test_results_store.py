"""The one results store and the one seed policy of ``mara_env.benchmarks.common``, and the scripts'
result files read through them exactly as the readers they replaced read them."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mara_env.benchmarks.baselines import trials
from mara_env.benchmarks.baselines.static_bundle.log import BundleLog
from mara_env.benchmarks.baselines.trial_keys import trial_manifest
from mara_env.benchmarks.baselines.trials import Trial, TrialJournal
from mara_env.benchmarks.baselines.tuning import tuning_manifest
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.seeds import (
    EVALUATION_SEED_START,
    evaluation_seeds,
    is_training_seed,
    require_training_seeds,
    training_seeds,
)
from mara_env.benchmarks.common.store import ResultsFileError, ResultsStore
from mara_env.benchmarks.leaderboard import load_calibration as calibrate_load
from mara_env.benchmarks.prediction.results import ResultsTable

COLUMNS: dict[str, type] = {"agent": str, "seed": int, "code": str, "score": float, "ok": bool}
KEY = ("agent", "seed", "code")
RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def row(agent: str = "edf", seed: int = 0, code: str = "c1", score: float = 0.5) -> dict[str, Any]:
    return {"agent": agent, "seed": seed, "code": code, "score": score, "ok": True}


@pytest.fixture(params=["csv", "jsonl"])
def path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return tmp_path / f"runs.{request.param}"


# ------------------------------------------------------------------------------------ the store
def test_resume_skips_the_finished_rows(path: Path) -> None:
    store = ResultsStore(path, COLUMNS, key=KEY)
    assert store.done() == set() and not path.exists(), "nothing is written before a row"
    store.append(row(seed=0))
    store.extend([row(seed=1), row(seed=2)])
    again = ResultsStore(path, COLUMNS, key=KEY)
    assert again.done() == {("edf", seed, "c1") for seed in range(3)}
    todo = [seed for seed in range(5) if ("edf", seed, "c1") not in again.done()]
    assert todo == [3, 4]
    assert again.rows == store.rows


def test_a_changed_fingerprint_replays_and_keeps_the_old_rows(path: Path) -> None:
    ResultsStore(path, COLUMNS, key=KEY).append(row(code="old"))
    store = ResultsStore(path, COLUMNS, key=KEY)
    assert ("edf", 0, "new") not in store.done()
    store.append(row(code="new", score=0.9))
    reread = ResultsStore(path, COLUMNS, key=KEY)
    assert [r["code"] for r in reread.rows] == ["old", "new"]
    assert reread.get(("edf", 0, "old"))["score"] == 0.5
    assert reread.get(("edf", 0, "new"))["score"] == 0.9
    assert [r["score"] for r in reread.rows_where(code="new")] == [0.9]


def test_an_interrupted_last_line_is_set_aside_and_the_finished_rows_kept(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ResultsStore(path, COLUMNS, key=KEY).extend([row(seed=0), row(seed=1)])
    finished = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"agent": "ed' if path.suffix == ".jsonl" else b"edf,2,c")
    store = ResultsStore(path, COLUMNS, key=KEY)
    assert store.done() == {("edf", 0, "c1"), ("edf", 1, "c1")}
    assert path.read_bytes() == finished
    partial = path.with_name(path.name + ".partial")
    assert partial.read_bytes() in (b'{"agent": "ed\n', b"edf,2,c\n")
    assert "interrupted line" in capsys.readouterr().err
    store.append(row(seed=2))
    assert len(ResultsStore(path, COLUMNS, key=KEY).rows) == 3


def test_a_cut_header_leaves_an_empty_store(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("agent,se")
    store = ResultsStore(path, COLUMNS, key=KEY)
    assert store.rows == [] and path.read_text() == ""
    store.append(row())
    assert path.read_text() == "agent,seed,code,score,ok\nedf,0,c1,0.5,True\n"


def test_a_foreign_csv_header_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("agent,config,seed\nedf,x,1\n")
    with pytest.raises(ResultsFileError, match="another script or an older version") as caught:
        ResultsStore(path, COLUMNS, key=KEY, advice="Pass another --output.")
    message = str(caught.value)
    assert str(path) in message and "['agent', 'config', 'seed']" in message
    assert message.endswith("Pass another --output.")
    assert caught.value.found == ("agent", "config", "seed")
    assert path.read_text() == "agent,config,seed\nedf,x,1\n"
    path.write_text("agent,config,seed\nedf,x")  # even its unfinished last line stays
    with pytest.raises(ResultsFileError, match="another script or an older version"):
        ResultsStore(path, COLUMNS, key=KEY)
    assert path.read_text() == "agent,config,seed\nedf,x"
    assert not path.with_name("runs.csv.partial").exists()
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(ResultsFileError, match="not a text file of results"):
        ResultsStore(path, COLUMNS, key=KEY)


def test_foreign_json_lines_and_malformed_rows_are_refused_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    ResultsStore(path, COLUMNS, key=KEY).append(row())
    text = path.read_text()
    path.write_text(text + '{"agent": "edf", "seed": 1}\n')
    with pytest.raises(
        ResultsFileError, match=r"line 2: a row with the fields \['agent', 'seed'\]"
    ):
        ResultsStore(path, COLUMNS, key=KEY)
    path.write_text(text + json.dumps({**row(), "seed": "one"}) + "\n")
    with pytest.raises(
        ResultsFileError, match=r"line 2: malformed row \('one' is not of type int\)"
    ):
        ResultsStore(path, COLUMNS, key=KEY)
    csv_path = tmp_path / "runs.csv"
    ResultsStore(csv_path, COLUMNS, key=KEY).append(row())
    with csv_path.open("a") as handle:
        handle.write("edf,1,c1\n")
    with pytest.raises(ResultsFileError, match=r"line 3: malformed row \(3 fields, not 5\)"):
        ResultsStore(csv_path, COLUMNS, key=KEY)
    assert csv_path.read_text().endswith("edf,1,c1\n"), "left untouched"


def test_a_fresh_store_replaces_the_file_on_its_first_append(path: Path) -> None:
    ResultsStore(path, COLUMNS, key=KEY).extend([row(seed=0), row(seed=1)])
    before = path.read_bytes()
    assert ResultsStore(path, COLUMNS, key=KEY, fresh=True).done() == set()
    assert path.read_bytes() == before, "nothing appended: the file is kept"
    ResultsStore(path, COLUMNS, key=KEY, fresh=True).append(row(seed=7))
    assert ResultsStore(path, COLUMNS, key=KEY).done() == {("edf", 7, "c1")}


def test_bad_rows_and_schemas_are_refused_before_anything_is_written(path: Path) -> None:
    store = ResultsStore(path, COLUMNS, key=KEY)
    with pytest.raises(ValueError, match=r"lacks the columns \['ok'\]"):
        store.append({key: value for key, value in row().items() if key != "ok"})
    with pytest.raises(ValueError, match=r"'0\.5' is not of type float"):
        store.extend([row(seed=1), {**row(), "score": "0.5"}])
    with pytest.raises(ValueError, match="1 is not of type bool"):
        store.append({**row(), "ok": 1})
    assert not path.exists() and store.rows == []
    with pytest.raises(ValueError, match=r"must end in \.csv or \.jsonl"):
        ResultsStore(path.with_suffix(".txt"), COLUMNS, key=KEY)
    with pytest.raises(ValueError, match="key must name"):
        ResultsStore(path, COLUMNS, key=("nope",))
    with pytest.raises(ValueError, match="column types must be"):
        ResultsStore(path, {"a": list}, key=("a",))


def test_numpy_values_are_stored_as_the_columns_types(path: Path) -> None:
    store = ResultsStore(path, COLUMNS, key=KEY)
    store.append({**row(seed=np.int64(4), score=np.float32(0.25)), "ok": np.bool_(False)})
    assert store.rows == [{"agent": "edf", "seed": 4, "code": "c1", "score": 0.25, "ok": False}]
    assert ResultsStore(path, COLUMNS, key=KEY).rows == store.rows
    assert all(type(value) in (str, int, float, bool) for value in store.rows[0].values())


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "agent": TEXT,
                "seed": st.integers(-(2**70), 2**70),
                "code": TEXT,
                "score": st.floats(allow_nan=True, allow_infinity=True),
                "ok": st.booleans(),
            }
        ),
        max_size=6,
    ),
    suffix=st.sampled_from([".csv", ".jsonl"]),
)
def test_typed_round_trip(
    tmp_path_factory: pytest.TempPathFactory, rows: list, suffix: str
) -> None:
    """Whatever the values (commas, quotes, newlines in text; nan, inf, huge integers), a row
    reads back with the same types and values."""
    path = tmp_path_factory.mktemp("store") / f"runs{suffix}"
    ResultsStore(path, COLUMNS, key=KEY).extend(rows)
    reread = ResultsStore(path, COLUMNS, key=KEY).rows
    assert len(reread) == len(rows)
    for read, written in zip(reread, rows, strict=True):
        for name, kind in COLUMNS.items():
            assert type(read[name]) is kind
            if name == "score" and math.isnan(written[name]):
                assert math.isnan(read[name])
            else:
                assert read[name] == written[name]


# ------------------------------------------------------------------------------ the seed policy
def test_training_seed_checks_refuse_evaluation_seeds_with_the_message() -> None:
    assert require_training_seeds(range(3), where="x") == (0, 1, 2)
    assert require_training_seeds(np.arange(2), where="x") == (0, 1)
    with pytest.raises(ValueError) as caught:
        require_training_seeds([3, 1000, 1500, -1], where="--seeds")
    message = str(caught.value)
    assert message.startswith("--seeds: seeds [1000, 1500, -1] are not training seeds")
    assert "Pick seeds below 1000" in message
    with pytest.raises(ValueError, match="no seeds given"):
        require_training_seeds([], where="x")
    with pytest.raises(ValueError, match=r"seeds 999\.\.1000 reach outside the training seeds"):
        training_seeds(999, 2, where="tuning")
    assert training_seeds(997, 3) == (997, 998, 999)
    assert evaluation_seeds(3) == (1000, 1001, 1002) and EVALUATION_SEED_START == 1000
    assert is_training_seed(0) and not is_training_seed(EVALUATION_SEED_START)


def test_calibrate_load_refuses_seeds_that_reach_the_evaluation_seeds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        calibrate_load.main(["--config", "tiny", "--seeds", "1001", "--no-progress"])
    assert "seeds [1000] are not training seeds" in capsys.readouterr().err


# ------------------------------------------------------------- keys, manifests and pruning
def test_stale_rows_say_what_changed_and_prune_drops_them(path: Path) -> None:
    old, new = (
        Manifest({"mara_env.agents.lara": "1", "x": "1"}),
        Manifest({"mara_env.agents.lara": "2", "x": "1"}),
    )
    store = ResultsStore(path, COLUMNS, key=KEY)
    store.record_manifest(old)
    store.record_manifest(old)  # once per digest
    store.extend([row(seed=0, code=old.digest), row(seed=1, code=old.digest)])
    store.record_manifest(new)
    store.append(row(seed=0, code=new.digest))
    store.append(row(seed=5, code="unrecorded"))
    assert set(store.recorded_manifests()) == {old.digest, new.digest}
    again = ResultsStore(path, COLUMNS, key=KEY)
    assert again.stale("code", lambda _: new) == {
        "mara_env.agents.lara changed": 2,
        "no record of the old code": 1,
    }
    assert again.prune("code", lambda _: new) == 3
    assert [r["seed"] for r in ResultsStore(path, COLUMNS, key=KEY).rows] == [0]
    assert set(again.recorded_manifests()) == {new.digest}
    assert again.stale("code", lambda _: new) == {} and again.prune("code", lambda _: new) == 0


def test_a_damaged_manifests_file_is_refused_with_what_to_do(path: Path) -> None:
    store = ResultsStore(path, COLUMNS, key=KEY)
    store.manifests_path.write_text("[1, 2]")
    with pytest.raises(ResultsFileError, match=r"manifests\.json: not a JSON object.*Delete it"):
        store.stale("code", lambda _: Manifest({}))


def committed(tmp_path: Path, relative: str) -> Path:
    """A copy of a committed results file (reading must not change it; checked)."""
    copy = tmp_path / relative.replace("/", "_")
    shutil.copy(RESULTS / relative, copy)
    return copy


@pytest.mark.parametrize(
    ("name", "manifest"), [("tuning", tuning_manifest), ("v3/deviations", trial_manifest)]
)
def test_committed_trial_journals_resume_without_playing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, manifest: Any
) -> None:
    path = committed(tmp_path, f"{name}/trials.jsonl")
    before = path.read_bytes()
    journal = TrialJournal(path, manifest())
    names = [item.name for item in dataclasses.fields(Trial)]
    rows = journal.store.rows_where(code=journal.fingerprint)
    assert rows, f"no trial of {name} carries the current key: see tests/test_committed_results.py"
    played = [Trial(**{n: r[n] for n in names}) for r in rows]

    def refuse(trial: Trial) -> float:
        raise AssertionError(f"{trial} was played again")

    monkeypatch.setattr(trials, "play_trial", refuse)
    trials.run_trials(played, journal, workers=1, progress=False, label="resume")
    assert path.read_bytes() == before == (RESULTS / name / "trials.jsonl").read_bytes()


def test_an_appended_row_is_written_as_the_committed_ones_are(tmp_path: Path) -> None:
    """Re-appending a committed row through the store gives its committed line, byte for byte."""
    for relative, make in (
        ("tuning/trials.jsonl", lambda p: TrialJournal(p, Manifest({})).store),
        ("predictors/results.csv", lambda p: ResultsTable(p, resume=True).store),
        ("static_bundle/bundle.csv", lambda p: BundleLog(p, resume=True).store),
    ):
        lines = (RESULTS / relative).read_text().splitlines(keepends=True)
        original = make(committed(tmp_path, relative))
        fresh = tmp_path / f"again_{Path(relative).name}"
        make(fresh).extend(original.rows[:3])
        written = fresh.read_text().splitlines(keepends=True)
        assert written == lines[: len(written)] and len(written) >= 3
