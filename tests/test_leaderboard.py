"""The leaderboard command on tiny grids: outputs, resumption, errors, failures, SIGKILL."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate, make_agent
from mara_env.benchmarks.leaderboard import load_calibration as calibrate_load
from mara_env.benchmarks.leaderboard import main, plots
from mara_env.benchmarks.leaderboard.cells import TIMING_COLUMNS
from mara_env.benchmarks.leaderboard.journal import read_journal

#: Two seeds of the tiny preset on one workload and load: 2 episodes per agent.
TINY = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "2"]
QUIET = ["--no-progress", "--no-plots", "--workers", "1"]
ROOT = Path(__file__).resolve().parents[1]


def journal_rows(directory: Path) -> list[dict[str, Any]]:
    contents = read_journal(directory / "episodes.jsonl")
    assert contents.problems == []
    return contents.rows


def results(directory: Path) -> list[dict[str, Any]]:
    """Every episode without its wall-time columns, in a canonical order."""
    rows = [
        {key: value for key, value in row.items() if key not in TIMING_COLUMNS}
        for row in journal_rows(directory)
    ]
    return sorted(rows, key=lambda row: row["cell"])


def write_module(directory: Path, name: str, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    (directory / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_run_writes_every_output_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    argv = [*TINY, "--loads", "1", "2", *QUIET, "--output", str(out), "--agents", "edf", "random"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[:3] == ["rank", "agent", "completion"]
    assert "8 episodes in the grid; 8 episodes run" in printed

    rows = journal_rows(out)
    assert sorted((r["agent"], r["load_factor"], r["seed"]) for r in rows) == sorted(
        (agent, factor, seed)
        for agent in ("edf", "random")
        for factor in (1.0, 2.0)
        for seed in (1000, 1001)
    )
    assert {r["load"] for r in rows} == {1.4, 2.8}
    assert {r["config"] for r in rows} == {"tiny/rl@1x", "tiny/rl@2x"}
    with (out / "episodes.csv").open(newline="") as handle:
        exported = list(csv.DictReader(handle))
    assert [(r["agent"], r["seed"]) for r in exported] == [
        (r["agent"], str(r["seed"])) for r in json.loads((out / "episodes.json").read_text())
    ]
    assert len(exported) == 8
    summary = json.loads((out / "leaderboard.json").read_text())
    assert {entry["agent"] for entry in summary["leaderboard"]} == {"edf", "random"}
    assert summary["grid"]["seeds"] == [1000, 1001]
    facts = summary["provenance"]
    assert facts["version"] and facts["git_revision"]
    assert len(facts["data"]["traces_sha256"]) == 64
    markdown = (out / "leaderboard.md").read_text()
    assert "| rank | agent | completion rate [95% CI]" in markdown
    assert "Regenerate: `mara-leaderboard --config tiny" in markdown

    # A re-run reuses everything; a new agent runs only its own cells.
    assert main(argv) == 0
    assert "0 episodes run" in capsys.readouterr().out
    assert main([*argv, "fcfs"]) == 0
    assert "4 episodes run" in capsys.readouterr().out
    assert len(journal_rows(out)) == 12
    assert "| fcfs |" not in markdown and "fcfs" in (out / "leaderboard.md").read_text()

    # --no-resume starts afresh and keeps the old journal.
    assert main([*argv, "--no-resume"]) == 0
    capsys.readouterr()
    assert len(journal_rows(out)) == 8
    assert len(list(out.glob("episodes.jsonl.*.bak"))) == 1


def test_results_of_another_config_in_the_same_directory_are_not_mixed_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same agents, workload, load and seeds, but another preset: a separate set of cells."""
    argv = [*TINY, *QUIET, "--agents", "edf", "random"]
    assert main([*argv, "--output", str(tmp_path / "shared")]) == 0
    assert main([*argv, "--config", "single_node", "--output", str(tmp_path / "shared")]) == 0
    assert "4 episodes run" in capsys.readouterr().out
    assert main([*argv, "--config", "single_node", "--output", str(tmp_path / "alone")]) == 0
    capsys.readouterr()
    assert len(journal_rows(tmp_path / "shared")) == 8
    for name in ("episodes.csv", "leaderboard.json"):
        shared = (tmp_path / "shared" / name).read_text()
        alone = (tmp_path / "alone" / name).read_text()
        if name == "episodes.csv":
            shared, alone = (
                [line.split(",")[:12] for line in text.splitlines()] for text in (shared, alone)
            )
        else:
            shared, alone = (json.loads(text)["leaderboard"] for text in (shared, alone))
            for board in (shared, alone):
                for entry in board:
                    del entry["episode_means"]["decision_ms_per_epoch"]
        assert shared == alone, name


def test_workers_and_in_process_runs_give_identical_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*TINY, "--loads", "1", "1.5", "--agents", "lara", "uniform", "--no-progress"]
    assert main([*argv, "--no-plots", "--workers", "1", "--output", str(tmp_path / "a")]) == 0
    assert main([*argv, "--workers", "2", "--output", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "2 worker(s)" in out
    assert results(tmp_path / "a") == results(tmp_path / "b")
    assert (tmp_path / "b" / "completion_vs_load.png").stat().st_size > 10_000
    assert (tmp_path / "b" / "gantt.png").stat().st_size > 10_000
    assert (
        "![Completion rate against load](completion_vs_load.png)"
        in (tmp_path / "b" / "leaderboard.md").read_text()
    )


def test_own_scheduler_runs_beside_the_shipped_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module(
        tmp_path,
        "leaderboard_user_agent",
        """
        from mara_env.agents import EarliestDeadlineFirst

        class MyEdf(EarliestDeadlineFirst):
            name = "my_edf"
        """,
        monkeypatch,
    )
    path = "leaderboard_user_agent:MyEdf"
    argv = [*TINY, *QUIET, "--workers", "2", "--agents", "edf", "--agent", path]
    argv += ["--output", str(tmp_path / "o")]  # worker processes find the module too
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert " my_edf " in table and " edf " in table  # listed under its own name
    by_agent: dict[str, dict[int, float]] = {}
    for row in results(tmp_path / "o"):
        by_agent.setdefault(row["agent"], {})[row["seed"]] = row["completion_rate"]
        assert row["agent_spec"] == (path if row["agent"] == "my_edf" else "edf")
    assert by_agent["my_edf"] == by_agent["edf"]  # the same scheduler under another name


def test_illegal_actions_are_counted_reported_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module(
        tmp_path,
        "leaderboard_rogue_agent",
        """
        import numpy as np

        class Rogue:
            name = "rogue"

            def reset(self, config, seed=None):
                self.config, self.calls = config, 0

            def act(self, observation, node):
                self.calls += 1
                if self.calls % 3 == 0:
                    return self.config.n_actions + 7  # outside the action space
                masked = np.flatnonzero(observation["action_mask"] == 0)
                return int(masked[0]) if masked.size else self.config.idle_action
        """,
        monkeypatch,
    )
    path = "leaderboard_rogue_agent:Rogue"
    argv = [*TINY, *QUIET, "--agents", "edf", path, "--output", str(tmp_path / "o")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    rows = [row for row in journal_rows(tmp_path / "o") if row["agent"] == "rogue"]
    masked = sum(row["illegal_actions"] for row in rows)
    invalid = sum(row["invalid_actions"] for row in rows)
    assert masked > 0 and invalid > 0
    assert f"Note: rogue returned {masked:.0f} masked and {invalid:.0f} out-of-range" in printed
    assert printed.count("rogue") >= 2  # ranked in the table, and the note


def test_a_failing_agent_is_reported_and_the_others_are_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module(
        tmp_path,
        "leaderboard_broken_agent",
        """
        from pathlib import Path

        class Broken:
            name = "broken"

            def reset(self, config, seed=None):
                self.config = config

            def act(self, observation, node):
                if not Path(__file__).with_name("fixed").exists():
                    raise RuntimeError("boom")
                return self.config.idle_action
        """,
        monkeypatch,
    )
    path = "leaderboard_broken_agent:Broken"
    out = tmp_path / "o"
    argv = [*TINY, *QUIET, "--agents", "edf", path, "--output", str(out)]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "Error: broken failed in 2 episodes" in captured.err
    assert "SchedulerError" in captured.err and "boom" in captured.err
    assert "Note: broken is not ranked: 2 of its 2 episodes have not finished" in captured.out
    assert {row["agent"] for row in journal_rows(out)} == {"edf"}
    assert "RuntimeError: boom" in (out / "failures.log").read_text()
    assert main(argv) == 1  # failed cells are retried, not remembered
    assert "failed in 2 episodes" in capsys.readouterr().err
    assert (out / "failures.log").read_text().count("== broken seed") == 2  # not appended

    (tmp_path / "fixed").touch()  # the retry succeeds: the old failures are gone from the log
    assert main(argv) == 0
    assert "2 episodes run" in capsys.readouterr().out
    assert not (out / "failures.log").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agents", "nope"], "Unknown agent 'nope'. Known agents: random"),
        (["--agent", "no_such_module_q:X"], "Cannot import module 'no_such_module_q'"),
        (["--agent", "agents:NoSuchClass"], "has no attribute 'NoSuchClass'"),
        (["--agents", "my_sched.MySched"], "Did you mean the import path 'my_sched:MySched'?"),
        (["--workloads", "rl", "nlp"], "Unknown workload(s) ['nlp']"),
        (["--config", "huge"], "Unknown config preset 'huge'. Known presets"),
        (["--seeds", "0"], "evaluation seeds start at 1000"),
        (["--seeds", "12-14"], "evaluation seeds start at 1000"),
        (["--seeds", "1000", "1002"], "the seeds must be consecutive"),
        (
            ["--seeds", "1009-1000"],
            "the range runs backwards; write the lower seed first (1000-1009)",
        ),
        (["--seeds", "ten"], "not whole numbers; give a count"),
        (["--loads", "-1"], "expected a number > 0"),
        (["--backend", "spark"], "invalid choice: 'spark'"),
        (["--ray-address", "auto"], "--ray-address needs --backend ray"),
        (["--reference", "fcfs"], "--reference 'fcfs' is not among the agents"),
    ],
)
def test_bad_arguments_fail_early_and_clearly(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, *QUIET, "--agents", "edf", *args, "--output", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error
    assert "mara-env[torch]" not in error  # no install hint for a typo
    assert not (tmp_path / "o").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("seeds", "expected"),
    [(["2"], {1000, 1001}), (["1003-1004"], {1003, 1004}), (["1007", "1008"], {1007, 1008})],
)
def test_seeds_are_a_count_a_range_or_consecutive_seeds(
    seeds: list[str], expected: set[int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    argv = [*TINY, *QUIET, "--no-plots", "--agents", "edf", "--output", str(out)]
    assert main([*argv, "--seeds", *seeds]) == 0
    assert {row["seed"] for row in journal_rows(out)} == expected
    code = main(["--validate", str(out), *QUIET, "--sample", "all"])
    assert code == 0, capsys.readouterr().out


def test_an_agent_missing_a_dependency_is_left_out_and_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module(
        tmp_path,
        "leaderboard_heavy_agent",
        """
        def Heavy():
            import not_installed_dependency_q  # imported when the agent is built

            return not_installed_dependency_q.Scheduler()
        """,
        monkeypatch,
    )
    out = tmp_path / "o"
    argv = ["--agents", "edf", "--agent", "leaderboard_heavy_agent:Heavy", "--output", str(out)]
    assert main([*TINY, *QUIET, "--no-plots", *argv]) == 1
    error = capsys.readouterr().err
    assert "needs 'not_installed_dependency_q'" in error
    assert "pip install 'mara-env[torch]'" in error
    assert {row["agent"] for row in journal_rows(out)} == {"edf"}


def test_an_agent_that_cannot_be_built_is_left_out_in_one_line_and_the_others_are_ranked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    argv = [
        "--agents",
        "edf",
        "fcfs",
        "--agent",
        "mara_env.agents.statistics:Summary",
        "--output",
        str(out),
    ]
    assert main([*TINY, *QUIET, "--no-plots", *argv]) == 1
    captured = capsys.readouterr()
    left_out = [
        line for line in captured.err.splitlines() if "mara_env.agents.statistics:Summary" in line
    ]
    assert len(left_out) == 2  # when it fails, and again at the end
    assert left_out[-1].startswith(
        "mara-leaderboard: agent 'mara_env.agents.statistics:Summary' was left out, it cannot be built: "
        "AgentBuildError: Building agent"
    )
    assert "usage:" not in captured.err
    assert {row["agent"] for row in journal_rows(out)} == {"edf", "fcfs"}
    assert "| edf |" in (out / "leaderboard.md").read_text()


def test_no_agent_that_builds_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                *TINY,
                *QUIET,
                "--agents",
                "mara_env.agents.statistics:Summary",
                "--output",
                str(tmp_path),
            ]
        )
    assert exit_info.value.code == 2
    assert "no agent could be built" in capsys.readouterr().err


def test_foreign_or_corrupt_results_are_reported_never_overwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*TINY, *QUIET, "--agents", "edf"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "episodes.jsonl").write_text("name,score\nx,1\n")
    with pytest.raises(SystemExit):
        main([*argv, "--output", str(foreign)])
    assert "not valid JSON" in capsys.readouterr().err
    assert (foreign / "episodes.jsonl").read_text() == "name,score\nx,1\n"

    older = tmp_path / "older"  # results of the previous version: a CSV and a table, no journal
    older.mkdir()
    (older / "episodes.csv").write_text("agent,config,config_hash,seed\n")
    (older / "leaderboard.md").write_text("# old\n")
    with pytest.raises(SystemExit):
        main([*argv, "--output", str(older)])
    assert "holds episodes.csv, leaderboard.md but no episodes.jsonl" in capsys.readouterr().err
    assert (older / "leaderboard.md").read_text() == "# old\n"


def test_sigkill_mid_run_then_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    """Kill -9 after some cells finished; the resumed run ends with the same episodes."""
    grid = ["--config", "tiny", "--workloads", "vision", "--loads", "1", "2", "--seeds", "30"]
    grid += ["--agents", "edf", "random", "--no-progress", "--no-plots"]
    total = 2 * 2 * 30
    killed = tmp_path / "killed"
    command = [sys.executable, "-m", "mara_env.benchmarks.leaderboard", *grid, "--workers", "2"]
    process = subprocess.Popen(
        [*command, "--output", str(killed)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill reaches the workers too
    )
    journal = killed / "episodes.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if journal.exists() and journal.read_bytes().count(b'"kind":"episode"') > 20:
                break
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be killed"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    finished = len(journal_rows(killed))
    assert 20 <= finished < total
    assert not (killed / "leaderboard.md").exists()

    resumed = subprocess.run(
        [*command, "--output", str(killed)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{total - finished} episodes run" in resumed.stdout
    assert main([*grid, "--workers", "1", "--output", str(tmp_path / "whole")]) == 0
    assert results(killed) == results(tmp_path / "whole")
    assert len(results(killed)) == total
    statistics = [
        json.loads((directory / "leaderboard.json").read_text())["leaderboard"]
        for directory in (killed, tmp_path / "whole")
    ]
    for board in statistics:
        for entry in board:
            del entry["episode_means"]["decision_ms_per_epoch"]
    assert statistics[0] == statistics[1]


def test_ctrl_c_stops_promptly_and_keeps_finished_episodes(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "mara_env.benchmarks.leaderboard", *TINY[:-1], "500"]
    command += ["--agents", "edf", "--no-progress", "--workers", "2", "--output", str(tmp_path)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    journal = tmp_path / "episodes.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not journal.exists() or journal.read_text().count('"kind":"episode"') < 2
        ):
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "run the same command again to resume" in err
    rows = journal_rows(tmp_path)
    assert 2 <= len(rows) < 500
    assert len({row["cell"] for row in rows}) == len(rows)


def test_calibrate_load_tiny_budget(capsys: pytest.CaptureFixture[str]) -> None:
    # Cluster-v1's figures, pinned
    args = ["--config", "tiny", "--world-version", "1", "--loads", "0.5", "3.0", "--seeds", "2"]
    args += ["--workers", "1"]
    assert calibrate_load.main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "edf (95% CI)" in out
    assert "random (95% CI)" in out
    assert "completes 55% of arrived tasks at load ~2.49" in out  # between 1.000 and 0.434
    assert "recommended TRAINING_LOAD = 2.49" in out
    args = ["--config", "tiny", "--world-version", "1", "--loads", "0.5", "0.6", "--seeds", "2"]
    args += ["--workers", "1"]
    assert calibrate_load.main([*args, "--no-progress"]) == 0
    assert "never crosses" in capsys.readouterr().out  # EDF completes everything at both loads


def test_calibrate_load_writes_its_page_for_the_chosen_rules(tmp_path: Path) -> None:
    """Each world's page names its rules and holds that world's figures: the same sweep on
    Cluster-v1 and Cluster-v2 gives two different tables."""
    args = ["--config", "tiny", "--loads", "0.5", "3.0", "--seeds", "2", "--workers", "1"]
    tables = {}
    for world in ("1", "2"):
        page = tmp_path / f"v{world}.md"
        argv = [*args, "--world-version", world, "--output", str(page), "--no-progress"]
        assert calibrate_load.main(argv) == 0
        text = page.read_text()
        assert f"--world-version {world}" in text
        table = text.split("```")[1]
        assert "edf (95% CI)" in table and [line.split()[0] for line in table.splitlines()[2:]] == [
            "0.5",
            "3",
        ]
        tables[world] = table
    assert tables["1"] != tables["2"]


def test_calibrate_load_rejects_bad_sweeps(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        calibrate_load.main(["--loads", "2.0", "1.0"])
    assert "increasing order" in capsys.readouterr().err


def test_interpolate_load() -> None:
    assert calibrate_load.interpolate_load([1.0, 2.0, 3.0], [0.9, 0.7, 0.3], 0.5) == 2.5
    assert calibrate_load.interpolate_load([1.0, 2.0], [0.55, 0.4], 0.55) == 1.0
    assert calibrate_load.interpolate_load([1.0, 2.0], [0.9, 0.8], 0.55) is None


def test_a_cell_gives_the_same_row_whatever_the_process_played_before() -> None:
    """Workers build each registered agent once and reset it every episode: a cell's row is
    the same played first, last, or by a freshly built agent."""
    from mara_env.benchmarks.leaderboard import cells as cell_module
    from mara_env.benchmarks.leaderboard.grid import Grid

    grid = Grid(
        agents=("edf", "lara", "laira", "clairvoyant", "mara"),
        workloads=("rl",),
        load_factors=(1.0, 2.0),
        n_seeds=2,
        base="tiny",
    )

    def rows(order: list[Any], fresh: bool) -> dict[str, dict[str, Any]]:
        found = {}
        for cell in order:
            if fresh:
                cell_module._BUILT.clear()
            row = cell_module.execute_cell(cell).rows()[0]
            found[cell.key] = {k: v for k, v in row.items() if k not in TIMING_COLUMNS}
        return found

    cells = grid.cells()
    cell_module._BUILT.clear()
    forward = rows(cells, fresh=False)
    backward = rows(cells[::-1], fresh=False)
    assert forward == backward == rows(cells, fresh=True)


@pytest.mark.parametrize("world", mara_env.WORLD_VERSIONS)
def test_the_gantt_plays_the_agent_shipped_for_the_boards_world(
    world: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board of an older world pictures the agents built for that world, as its episodes."""
    built: list[int] = []

    def recording_make_agent(name: str, **kwargs: Any) -> Any:
        built.append(kwargs["world_version"])
        return make_agent(name, **kwargs)

    monkeypatch.setattr(plots, "make_agent", recording_make_agent)
    config = mara_env.get_config("tiny", world_version=world)
    schedule = plots.episode_schedule("edf", config, seed=0, epoch=5)
    assert schedule.tasks.shape == (5, config.n_nodes) and built == [world]


def test_the_gantt_schedule_is_the_episode_the_cell_played() -> None:
    """Replayed to its end, the pictured episode completes what evaluate() counts, and every
    node trains a task that had arrived (or idles)."""
    config = mara_env.get_config("tiny")
    schedule = plots.episode_schedule("edf", config, seed=0, epoch=10**6)
    (row,) = evaluate(make_agent("edf"), config, seeds=[0])
    assert schedule.tasks.shape == (row["epochs"], config.n_nodes)
    assert schedule.completed[-1] == row["completed"]
    assert np.all(np.diff(schedule.completed) >= 0)
    assert schedule.tasks.min() >= -1 and schedule.tasks.max() < row["arrived"]
    assert (schedule.tasks >= 0).mean() > 0.5  # EDF rarely idles a node with work in sight


@pytest.mark.parametrize(
    ("option", "name", "content", "said"),
    [
        (
            "--traces",
            "curves.csv",
            b"\x88\x99\xff\xfe\x00abc",
            "not UTF-8 text (byte 0x88 at position 0)",
        ),
        ("--arrivals", "times.csv", b"\xff\xfe\x00t", "not UTF-8 text (byte 0xff at position 0)"),
        ("--arrivals", "other.npz", None, "not an arrival trace"),
    ],
)
def test_a_file_that_cannot_be_used_is_refused_in_one_line_before_any_episode(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    option: str,
    name: str,
    content: bytes | None,
    said: str,
) -> None:
    path = tmp_path / name
    if content is None:
        np.savez(path, something_else=np.arange(3))
    else:
        path.write_bytes(content)
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, *QUIET, "--agents", "edf", option, str(path), "--output", str(out)])
    assert exit_info.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"mara-leaderboard: error: {option}") and said in line
    assert not out.exists()


def test_a_full_disk_while_writing_the_tables_says_what_was_kept_and_a_rerun_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ENOSPC at the tables: one message (what is kept, how to resume), exit 2; the rerun plays
    nothing again and writes them."""
    import errno

    from mara_env.benchmarks.leaderboard import session

    def full_disk(path: Path, text: str | bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    out = tmp_path / "o"
    monkeypatch.setattr(session, "write_atomically", full_disk)
    with pytest.raises(SystemExit) as exit_info:
        main([*TINY, *QUIET, "--agents", "edf", "lara", "--output", str(out)])
    assert exit_info.value.code == 2
    said = capsys.readouterr().err
    assert "No space left on device" in said and "Every finished episode is kept: 4 in" in said
    assert not (out / "leaderboard.md").exists()
    monkeypatch.undo()
    assert main([*TINY, *QUIET, "--agents", "edf", "lara", "--output", str(out)]) == 0
    assert "4 reused from" in capsys.readouterr().out
    assert (out / "leaderboard.md").is_file()


def test_an_agent_module_that_raises_on_import_is_named_with_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_module(tmp_path, "leaderboard_crashing_module", "x = 1\ny = 1 / 0\n", monkeypatch)
    out = tmp_path / "o"
    argv = [*TINY, *QUIET, "--agents", "edf", "leaderboard_crashing_module:X", "--output", str(out)]
    assert main(argv) == 1
    said = capsys.readouterr().err
    where = tmp_path / "leaderboard_crashing_module.py"
    assert f"ZeroDivisionError: division by zero (raised at {where}:2)" in said
