"""The one results store and the one seed policy of ``benchmarks.common``, and the scripts'
result files read through them exactly as the readers they replaced read them."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.baselines import trials
from benchmarks.baselines.static_bundle.log import BundleLog
from benchmarks.baselines.trials import Trial, TrialJournal
from benchmarks.common.seeds import (
    EVALUATION_SEED_START,
    evaluation_seeds,
    is_training_seed,
    require_training_seeds,
    training_seeds,
)
from benchmarks.common.store import ResultsStore, StoreFormatError
from benchmarks.leaderboard import load_calibration as calibrate_load
from benchmarks.prediction.results import ResultsTable

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
    with pytest.raises(StoreFormatError, match="another script or an older version") as caught:
        ResultsStore(path, COLUMNS, key=KEY, advice="Pass another --out.")
    message = str(caught.value)
    assert str(path) in message and "['agent', 'config', 'seed']" in message
    assert message.endswith("Pass another --out.")
    assert caught.value.found == ("agent", "config", "seed")
    assert path.read_text() == "agent,config,seed\nedf,x,1\n"
    path.write_text("agent,config,seed\nedf,x")  # even its unfinished last line stays
    with pytest.raises(StoreFormatError, match="another script or an older version"):
        ResultsStore(path, COLUMNS, key=KEY)
    assert path.read_text() == "agent,config,seed\nedf,x"
    assert not path.with_name("runs.csv.partial").exists()
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(StoreFormatError, match="not a text file of results"):
        ResultsStore(path, COLUMNS, key=KEY)


def test_foreign_json_lines_and_malformed_rows_are_refused_with_the_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    ResultsStore(path, COLUMNS, key=KEY).append(row())
    text = path.read_text()
    path.write_text(text + '{"agent": "edf", "seed": 1}\n')
    with pytest.raises(
        StoreFormatError, match=r"line 2: a row with the fields \['agent', 'seed'\]"
    ):
        ResultsStore(path, COLUMNS, key=KEY)
    path.write_text(text + json.dumps({**row(), "seed": "one"}) + "\n")
    with pytest.raises(
        StoreFormatError, match=r"line 2: malformed row \('one' is not of type int\)"
    ):
        ResultsStore(path, COLUMNS, key=KEY)
    csv_path = tmp_path / "runs.csv"
    ResultsStore(csv_path, COLUMNS, key=KEY).append(row())
    with csv_path.open("a") as handle:
        handle.write("edf,1,c1\n")
    with pytest.raises(StoreFormatError, match=r"line 3: malformed row \(3 fields, not 5\)"):
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


# ------------------------------------------------- the committed result files, read as before
def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


#: What the readers of commit d0f28ca (``TrialJournal.scores``, ``ResultsTable.rows`` /
#: ``done()``, ``BundleLog.rows`` / ``rows_of`` / ``done``) loaded from the committed files:
#: (rows, digest of the rows, digest of the keys), per file and fingerprint.
#: (The two journals were since regenerated from scratch by later code: the same trials and
#: scores, so the same digests, under the new fingerprints, until LARA's shares tied by task id
#: (539737a) changed the scores of some lara_proportional trials and so both digests.)
BEFORE_TRIALS = {
    ("tuning", "e8cc0f61b99773c9"): (2112, "9dc395541a17c2a9"),
    ("deviations", "e153b9ed76b9bf30"): (390, "0eb541ad5bea492a"),
}
#: (The prediction results were regenerated since; d0f28ca's reader loads this from them.)
BEFORE_PREDICTORS = (168, "c6e45230ae7f9cb1", "1e4d4774d103e2eb")
BEFORE_BUNDLE = {
    "1f472937b35a": (100, "366dfe2802d40136", "5c0ea6e039f7ac36"),
    "32e8b311af0e": (80, "e210c681add58ab7", "28b5ac23ce54b51e"),
    "79532168f479": (100, "98482f2fa4ea6d19", "5c0ea6e039f7ac36"),
    "9188e217e7d8": (80, "649d45749f207037", "28b5ac23ce54b51e"),
    # the same rows as e0b5854895e0 (paper) and 1f472937b35a (tight), played by later code
    "a834c5003c3c": (100, "1b07b39d41e17f7b", "5c0ea6e039f7ac36"),
    "d6cad1a7d6e2": (100, "4375712b3446a057", "5c0ea6e039f7ac36"),
    "70971121d5b9": (100, "944470738d9df9ea", "5c0ea6e039f7ac36"),
    "443cdd3ed65b": (100, "b804102150367397", "5c0ea6e039f7ac36"),
    "b5f269d705f0": (100, "f90ee1a1932f4f3d", "5c0ea6e039f7ac36"),
    "e985ef0fd3ce": (100, "823fc64429e94017", "5c0ea6e039f7ac36"),
    "4bc1fb8dba95": (100, "484f8e67bff224d1", "5c0ea6e039f7ac36"),
    "f23eca958e34": (100, "758461941a4f8f2b", "5c0ea6e039f7ac36"),
    "d00e4931d419": (100, "e88285672f9a79ab", "5c0ea6e039f7ac36"),
    "171568a103f8": (100, "a965d7d7d133cf07", "5c0ea6e039f7ac36"),
    "e0b5854895e0": (100, "db51bef2f7c7e35e", "5c0ea6e039f7ac36"),
    "ea54fe8143e9": (100, "0a416a0419658841", "5c0ea6e039f7ac36"),
    "6f96df06bff1": (100, "af01a2dcc8c8cad2", "5c0ea6e039f7ac36"),
    "c2923efd0f29": (100, "940823d2a4512f3a", "5c0ea6e039f7ac36"),
    "c530366c4fd2": (100, "fb0660211880a10d", "5c0ea6e039f7ac36"),
    "e792ed4fd6a4": (100, "535d5f6ce9a5481b", "5c0ea6e039f7ac36"),
    "f75018bde875": (100, "453c80bd275ba00a", "5c0ea6e039f7ac36"),
    "9a919654b880": (100, "9170c211155432b7", "5c0ea6e039f7ac36"),
    "b2b3f781012a": (100, "524dbd72462aa73c", "5c0ea6e039f7ac36"),
    "53f1d15014dc": (100, "7343df4cda48cc07", "5c0ea6e039f7ac36"),
    "231e293f7381": (100, "36931481fa91a9cd", "5c0ea6e039f7ac36"),
    "641497c233e4": (100, "7946a47b1c2c174e", "5c0ea6e039f7ac36"),
    "fe81837f36c4": (100, "1daac9f13437e506", "5c0ea6e039f7ac36"),
    "2b8ab3cde4b8": (100, "0575bd58592f3e93", "5c0ea6e039f7ac36"),
    "734cc6a670ef": (100, "0317fa77f5f99306", "5c0ea6e039f7ac36"),
    "371dcd96daf4": (100, "32f117d13a8c6b1c", "5c0ea6e039f7ac36"),
    "82f01f9ea944": (100, "78a2bd3847172cb4", "5c0ea6e039f7ac36"),
    "8e1bb9f533d5": (100, "3174e4112f6d29a4", "5c0ea6e039f7ac36"),
    "917c2bb5fbbd": (100, "9e12128a86191fb7", "5c0ea6e039f7ac36"),
    "0135eb08ee31": (100, "3560c5fd0301f2bd", "5c0ea6e039f7ac36"),
    "ec2daa115ddf": (100, "99671034e439c855", "5c0ea6e039f7ac36"),
    "2ebfe8346830": (100, "7dd0a4558441ed18", "5c0ea6e039f7ac36"),
    "835e41aa3b96": (100, "37c819f5508077a1", "5c0ea6e039f7ac36"),
    "78d47434f7f5": (100, "9a99f8e3a928bc54", "5c0ea6e039f7ac36"),
    "21acfa80917d": (100, "7c51d43c46f4140f", "5c0ea6e039f7ac36"),
    "95ec5519368c": (100, "695a1e0a453dc619", "5c0ea6e039f7ac36"),
    "a0133ed5dfec": (100, "bd8a09a8d89d0ccc", "5c0ea6e039f7ac36"),
    "c6327c747184": (100, "eba51df31bc7c34b", "5c0ea6e039f7ac36"),
    "1c7bc29abd52": (100, "8aecc2dbc0daf4f2", "5c0ea6e039f7ac36"),
    "acfef052db0b": (100, "0b2d7a249161f2be", "5c0ea6e039f7ac36"),
    "331425527fe9": (100, "4a3b8eee2dab33ea", "5c0ea6e039f7ac36"),
    "f05d560fddfc": (100, "280cd032c528f2c1", "5c0ea6e039f7ac36"),
    "f2de55cf4bbe": (100, "cc3eff40fe47542c", "5c0ea6e039f7ac36"),
    "a842dd1ede57": (100, "4136687fd3ee2e03", "5c0ea6e039f7ac36"),
    "5d043662f57f": (100, "38b7018205bdc448", "5c0ea6e039f7ac36"),
    "42a80ea44b19": (100, "762e18e2f9d74536", "5c0ea6e039f7ac36"),
    "e6326df770e7": (100, "a9b03353ce05a829", "5c0ea6e039f7ac36"),
    "fecc365b210d": (100, "1c6fd40966ca4c23", "5c0ea6e039f7ac36"),
    "4277a0e5da34": (100, "09e38f43a2fb178c", "5c0ea6e039f7ac36"),
    "408992583691": (100, "760b27b810b95a8a", "5c0ea6e039f7ac36"),
    "5a48abb4522e": (100, "833d22e016248888", "5c0ea6e039f7ac36"),
    "6902b21758b1": (100, "87e95a45ab5a36c3", "5c0ea6e039f7ac36"),
    "84c58dc9a3fb": (100, "530abae4d3d9380d", "5c0ea6e039f7ac36"),
    "52bbd7f7c9dd": (100, "b0d297c59575fc62", "5c0ea6e039f7ac36"),
    "61fedd5c1c21": (100, "74fdedf178638f08", "5c0ea6e039f7ac36"),
    "c4876bd0d0bf": (100, "7346f27692841994", "5c0ea6e039f7ac36"),
    "c7fc659479e0": (100, "e3583f8fc0ad2bd5", "5c0ea6e039f7ac36"),
    "3394713c3bf3": (100, "2095d7d70cf5fe3a", "5c0ea6e039f7ac36"),
    "ca679963b66a": (100, "506be1aa2857f58b", "5c0ea6e039f7ac36"),
    "800609d56982": (100, "6f7cefea5105bd3e", "5c0ea6e039f7ac36"),
}


def committed(tmp_path: Path, relative: str) -> Path:
    """A copy of a committed results file (reading must not change it; checked)."""
    copy = tmp_path / relative.replace("/", "_")
    shutil.copy(RESULTS / relative, copy)
    return copy


@pytest.mark.parametrize(("name", "code"), sorted(BEFORE_TRIALS))
def test_committed_trial_journals_resume_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, code: str
) -> None:
    path = committed(tmp_path, f"{name}/trials.jsonl")
    before = path.read_bytes()
    journal = TrialJournal(path, code)
    names = [item.name for item in dataclasses.fields(Trial)]
    played = [Trial(**{n: r[n] for n in names}) for r in journal.store.rows_where(code=code)]
    items = sorted([list(trial.key), journal.score(trial)] for trial in played)
    assert (len(items), digest(items)) == BEFORE_TRIALS[name, code]

    def refuse(trial: Trial) -> float:
        raise AssertionError(f"{trial} was played again")

    monkeypatch.setattr(trials, "play_trial", refuse)
    trials.run_trials(played, journal, workers=1, progress=False, label="resume")
    assert path.read_bytes() == before == (RESULTS / name / "trials.jsonl").read_bytes()


def test_committed_prediction_results_resume_as_before(tmp_path: Path) -> None:
    path = committed(tmp_path, "predictors/results.csv")
    table = ResultsTable(path, resume=True)
    keys = sorted(list(dataclasses.astuple(key)) for key in table.done())
    assert (len(table.rows), digest(table.rows), digest(keys)) == BEFORE_PREDICTORS
    assert path.read_bytes() == (RESULTS / "predictors" / "results.csv").read_bytes()


def test_committed_bundle_rows_resume_as_before(tmp_path: Path) -> None:
    path = committed(tmp_path, "static_bundle/bundle.csv")
    log = BundleLog(path, resume=True)
    assert (len(log.store.rows), digest(log.store.rows)) == (6360, "9d2fcfa1a16bae24")
    for setup, expected in BEFORE_BUNDLE.items():
        rows = log.rows_of(setup)
        assert (len(rows), digest(rows), digest(sorted(map(list, log.done(setup))))) == expected
    assert path.read_bytes() == (RESULTS / "static_bundle" / "bundle.csv").read_bytes()


def test_an_appended_row_is_written_as_the_committed_ones_are(tmp_path: Path) -> None:
    """Re-appending a committed row through the store gives its committed line, byte for byte."""
    for relative, make in (
        ("tuning/trials.jsonl", lambda p: TrialJournal(p, "x").store),
        ("predictors/results.csv", lambda p: ResultsTable(p, resume=True).store),
        ("static_bundle/bundle.csv", lambda p: BundleLog(p, resume=True).store),
    ):
        lines = (RESULTS / relative).read_text().splitlines(keepends=True)
        original = make(committed(tmp_path, relative))
        fresh = tmp_path / f"again_{Path(relative).name}"
        make(fresh).extend(original.rows[:3])
        written = fresh.read_text().splitlines(keepends=True)
        assert written == lines[: len(written)] and len(written) >= 3
