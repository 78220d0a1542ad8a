"""Tests of the schedulers, their registry and the evaluation harness."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import mara_env
import mara_env.agents
from mara_env.agents import (
    AGENTS,
    AgentBuildError,
    AgentImportError,
    EpochScheduler,
    NotResetError,
    Observation,
    PrivilegedScheduler,
    Scheduler,
    SchedulerError,
    UniformShare,
    UnknownAgentError,
    evaluate,
    make_agent,
    mean_ci,
    scheduler_seed,
)
from mara_env.agents.assignment import keep_nodes_in_place, nodes_per_slot
from mara_env.agents.statistics import ratio_ci
from mara_env.agents.tracking import NO_TASK, SlotTracker

#: Timing keys differ between identical runs; everything else must not.
TIMING_KEYS = ("decision_ms_per_epoch", "episode_seconds")

#: Short configs covering the edge cases: one node, one node per task, more nodes than slots.
LEGALITY_CONFIGS: dict[str, dict[str, Any]] = {
    "tiny": {},
    "one_node": {"n_nodes": 1},
    "one_node_per_task": {"n_nodes": 4, "max_nodes_per_task": 1},
    "more_nodes_than_slots": {"n_nodes": 5, "n_slots": 2, "max_nodes_per_task": 2},
    "heavy": {"n_nodes": 3, "load": 2.5, "switch_cost": 0.0},
}


def tiny(**overrides: Any) -> mara_env.ClusterConfig:
    return mara_env.get_config("tiny", **overrides)


def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in rows]


# ---------------------------------------------------------------------------- legality
@pytest.mark.parametrize("case", sorted(LEGALITY_CONFIGS))
@pytest.mark.parametrize("name", list(AGENTS))
def test_agents_only_take_legal_actions(name: str, case: str) -> None:
    """In a strict environment any masked action would raise; none may be out of the space."""
    config = tiny(**LEGALITY_CONFIGS[case])
    env = mara_env.raw_env(config, strict=True)
    scheduler = make_agent(name)
    for seed in (0, 1):
        env.reset(seed=seed)
        scheduler.reset(config, seed=seed)
        if isinstance(scheduler, PrivilegedScheduler):
            scheduler.bind(env)
        for steps, (agent, node) in enumerate(mara_env.node_turns(env)):
            observation = env.observe(agent)
            action = scheduler.act(observation, node)
            assert isinstance(action, int)
            assert observation["action_mask"][action] == 1, (name, case, seed, steps)
            env.step(action)
        assert env.episode_metrics()["illegal_actions"] == 0


@pytest.mark.parametrize("name", list(AGENTS))
def test_agents_are_deterministic_given_the_seed(name: str) -> None:
    first = evaluate(make_agent(name), "tiny", seeds=[3, 4])
    second = evaluate(make_agent(name), "tiny", seeds=[3, 4])
    assert without_timing(first) == without_timing(second)


@pytest.mark.parametrize(
    "name", ["edf", "uniform", "round_robin", "successive_halving", "successive_halving_stream"]
)
def test_epoch_schedulers_run_the_same_episode_in_the_parallel_form(name: str) -> None:
    """Asked node by node in index order, an epoch scheduler plans once per epoch in the
    Parallel form too, and plays exactly the episode it plays in the AEC form."""
    config = tiny(n_nodes=3, max_nodes_per_task=2)
    aec = evaluate(make_agent(name), config, seeds=[2])[0]
    env = mara_env.parallel_env(config)
    observations, _ = env.reset(seed=2)
    scheduler = make_agent(name)
    scheduler.reset(config, seed=scheduler_seed(2))
    while env.agents:
        actions = {
            agent: scheduler.act(observations[agent], node)
            for node, agent in enumerate(env.possible_agents)
            if agent in env.agents
        }
        observations, *_ = env.step(actions)
    parallel = env.unwrapped.simulator.episode_metrics()
    for key, value in parallel.items():
        assert aec[key] == value, key


def test_schedulers_follow_the_protocol() -> None:
    for name in AGENTS:
        scheduler = make_agent(name)
        assert isinstance(scheduler, Scheduler)
        assert scheduler.name == name


def test_priority_schedulers_keep_nodes_on_their_tasks() -> None:
    """Stable assignment: EDF switches far less than round robin and random."""
    config = mara_env.get_config("training", arrival_horizon=30)
    switches = {
        name: np.mean([row["switches"] for row in evaluate(make_agent(name), config, range(3))])
        for name in ("edf", "round_robin", "random")
    }
    assert switches["edf"] < switches["round_robin"]
    assert switches["edf"] < switches["random"]


# ---------------------------------------------------------------------------- acceptance
ACCEPTANCE_SCRIPT = """
import json
from mara_env.agents import evaluate, make_agent, mean_ci
result = {}
for name in ("edf", "random"):
    rows = evaluate(make_agent(name), "training", seeds=range(10))
    summary = mean_ci(row["completion_rate"] for row in rows)
    result[name] = [summary.mean, summary.low, summary.high]
    result[name + "_arrived"] = sum(row["arrived"] for row in rows) / len(rows)
print(json.dumps(result))
"""


def test_edf_beats_random_at_the_training_config() -> None:
    """Acceptance: EDF's mean completion rate exceeds random's over 10 seeds ("training").

    Measured in a fresh interpreter, so that no environment another test built first can
    influence it (see ``test_evaluate_honours_the_load_of_its_config``).
    """
    completed = subprocess.run(
        [sys.executable, "-c", ACCEPTANCE_SCRIPT], capture_output=True, text=True, check=True
    )
    result = json.loads(completed.stdout)
    assert result["edf_arrived"] == result["random_arrived"]
    assert result["edf"][0] > result["random"][0], result


def test_evaluate_honours_the_load_of_its_config() -> None:
    light = evaluate(make_agent("edf"), tiny(load=0.5), seeds=range(5))
    heavy = evaluate(make_agent("edf"), tiny(load=4.0), seeds=range(5))
    arrived = [np.mean([row["arrived"] for row in rows]) for rows in (light, heavy)]
    assert arrived[1] > 2 * arrived[0], arrived


# ---------------------------------------------------------------------------- information boundary
class Recorder:
    """Wraps a scheduler and records every observation it is given and every action it takes."""

    def __init__(self, inner: Scheduler) -> None:
        self.inner, self.name = inner, inner.name
        self.calls: list[tuple[dict[str, np.ndarray], int, int]] = []

    def reset(self, config: mara_env.ClusterConfig, seed: int | None = None) -> None:
        self.inner.reset(config, seed)
        self.calls.append(({}, -1, -1 if seed is None else seed))

    def act(self, observation: Observation, node: int) -> int:
        action = self.inner.act(observation, node)
        copied = {key: np.array(value, copy=True) for key, value in observation.items()}
        self.calls.append((copied, node, action))
        return action


OBSERVING_AGENTS = [n for n in AGENTS if not isinstance(make_agent(n), PrivilegedScheduler)]


@pytest.mark.parametrize("name", OBSERVING_AGENTS)
def test_actions_depend_only_on_observations_and_seed(name: str) -> None:
    """Replaying the recorded observations to a fresh scheduler, with no environment at all,
    reproduces every action (privileged references excepted)."""
    recorder = Recorder(make_agent(name))
    evaluate(recorder, "tiny", seeds=[5])
    replay = make_agent(name)
    config = mara_env.get_config("tiny")
    for observation, node, action in recorder.calls:
        if node < 0:
            replay.reset(config, seed=action)
            continue
        assert replay.act(observation, node) == action


def test_agent_modules_never_reach_into_the_simulator() -> None:
    """No shipped agent module reads the simulator, its state or the privileged API, except the
    privileged references whose whole point that is: the clairvoyant reference and the offline
    optimum (``agents/optimum/``)."""
    forbidden_attributes = {"simulator", "state", "workload", "privileged_remaining_work", "tasks"}
    for path in Path(mara_env.agents.__file__).parent.rglob("*.py"):
        if path.name == "clairvoyant.py" or path.parent.name == "optimum":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                assert node.attr not in forbidden_attributes, f"{path.name}: .{node.attr}"
            if isinstance(node, ast.ImportFrom):
                assert node.module not in ("mara_env.sim.simulator", "mara_env.sim.workload"), (
                    path.name
                )
                names = {alias.name for alias in node.names}
                assert not names & {"ClusterSimulator", "privileged_remaining_work"}, path.name


class Peeker:
    """A cheating scheduler (test control): serves the slot with the least true remaining work."""

    name = "peeker"

    def __init__(self, env: mara_env.raw_env) -> None:
        self.env = env

    def reset(self, config: mara_env.ClusterConfig, seed: int | None = None) -> None:
        self.idle = config.idle_action

    def act(self, observation: dict[str, np.ndarray], node: int) -> int:
        remaining = self.env.simulator.privileged_remaining_work()
        remaining = np.where(observation["action_mask"][:-1] == 1, remaining, np.nan)
        finite = np.where(np.isfinite(remaining), remaining, np.nan)
        if np.isnan(finite).all():
            return self.idle
        return int(np.nanargmin(finite))


HIDDEN_FUTURE_SEEDS = (7, 8, 10)


def run_with_hidden_future(
    scheduler: Any, config: mara_env.ClusterConfig, seed: int, perturb: np.ndarray | None
) -> tuple[list[int], mara_env.raw_env]:
    """Play one episode; with ``perturb`` (per curve row: first index to change), the loss
    values from that index on are replaced after the reset, i.e. only the unseen future."""
    env = scheduler.env if isinstance(scheduler, Peeker) else mara_env.raw_env(config)
    env.reset(seed=seed)
    if perturb is not None:
        workload = env.simulator.workload
        curves = workload.curves.copy()
        rng = np.random.default_rng(99)
        columns = np.arange(curves.shape[1])[None, :]
        hidden = columns >= perturb[:, None]
        curves[hidden] *= rng.uniform(0.2, 3.0, size=int(hidden.sum()))
        env.simulator.workload = dataclasses.replace(workload, curves=curves)
    scheduler.reset(config, seed=seed)
    actions = []
    for agent, node in mara_env.node_turns(env):
        action = scheduler.act(env.observe(agent), node)
        actions.append(action)
        env.step(action)
    return actions, env


def first_unseen_index(env: mara_env.raw_env) -> np.ndarray:
    """Per curve row, the first index no task of the finished episode ever reported."""
    state = env.simulator.state
    rows = env.simulator.workload.curves.shape[0]
    first = np.ones(rows, dtype=np.int64)
    reached = np.floor(state.progress).astype(np.int64) + 1
    np.maximum.at(first, state.tasks.curve_row, reached)
    return first


@pytest.mark.parametrize(
    "name", ["edf", "least_slack", "successive_halving", "successive_halving_stream", "uniform"]
)
def test_hidden_future_of_curves_does_not_change_actions(name: str) -> None:
    config = mara_env.get_config("tiny")
    for seed in HIDDEN_FUTURE_SEEDS:
        baseline, env = run_with_hidden_future(make_agent(name), config, seed, None)
        unseen = first_unseen_index(env)
        perturbed, _ = run_with_hidden_future(make_agent(name), config, seed, unseen)
        assert perturbed == baseline, seed


def test_hidden_future_perturbation_is_detectable() -> None:
    """Control: a scheduler that reads the privileged API changes its actions in some of the
    same episodes."""
    config = mara_env.get_config("tiny")
    changed = []
    for seed in HIDDEN_FUTURE_SEEDS:
        peeker = Peeker(mara_env.raw_env(config))
        baseline, env = run_with_hidden_future(peeker, config, seed, None)
        unseen = first_unseen_index(env)
        peeker = Peeker(mara_env.raw_env(config))
        perturbed, _ = run_with_hidden_future(peeker, config, seed, unseen)
        changed.append(perturbed != baseline)
    assert any(changed)


# ---------------------------------------------------------------------------- registry
def test_unknown_agent_lists_known_names() -> None:
    with pytest.raises(UnknownAgentError) as error:
        make_agent("earliest_deadline")
    for name in AGENTS:
        assert name in str(error.value)
    assert "package.module:ClassName" in str(error.value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module_xyz:Agent", "Cannot import module 'no_such_module_xyz'"),
        ("mara_env.agents.priority:NoSuchClass", "has no attribute 'NoSuchClass'"),
        ("mara_env.agents.priority:", "expected 'package.module:ClassName'"),
        (":EarliestDeadlineFirst", "expected 'package.module:ClassName'"),
        ("mara_env.agents.registry:AGENTS", "not a class or factory"),
        ("mara_env.agents.tracking:SlotTracker", "not a scheduler"),
    ],
)
def test_bad_import_paths_say_what_failed(path: str, message: str) -> None:
    with pytest.raises(AgentImportError, match=message):
        make_agent(path)


def test_a_factory_that_raises_is_a_build_error() -> None:
    with pytest.raises(
        AgentBuildError, match=r"Building agent 'mara_env\.agents\.statistics:Summary' failed"
    ):
        make_agent("mara_env.agents.statistics:Summary")


def test_a_dot_for_the_colon_suggests_the_import_path() -> None:
    with pytest.raises(UnknownAgentError, match="Did you mean the import path 'my_sched:Mine'"):
        make_agent("my_sched.Mine")


def test_import_path_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = tmp_path / "my_sched_pkg.py"
    module.write_text(
        textwrap.dedent(
            """
            import numpy as np

            class LowestSlot:
                name = "lowest_slot"

                def reset(self, config, seed=None):
                    pass

                def act(self, observation, node):
                    return int(np.flatnonzero(observation["action_mask"])[0])
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    scheduler = make_agent("my_sched_pkg:LowestSlot")
    assert scheduler.name == "lowest_slot"
    rows = evaluate(scheduler, "tiny", seeds=[0])
    assert rows[0]["agent"] == "lowest_slot"
    assert rows[0]["illegal_actions"] == 0
    sys.modules.pop("my_sched_pkg", None)


def test_shipped_agents_accept_keyword_arguments() -> None:
    uniform = make_agent("uniform", quantum=2.0)
    assert isinstance(uniform, UniformShare)
    assert uniform.quantum == 2.0
    with pytest.raises(ValueError, match="rungs must be increasing"):
        make_agent("successive_halving_stream", rungs=(4.0, 2.0))


# ---------------------------------------------------------------------------- evaluation harness
class Stubborn:
    """Always returns the same action, legal or not."""

    def __init__(self, action: Any) -> None:
        self.action, self.name = action, f"stubborn_{action!r}"

    def reset(self, config: mara_env.ClusterConfig, seed: int | None = None) -> None:
        pass

    def act(self, observation: Observation, node: int) -> int:
        return cast(int, self.action)  # deliberately anything, to test the harness


def test_masked_actions_are_counted_not_fatal() -> None:
    row = evaluate(Stubborn(2), "tiny", seeds=[0])[0]
    assert row["illegal_actions"] > 0
    assert row["invalid_actions"] == 0


@pytest.mark.parametrize("action", [99, -1, np.int64(4), np.array(7)])
def test_out_of_range_actions_are_counted_not_fatal(action: Any) -> None:
    row = evaluate(Stubborn(action), "tiny", seeds=[0])[0]
    assert row["invalid_actions"] == 2 * row["epochs"]
    assert row["completed"] == 0


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (1.0, "float"),
        (np.float64(2.0), "float64"),
        ("1", "str"),
        (None, "NoneType"),
        (True, "bool"),
    ],
)
def test_actions_that_are_not_ints_stop_the_run_with_a_clear_error(action: Any, kind: str) -> None:
    """A float is a scheduler bug (not an out-of-range choice): the error names it and where."""
    with pytest.raises(
        SchedulerError,
        match=rf"returned {re.escape(repr(action))} of type {kind} at seed 0, epoch 0, node 0: "
        r"an action must be an int in \[0, 3\]",
    ):
        evaluate(Stubborn(action), "tiny", seeds=[0])


def test_scheduler_exceptions_say_where() -> None:
    class Broken(Stubborn):
        def act(self, observation: Observation, node: int) -> int:
            raise KeyError("boom")

    with pytest.raises(SchedulerError, match=r"'stubborn_0'.*KeyError.*seed 4, epoch 0, node 0"):
        evaluate(Broken(0), "tiny", seeds=[4])


def test_evaluate_reports_metrics_and_scheduler_seeds_differ_from_env_seeds() -> None:
    rows = evaluate(make_agent("fcfs"), mara_env.get_config("tiny"), seeds=range(3))
    assert [row["seed"] for row in rows] == [0, 1, 2]
    for key in (
        "completion_rate",
        "completed",
        "arrived",
        "utilisation",
        "switches",
        "wasted_node_epochs",
        "illegal_actions",
        "decision_ms_per_epoch",
    ):
        assert key in rows[0]
    assert scheduler_seed(0) != 0


def test_evaluate_with_a_trace_source_and_progress_bar() -> None:
    source = mara_env.SyntheticTraceSource(n_curves=30, length=60)
    config = mara_env.get_config("tiny", workload="synthetic")
    rows = evaluate(
        make_agent("least_slack"), config, seeds=[0, 1], trace_source=source, progress=True
    )
    assert [row["agent"] for row in rows] == ["least_slack", "least_slack"]


def test_evaluate_rejects_unknown_presets() -> None:
    with pytest.raises(mara_env.ConfigError, match="Known presets"):
        evaluate(make_agent("edf"), "no_such_preset", seeds=[0])


# ---------------------------------------------------------------------------- base class
def test_epoch_scheduler_errors() -> None:
    class WrongShape(EpochScheduler):
        name = "wrong_shape"

        def plan(self, view: Any, mask: np.ndarray) -> np.ndarray:
            return np.zeros(1, dtype=np.int64)

    env = mara_env.raw_env("tiny")
    env.reset(seed=0)
    scheduler = WrongShape()
    with pytest.raises(NotResetError, match="call reset"):
        scheduler.act(env.observe("node_0"), 0)
    scheduler.reset(env.config, seed=0)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        scheduler.act(env.observe("node_0"), 0)
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        scheduler.act(env.observe("node_0"), 5)


def test_planned_actions_that_become_masked_turn_into_idle() -> None:
    """Two nodes planned onto one task with max_nodes_per_task=1: the second one idles."""

    class Crowd(EpochScheduler):
        name = "crowd"

        def plan(self, view: Any, mask: np.ndarray) -> np.ndarray:
            slot = int(np.flatnonzero(mask[:-1])[0]) if mask[:-1].any() else self.config.n_slots
            return np.full(self.config.n_nodes, slot, dtype=np.int64)

    rows = evaluate(Crowd(), tiny(max_nodes_per_task=1), seeds=[0, 1])
    assert all(row["illegal_actions"] == 0 for row in rows)


def test_every_public_name_is_documented() -> None:
    for name in mara_env.agents.__all__:
        obj = getattr(mara_env.agents, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name


# ---------------------------------------------------------------------------- helpers
def test_nodes_are_dealt_in_priority_order_and_wrap_around() -> None:
    assert nodes_per_slot(np.array([3, 1]), 5, 4, None).tolist() == [0, 2, 0, 3]
    assert nodes_per_slot(np.array([3, 1]), 5, 4, 2).tolist() == [0, 2, 0, 2]
    assert nodes_per_slot(np.array([3, 1, 0]), 2, 4, None).tolist() == [0, 1, 0, 1]
    assert nodes_per_slot(np.array([], dtype=np.int64), 2, 4, None).tolist() == [0, 0, 0, 0]


def test_nodes_stay_on_their_task() -> None:
    counts = np.array([1, 0, 2, 0])
    previous = np.array([2, 4, 0, 2])  # node 1 idled; nodes 0 and 3 trained slot 2
    actions = keep_nodes_in_place(counts, previous, np.array([2, 0]), idle=4)
    assert actions.tolist() == [2, 4, 0, 2]
    actions = keep_nodes_in_place(counts, np.array([4, 4, 4, 4]), np.array([2, 0]), idle=4)
    assert actions.tolist() == [2, 2, 0, 4]


def test_slot_tracker_follows_the_true_tasks() -> None:
    """The tracker's ids map one-to-one onto the simulator's task ids over a whole episode."""
    env = mara_env.raw_env("tiny", n_slots=2, load=2.0, arrival_horizon=60)
    env.reset(seed=11)
    tracker = SlotTracker()
    tracker.reset(env.config.n_slots)
    mapping: dict[int, int] = {}
    rng = np.random.default_rng(0)
    for agent, node in mara_env.node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            view = mara_env.decode_observation(observation["observation"], env.config)
            tracker.update(view)
            for slot, task in enumerate(env.simulator.state.slots.tolist()):
                ours = int(tracker.task_ids[slot])
                assert (ours == NO_TASK) == (task < 0)
                if task >= 0:
                    assert mapping.setdefault(ours, task) == task
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert len(set(mapping.values())) == len(mapping) > 3


def test_mean_ci() -> None:
    summary = mean_ci([0.0, 1.0] * 10)
    assert summary.mean == pytest.approx(0.5)
    assert 0.25 < summary.low < 0.5 < summary.high < 0.75
    assert mean_ci([0.3]).low == mean_ci([0.3]).high == 0.3
    assert f"{mean_ci([0.25, 0.25]):.2f}" == "0.25 ± 0.00"
    with pytest.raises(ValueError, match="no values"):
        mean_ci([])
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, float("nan")])


def test_ratio_ci_resamples_clusters_and_reduces_to_mean_ci() -> None:
    values = [0.1, 0.7, 0.4, 0.9, 0.2]
    assert ratio_ci(values, [1.0] * 5) == mean_ci(values)
    # One cluster of 9 wrong verdicts out of 10 among nine clean ones: the pooled rate is 9/19,
    # and resampling whole clusters gives a far wider interval than 19 independent verdicts.
    clustered = ratio_ci([9] + [0] * 9, [10] + [1] * 9)
    assert clustered.mean == pytest.approx(9 / 19) and clustered.n == 10
    pooled = ratio_ci([1] * 9 + [0] * 10, [1] * 19)
    assert clustered.high - clustered.low > pooled.high - pooled.low
    for numerators, denominators in (([], []), ([1], [1, 2]), ([1], [0]), ([float("nan")], [1])):
        with pytest.raises(ValueError, match="ratio_ci"):
            ratio_ci(numerators, denominators)
