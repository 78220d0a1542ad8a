"""Your own curves: the curve table's checks, packing, and trace files given by path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate, make_agent
from mara_env.benchmarks.collect.pack import main as pack_main
from mara_env.benchmarks.leaderboard import main as leaderboard_main
from mara_env.benchmarks.leaderboard.journal import read_journal
from mara_env.curves.curve_tables import CurveTableError, read_curve_table
from mara_env.curves.families import OTHER_FAMILY
from mara_env.curves.traces import CurvePool
from mara_env.errors import TraceError

HEADER = "run,step,value,family,split"


def _curve(step: int) -> float:
    return 2.0 / (1.0 + 0.3 * step)


def write_table(
    folder: Path,
    *,
    header: str = HEADER,
    value: Callable[[int], float] = _curve,
    steps: range = range(0, 40, 2),
    extra: str = "",
    runs: int = 6,
) -> Path:
    """A curve table of ``runs`` vision runs (every third a test run)."""
    rows = [header]
    for run in range(runs):
        split = "test" if run % 3 == 2 else "train"
        rows += [f"r{run},{s},{value(s) * (1 + 0.05 * run)},vision,{split}{extra}" for s in steps]
    path = folder / "curves.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_a_packed_table_runs_the_leaderboards_agents_by_path(tmp_path: Path) -> None:
    table = write_table(tmp_path)
    out = tmp_path / "mine.npz"
    assert pack_main(["--from", str(table), "--output", str(out)]) == 0
    card = out.with_suffix(".md").read_text()
    assert "| vision | 4 | 2 |" in card and "SHA-256" in card
    config = mara_env.get_config("tiny", family_weights=(("vision", 1.0),))
    for trace_source in (str(out), out, str(table)):
        rows = evaluate(make_agent("edf"), config, [0, 1], trace_source=trace_source)
        assert all(row["arrived"] > 0 for row in rows)
    env = mara_env.raw_env(config=config, trace_source=str(out))
    env.reset(seed=0)
    assert (
        env.unwrapped.simulator.trace_source.fingerprint
        == mara_env.TraceFileSource(out).fingerprint
    )


def test_a_table_is_a_trace_source_with_the_same_pools_as_its_packed_file(tmp_path: Path) -> None:
    table = read_curve_table(write_table(tmp_path))
    out = tmp_path / "mine.npz"
    assert pack_main(["--from", str(table.path), "--output", str(out)]) == 0
    packed = mara_env.TraceFileSource(out)
    for split in ("train", "test"):
        np.testing.assert_allclose(
            table.pool("vision", split).losses, packed.pool("vision", split).losses, rtol=1e-6
        )


def test_scores_are_turned_into_losses_when_marked(tmp_path: Path) -> None:
    accuracy = write_table(
        tmp_path, header=HEADER + ",kind", value=lambda s: 0.3 + s / 200, extra=",score"
    )
    table = read_curve_table(accuracy)
    pool, _ = table.pools["vision"]
    np.testing.assert_allclose(pool.losses[0, 0], 0.7)  # 1 - 0.3
    assert len(table.scores) == 6 and pool.losses[0, -1] < pool.losses[0, 0]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"value": lambda s: 0.5 + s / 100}, "rises.*kind=score"),
        ({"value": lambda s: 0.7}, "flat"),
        ({"steps": range(0, 40, 1), "value": lambda s: 0.7}, "flat"),
        ({"header": "run,step,loss,family,split"}, "missing \\['value'\\]"),
        ({"header": HEADER + ",note", "extra": ",x"}, "unknown \\['note'\\]"),
        ({"value": lambda s: -1.0 + 0 * s}, "loss <= 0"),
        (
            {"header": HEADER + ",kind", "value": lambda s: 5 - s / 10, "extra": ",score"},
            "\\[0, 1\\]",
        ),
        ({"runs": 2}, "only in \\['train'\\]"),
        ({"steps": range(1)}, "one report"),
    ],
)
def test_each_mistake_is_refused_with_what_to_do(
    tmp_path: Path, table: dict[str, object], message: str
) -> None:
    path = write_table(tmp_path, **table)  # type: ignore[arg-type]
    with pytest.raises(CurveTableError, match=message):
        read_curve_table(path)


def test_row_level_mistakes_name_the_line_or_run(tmp_path: Path) -> None:
    base = [HEADER] + [f"a,{s},{_curve(s)},vision,train" for s in range(5)]
    cases = {
        "uneven": ([*base, "a,7,0.1,vision,train"], "uneven steps"),
        "repeat": ([*base, "a,4,0.1,vision,train"], "reported twice"),
        "text": ([*base, "a,x,0.1,vision,train"], "line 7"),
        "family": ([*base, "b,0,1.0, ,test"], "empty family"),
        "split": ([*base, "b,0,1.0,vision,valid"], "split must be"),
        "moves": ([*base, "a,5,0.1,rl,train"], "changes its family"),
        "cut short": ([*base, "a,5,0.1"], "line 7: the row has too few cells"),
        "extra cell": ([*base, "a,5,0.1,vision,train,x"], "line 7: the row has too many cells"),
        "nan": ([*base[:3], "a,2,nan,vision,train", *base[4:]], "run 'a', step 2: value nan"),
    }
    for name, (rows, message) in cases.items():
        path = tmp_path / f"{name}.csv"
        path.write_text("\n".join(rows) + "\n")
        with pytest.raises(CurveTableError, match=message):
            read_curve_table(path)
    with pytest.raises(CurveTableError, match=r"expected a \.csv"):
        read_curve_table(tmp_path / "curves.parquet")
    with pytest.raises(CurveTableError, match="no such file"):
        read_curve_table(tmp_path / "absent.csv")


def test_transposed_curves_are_refused() -> None:
    curves = np.exp(-np.linspace(0, 3, 100))[:, None] * np.ones((1, 4))  # (T, n)
    with pytest.raises(TraceError, match="transposed"):
        CurvePool.from_curves("vision", curves)
    assert CurvePool.from_curves("vision", curves.T).losses.shape == (4, 100)


def test_trace_source_paths_are_checked(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such file"):
        mara_env.raw_env(config="tiny", trace_source=str(tmp_path / "curves.csv"))
    with pytest.raises(TraceError, match=r"expected a \.npz"):
        mara_env.raw_env(config="tiny", trace_source=tmp_path / "curves.txt")
    with pytest.raises(TraceError, match="no such file"):
        mara_env.raw_env(config="tiny", trace_source=tmp_path / "absent.npz")
    with pytest.raises(TypeError, match="trace_source must be"):
        mara_env.raw_env(config="tiny", trace_source=3)  # type: ignore[arg-type]


def test_the_pack_command_refuses_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = write_table(tmp_path, value=lambda s: 0.5 + s / 100)
    with pytest.raises(SystemExit) as stopped:
        pack_main(["--from", str(table), "--output", str(tmp_path / "x.npz")])
    assert stopped.value.code == 2 and "rises" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pack_main(["--from", str(table)])
    assert "--from needs --output" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()


def test_the_leaderboard_runs_on_your_curves_and_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a curve table to a leaderboard table in one command, named in its provenance;
    the results validate, replaying episodes on the same file."""
    table = write_table(tmp_path, runs=9)
    out = tmp_path / "board"
    quiet = ["--no-progress", "--no-plots", "--workers", "1"]
    command = ["--traces", str(table), "--agents", "edf", "lara", "--seeds", "2", "--loads", "1"]
    assert leaderboard_main([*command, *quiet, "--output", str(out)]) == 0
    page = (out / "leaderboard.md").read_text()
    assert f"curves: your own, `{table}`" in page and "vision (rank)" in page
    rows = read_journal(out / "episodes.jsonl").rows
    assert {row["traces"] for row in rows} == {str(table)} and len(rows) == 4
    assert leaderboard_main(["--validate", str(out), "--sample", "all", *quiet]) == 0
    with pytest.raises(SystemExit):
        leaderboard_main([*command, "--workloads", "rl", *quiet, "--output", str(out)])
    assert "workloads it can play: ['vision']" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        leaderboard_main(["--traces", str(tmp_path / "absent.csv"), *quiet])
    assert "--traces" in capsys.readouterr().err


def test_a_family_of_your_own_runs_with_its_alpha_and_is_seen_as_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A family the package does not ship: declared with its alpha, the simulator uses that
    alpha, the observation shows no shipped family (code OTHER_FAMILY), every registered
    scheduler plays it, and the leaderboard ranks on it."""
    rows = [HEADER]
    for run in range(6):
        split = "test" if run % 3 == 2 else "train"
        rows += [f"s{run},{s},{_curve(s) * (1 + 0.05 * run)},speech,{split}" for s in range(40)]
    table = tmp_path / "speech.csv"
    table.write_text("\n".join(rows) + "\n")
    config = mara_env.get_config(
        "tiny", family_weights=(("speech", 1.0),), own_families=(("speech", 0.5),)
    )
    env = mara_env.raw_env(config=config, trace_source=table)
    env.reset(seed=1)
    for _ in range(2 * 12):
        env.step(0)
    state = env.unwrapped.simulator.state
    assert set(state.tasks.alpha.tolist()) == {0.5}
    view = mara_env.decode_observation(env.observe("node_0")["observation"], config)
    assert set(view.family[view.occupied].tolist()) <= {OTHER_FAMILY}
    assert config.observed_alphas()[OTHER_FAMILY] == 0.5
    for name in ("edf", "lara", "laira", "clairvoyant", "mara"):
        (row,) = evaluate(make_agent(name), config, [0], trace_source=table)
        assert row["illegal_actions"] == 0.0, name
    with pytest.raises(mara_env.ConfigError, match="own_families"):
        mara_env.get_config("tiny", family_weights=(("speech", 1.0),))
    out = tmp_path / "board"
    quiet = ["--no-progress", "--no-plots", "--workers", "1", "--seeds", "1", "--loads", "1"]
    with pytest.raises(SystemExit):
        leaderboard_main(["--traces", str(table), *quiet, "--output", str(out)])
    assert "--own-families speech=0.8" in capsys.readouterr().err
    command = ["--traces", str(table), "--own-families", "speech=0.5", "--agents", "edf", "lara"]
    assert leaderboard_main([*command, *quiet, "--output", str(out)]) == 0
    assert "speech (rank)" in (out / "leaderboard.md").read_text()
    assert leaderboard_main(["--validate", str(out), "--sample", "all", *quiet[:4]]) == 0


def test_the_pollux_converter_writes_a_table_that_passes_its_checks(tmp_path: Path) -> None:
    """A miniature of the artifact's layout: accuracy and hit rate become scores, WER a loss,
    each application its family, and the table reads back with both splits per family."""
    from mara_env.benchmarks.collect.pollux import main as pollux_main

    def write(application: str, batch: int, metric: Callable[[int], float]) -> None:
        folder = tmp_path / "traces" / application
        folder.mkdir(parents=True, exist_ok=True)
        rows = ["progress,iteration,metric,grad_sqr,grad_var"]
        rows += [f"{100.0 * (e + 1)},{e},{metric(e)},1,1" for e in range(12)]
        (folder / f"validation-{batch}.csv").write_text("\n".join(rows) + "\n")

    for batch in (64, 128, 256, 512, 1024, 2048):
        write("cifar10", batch, lambda e: 0.3 + 0.04 * e)
        write("ncf", batch, lambda e: 0.5 + 0.02 * e)
        write("deepspeech2", batch, lambda e: 100.0 / (1 + 0.2 * e))
    out = tmp_path / "pollux.csv"
    assert pollux_main(["--traces", str(tmp_path / "traces"), "--output", str(out)]) == 0
    table = read_curve_table(out)
    assert table.families == ("recommendation", "speech", "vision")
    assert len(table.scores) == 12  # cifar10 and ncf
    assert table.pool("vision", "train").work is not None
