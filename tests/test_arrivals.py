"""Arrival processes: Poisson as before, real submissions replayed at the requested load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate, make_agent
from mara_env.benchmarks.collect.arrival_pack import main as arrivals_main
from mara_env.benchmarks.leaderboard import main as leaderboard_main
from mara_env.curves.arrivals import ArrivalTrace, arrival_counts, arrivals_from_csv, load_arrivals
from mara_env.errors import ConfigError


def test_replays_keep_the_requested_mean_and_the_traces_bursts() -> None:
    trace = load_arrivals("philly")
    rate, horizon = 3.0, 100
    totals = np.array(
        [arrival_counts(trace, rate, horizon, np.random.default_rng(s)).sum() for s in range(3000)]
    )
    assert abs(totals.mean() / (rate * horizon) - 1) < 0.1
    poisson = np.array(
        [
            arrival_counts("poisson", rate, horizon, np.random.default_rng(s)).sum()
            for s in range(3000)
        ]
    )
    assert totals.var() > 20 * poisson.var()  # bursty: far more spread than Poisson


def test_the_default_process_draws_the_same_episodes_as_before() -> None:
    config = mara_env.get_config("training")
    assert config.arrivals == "poisson"
    same = mara_env.get_config("training", arrivals="poisson")
    rows = evaluate(make_agent("edf"), config, [4]), evaluate(make_agent("edf"), same, [4])
    assert rows[0][0]["arrived"] == rows[1][0]["arrived"]


def test_an_episode_with_replayed_arrivals_is_deterministic_by_seed() -> None:
    config = mara_env.get_config("tiny", arrivals="philly")
    first = evaluate(make_agent("edf"), config, [0, 1])
    again = evaluate(make_agent("edf"), config, [0, 1])
    assert [r["arrived"] for r in first] == [r["arrived"] for r in again]


def test_your_own_submission_times(tmp_path: Path) -> None:
    seconds = tmp_path / "seconds.csv"
    seconds.write_text("timestamp,user\n0,a\n10,b\n905,c\n2700,d\n")
    assert arrivals_from_csv(seconds).counts.tolist() == [2, 1, 0, 1]
    dates = tmp_path / "dates.csv"
    dates.write_text("timestamp\n2017-10-09 07:00:00\n2017-10-09 07:20:00\n")
    assert arrivals_from_csv(dates).counts.tolist() == [1, 1]
    config = mara_env.get_config("tiny", arrivals=str(seconds))
    assert evaluate(make_agent("edf"), config, [0])[0]["arrived"] > 0
    # bursts in the first and the fifth quarter-hour only: a period of 5 epochs, 3 of them empty
    bursts = tmp_path / "bursts.csv"
    bursts.write_text("timestamp\n0\n1\n2\n3600\n3601\n")
    env = mara_env.raw_env(mara_env.get_config("tiny", arrivals=str(bursts)))
    for seed in range(3):
        env.reset(seed=seed)
        arrival = env.unwrapped.simulator.state.tasks.arrival
        assert len(arrival) > 0 and len(set(arrival % 5)) <= 2, arrival
    out = tmp_path / "packed.npz"
    assert arrivals_main(["--from", str(dates), "--output", str(out)]) == 0
    assert load_arrivals(str(out)).counts.tolist() == [1, 1]
    assert "variance / mean" in out.with_suffix(".md").read_text()


def test_bad_arrivals_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="arrivals must be one of"):
        mara_env.get_config("tiny", arrivals="bursty")
    with pytest.raises(ConfigError, match="no such file"):
        load_arrivals(str(tmp_path / "absent.csv"))
    no_column = tmp_path / "jobs.csv"
    no_column.write_text("time\n1\n")
    with pytest.raises(ConfigError, match="'timestamp' column"):
        arrivals_from_csv(no_column)
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp\n1\nyesterday\n")
    with pytest.raises(ConfigError, match="line 3"):
        arrivals_from_csv(bad)
    for times, message in {
        "1\n-5\n": "line 3: timestamp '-5' is not a time",
        "1\n1e400\n": "line 3: timestamp '1e400' is not a time",
        "0\n1e15\n": "more than 10,000,000 bins",
    }.items():
        bad.write_text(f"timestamp\n{times}")
        with pytest.raises(ConfigError, match=message):
            arrivals_from_csv(bad)
    with pytest.raises(ConfigError, match="counts must be"):
        ArrivalTrace(np.zeros(3, dtype=np.int64))


def test_the_leaderboard_replays_arrivals_and_names_them(tmp_path: Path) -> None:
    out = tmp_path / "board"
    quiet = ["--no-progress", "--no-plots", "--workers", "1", "--config", "tiny"]
    command = ["--arrivals", "philly", "--agents", "edf", "--workloads", "rl", "--seeds", "2"]
    assert leaderboard_main([*command, "--loads", "1", *quiet, "--output", str(out)]) == 0
    assert "tiny/rl@1x philly" in (out / "leaderboard.md").read_text()
    assert leaderboard_main(["--validate", str(out), "--sample", "all", *quiet[:4]]) == 0
