"""Known-answer tests: hand-built scenarios whose outcome is computed by hand.

Every scenario runs a :class:`ClusterSimulator` on :data:`conftest.LINEAR_CURVE` (loss
``1 - k / 10`` at curve step ``k``) with explicit tasks, so the epoch at which anything happens
follows from the rules in the simulator's docstring with pencil and paper.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import mara_env
from conftest import LINEAR_CURVE, ExactTraceSource, make_tasks, synthetic_config
from mara_env import ClusterSimulator, CurvePool, SyntheticTraceSource, get_config
from mara_env.sim.simulator import ACTIVE, COMPLETED, EXPIRED, FUTURE, NO_TASK
from mara_env.sim.workload import build_workload, sample_tasks

#: Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

SOURCE = ExactTraceSource({"synthetic": [LINEAR_CURVE]})
#: The same curve for tests that build an environment, whose own reset() draws random tasks
#: before the test installs its explicit ones (a high load makes that draw non-empty).
ENV_SOURCE = ExactTraceSource({"synthetic": [LINEAR_CURVE, LINEAR_CURVE[:5]]})


def fresh_source(seed: int) -> SyntheticTraceSource:
    """A synthetic source no other test uses, so no cached workload is shared with it."""
    return SyntheticTraceSource(n_curves=80, length=60, seed=seed)


def simulator(tasks: Any, **config: Any) -> ClusterSimulator:
    """A simulator over LINEAR_CURVE with the given tasks (1 node, no switch cost by default;
    the arrival horizon ends right after the last given arrival, so that the episode ends once
    the given tasks are resolved)."""
    defaults: dict[str, Any] = {
        "n_nodes": 1,
        "n_slots": 4,
        "switch_cost": 0.0,
        "alpha": 1.0,
        "arrival_horizon": int(tasks.arrival.max(initial=0)) + 1,
    }
    defaults.update(config)
    sim = ClusterSimulator(synthetic_config(**defaults), trace_source=SOURCE)
    sim.reset(np.random.default_rng(0), tasks=tasks)
    return sim


def run(sim: ClusterSimulator, choice: list[int], epochs: int) -> list[Any]:
    """Advance ``epochs`` epochs with the same node choices; return the events."""
    return [sim.advance(np.array(choice)) for _ in range(epochs)]


def idle(sim: ClusterSimulator) -> list[int]:
    return [sim.config.idle_action] * sim.config.n_nodes


# ---------------------------------------------------------------------------- completion
@pytest.mark.parametrize(
    ("speed", "epochs"),
    [(1.0, 5), (2.0, 3), (0.75, 7), (0.5, 10), (3.0, 2), (5.0, 1)],
)
def test_one_task_one_node_completes_at_the_hand_computed_epoch(speed: float, epochs: int) -> None:
    """Target 0.55 is first reported at curve step 5, reached after ceil(5 / speed) epochs."""
    sim = simulator(make_tasks(speed=speed))
    events = run(sim, [0], epochs - 1)
    assert not any(e.completed for e in events)
    assert sim.state.status[0] == ACTIVE
    assert sim.state.loss[0] == LINEAR_CURVE[math.floor((epochs - 1) * speed)]
    last = sim.advance(np.array([0]))
    assert last.completed == (0,) and last.epoch == epochs - 1
    assert sim.state.status[0] == COMPLETED
    assert sim.state.end_epoch[0] == epochs
    assert sim.state.work[0] == epochs
    assert sim.terminated


def test_a_target_equal_to_a_curve_value_completes_at_that_step() -> None:
    """Completion is loss <= target: a target of exactly 0.5 completes at step 5."""
    sim = simulator(make_tasks(target=LINEAR_CURVE[5]))
    run(sim, [0], 4)
    assert sim.state.status[0] == ACTIVE
    assert sim.advance(np.array([0])).completed == (0,)


def test_completion_reward_counts_tasks_completed_in_the_epoch() -> None:
    """Two tasks finishing in the same epoch make that epoch's reward 2 (shaping off)."""
    env = mara_env.parallel_env(
        synthetic_config(
            n_nodes=2, n_slots=2, switch_cost=0.0, alpha=1.0, arrival_horizon=1, load=20.0
        ),
        trace_source=ENV_SOURCE,
    )
    env.reset(seed=0)
    env.simulator.reset(np.random.default_rng(0), tasks=make_tasks(2))
    env.builder.refresh()
    rewards = [env.step({"node_0": 0, "node_1": 1})[1]["node_0"] for _ in range(5)]
    assert rewards == [0.0, 0.0, 0.0, 0.0, 2.0]
    assert not env.agents


# ---------------------------------------------------------------------------- alpha
@pytest.mark.parametrize(("alpha", "n_nodes"), [(0.5, 2), (0.5, 4), (1.0, 3), (0.8, 2)])
def test_k_nodes_advance_speed_times_k_to_the_alpha(alpha: float, n_nodes: int) -> None:
    """k nodes on one task (no switch cost) advance it speed * k**alpha curve steps an epoch."""
    speed = 0.25
    sim = simulator(make_tasks(speed=speed, alpha=alpha, target=0.05), n_nodes=n_nodes)
    for epoch in range(1, 4):
        sim.advance(np.zeros(n_nodes, dtype=np.int64))
        assert sim.state.progress[0] == pytest.approx(epoch * speed * n_nodes**alpha)
        assert sim.state.work[0] == epoch * n_nodes


def test_alpha_applies_to_the_shares_left_after_switching() -> None:
    """Two switching nodes with switch cost c advance speed * (2 (1 - c)) ** alpha."""
    sim = simulator(make_tasks(speed=1.0, alpha=0.5, target=0.05), n_nodes=2, switch_cost=0.2)
    sim.advance(np.array([0, 0]))
    assert sim.state.progress[0] == pytest.approx(math.sqrt(1.6))
    sim.advance(np.array([0, 0]))
    assert sim.state.progress[0] == pytest.approx(math.sqrt(1.6) + math.sqrt(2.0))


# ---------------------------------------------------------------------------- switch cost
def test_switch_cost_is_paid_on_first_epoch_change_of_task_and_return_from_idle() -> None:
    """One node, c = 0.25: A, A, B, A, idle, A advances A by .75, 1, 0, .75, 0, .75."""
    sim = simulator(make_tasks(2, target=0.05), switch_cost=0.25)
    a, b, rest = 0, 1, sim.config.idle_action
    expected_a, expected_b = [0.75, 1.75, 1.75, 2.5, 2.5, 3.25], [0, 0, 0.75, 0.75, 0.75, 0.75]
    switches = [1, 0, 1, 1, 0, 1]
    for epoch, slot in enumerate([a, a, b, a, rest, a]):
        events = sim.advance(np.array([slot]))
        assert sim.state.progress[0] == pytest.approx(expected_a[epoch])
        assert sim.state.progress[1] == pytest.approx(expected_b[epoch])
        assert events.switches == switches[epoch]
    assert sim.state.switches == sum(switches)
    metrics = sim.episode_metrics()
    assert metrics["switches"] == 4
    assert metrics["utilisation"] == pytest.approx(5 / 6), "one idle epoch in six"


def test_only_the_switching_node_pays_the_switch_cost() -> None:
    """A node staying on a task keeps its full share while a newcomer pays c: 1 + (1 - c)."""
    sim = simulator(make_tasks(target=0.05), n_nodes=2, switch_cost=0.25)
    sim.advance(np.array([0, sim.config.idle_action]))
    assert sim.state.progress[0] == pytest.approx(0.75)
    sim.advance(np.array([0, 0]))
    assert sim.state.progress[0] == pytest.approx(0.75 + 1.0 + 0.75)


def test_a_node_pays_again_when_its_task_completed() -> None:
    """The successor task in the same slot is a different task: the node pays the cost."""
    tasks = make_tasks(2, target=[0.85, 0.05])  # task 0 needs 2 steps
    sim = simulator(tasks, n_slots=1, switch_cost=0.5)
    sim.advance(np.array([0]))  # 0.5
    sim.advance(np.array([0]))  # 1.5
    sim.advance(np.array([0]))  # 2.5 -> completes; task 1 enters slot 0
    assert sim.state.status[0] == COMPLETED and sim.state.slots[0] == 1
    sim.advance(np.array([0]))
    assert sim.state.progress[1] == pytest.approx(0.5)


def test_choosing_an_empty_slot_is_idling() -> None:
    """advance(): a node choosing an empty slot idles (documented), leaving every task as an
    explicit idle would."""
    chosen_empty = simulator(make_tasks(2, target=0.05), n_nodes=2, n_slots=4)
    explicit_idle = simulator(make_tasks(2, target=0.05), n_nodes=2, n_slots=4)
    for _ in range(3):
        chosen_empty.advance(np.array([0, 3]))
        explicit_idle.advance(np.array([0, explicit_idle.config.idle_action]))
    for name in ("progress", "work", "loss", "status"):
        np.testing.assert_array_equal(
            getattr(chosen_empty.state, name), getattr(explicit_idle.state, name)
        )
    assert chosen_empty.state.node_task.tolist() == [0, NO_TASK]
    assert chosen_empty.episode_metrics() == explicit_idle.episode_metrics()


# ---------------------------------------------------------------------------- deadlines
@pytest.mark.parametrize("deadline", [5, 6, 20])
def test_completing_in_the_last_epoch_before_the_deadline_counts(deadline: int) -> None:
    """A task needing 5 epochs completes at epoch 5 whenever its deadline is >= 5."""
    sim = simulator(make_tasks(deadline=deadline))
    run(sim, [0], 5)
    assert sim.state.status[0] == COMPLETED and sim.state.end_epoch[0] == 5
    assert sim.episode_metrics()["mean_slack_at_completion"] == deadline - 5


@pytest.mark.parametrize("deadline", [1, 3, 4])
def test_task_expires_exactly_at_its_deadline(deadline: int) -> None:
    """A task needing 5 epochs with deadline d < 5 expires at the end of epoch d - 1."""
    sim = simulator(make_tasks(deadline=deadline))
    events = run(sim, [0], deadline)
    assert all(not e.expired for e in events[:-1])
    assert events[-1].expired == (0,) and events[-1].epoch == deadline - 1
    assert sim.state.status[0] == EXPIRED and sim.state.end_epoch[0] == deadline
    assert sim.episode_metrics()["wasted_node_epochs"] == deadline
    assert sim.terminated


def test_a_queued_task_expires_without_ever_being_trained() -> None:
    """Deadlines also run out in the queue: zero work, wasted nothing."""
    tasks = make_tasks(2, deadline=[50, 3])
    sim = simulator(tasks, n_slots=1)
    assert sim.state.queue == [1]
    events = run(sim, [0], 3)
    assert events[-1].expired == (1,)
    assert sim.state.queue == [] and sim.state.work[1] == 0
    assert sim.episode_metrics()["wasted_node_epochs"] == 0


def test_an_episode_without_tasks_runs_to_the_arrival_horizon() -> None:
    """With no task at all, the cluster idles until the arrival horizon, then terminates."""
    sim = ClusterSimulator(synthetic_config(n_nodes=2, arrival_horizon=3), trace_source=SOURCE)
    sim.reset(np.random.default_rng(0), tasks=make_tasks(0))
    events = run(sim, [0, sim.config.idle_action], 3)
    assert [e.shaping for e in events] == [0.0, 0.0, 0.0]
    assert sim.terminated and sim.episode_metrics()["completion_rate"] == 0.0


def test_an_env_episode_in_which_no_task_arrives() -> None:
    """A load so low that nothing arrives still gives a valid episode of arrival_horizon
    epochs with zero reward, in every form."""
    env = mara_env.parallel_env(
        config="tiny", workload="synthetic", load=1e-9, trace_source=fresh_source(107)
    )
    env.reset(seed=0)
    assert len(env.simulator.state.tasks) == 0
    rewards = []
    while env.agents:
        rewards.append(env.step(dict.fromkeys(env.agents, 0))[1]["node_0"])
    assert rewards == [0.0] * env.config.arrival_horizon


def test_infeasible_target_never_completes() -> None:
    """A target below the curve's minimum (0.1) is never reached, however much training."""
    sim = simulator(make_tasks(target=0.05, deadline=40, speed=2.0), n_nodes=3)
    assert np.isinf(sim.privileged_remaining_work()[0])
    events = run(sim, [0, 0, 0], 40)
    assert not any(e.completed for e in events)
    assert sim.state.loss[0] == LINEAR_CURVE[-1], "the loss stays at the curve's last value"
    assert sim.state.status[0] == EXPIRED and sim.state.end_epoch[0] == 40


def test_loss_past_the_recorded_curve_stays_at_its_last_recorded_value() -> None:
    """A curve shorter than its pool's width reports its last recorded loss beyond its end,
    whatever values the pool holds in the padding."""
    losses = np.array([[1.0, 0.9, 0.8, 1e-6, 1e-6, 1e-6], LINEAR_CURVE[:6]])
    pool = CurvePool("synthetic", losses, np.array([3, 6]))

    class PaddedSource:
        families = ("synthetic",)
        fingerprint = "padded-with-tiny-values"

        def pool(self, family: str, split: str) -> CurvePool:
            return pool

    sim = ClusterSimulator(
        synthetic_config(n_nodes=1, n_slots=1, switch_cost=0.0), trace_source=PaddedSource()
    )
    sim.reset(np.random.default_rng(0), tasks=make_tasks(target=0.5))
    assert np.isinf(sim.privileged_remaining_work()[0])
    run(sim, [0], 5)
    assert sim.state.loss[0] == 0.8
    assert sim.state.status[0] == ACTIVE


# ---------------------------------------------------------------------------- queue and slots
def test_queued_tasks_enter_freed_slots_first_come_first_served() -> None:
    """Two slots, four tasks: 2 and 3 wait; each freed slot takes the oldest waiting task."""
    targets = [0.75, 0.85, 0.05, 0.05]  # task 0 needs 3 steps, task 1 needs 2
    sim = simulator(make_tasks(4, target=targets), n_slots=2, n_nodes=1)
    state = sim.state
    assert state.slots.tolist() == [0, 1] and state.queue == [2, 3]
    run(sim, [1], 2)  # task 1 completes after 2 epochs
    assert state.status[1] == COMPLETED
    assert state.slots.tolist() == [0, 2] and state.queue == [3]
    run(sim, [0], 3)  # task 0 completes after 3 more epochs
    assert state.slots.tolist() == [3, 2] and state.queue == []


def test_later_arrivals_queue_behind_waiting_tasks() -> None:
    """Arrivals join the back of the queue; they never jump ahead of older waiting tasks."""
    tasks = make_tasks(4, arrival=[0, 0, 1, 2], target=[0.85, 0.05, 0.05, 0.05])
    sim = simulator(tasks, n_slots=2)
    state = sim.state
    assert state.status.tolist() == [ACTIVE, ACTIVE, FUTURE, FUTURE]
    sim.advance(np.array([0]))
    assert state.queue == [2]
    sim.advance(np.array([0]))  # task 0 completes; task 2 takes its slot, then 3 arrives
    assert state.slots.tolist() == [2, 1] and state.queue == [3]


def test_given_tasks_arriving_after_the_horizon_arrive_or_are_rejected() -> None:
    """reset(tasks=...) either rejects a task arriving after the arrival horizon with a
    mara-env error, or admits it at its arrival epoch: it never silently stays in the future
    (which would keep the episode from terminating)."""
    tasks = make_tasks(2, arrival=[0, 4], target=0.05, deadline=[3, 8])
    sim = ClusterSimulator(synthetic_config(n_nodes=1, arrival_horizon=2), trace_source=SOURCE)
    try:
        sim.reset(np.random.default_rng(0), tasks=tasks)
    except mara_env.MaraEnvError:
        return
    events = run(sim, [sim.config.idle_action], 4)
    assert events[-1].arrived == (1,) and sim.state.status[1] == ACTIVE
    run(sim, [sim.config.idle_action], 4)
    assert sim.terminated and sim.state.expired == 2


def test_observation_summarises_the_queue() -> None:
    """The global queue features give the queue length and its least time to deadline."""
    from mara_env.sim.observation import G_ACTIVE, G_QUEUE, G_QUEUE_TIME, TIME_SCALE

    env = mara_env.raw_env(
        synthetic_config(n_nodes=1, n_slots=2, load=20.0), trace_source=ENV_SOURCE
    )
    env.reset(seed=0)
    env.simulator.reset(np.random.default_rng(0), tasks=make_tasks(5, deadline=[9, 9, 30, 12, 40]))
    env.builder.refresh()
    observation = env.observe("node_0")["observation"]
    assert observation[G_QUEUE] == pytest.approx(3 / 2)
    assert observation[G_QUEUE_TIME] == pytest.approx(12 / TIME_SCALE)
    assert observation[G_ACTIVE] == pytest.approx(1.0)


# ---------------------------------------------------------------------------- privileged API
def test_privileged_remaining_work_matches_hand_computation() -> None:
    """Remaining node-epochs = (first step with loss <= target - progress) / speed;
    nan for empty slots, inf for infeasible targets."""
    tasks = make_tasks(2, speed=[1.25, 1.0], target=[0.55, 0.05])
    sim = simulator(tasks, n_slots=3)
    remaining = sim.privileged_remaining_work()
    assert remaining[0] == pytest.approx(5 / 1.25)
    assert np.isinf(remaining[1])
    assert np.isnan(remaining[2])
    run(sim, [0], 2)  # progress 2.5 -> 2.5 steps to step 5
    assert sim.privileged_remaining_work()[0] == pytest.approx(2.5 / 1.25)
    run(sim, [0], 1)  # progress 3.75 -> 1.25 steps
    assert sim.privileged_remaining_work()[0] == pytest.approx(1.25 / 1.25)


def test_privileged_remaining_work_predicts_completion_on_monotone_curves() -> None:
    """On decreasing curves, one node without switch cost completes a sampled task after
    exactly ceil(remaining work) epochs (or expires first if its deadline is earlier)."""
    steps = np.arange(150)
    monotone = ExactTraceSource(
        {
            "synthetic": [
                2.0 * 0.97**steps,
                1.5 * (1.0 + steps[:100]) ** -0.5,
                3.0 / (1.0 + 0.1 * steps[:60]),
            ]
        }
    )
    config = synthetic_config(
        n_nodes=1, n_slots=1, load=3.0, switch_cost=0.0, infeasible_share=0.0, arrival_horizon=5
    )
    sim = ClusterSimulator(config, trace_source=monotone)
    checked = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        tasks = sample_tasks(sim.workload, rng)
        if len(tasks) == 0:
            continue
        sim.reset(rng, tasks=tasks)
        remaining = sim.privileged_remaining_work()[0]
        if not np.isfinite(remaining):
            continue
        task = int(sim.state.slots[0])
        epochs = 0
        while sim.state.status[task] == ACTIVE:
            sim.advance(np.array([0]))
            epochs += 1
        needed = math.ceil(remaining - 1e-9)
        if sim.state.status[task] == COMPLETED:
            assert epochs == needed
            checked += 1
        else:
            assert sim.state.tasks.deadline[task] < needed
    assert checked >= 10


def test_demand_of_sampled_tasks_is_their_remaining_work_at_arrival() -> None:
    """TaskTable.demand (hidden) equals the privileged remaining work of a fresh task."""
    sim = ClusterSimulator(get_config("tiny", n_slots=16, load=3.0))
    sim.reset(np.random.default_rng(7))
    remaining = sim.privileged_remaining_work()
    slotted = sim.state.slots
    for slot in np.flatnonzero(slotted != NO_TASK).tolist():
        demand = sim.state.tasks.demand[slotted[slot]]
        if np.isfinite(demand):
            assert remaining[slot] == pytest.approx(demand)
        else:
            assert np.isinf(remaining[slot])


# ---------------------------------------------------------------------------- arrivals
def test_poisson_arrival_rate_matches_load_times_nodes_over_mean_demand() -> None:
    """Arrivals per epoch are Poisson(load * n_nodes / mean_demand): mean and variance agree
    within 5 standard errors over 400 episodes of 50 epochs."""
    config = synthetic_config(n_nodes=4, load=1.5, arrival_horizon=50, max_epochs=2000)
    workload = build_workload(config, fresh_source(101))
    rate = config.load * config.n_nodes / workload.mean_demand
    assert workload.arrival_rate == pytest.approx(rate)
    rng = np.random.default_rng(0)
    counts = np.concatenate(
        [
            np.bincount(sample_tasks(workload, rng).arrival, minlength=config.arrival_horizon)
            for _ in range(400)
        ]
    )
    assert len(counts) == 400 * config.arrival_horizon
    n = len(counts)
    assert abs(counts.mean() - rate) < 5 * math.sqrt(rate / n)
    assert counts.var() == pytest.approx(rate, rel=0.1), "Poisson: variance equals the mean"


@pytest.mark.parametrize("world", [1, 2])
def test_offered_load_matches_the_configured_load(world: int) -> None:
    """With feasible targets, mean arrived demand per epoch / n_nodes is close to the load, in
    each world (1,000 episodes of about 15 tasks: the mean's standard error is about 1%)."""
    config = synthetic_config(
        n_nodes=2, load=0.8, arrival_horizon=100, infeasible_share=0.0, world_version=world
    )
    workload = build_workload(config, fresh_source(102))
    rng = np.random.default_rng(1)
    demand = []
    for _ in range(1000):
        tasks = sample_tasks(workload, rng)
        finite = np.where(np.isfinite(tasks.demand), tasks.demand, config.epochs_per_curve[1])
        demand.append(finite.sum())
    offered = np.mean(demand) / (config.arrival_horizon * config.n_nodes)
    assert offered == pytest.approx(config.load, rel=0.05)


def test_sampled_tasks_follow_the_config() -> None:
    """Sampled tasks: sorted arrivals within the horizon, deadlines after arrival and capped,
    targets below the initial loss, alpha from the config, speed = length / epochs."""
    config = synthetic_config(
        n_nodes=4, arrival_horizon=30, max_epochs=60, alpha=0.65, epochs_per_curve=(5.0, 8.0)
    )
    source = fresh_source(103)
    workload = build_workload(config, source)
    tasks = sample_tasks(workload, np.random.default_rng(3))
    assert len(tasks) > 0
    assert (np.diff(tasks.arrival) >= 0).all()
    assert ((tasks.arrival >= 0) & (tasks.arrival < config.arrival_horizon)).all()
    assert (tasks.deadline > tasks.arrival).all() and (tasks.deadline <= config.max_epochs).all()
    assert (tasks.target < tasks.initial_loss).all()
    assert (tasks.alpha == 0.65).all()
    epochs = workload.lengths[tasks.curve_row] / tasks.speed
    assert ((epochs >= 5.0) & (epochs <= 8.0)).all()


def test_arrival_rate_scales_linearly_with_load() -> None:
    """Doubling the load doubles the arrival rate (same curves, same nodes)."""
    source = fresh_source(104)
    base = synthetic_config(n_nodes=4, load=1.0)
    rates = [
        build_workload(base.replace(load=load), source).arrival_rate for load in (1.0, 2.0, 0.5)
    ]
    assert rates[1] == pytest.approx(2 * rates[0])
    assert rates[2] == pytest.approx(0.5 * rates[0])


def test_arrival_rate_scales_linearly_with_nodes() -> None:
    """The rate is proportional to cluster capacity: twice the nodes, twice the arrivals."""
    source = fresh_source(105)
    base = synthetic_config(n_nodes=4, load=1.0)
    rates = [build_workload(base.replace(n_nodes=n), source).arrival_rate for n in (4, 8)]
    assert rates[1] == pytest.approx(2 * rates[0])


def test_more_load_means_more_arrivals_per_episode_in_the_env() -> None:
    """End to end: an env at load 3 sees about 3x the arrivals of one at load 1, and arrivals
    stop at its own arrival horizon."""
    source = fresh_source(106)
    arrived = {}
    for load in (1.0, 3.0):
        env = mara_env.parallel_env(
            synthetic_config(n_nodes=4, load=load, arrival_horizon=40), trace_source=source
        )
        total = 0
        for seed in range(30):
            env.reset(seed=seed)
            total += len(env.simulator.state.tasks)
        arrived[load] = total
    assert arrived[3.0] / arrived[1.0] == pytest.approx(3.0, rel=0.15)
    env = mara_env.parallel_env(synthetic_config(n_nodes=4, arrival_horizon=5), trace_source=source)
    env.reset(seed=0)
    assert (env.simulator.state.tasks.arrival < 5).all()


@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_infeasible_share_of_sampled_targets(share: float) -> None:
    """About ``infeasible_share`` of sampled tasks get a target below their curve's minimum
    (infinite demand); every other task's target is reached somewhere on its curve."""
    config = synthetic_config(n_nodes=8, load=3.0, arrival_horizon=100, infeasible_share=share)
    workload = build_workload(config, fresh_source(108))
    tasks = sample_tasks(workload, np.random.default_rng(5))
    assert len(tasks) > 200
    rows = tasks.curve_row
    minimum = np.array([workload.curves[r, : workload.lengths[r]].min() for r in rows])
    below = tasks.target < minimum
    assert np.array_equal(np.isinf(tasks.demand) & below, below), "hopeless => infinite demand"
    assert below.mean() == pytest.approx(share, abs=4 * math.sqrt(0.25 / len(tasks)) + 1e-9)
