"""Fair tuning of the baselines: it can only reach training seeds and the train split, it writes
settings the registry reads, and the look-ahead calibration and the deviation table run."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mara_env
import mara_env.agents.tuned
from mara_env.agents import VARIANTS, Lara, make_agent
from mara_env.agents.laira import Laira
from mara_env.agents.tuned import TunedSettingsError, tuned_settings, tuned_settings_path
from mara_env.benchmarks.baselines import deviations as baseline_deviations
from mara_env.benchmarks.baselines import tuning as tune_baselines
from mara_env.benchmarks.baselines.lookahead_calibration import collect_verdicts, fit_logistic
from mara_env.benchmarks.baselines.trial_keys import trial_manifest
from mara_env.benchmarks.baselines.trials import Trial, TrialJournal
from mara_env.benchmarks.common import source_closure
from mara_env.benchmarks.common.manifest import Manifest
from mara_env.benchmarks.common.seeds import is_training_seed

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def recorded_episodes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str, str]]:
    """Every episode any environment starts: (seed, split, preset-independent config repr)."""
    seen: list[tuple[int, str, str]] = []
    original = mara_env.raw_env.reset

    def reset(self: Any, seed: int | None = None, options: Any = None) -> None:
        seen.append((int(seed if seed is not None else -1), self.config.split, repr(self.config)))
        original(self, seed=seed, options=options)

    monkeypatch.setattr(mara_env.raw_env, "reset", reset)
    return seen


def test_tuning_only_plays_training_seeds_on_the_train_split(
    tmp_path: Path, recorded_episodes: list[tuple[int, str, str]]
) -> None:
    settings_file = tmp_path / "tuned.json"
    argv = ["--quick", "--workers", "1", "--no-progress", "--output", str(tmp_path / "log")]
    argv += ["--settings-file", str(settings_file), "--agents", "lara", "laira"]
    assert tune_baselines.main(argv) == 0
    assert recorded_episodes, "no episode was played"
    assert all(is_training_seed(seed) for seed, _, _ in recorded_episodes)
    assert {split for _, split, _ in recorded_episodes} == {"train"}
    document = json.loads(settings_file.read_text())
    assert set(document["agents"]) == {"lara", "laira"}
    for name, factory in (("lara", Lara), ("laira", Laira)):
        factory(**document["agents"][name]["settings"])  # valid settings for the class
    assert "calibration" in document["agents"]["laira"]["settings"]
    report = (tmp_path / "log" / f"v{mara_env.LATEST_WORLD_VERSION}.md").read_text()
    assert "| lara |" in report and "| laira |" in report
    assert report.startswith(
        f"# Tuning of the baselines on Cluster-v{mara_env.LATEST_WORLD_VERSION}"
    )
    trials = (tmp_path / "log" / "trials.jsonl").read_text().splitlines()
    assert trials and all(json.loads(line)["seed"] < 1000 for line in trials)


def test_a_second_run_reuses_every_trial(tmp_path: Path) -> None:
    argv = ["--quick", "--workers", "1", "--no-progress", "--output", str(tmp_path)]
    argv += ["--settings-file", str(tmp_path / "tuned.json"), "--agents", "least_slack"]
    assert tune_baselines.main(argv) == 0
    before = (tmp_path / "trials.jsonl").read_text()
    assert tune_baselines.main(argv) == 0
    assert (tmp_path / "trials.jsonl").read_text() == before


@pytest.mark.parametrize(("start", "count"), [(999, 2), (1000, 1), (-1, 1), (500, 600)])
def test_tuning_seeds_refuse_evaluation_seeds(start: int, count: int) -> None:
    with pytest.raises(ValueError, match=r"reach outside the training seeds 0\.\.999"):
        tune_baselines.tuning_seeds(start, count)


def test_tuning_configs_use_the_train_split_at_the_training_load() -> None:
    configs = tune_baselines.tuning_configs()
    assert set(configs) == set(tune_baselines.WORKLOADS)
    assert {config.split for config in configs.values()} == {"train"}
    assert {config.load for config in configs.values()} == {mara_env.TRAINING_LOAD}


def test_every_search_space_builds_its_defaults_and_draws() -> None:
    rng = np.random.default_rng(0)
    for space in tune_baselines.SEARCH_SPACES.values():
        bare = dataclasses.replace(space, prepare=None)  # no calibration episodes here
        candidates = bare.candidates(4, rng)
        assert candidates[0] == {} and len(candidates) == 4
        for settings in candidates:
            bare.build(settings).reset(mara_env.get_config("tiny"), seed=0)


@pytest.mark.parametrize("world", mara_env.WORLD_VERSIONS)
def test_the_registry_builds_the_baselines_with_each_worlds_tuned_settings(world: int) -> None:
    """Every world has its settings file, in its shipped folder."""
    document = json.loads(tuned_settings_path(world).read_text())
    for name, entry in document["agents"].items():
        assert entry["settings"] == tuned_settings(name, world_version=world)
    lara = make_agent("lara", world_version=world)
    for field, value in tuned_settings("lara", world_version=world).items():
        assert getattr(lara.settings, field) == value  # type: ignore[attr-defined]
    gamma = make_agent("lara", gamma=0.5, world_version=world).settings.gamma  # type: ignore[attr-defined]
    assert gamma == 0.5


def test_the_default_world_is_the_latest_and_a_world_without_settings_is_refused() -> None:
    latest = max(mara_env.WORLD_VERSIONS)
    assert tuned_settings("lara") == tuned_settings("lara", world_version=latest)
    with pytest.raises(TunedSettingsError, match="no world version 7"):
        tuned_settings("lara", world_version=7)
    with pytest.raises(ValueError, match="world_version must be one of"):
        make_agent("lara", world_version=7)


def test_variants_are_named_and_remove_one_part() -> None:
    built = {name: make_agent(name) for name in VARIANTS}
    assert {name: agent.name for name, agent in built.items()} == {name: name for name in VARIANTS}
    assert built["lara_proportional"].settings.allocation == "proportional"  # type: ignore[attr-defined]
    assert built["sta"].settings.lookahead is False  # type: ignore[attr-defined]
    assert built["laira_no_ucb"].settings.beta == 0.0  # type: ignore[attr-defined]
    laira = make_agent("laira").settings  # type: ignore[attr-defined]
    no_pd = built["laira_no_pd"].settings  # type: ignore[attr-defined]
    assert no_pd.proportional_gain == no_pd.derivative_gain == 0.0
    assert no_pd.success_threshold == laira.success_threshold  # the tuned settings otherwise


def test_a_missing_or_corrupt_tuned_settings_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "tuned.json"
    path.write_text("{not json")
    with pytest.raises(TunedSettingsError, match="not valid JSON"):
        tuned_settings("lara", path)
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"agents": {"lara": [1, 2]}}))
    with pytest.raises(TunedSettingsError, match="must hold"):
        tuned_settings("lara", path)
    missing = tmp_path / "missing.json"
    with pytest.raises(TunedSettingsError, match=r"missing\.json is missing.*reinstall"):
        tuned_settings("lara", missing)
    mara_env.agents.tuned._load.cache_clear()


def test_the_logistic_fit_recovers_a_known_map() -> None:
    rng = np.random.default_rng(0)
    margin = rng.normal(0.0, 2.0, 20_000)
    truth = rng.random(margin.size) < 1.0 / (1.0 + np.exp(-(0.7 * margin - 0.4)))
    scale, shift = fit_logistic(margin, truth)
    assert scale == pytest.approx(0.7, abs=0.05) and shift == pytest.approx(-0.4, abs=0.05)
    with pytest.raises(ValueError, match="every outcome is the same"):
        fit_logistic(margin, np.ones_like(truth))


def test_calibration_verdicts_come_with_the_privileged_truth() -> None:
    config = mara_env.get_config("training", arrival_horizon=15)
    verdicts = collect_verdicts(Laira().settings, [config], seeds=[3])
    assert len(verdicts.margin) > 10
    assert verdicts.reports.min() >= 2 and np.isfinite(verdicts.margin).all()
    assert 0 < verdicts.feasible.mean() < 1
    assert set(verdicts.family.tolist()) <= {"tabular", "vision", "rl"}


def test_deviations_smoke_run_writes_a_paired_table(tmp_path: Path) -> None:
    argv = ["--quick", "--workers", "1", "--no-progress", "--output", str(tmp_path)]
    assert baseline_deviations.main(argv) == 0
    table = (tmp_path / "README.md").read_text()
    assert table.count("| lara |") == 3 and table.count("| laira |") == 8
    journal = TrialJournal(tmp_path / "trials.jsonl", Manifest({"code": "another"}))
    played = trials_in(tmp_path / "trials.jsonl")
    assert played and not any(journal.has(trial) for trial in played)  # keyed by the code
    lines = (tmp_path / "trials.jsonl").read_text().splitlines()
    assert all(json.loads(line)["seed"] >= 1000 for line in lines)


def trials_in(path: Path) -> list[Trial]:
    """The trials of a journal's lines."""
    names = [item.name for item in dataclasses.fields(Trial)]
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [Trial(**{name: row[name] for name in names}) for row in rows]


def test_a_trial_journal_keeps_other_codes_lines_and_refuses_foreign_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "trials.jsonl"
    journal = TrialJournal(path, Manifest({"code": "a"}))
    trial = Trial("edf", "{}", "rl", 3, preset="tiny")
    journal.append(trial, 0.5)
    assert TrialJournal(path, Manifest({"code": "a"})).score(trial) == 0.5
    assert not TrialJournal(path, Manifest({"code": "b"})).has(trial)
    assert (
        TrialJournal(path, Manifest({"code": "b"})).store.rows == journal.store.rows
    )  # kept, not reused
    with path.open("a") as handle:
        handle.write("not json\n")
    with pytest.raises(ValueError, match=r"trials\.jsonl, line 2: malformed row"):
        TrialJournal(path, Manifest({"code": "a"}))


def test_tuning_refuses_a_foreign_journal_with_the_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "trials.jsonl").write_text('{"agent": "edf"}\n')
    argv = ["--quick", "--workers", "1", "--no-progress", "--output", str(tmp_path)]
    assert tune_baselines.main([*argv, "--settings-file", str(tmp_path / "t.json")]) == 2
    assert "line 1: a row with the fields ['agent']" in capsys.readouterr().err
    assert (tmp_path / "trials.jsonl").read_text() == '{"agent": "edf"}\n'


def test_the_recorded_command_names_only_what_shapes_the_search() -> None:
    parser = tune_baselines.build_parser()
    plain = ["--no-progress", "--workers", "1", "--output", "/tmp/x", "--settings-file", "/tmp/t"]
    assert (
        tune_baselines.reproducing_command(parser.parse_args(plain))
        == "python -m mara_env.benchmarks.baselines.tuning"
    )
    shaped = parser.parse_args(["--agents", "laira", "lara", "--budget", "8", "--no-progress"])
    assert (
        tune_baselines.reproducing_command(shaped)
        == "python -m mara_env.benchmarks.baselines.tuning --agents laira lara --budget 8"
    )
    quick = parser.parse_args(["--quick", "--agents", "laira", "--output", "/tmp/x"])
    quick.budget = 2  # as main() sets it for --quick
    assert (
        tune_baselines.reproducing_command(quick)
        == "python -m mara_env.benchmarks.baselines.tuning --quick --agents laira"
    )


def test_the_trials_are_not_keyed_by_the_settings_they_choose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The tuner writes ``agents/worlds/v<N>/tuned_settings.json``; were its trials keyed by those
    files, each run would invalidate its own trials. The deviations play the tuned settings, so
    theirs are."""
    for world in mara_env.WORLD_VERSIONS:
        tuned = f"file:agents/worlds/v{world}/tuned_settings.json"
        assert tuned in trial_manifest(world).items
        assert tuned not in tune_baselines.tuning_manifest(world).items
    before = tune_baselines.tuning_manifest().digest
    lara = ROOT / "agents" / "lara.py"
    original = source_closure.read_source
    edited = lara.read_bytes() + b"\nEDITED = 1\n"
    monkeypatch.setattr(
        source_closure, "read_source", lambda path: edited if path == lara else original(path)
    )
    assert tune_baselines.tuning_manifest().digest != before  # a rule the trials run changed
