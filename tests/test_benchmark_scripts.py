"""Smoke tests of the benchmark scripts: each ``main(argv)`` runs on a tiny budget and prints the
rows and figures it promises."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import mara_env
import mara_env.benchmarks
from mara_env.benchmarks.baselines import maskable_ppo as maskable_ppo_example
from mara_env.benchmarks.common import random_policy
from mara_env.benchmarks.perf import env_throughput, episode_memory, runners

NUMBER = r"([0-9][0-9,]*\.?[0-9]*)"


def figure(pattern: str, text: str) -> float:
    """The number captured by ``pattern`` in ``text`` (commas removed)."""
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not found in:\n{text}"
    return float(match.group(1).replace(",", ""))


# --- env_throughput ---------------------------------------------------------------------------


def test_random_legal_action_only_picks_legal_actions() -> None:
    rng = np.random.default_rng(0)
    mask = np.array([0, 1, 0, 1, 1], dtype=np.int8)
    picks = {random_policy.random_legal_action(rng, mask) for _ in range(200)}
    assert picks == {1, 3, 4}


def test_pick_legal_actions_is_uniform_over_each_nodes_legal_actions() -> None:
    masks = np.array([[[0, 1, 0, 1, 1], [1, 0, 0, 0, 0]], [[0, 0, 0, 0, 1], [1, 1, 1, 1, 1]]])
    rng = np.random.default_rng(0)
    picks = np.stack(
        [
            random_policy.pick_legal_actions(masks.astype(bool), rng.random((2, 2)))
            for _ in range(3000)
        ]
    )
    assert set(picks[:, 0, 0].tolist()) == {1, 3, 4}
    assert set(picks[:, 0, 1].tolist()) == {0} and set(picks[:, 1, 0].tolist()) == {4}
    counts = np.bincount(picks[:, 1, 1], minlength=5)
    assert counts.min() > 500  # about 600 each of 5
    # the same pick as the single-node helper, given the same uniform
    u = np.array([[0.7]])
    mask = np.array([0, 1, 0, 1, 1], dtype=np.int8)
    legal = mask.nonzero()[0]
    assert (
        random_policy.pick_legal_actions(mask.astype(bool)[None, None], u)[0, 0]
        == legal[int(0.7 * legal.size)]
    )


def test_step_breakdown_times_every_part_and_puts_the_methods_back() -> None:
    envs = env_throughput.make_vector("tiny", 4)
    envs.reset(seed=0)
    parts = runners.step_breakdown(envs, 2_000, np.random.default_rng(0))
    timed = {label for label, _, _ in runners.STEP_PARTS}
    assert set(parts) == timed | {"policy", "rest of the loop"}
    assert all(parts[label] > 0 for label in (*timed, "policy"))
    core = envs.unwrapped.core
    assert "advance" not in vars(core) and "reset" not in vars(core)
    assert "_observations" not in vars(envs.unwrapped)


def test_run_random_masked_counts_steps_and_episodes() -> None:
    env = mara_env.raw_env("tiny")
    assert runners.run_random_masked(env, 10, np.random.default_rng(0)) == 0
    finished = runners.run_random_masked(env, 10**9, np.random.default_rng(0), max_episodes=2)
    assert finished == 2
    assert not env.agents


def test_env_throughput_prints_every_form_and_the_ratio(capsys: pytest.CaptureFixture) -> None:
    assert env_throughput.main(["--quick", "--steps", "300", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "logical cores" in out
    for name in (
        "mara_env.raw_env (AEC)",
        "mara_env.env (AEC, wrapped)",
        "mara_env.parallel_env",
        "ClusterGymEnv (unwrapped)",
        'gym.make("mara_env/Cluster-v3")',
        "connect_four_v3.raw_env (AEC)",
    ):
        assert figure(re.escape(name) + r"\s+" + NUMBER, out) > 0, name
    assert figure(r"ratio raw AEC / connect_four: " + NUMBER + "x", out) > 0
    assert figure(r"ratio vector N=256 / raw AEC: " + NUMBER + "x", out) > 0
    for size in env_throughput.VECTOR_SIZES:
        assert figure(rf"\n\s+{size}\s+" + NUMBER, out) > 0, size
    total = figure(r"where a step of vector N=256 goes \(" + NUMBER + " ms per step", out)
    parts = [label for label, _, _ in runners.STEP_PARTS] + ["policy", "rest of the loop"]
    spent = [figure(re.escape(label) + r"\s+(-?[0-9.]+) ms", out) for label in parts]
    assert figure(r"epoch \(core.advance\)\s+" + NUMBER, out) > 0
    assert sum(spent) == pytest.approx(total, abs=0.01)


# --- episode_memory ---------------------------------------------------------------------------


def test_parse_override_reads_literals_and_strings() -> None:
    assert episode_memory.parse_override("arrival_horizon=20") == ("arrival_horizon", 20)
    assert episode_memory.parse_override("slack_range=(1.5, 2.0)") == ("slack_range", (1.5, 2.0))
    assert episode_memory.parse_override("split=test") == ("split", "test")


def test_episode_memory_reports_the_episode_and_peak_rss(capsys: pytest.CaptureFixture) -> None:
    argv = ["--n-nodes", "2", "--n-slots", "3", "--load-factor", "1", "--set", "arrival_horizon=10"]
    assert episode_memory.main(argv) == 0
    out = capsys.readouterr().out
    assert "a fresh subprocess" in out
    assert "n_nodes=2" in out and "arrival_horizon=10" in out
    assert figure(r"episode: " + NUMBER + " epochs", out) > 0
    assert "(terminated/truncated)" in out
    assert figure(r"tasks: " + NUMBER + " arrived", out) > 0
    baseline = figure(r"after imports \(baseline\):\s+" + NUMBER + " MB", out)
    peak = figure(r"after the episode:\s+" + NUMBER + " MB", out)
    assert 0 < baseline <= peak
    assert "target: peak RSS < 300 MB" in out


def test_output_keeps_the_printed_report_as_a_results_page(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    page = tmp_path / "memory.md"
    argv = [
        "--n-nodes",
        "2",
        "--n-slots",
        "3",
        "--set",
        "arrival_horizon=10",
        "--output",
        str(page),
    ]
    assert episode_memory.main(argv) == 0
    printed = capsys.readouterr().out.rstrip("\n")
    text = page.read_text()
    assert text.startswith("# Peak memory of one episode\n")
    command = "python -m mara_env.benchmarks.perf.episode_memory " + " ".join(argv)
    assert f"Made by `{command}` at commit " in text
    assert f"```text\n{printed}\n```\n" in text  # the report, exactly as printed


def test_output_must_be_a_markdown_page_in_a_folder_that_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for page, problem in (
        (tmp_path / "r.txt", "must be a .md file"),
        (tmp_path / "no" / "r.md", "does not exist"),
    ):
        with pytest.raises(SystemExit):
            episode_memory.main(["--output", str(page)])
        assert problem in capsys.readouterr().err
        assert not page.exists()


# --- maskable_ppo_example ---------------------------------------------------------------------


def test_bootstrap_ci_brackets_the_mean() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.9])
    low, high = maskable_ppo_example.bootstrap_ci(values)
    assert low <= values.mean() <= high
    assert maskable_ppo_example.bootstrap_ci(np.array([0.5, 0.5])) == (0.5, 0.5)


@pytest.mark.parametrize(
    ("installed", "expected"),
    [({"rich", "tqdm"}, (True, 0)), ({"tqdm"}, (False, 1)), (set(), (False, 0))],
)
def test_progress_callback_falls_back_without_rich(
    installed: set[str], expected: tuple[bool, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert maskable_ppo_example.progress_callback(False) == (False, [])
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *args: object() if name in installed else None
    )
    progress_bar, callbacks = maskable_ppo_example.progress_callback(True)
    assert (progress_bar, len(callbacks)) == expected


def test_maskable_ppo_example_trains_evaluates_and_saves(
    capsys: pytest.CaptureFixture, tmp_path: object
) -> None:
    pytest.importorskip("sb3_contrib")
    path = f"{tmp_path}/model.zip"
    argv = ["--quick", "--no-progress", "--eval-episodes", "2", "--save", path]
    assert maskable_ppo_example.main(argv) == 0
    out = capsys.readouterr().out
    for name in ("MaskablePPO (trained)", "MaskablePPO (untrained)", "random masked"):
        rate = figure(re.escape(name) + r"\s+" + NUMBER + " ±", out)
        assert 0.0 <= rate <= 1.0, name
    assert re.search(r"PPO beats random \(paired 95% CI above 0\): (yes|no)", out)
    assert "wall time: training" in out
    assert f"saved the model to {path}" in out
    from sb3_contrib import MaskablePPO

    MaskablePPO.load(path)


# --- every command line ------------------------------------------------------------------------


class _Parsed(Exception):
    """Raised instead of parsing, carrying the parser a script built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__()
        self.parser = parser


def _parser_of(module: ModuleType, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser ``module.main`` builds (caught when it parses, before anything runs)."""

    def caught(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", caught)
    with pytest.raises(_Parsed) as parsed:
        module.main([])
    return parsed.value.parser


BENCHMARKS = Path(mara_env.benchmarks.__path__[0])
#: Every module of ``benchmarks`` whose ``main(argv)`` parses a command line.
COMMAND_LINES = sorted(
    ".".join(path.relative_to(BENCHMARKS.parent).with_suffix("").parts)
    for path in BENCHMARKS.rglob("*.py")
    if ("ArgumentParser(" in (text := path.read_text()) or "build_parser()" in text)
    and "\ndef main(" in text
)


def test_the_command_lines_are_found() -> None:
    expected = {
        "mara.train",
        "mara.evaluate",
        "prediction.benchmark",
        "leaderboard.cli",
        "collect.__main__",
    }
    assert {f"benchmarks.{name}" for name in expected} <= set(COMMAND_LINES)


@pytest.mark.parametrize("name", COMMAND_LINES)
def test_every_option_of_every_script_has_help(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    parsers = [_parser_of(importlib.import_module(name), monkeypatch)]
    bare = []
    while parsers:  # the parser and those of its subcommands
        parser = parsers.pop()
        parser.format_help()  # every help string formats (a stray % would raise here)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += action.choices.values()
            if not action.help and action.dest != "help":
                bare.append(action.option_strings[-1] if action.option_strings else action.dest)
    assert not bare, f"python -m {name}: options without help: {bare}"


def test_a_group_lists_its_commands_by_their_one_spelling(capsys: pytest.CaptureFixture) -> None:
    from mara_env.benchmarks.common.subcommands import dispatch
    from mara_env.benchmarks.reference import COMMANDS

    assert dispatch("reference", COMMANDS, []) == 0
    listed = capsys.readouterr().out
    assert "python -m mara_env.benchmarks.reference.shipped_files" in listed
    assert " shipped-files" not in listed
    assert dispatch("reference", COMMANDS, ["shipped-files", "--check"]) == 0  # 0.3's spelling
    said = capsys.readouterr().err
    assert "is spelled `python -m mara_env.benchmarks.reference.shipped_files`" in said
    assert dispatch("reference", COMMANDS, ["nope"]) == 2
