"""The oracle predictor: the core's privileged truth, its noise, and where it is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mara_env
from mara_env.agents import evaluate, make_agent
from mara_env.agents.base import EpochScheduler
from mara_env.agents.evaluation import SchedulerError
from mara_env.agents.lara import Lara
from mara_env.agents.observed_history import ObservedHistories
from mara_env.benchmarks.leaderboard import main as leaderboard_main
from mara_env.benchmarks.prediction import benchmark as prediction_benchmark
from mara_env.benchmarks.prediction.audit_episodes import AuditSettings
from mara_env.predictors.base import PredictorInputError, TaskHistory, is_privileged
from mara_env.predictors.env_histories import slotted_tasks, task_histories
from mara_env.predictors.oracle import Oracle, UnboundOracleError
from mara_env.predictors.registry import (
    PrivilegedPredictorError,
    UnknownPredictorError,
    known_predictors,
    make_predictor,
)
from mara_env.predictors.wrappers import NEED_Q50, add_predictions, decode_predictions
from mara_env.sim.observation import SlotView


def _played_epochs(seed: int, epochs: int) -> Any:
    """A ``training``-preset parallel env stepped ``epochs`` epochs with a seeded random policy,
    yielding (env, node 0's observation) at every epoch's start."""
    env = mara_env.parallel_env(config="training")
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        yield env, observations["node_0"]
        actions = {}
        for agent, observation in observations.items():
            legal = np.flatnonzero(observation["action_mask"])
            actions[agent] = int(rng.choice(legal))
        observations, *_ = env.step(actions)


def test_predictions_equal_the_cores_privileged_truth() -> None:
    """Through the observed histories a scheduler keeps, every sample of every visible task is
    the simulator's true remaining work (node-epochs x speed), at every epoch."""
    oracle, histories = Oracle(), ObservedHistories()
    checked = 0
    for epoch, (env, observation) in enumerate(_played_epochs(seed=5, epochs=60)):
        simulator = env.unwrapped.simulator
        if epoch == 0:
            oracle.bind(env)
            histories.reset(env.unwrapped.config)
        histories.update(observation["observation"])
        slots = np.flatnonzero(histories.view.occupied)
        batch = [histories.history(int(slot)) for slot in slots]
        samples = oracle.predict(batch, 8, np.random.default_rng(0)).samples
        truth = simulator.privileged_remaining_work()[slots]
        speed = simulator.state.tasks.speed[simulator.state.slots[slots]]
        expected = np.repeat((truth * speed)[:, None], 8, axis=1)
        np.testing.assert_allclose(samples, expected, rtol=1e-6)  # float32 speed in histories
        checked += len(slots)
    assert checked > 100


def test_noise_zero_is_the_oracle_and_names_round_trip() -> None:
    env = mara_env.raw_env(config="training")
    env.reset(seed=2)
    simulator = env.unwrapped.simulator
    batch = task_histories(simulator, slotted_tasks(simulator))
    exact, zero = Oracle(), make_predictor("oracle", noise=0.0)
    exact.bind(env)
    zero.bind(simulator)
    rng = np.random.default_rng(1)
    assert zero.name == "oracle"
    np.testing.assert_array_equal(
        exact.predict(batch, 6, rng).samples,
        zero.predict(batch, 6, np.random.default_rng(9)).samples,
    )
    noisy = make_predictor("oracle_noise_0.5")
    assert isinstance(noisy, Oracle) and noisy.noise == 0.5 and noisy.name == "oracle_noise_0.5"
    assert "oracle" in known_predictors(privileged=True)
    assert "oracle" not in known_predictors()


def test_noise_gives_a_calibrated_error_of_the_stated_sigma() -> None:
    """Over many tasks, the median's log error has standard deviation sigma and the truth lies
    below the 10%, 50% and 90% quantiles about that often."""
    sigma, n_samples = 0.5, 400
    errors, below = [], {0.1: [], 0.5: [], 0.9: []}
    for epoch, (env, _) in enumerate(_played_epochs(seed=8, epochs=120)):
        if epoch % 4:
            continue
        simulator = env.unwrapped.simulator
        batch = task_histories(simulator, slotted_tasks(simulator))
        oracle = Oracle(noise=sigma)  # fresh errors for every batch
        oracle.bind(simulator)
        samples = oracle.predict(batch, n_samples, np.random.default_rng(epoch)).samples
        truth = simulator.privileged_remaining_work()[[h.slot for h in batch]]
        truth = truth * [h.speed for h in batch]
        finite = np.isfinite(truth)
        assert np.isinf(samples[~finite]).all()  # "never" stays never
        median = np.median(samples[finite], axis=1)
        errors += np.log(median / truth[finite]).tolist()
        for level, hits in below.items():
            hits += (truth[finite] <= np.quantile(samples[finite], level, axis=1)).tolist()
    assert len(errors) > 100
    assert abs(np.std(errors) - sigma) < 0.1
    for level, hits in below.items():
        assert abs(np.mean(hits) - level) < 0.1, level


def test_a_tasks_error_persists_within_an_episode_and_bind_forgets_it() -> None:
    env = mara_env.raw_env(config="training")
    env.reset(seed=4)
    simulator = env.unwrapped.simulator
    batch = task_histories(simulator, slotted_tasks(simulator))
    oracle = Oracle(noise=1.0)
    oracle.bind(env)
    first = np.median(oracle.predict(batch, 2001, np.random.default_rng(0)).samples, axis=1)
    again = np.median(oracle.predict(batch, 2001, np.random.default_rng(1)).samples, axis=1)
    finite = np.isfinite(first)
    np.testing.assert_allclose(again[finite], first[finite], rtol=0.15)
    oracle.bind(env)
    fresh = np.median(oracle.predict(batch, 2001, np.random.default_rng(1)).samples, axis=1)
    assert not np.allclose(fresh[finite], first[finite], rtol=0.15)


def test_bad_use_is_refused_clearly() -> None:
    history = TaskHistory(np.arange(3.0), np.array([1.0, 0.9, 0.8]), target=0.5)
    with pytest.raises(UnboundOracleError, match="bind it first"):
        Oracle().predict([history], 4, np.random.default_rng(0))
    env = mara_env.raw_env(config="tiny")
    env.reset(seed=0)
    oracle = Oracle()
    oracle.bind(env)
    with pytest.raises(PredictorInputError, match="visible slot"):
        oracle.predict([history], 4, np.random.default_rng(0))  # slot -1: not from the env
    with pytest.raises(TypeError, match="mara_env environment"):
        oracle.bind(object())
    for noise in (-0.1, float("nan"), float("inf"), "0.5", True):
        with pytest.raises(ValueError, match="noise"):
            Oracle(noise=noise)  # type: ignore[arg-type]
    with pytest.raises(UnknownPredictorError, match="oracle_noise_<sigma>"):
        make_predictor("oracle_noise_x")


def test_benchmarks_of_observation_only_predictors_refuse_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        prediction_benchmark.main(["--predictors", "oracle", "--quick"])
    assert "privileged" in capsys.readouterr().err
    with pytest.raises(PrivilegedPredictorError, match="observation-only"):
        AuditSettings(predictors=("wls", "oracle"))


class _Sneaky(EpochScheduler):
    """Holds an oracle but does not declare itself privileged (test control)."""

    name = "sneaky"

    def __init__(self) -> None:
        super().__init__()
        self.histories = ObservedHistories()
        self.oracle = Oracle()

    def bind(self, env: Any) -> None:
        self.oracle.bind(env)

    privileged = False

    def on_reset(self) -> None:
        self.histories.reset(self.config)

    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        self.histories.update(view)
        slots = np.flatnonzero(view.occupied)
        batch = [self.histories.history(int(slot)) for slot in slots]
        self.oracle.predict(batch, 1, self.rng)
        return np.full(self.config.n_nodes, self.config.idle_action, dtype=np.int64)


def test_a_scheduler_that_does_not_declare_it_is_never_handed_the_truth() -> None:
    assert not is_privileged(_Sneaky())
    with pytest.raises(SchedulerError, match="UnboundOracleError"):
        evaluate(_Sneaky(), "tiny", seeds=[0])


def test_schedulers_fed_the_oracle_are_privileged_and_play() -> None:
    for name in ("lara_oracle", "laira_oracle"):
        agent = make_agent(name)
        assert agent.name == name and is_privileged(agent)
        rows = evaluate(agent, "training", seeds=[3])
        assert rows[0]["illegal_actions"] == 0.0 and rows[0]["completed"] > 0
    noisy = make_agent("lara_oracle", noise=0.5)
    assert noisy.name == "lara_oracle_noise_0.5"
    assert not is_privileged(make_agent("lara")) and not is_privileged(Lara())
    assert is_privileged(make_agent("clairvoyant"))


def test_the_oracle_improves_lara_on_training_episodes() -> None:
    """Known direction: LARA told the true need completes more than LARA fitting power laws
    (training preset and seeds)."""
    seeds = range(100, 106)
    own = np.mean([r["completion_rate"] for r in evaluate(make_agent("lara"), "training", seeds)])
    told = [r["completion_rate"] for r in evaluate(make_agent("lara_oracle"), "training", seeds)]
    assert np.mean(told) > own


def test_the_prediction_wrappers_bind_it_to_the_wrapped_environment() -> None:
    env = add_predictions(mara_env.parallel_env(config="training"), "oracle")
    observations, _ = env.reset(seed=6)
    for _ in range(3):
        observations, *_ = env.step({agent: 0 for agent in env.agents})
    simulator = env.unwrapped.simulator
    state = simulator.state
    predictions = decode_predictions(
        observations["node_0"]["observation"], env.unwrapped.config.n_slots
    )
    for slot, task in enumerate(state.slots.tolist()):
        if task < 0:
            continue
        need = simulator.privileged_remaining_work()[slot]
        available = state.tasks.deadline[task] - state.epoch
        expected = min(need / available, 10.0) if np.isfinite(need) else 10.0
        assert predictions.need[slot, NEED_Q50] == pytest.approx(expected, rel=1e-5)


def test_leaderboard_rows_and_tables_say_which_entries_are_privileged(tmp_path: Path) -> None:
    out = tmp_path / "board"
    args = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "1"]
    args += ["--no-progress", "--no-plots", "--workers", "1", "--output", str(out)]
    assert leaderboard_main([*args, "--agents", "edf", "clairvoyant", "lara_oracle"]) == 0
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    flags = {row["agent"]: row["privileged"] for row in rows if "privileged" in row}
    assert flags == {"edf": False, "clairvoyant": True, "lara_oracle": True}
    page = (out / "leaderboard.md").read_text()
    assert "clairvoyant (privileged)" in page and "lara_oracle (privileged)" in page
    assert "edf (privileged)" not in page and "(privileged): reads the environment's hidden" in page
    summary = json.loads((out / "leaderboard.json").read_text())
    assert {e["agent"]: e["privileged"] for e in summary["leaderboard"]}["clairvoyant"] is True
