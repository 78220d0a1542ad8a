"""Smoke tests of the MARA benchmark scripts on tiny budgets."""

from __future__ import annotations

import copy
import csv
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import mara_env
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.policy import MaraPolicy
from mara_env.benchmarks.mara import compare as mara_compare
from mara_env.benchmarks.mara import evaluate as mara_evaluate
from mara_env.benchmarks.mara import evaluation_tables
from mara_env.benchmarks.mara import timing as mara_timing
from mara_env.benchmarks.mara import train as train_mara
from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
from mara_env.benchmarks.mara.trainer import ActingCopy, Trainer, learner_device
from mara_env.benchmarks.mara.validation import tune_temperature

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def quick_checkpoint(tmp_path_factory: pytest.TempPathFactory, one_torch_thread: None) -> Path:
    out = tmp_path_factory.mktemp("mara") / "quick.pt"
    assert train_mara.main(["--quick", "--output", str(out), "--no-progress"]) == 0
    return out


def test_quick_training_writes_checkpoint_card_and_log(quick_checkpoint: Path) -> None:
    assert quick_checkpoint.with_suffix(".json").is_file()
    with quick_checkpoint.with_suffix(".csv").open() as handle:
        phases = {row["phase"] for row in csv.DictReader(handle)}
    assert phases == {"imitation", "ppo"}
    assert Mara.load(quick_checkpoint).policy.config.width == QUICK["width"]


def test_quick_card_records_temperature_throughput_and_confirmation(quick_checkpoint: Path) -> None:
    card = json.loads(quick_checkpoint.with_suffix(".json").read_text())
    facts = card["facts"]
    assert card["config"]["temperature"] == facts["settings"]["temperature"] == 0.35
    assert facts["cluster_epochs_per_second"] > 0
    assert set(facts["phases"]) == {"imitation", "ppo"}
    assert facts["confirmation"]["seeds"].startswith("950")
    assert "chosen_minus_start" in facts["confirmation"]


def test_ppo_from_a_warm_start_checkpoint(tmp_path: Path, quick_checkpoint: Path) -> None:
    out = tmp_path / "ppo.pt"
    argv = ["--quick", "--init", str(quick_checkpoint), "--dagger-rounds", "0"]
    assert train_mara.main([*argv, "--output", str(out), "--no-progress"]) == 0
    facts = json.loads(out.with_suffix(".json").read_text())["facts"]
    assert facts["init"]["sha256"] == Mara.load(quick_checkpoint).checkpoint_sha256
    with out.with_suffix(".csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["phase"] for row in rows} == {"ppo"}
    assert rows[0]["validation_completion"]  # the warm start is scored as update 0
    with pytest.raises(SystemExit, match="network"):
        train_mara.main([*argv, "--width", "32", "--output", str(tmp_path / "bad.pt")])
    with pytest.raises(SystemExit, match="temperature"):
        train_mara.main([*argv, "--temperature", "1.0", "--output", str(tmp_path / "bad.pt")])


def test_evaluation_resumes_and_summarises(tmp_path: Path, quick_checkpoint: Path) -> None:
    out = tmp_path / "evaluation.csv"
    argv = ["--agents", "edf", str(quick_checkpoint), "--workloads", "rl", "--loads", "1.4"]
    argv += ["--seeds", "1", "--output", str(out)]
    assert mara_evaluate.main(argv) == 0
    assert mara_evaluate.main(argv) == 0  # resumes: nothing new to run
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["agent"] for row in rows) == ["edf", "quick"]
    assert all(row["seed"] == "1000" for row in rows)
    table = out.with_suffix(".md").read_text()
    assert "| quick | rl | 1.4 | 1 |" in table
    assert mara_evaluate.main([*argv, "--paired-with", "edf"]) == 0
    edf, quick = (float(row["completion_rate"]) for row in sorted(rows, key=lambda r: r["agent"]))
    assert f"| quick | 1.4 | 1 | {quick - edf:+.3f} |" in out.with_suffix(".md").read_text()
    with pytest.raises(SystemExit, match="no rows"):
        mara_evaluate.main([*argv, "--paired-with", "nobody", "--seeds", "2"])
    assert len(out.read_text().splitlines()) == 3  # refused before playing the new seed
    recipes = ["--training-seeds", "quick", "--recipe-name", "q", "--versus", "e=edf"]
    assert mara_evaluate.main([*argv, *recipes]) == 0
    assert f"| e | 1 and 1 | {quick - edf:+.3f} [" in out.with_suffix(".md").read_text()
    with pytest.raises(SystemExit):
        mara_evaluate.main([*argv, "--versus", "e=edf"])  # no --training-seeds recipe
    assert {row["checkpoint"] for row in rows} == {
        "",
        mara_evaluate.build(str(quick_checkpoint))[2],
    }


def test_evaluation_refuses_rows_of_another_checkpoint(
    tmp_path: Path, quick_checkpoint: Path
) -> None:
    checkpoint = tmp_path / "quick.pt"
    agent = Mara.load(quick_checkpoint)
    agent.save(checkpoint)
    out = tmp_path / "evaluation.csv"
    argv = ["--agents", str(checkpoint), "--workloads", "rl", "--loads", "1.4"]
    argv += ["--seeds", "1", "--output", str(out)]
    assert mara_evaluate.main(argv) == 0
    before = out.read_text()
    torch.nn.init.zeros_(next(agent.policy.parameters()))
    agent.save(checkpoint)  # same name, other weights
    with pytest.raises(SystemExit, match="from checkpoint"):
        mara_evaluate.main(argv)
    assert out.read_text() == before


def test_timing_splits_features_and_policy(quick_checkpoint: Path) -> None:
    timed = Mara.load(quick_checkpoint)
    features, policy = mara_timing.time_epochs(timed, "tiny", [0])
    assert (features >= 0).all() and (policy > 0).all()
    assert "begin_epoch" not in vars(timed)  # the timing wrappers are gone
    # the timed episode is the one the deployed agent plays: one decision per epoch
    deployed = Mara.load(quick_checkpoint)
    env = mara_env.raw_env("tiny")
    env.reset(seed=0)
    deployed.reset(env.config, seed=0)
    for name, node in mara_env.node_turns(env):
        env.step(deployed.act(env.observe(name), node))
    assert len(features) == len(policy) == env.simulator.state.epoch
    assert torch.equal(timed.draws(), deployed.draws())  # the same sampling draws were used


def test_timing_script_reports_the_first_epoch_apart(
    quick_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--checkpoint", str(quick_checkpoint), "--config", "tiny", "--seeds", "0"]
    assert mara_timing.main(argv) == 0
    printed = capsys.readouterr().out
    first, counted = printed.splitlines()[:2]
    assert first.startswith("first epoch ") and "left out below" in first
    features, _ = mara_timing.time_epochs(Mara.load(quick_checkpoint), "tiny", [0])
    assert counted.startswith(f"{len(features) - 1} further epochs")


def test_compare_pairs_checkpoints_on_training_episodes(
    quick_checkpoint: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(quick_checkpoint), str(quick_checkpoint), "--preset", "tiny", "--seeds", "2"]
    assert mara_compare.main([*argv, "--first-seed", "960"]) == 0
    printed = capsys.readouterr().out
    assert "seeds 960-961 x 3 workloads (6 paired episodes)" in printed
    assert printed.rstrip().endswith("+0.0 points [+0.0, +0.0] (95% CI)")  # same weights, same play
    rates = mara_compare.completion_rates(quick_checkpoint, "tiny", [960, 961])
    assert f"completion rate {rates.mean():.4f}" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mara", "mara_imitation", "--first-seed", "995", "--seeds", "10"], "training seeds"),
        (["mara", "no_such.pt"], "neither a shipped MARA agent"),
        (["mara"], "at least two checkpoints"),
    ],
)
def test_compare_refuses_bad_input(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        mara_compare.main(argv)
    assert message in capsys.readouterr().err


def test_gap_closed_known_answer(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.csv"
    rng = np.random.default_rng(0)
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=mara_evaluate.FIELDS)
        writer.writeheader()
        for workload in ("rl", "vision"):
            for seed in range(1000, 1006):
                low, high = rng.uniform(0.0, 0.4), rng.uniform(0.6, 1.0)
                for agent, rate in (("low", low), ("high", high), ("mid", (low + high) / 2)):
                    writer.writerow(
                        {
                            "agent": agent,
                            "checkpoint": "",
                            "workload": workload,
                            "load": 1.4,
                            "seed": seed,
                            "completion_rate": rate,
                            "decision_ms_per_epoch": 1.0,
                        }
                    )
    # Halfway on every episode: half of the gap under every resample.
    scores = mara_evaluate.completion_rates(out)
    assert "| mid | 1.4 | 0.500 | [0.500, 0.500] |" in evaluation_tables.gap_closed(
        scores, "low", "high"
    )
    with pytest.raises(ValueError, match="No rows"):
        evaluation_tables.gap_closed(scores, "low", "nobody")


def test_evaluation_refuses_rows_made_by_other_code(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.csv"
    argv = ["--agents", "edf", "--workloads", "rl", "--loads", "1.4", "--seeds", "1"]
    argv += ["--output", str(out)]
    assert mara_evaluate.main(argv) == 0
    label, _, _, code = mara_evaluate.build("edf")
    text = out.read_text()
    assert code in text and label == "edf"
    out.write_text(text.replace(code, "0" * len(code)))  # as if EDF's code had changed since
    before = out.read_text()
    with pytest.raises(SystemExit, match="other code"):
        mara_evaluate.main(argv)
    assert out.read_text() == before
    assert mara_evaluate.build("edf")[3] != mara_evaluate.build("lara")[3]


def test_evaluation_refuses_a_file_with_other_columns(tmp_path: Path) -> None:
    out = tmp_path / "evaluation.csv"
    old = "agent,checkpoint,workload,load,seed,completion_rate,decision_ms_per_epoch\n"
    out.write_text(old + "edf,,rl,1.4,1000,0.5,1.0\n")
    argv = ["--agents", "edf", "--workloads", "rl", "--loads", "1.4", "--seeds", "1"]
    with pytest.raises(SystemExit, match="another --output"):
        mara_evaluate.main([*argv, "--output", str(out)])
    assert out.read_text() == old + "edf,,rl,1.4,1000,0.5,1.0\n"


def test_validation_in_a_worker_changes_nothing_but_time(
    tmp_path: Path, quick_checkpoint: Path
) -> None:
    """The fixture's run played its validations in a worker process (the default); played here
    instead, the same run logs the same rows and keeps the same weights."""
    out = tmp_path / "here.pt"
    argv = ["--quick", "--validation-workers", "0", "--output", str(out), "--no-progress"]
    assert train_mara.main(argv) == 0
    timing = {"wall_seconds", "epochs_per_second"}

    def log_rows(path: Path) -> list[dict[str, str]]:
        with path.with_suffix(".csv").open() as handle:
            return [
                {k: v for k, v in row.items() if k not in timing} for row in csv.DictReader(handle)
            ]

    assert log_rows(out) == log_rows(quick_checkpoint)
    worker_card = json.loads(quick_checkpoint.with_suffix(".json").read_text())
    assert worker_card["facts"]["validation_workers"] == 1
    here, there = (
        Mara.load(out).policy.state_dict(),
        Mara.load(quick_checkpoint).policy.state_dict(),
    )
    assert all(torch.equal(here[key], there[key]) for key in here)


def test_a_late_validation_score_keeps_the_weights_it_scored(tmp_path: Path) -> None:
    from concurrent.futures import Future

    settings = TrainSettings(**QUICK)
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    selection = trainer.selection
    pending: Future[list[float]] = Future()
    selection.player.submit = lambda state, seeds: pending  # type: ignore[method-assign]
    scored = {k: v.clone() for k, v in trainer.policy.state_dict().items()}
    trainer.log(validate=True, phase="ppo", update=3)
    trainer.log(phase="ppo", update=4)
    with torch.no_grad():  # the next update moves the weights before the score is in
        for parameter in trainer.policy.parameters():
            parameter.add_(1.0)
    selection.settle()
    assert trainer.log_path.read_text().count("\n") == 1  # both rows wait for the score
    pending.set_result([0.5, 0.7])
    selection.settle()
    assert selection.best_update == 3 and selection.best_validation == pytest.approx(0.6)
    assert all(torch.equal(selection.best_state[k], scored[k]) for k in scored)
    with trainer.log_path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["update"], row["validation_completion"]) for row in rows] == [
        ("3", "0.6"),
        ("4", ""),
    ]


def test_temperature_diagnostic_scores_each_temperature(quick_checkpoint: Path) -> None:
    scores = tune_temperature(
        quick_checkpoint, temperatures=(1.0, 0.35), seeds=(910, 911), preset="tiny"
    )
    assert set(scores) == {"1.0", "0.35"}
    assert all(0.0 <= score <= 1.0 for score in scores.values())


def trained_run(out: Path, argv: list[str]) -> tuple[list[dict], dict, dict]:
    """Train with ``argv`` into ``out``; the log's rows (without timings), the kept weights and
    the card's facts."""
    assert train_mara.main([*argv, "--output", str(out), "--no-progress"]) == 0
    with out.with_suffix(".csv").open() as handle:
        rows = [
            {k: v for k, v in row.items() if k not in {"wall_seconds", "epochs_per_second"}}
            for row in csv.DictReader(handle)
        ]
    card = json.loads(out.with_suffix(".json").read_text())["facts"]
    return rows, Mara.load(out).policy.state_dict(), card


def test_lagged_rollouts_in_a_worker_change_nothing_but_time(tmp_path: Path) -> None:
    """With ``--rollout-lag 1`` the rollouts are played one update behind the learner; played in
    a worker process or in this one, the run logs the same rows and keeps the same weights."""
    argv = ["--quick", "--dagger-rounds", "0", "--updates", "4", "--rollout-lag", "1"]
    runs = {
        workers: trained_run(
            tmp_path / f"lagged_{workers}.pt", [*argv, "--rollout-workers", workers]
        )
        for workers in ("1", "0")
    }
    (rows, weights, card), (rows_here, weights_here, card_here) = runs["1"], runs["0"]
    assert rows == rows_here and [row["update"] for row in rows if row["phase"] == "ppo"][-1] == "4"
    assert all(torch.equal(weights[key], weights_here[key]) for key in weights)
    assert card["settings"]["rollout_lag"] == 1
    assert (card["rollout_workers"], card_here["rollout_workers"]) == (1, 0)
    with pytest.raises(SystemExit, match="rollout_lag"):
        train_mara.main(["--quick", "--rollout-lag", "2", "--output", str(tmp_path / "bad.pt")])


def test_on_policy_rollouts_shared_by_two_workers_repeat_and_say_where_the_time_went(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """With ``--rollout-lag 0 --rollout-workers 2`` two processes play each update's clusters
    with the current weights; the same seed gives the same run, and the card and the printout
    say where PPO's time went."""
    argv = ["--quick", "--dagger-rounds", "0", "--updates", "3", "--rollout-workers", "2"]
    runs = [trained_run(tmp_path / f"{name}.pt", argv) for name in ("first", "again")]
    (rows, weights, card), (rows_again, weights_again, _) = runs
    assert rows == rows_again and all(torch.equal(weights[k], weights_again[k]) for k in weights)
    assert card["settings"]["rollout_lag"] == 0 and card["rollout_workers"] == 2
    seconds = card["ppo"]["seconds"]
    assert set(seconds["learner"]) >= {"rollouts", "critic", "policy update"}
    assert set(seconds["rollouts"]) == {"features", "policy", "simulation"}
    assert sum(seconds["rollouts"].values()) > 0 and sum(seconds["learner"].values()) > 0
    assert "Where PPO's" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="rollout_workers must be between 0 and the run's 3"):
        train_mara.main(["--quick", "--rollout-workers", "4", "--output", str(tmp_path / "bad.pt")])


@pytest.mark.parametrize(
    "argv",
    [
        ["--quick", "--dagger-rounds", "2", "--updates", "3"],  # imitation, then PPO here
        ["--quick", "--dagger-rounds", "0", "--updates", "3", "--rollout-lag", "1",
         "--rollout-workers", "0"],  # rollouts one update behind
    ],
)  # fmt: skip
def test_a_learner_apart_from_its_acting_copy_trains_the_same_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    """A learner on a GPU trains while a CPU copy of the policy (and of the critic) plays the
    episodes, synchronised before every rollout, validation, confirmation and save. Forcing
    that copy on the CPU too must give the run of one shared network: a missed
    synchronisation would play stale weights and change the run."""
    argv = [*argv, "--validation-workers", "0"]
    rows, weights, card = trained_run(tmp_path / "shared.pt", argv)
    made = ActingCopy.__init__

    def always_a_copy(self: ActingCopy, network: MaraPolicy) -> None:
        made(self, network)
        self.copy = copy.deepcopy(network).eval()

    monkeypatch.setattr(ActingCopy, "__init__", always_a_copy)
    rows_apart, weights_apart, _ = trained_run(tmp_path / "apart.pt", argv)
    assert rows == rows_apart
    assert all(torch.equal(weights[key], weights_apart[key]) for key in weights)
    assert card["learner_device"] == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_cuda_learner_is_refused_where_torch_sees_none(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="sees no CUDA device"):
        train_mara.main(["--quick", "--device", "cuda", "--output", str(tmp_path / "never.pt")])
    assert learner_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match="device must be one of"):
        learner_device("gpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_learner_writes_a_checkpoint_that_loads_on_the_cpu(tmp_path: Path) -> None:
    argv = ["--quick", "--updates", "2", "--device", "cuda", "--validation-workers", "0"]
    _, weights, card = trained_run(tmp_path / "cuda.pt", argv)
    assert card["learner_device"].startswith("cuda")
    assert all(tensor.device.type == "cpu" for tensor in weights.values())


def test_ray_rollout_workers_give_the_process_backends_run(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    argv = ["--quick", "--dagger-rounds", "0", "--updates", "3", "--rollout-workers", "2"]
    rows, weights, _ = trained_run(tmp_path / "process.pt", argv)
    rows_ray, weights_ray, card = trained_run(tmp_path / "ray.pt", [*argv, "--backend", "ray"])
    assert rows == rows_ray and all(torch.equal(weights[k], weights_ray[k]) for k in weights)
    assert (card["rollout_backend"], card["rollout_workers"]) == ("ray", 2)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ray-address", "auto"], "--ray-address needs --backend ray"),
        (["--backend", "ray", "--rollout-workers", "1"], "the rollouts play in this process"),
    ],
)
def test_ray_options_that_cannot_apply_are_refused(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    with pytest.raises(SystemExit, match=message):
        train_mara.main(["--quick", *argv, "--output", str(tmp_path / "never.pt")])
    assert not (tmp_path / "never.pt").exists()


def test_shards_split_the_clusters_and_merge_back_in_the_plan_numbering() -> None:
    from mara_env import get_config
    from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
    from mara_env.benchmarks.mara.rollout_worker import RolloutPlan, RolloutWorker, merge_rollouts

    network = PolicyConfig(width=16, layers=1, heads=2)
    plan = RolloutPlan((get_config("tiny"),) * 3, network, "wls", 4, 0.35, seed=0, epochs=40)
    shards = [plan.shard(index, 2) for index in range(2)]
    assert [len(shard.configs) for shard in shards] == [2, 1]
    assert shards[0].seed != shards[1].seed != plan.seed
    state = MaraPolicy(network).state_dict()
    played = []
    for shard in shards:
        worker = RolloutWorker(shard, workers=0)
        played.append(worker.submit(state).result())
        worker.close()
    merged = merge_rollouts(played)
    assert [len(step.reward) for step in merged.steps] == [3] * 40
    assert torch.equal(merged.steps[5].actions[2], played[1].steps[5].actions[0])
    assert set(merged.seconds) == {"features", "policy", "simulation"}
    # episodes that ended: shard k's cluster i is the plan's cluster k + 2 i
    ended = [
        replace(played[0], finished=[{"cluster": 1}]),
        replace(played[1], finished=[{"cluster": 0}]),
    ]
    assert [row["cluster"] for row in merge_rollouts(ended).finished] == [2, 1]


def test_rollout_throughput_compares_worker_counts_and_keeps_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from mara_env.benchmarks.mara import rollout_throughput

    page = tmp_path / "rollouts.md"
    argv = ["--preset", "tiny", "--clusters", "3", "--epochs", "4", "--rollouts", "1"]
    argv += ["--repeats", "1", "--workers", "1", "2", "--output", str(page)]
    assert rollout_throughput.main(argv) == 0
    out = capsys.readouterr().out
    assert "3 clusters x 4 epochs per rollout" in out
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "2 "))]
    assert [row[0] for row in rows] == ["1", "2"]
    assert rows[0][4:] == ["1.00x", "1.00x", "[1.00x,", "1.00x]"]  # the reference, every round
    assert out.count("simulation") == 2 and out.strip() in page.read_text()
    with pytest.raises(SystemExit):
        rollout_throughput.main(["--clusters", "3", "--workers", "4"])
    assert "between 1 and the 3 clusters" in capsys.readouterr().err


def test_joint_trust_region_on_v2_logs_the_joint_move_and_the_warm_up(
    tmp_path: Path, quick_checkpoint: Path
) -> None:
    out = tmp_path / "joint.pt"
    argv = ["--quick", "--init", str(quick_checkpoint), "--dagger-rounds", "0", "--updates", "4"]
    argv += ["--trust-region", "joint", "--world-version", "2", "--value-warmup", "3"]
    argv += ["--value-warmup-loss", "1e9"]  # any loss ends the warm-up at once
    assert train_mara.main([*argv, "--output", str(out), "--no-progress"]) == 0
    with out.with_suffix(".csv").open() as handle:
        updates = [row for row in csv.DictReader(handle) if row["update"] not in ("", "0")]
    assert [row["warmup"] for row in updates[:2]] == ["1", "0"]
    trained = [row for row in updates if row["warmup"] == "0" and row["joint_kl"]]
    assert trained and all(float(row["joint_kl"]) >= 0 for row in trained)
    assert all(float(row["joint_ratio_max"]) > 0 for row in trained)
    facts = json.loads(out.with_suffix(".json").read_text())["facts"]
    assert facts["settings"]["trust_region"] == "joint"
    assert facts["settings"]["world_version"] == 2


def test_critic_warm_up_ends_at_its_stated_loss_or_its_cap() -> None:
    from mara_env.benchmarks.mara.ppo import critic_ready

    capped = TrainSettings(value_warmup=3)
    assert [critic_ready(capped, update, {"value_loss": 0.0}) for update in (1, 2, 3)] == [
        False,
        False,
        True,
    ]
    stated = TrainSettings(value_warmup=10, value_warmup_loss=0.2)
    assert not critic_ready(stated, 1, {"value_loss": 0.5})
    assert critic_ready(stated, 2, {"value_loss": 0.19})
    with pytest.raises(ValueError, match="trust_region"):
        TrainSettings(trust_region="global")


def test_trust_region_summary_refuses_a_log_without_the_joint_move(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mara_env.benchmarks.mara import trust_region

    old = Path("benchmarks/results/v1/mara/mara_ppo_training.csv")  # written before the column
    with pytest.raises(SystemExit):
        trust_region.main([str(old)])
    assert "no PPO update with a joint_kl value" in capsys.readouterr().err
    new = Path("benchmarks/results/v2/mara/mara_ppo_per_node_training.csv")
    assert trust_region.main([str(new)]) == 0
    assert "joint KL max" in capsys.readouterr().out


def test_the_reach_planner_can_teach_imitation(tmp_path: Path) -> None:
    from mara_env.benchmarks.mara.imitation import imitate
    from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
    from mara_env.benchmarks.mara.trainer import Trainer

    settings = TrainSettings(
        **{**QUICK, "predictor": "wls", "dagger_epochs": 2, "teacher": "reach_planner"}
    )
    trainer = Trainer(settings, tmp_path / "log.csv", progress=False)
    try:
        imitate(trainer)
        assert trainer.env_epochs > 0 and trainer.selection.best_round == 0
    finally:
        trainer.close()
    with pytest.raises(ValueError, match="teacher must be one of"):
        TrainSettings(**{**QUICK, "teacher": "edf"})
