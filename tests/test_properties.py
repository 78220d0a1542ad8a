"""Property tests (Hypothesis): invariants that must hold in every episode of every config.

Configs, seeds and action sequences (legal and illegal) are generated; the invariants are
checked after every epoch, once through :class:`ClusterSimulator` directly (against an
independent reference of one epoch's arithmetic) and once through each environment form.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mara_env
from mara_env import ClusterConfig, ClusterSimulator
from mara_env.sim.observation import (
    G_DECIDED,
    G_IDLE,
    G_NODE,
    GLOBAL_FEATURES,
    S_MINE,
    S_NODES_NOW,
    SLOT_FEATURES,
    observation_size,
)
from mara_env.sim.simulator import ACTIVE, COMPLETED, EXPIRED, FUTURE, NO_TASK

#: Each test starts from an empty workload cache (see conftest.isolated_workload_cache).
pytestmark = pytest.mark.usefixtures("isolated_workload_cache")

#: Modest example counts (the whole suite must stay fast on 2 cores); no per-example deadline
#: because building a new workload for a new config takes a few milliseconds.
PROPERTY_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ALLOWED_TRANSITIONS = {
    (FUTURE, FUTURE),
    (FUTURE, ACTIVE),
    (ACTIVE, ACTIVE),
    (ACTIVE, COMPLETED),
    (ACTIVE, EXPIRED),
    (COMPLETED, COMPLETED),
    (EXPIRED, EXPIRED),
}


@st.composite
def configs(draw: st.DrawFn, *, shaping: bool | None = None) -> ClusterConfig:
    """Small but varied cluster configurations (``shaping``: force it on / off / either)."""
    arrival_horizon = draw(st.integers(1, 12))
    if shaping is None:
        shaping_weight = draw(st.sampled_from([0.0, 0.5, 1.0, 2.5]))
    else:
        shaping_weight = draw(st.sampled_from([0.5, 1.0, 2.5])) if shaping else 0.0
    return ClusterConfig(
        n_nodes=draw(st.integers(1, 6)),
        n_slots=draw(st.integers(1, 5)),
        load=draw(st.floats(0.2, 3.0)),
        arrival_horizon=arrival_horizon,
        max_epochs=arrival_horizon + draw(st.integers(1, 300)),
        alpha=draw(st.none() | st.floats(0.2, 1.0)),
        switch_cost=draw(st.sampled_from([0.0, 0.1, 0.5, 0.9])),
        epochs_per_curve=draw(st.sampled_from([(2.0, 5.0), (5.0, 15.0), (10.0, 40.0)])),
        infeasible_share=draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])),
        slack_range=draw(st.sampled_from([(1.0, 1.0), (1.5, 3.0), (2.0, 6.0)])),
        deadline_nodes=draw(st.integers(1, 3)),
        max_nodes_per_task=draw(st.none() | st.integers(1, 3)),
        shaping_weight=shaping_weight,
    )


seeds = st.integers(0, 2**32 - 1)


def legal_choices(
    rng: np.random.Generator, slots: np.ndarray, n_nodes: int, idle: int, previous: np.ndarray
) -> np.ndarray:
    """Node choices among occupied slots and idle, from a randomly picked scheduling style."""
    occupied = np.flatnonzero(slots != NO_TASK)
    options = np.append(occupied, idle)
    style = rng.integers(4)
    if style == 0 or len(occupied) == 0:  # uniformly random
        return rng.choice(options, size=n_nodes)
    if style == 1:  # everybody on the first visible task: makes tasks complete
        return np.full(n_nodes, occupied[0])
    if style == 2:  # keep last epoch's choice where still possible (no switch cost)
        keep = np.isin(previous, options)
        return np.where(keep, previous, rng.choice(options, size=n_nodes))
    return np.where(rng.random(n_nodes) < 0.5, idle, rng.choice(options, size=n_nodes))


def log_progress(sim: ClusterSimulator, ids: np.ndarray) -> np.ndarray:
    """Reference normalised log-loss progress of ``ids``: 0 at arrival, 1 at the target."""
    state, tasks = sim.state, sim.state.tasks
    start = np.log(tasks.initial_loss[ids])
    gap = start - np.log(tasks.target[ids])
    return np.clip((start - np.log(state.loss[ids])) / gap, 0.0, 1.0)


def check_state_consistency(sim: ClusterSimulator) -> None:
    """Accounting, slot and queue invariants of a simulator state."""
    state, config, tasks = sim.state, sim.config, sim.state.tasks
    status = state.status
    active = np.flatnonzero(status == ACTIVE)
    n_completed = int((status == COMPLETED).sum())
    n_expired = int((status == EXPIRED).sum())
    # completed + expired + still active == arrived
    assert n_completed + n_expired + len(active) == state.arrived
    assert (state.completed, state.expired) == (n_completed, n_expired)
    assert state.arrived == int((status != FUTURE).sum())
    # arrivals happen exactly when due
    due = tasks.arrival <= state.epoch
    assert np.array_equal(status != FUTURE, due)
    # slots and queue hold exactly the active tasks, each once; the queue is first-come
    slotted = state.slots[state.slots != NO_TASK]
    assert len(set(slotted.tolist())) == len(slotted)
    assert sorted(slotted.tolist() + state.queue) == active.tolist()
    assert state.queue == sorted(state.queue)
    if state.queue:
        assert (state.slots != NO_TASK).all(), "a task waits in the queue beside a free slot"
    assert len(state.slots) == config.n_slots
    # end epochs are set exactly for resolved tasks
    resolved = (status == COMPLETED) | (status == EXPIRED)
    assert np.array_equal(state.end_epoch >= 0, resolved)
    # a task at or below its target would have completed
    assert (state.loss[active] > tasks.target[active]).all()


def run_simulator_episode(config: ClusterConfig, seed: int, action_seed: int) -> None:
    """Play an episode on the simulator, checking every invariant after every epoch."""
    sim = ClusterSimulator(config)
    sim.reset(np.random.default_rng(seed))
    rng = np.random.default_rng(action_seed)
    state, tasks, workload = sim.state, sim.state.tasks, sim.workload
    idle = config.idle_action
    assert state.potential == 0.0, "Phi is 0 at reset: no task has progressed"
    check_state_consistency(sim)
    completed_events: list[int] = []
    expired_events: list[int] = []
    shaping_total = 0.0
    previous_choice = np.full(config.n_nodes, idle)
    while not (sim.terminated or sim.truncated):
        choice = legal_choices(rng, state.slots, config.n_nodes, idle, previous_choice)
        previous_choice = choice
        before = {
            name: getattr(state, name).copy()
            for name in ("slots", "status", "progress", "work", "end_epoch", "node_task")
        }
        epoch = state.epoch
        events = sim.advance(choice)
        assert events.epoch == epoch and state.epoch == epoch + 1

        # each node serves exactly the task in its chosen slot, or nothing
        chosen_task = np.append(before["slots"], NO_TASK)[choice]
        assert np.array_equal(state.node_task, chosen_task)
        served = chosen_task[chosen_task != NO_TASK]
        work_delta = state.work - before["work"]
        expected_work = np.bincount(served, minlength=len(tasks)).astype(float)
        assert np.array_equal(work_delta, expected_work), "work must equal nodes serving"
        assert work_delta.sum() == len(served)

        # progress: speed * (sum of shares) ** alpha, shares reduced by the switch cost
        expected_delta = np.zeros(len(tasks))
        for task in np.unique(served).tolist():
            nodes = np.flatnonzero(chosen_task == task)
            shares = np.where(before["node_task"][nodes] == task, 1.0, 1.0 - config.switch_cost)
            expected_delta[task] = tasks.speed[task] * shares.sum() ** tasks.alpha[task]
        np.testing.assert_allclose(
            state.progress - before["progress"], expected_delta, rtol=1e-12, atol=1e-12
        )
        assert (state.progress >= before["progress"]).all(), "progress never decreases"
        assert (state.work >= before["work"]).all(), "work never decreases"
        # a trained task reports its curve's loss at its new progress
        for task in np.unique(served).tolist():
            row = tasks.curve_row[task]
            step = min(int(np.floor(state.progress[task])), workload.lengths[row] - 1)
            assert state.loss[task] == workload.curves[row, step]

        # status transitions and end epochs
        transitions = set(zip(before["status"].tolist(), state.status.tolist(), strict=True))
        assert transitions <= ALLOWED_TRANSITIONS, transitions - ALLOWED_TRANSITIONS
        newly_completed = np.flatnonzero((before["status"] == ACTIVE) & (state.status == COMPLETED))
        newly_expired = np.flatnonzero((before["status"] == ACTIVE) & (state.status == EXPIRED))
        assert sorted(events.completed) == newly_completed.tolist()
        assert sorted(events.expired) == newly_expired.tolist()
        already = before["end_epoch"] >= 0
        assert np.array_equal(state.end_epoch[already], before["end_epoch"][already])
        assert (state.end_epoch[newly_completed] == state.epoch).all()
        assert (state.end_epoch[newly_expired] == state.epoch).all()
        # completion only by training, at or before the deadline, with loss <= target
        assert set(newly_completed.tolist()) <= set(served.tolist())
        assert (state.loss[newly_completed] <= tasks.target[newly_completed]).all()
        assert (state.epoch <= tasks.deadline[newly_completed]).all()
        # expiry exactly at the deadline
        assert (tasks.deadline[newly_expired] == state.epoch).all()
        completed_events += list(events.completed)
        expired_events += list(events.expired)
        assert (
            sorted(events.arrived)
            == np.flatnonzero((before["status"] == FUTURE) & (state.status == ACTIVE)).tolist()
        )

        check_state_consistency(sim)
        # potential: summed progress of the slotted tasks; shaping is its change
        slotted = state.slots[state.slots != NO_TASK]
        assert state.potential == pytest.approx(log_progress(sim, slotted).sum(), abs=1e-9)
        shaping_total += events.shaping
        assert shaping_total == pytest.approx(state.potential, abs=1e-9)
        assert state.epoch <= config.max_epochs

    # every task ends exactly once
    assert len(completed_events) == len(set(completed_events)) == state.completed
    assert len(expired_events) == len(set(expired_events)) == state.expired
    assert not set(completed_events) & set(expired_events)
    if sim.terminated:
        assert state.epoch >= config.arrival_horizon
        assert ((state.status == COMPLETED) | (state.status == EXPIRED)).all()
        assert sorted(completed_events + expired_events) == list(range(len(tasks)))
        assert shaping_total == pytest.approx(0.0, abs=1e-9), "Phi returns to 0 at the end"
    metrics = sim.episode_metrics()
    assert metrics["completed"] + metrics["expired"] <= metrics["arrived"]
    assert 0.0 <= metrics["utilisation"] <= 1.0


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds)
def test_simulator_invariants_hold_every_epoch(
    config: ClusterConfig, seed: int, action_seed: int
) -> None:
    """Simulator: no node serves two tasks; work = nodes serving; progress and work never
    decrease and follow speed * (sum of shares) ** alpha; FUTURE→ACTIVE→COMPLETED|EXPIRED with
    the end epoch set once; completion only at or before the deadline, expiry exactly at it;
    completed + expired + active == arrived; the queue is first-come and never beside a free
    slot; the shaping terms telescope to Phi."""
    run_simulator_episode(config, seed, action_seed)


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds)
def test_episode_always_ends_within_max_epochs(config: ClusterConfig, seed: int) -> None:
    """An idle cluster still ends its episode: every task expires by max_epochs."""
    sim = ClusterSimulator(config)
    sim.reset(np.random.default_rng(seed))
    idle = np.full(config.n_nodes, config.idle_action)
    while not (sim.terminated or sim.truncated):
        sim.advance(idle)
    assert sim.state.epoch <= config.max_epochs
    assert sim.state.completed == 0
    assert sim.state.expired == sim.state.arrived == len(sim.state.tasks)


# ---------------------------------------------------------------------------- through the envs
def expected_mask(sim: ClusterSimulator, counts: np.ndarray) -> np.ndarray:
    """mask[j] = 1 iff slot j holds a task (and fewer than the cap chose it); idle always 1."""
    config = sim.config
    mask = np.zeros(config.n_actions, dtype=np.int8)
    mask[:-1] = sim.state.slots != NO_TASK
    if config.max_nodes_per_task is not None:
        mask[:-1] &= counts[:-1] < config.max_nodes_per_task
    mask[-1] = 1
    return mask


def expected_return(sim: ClusterSimulator) -> float:
    """Completions + weight * (Phi_final - Phi_initial), with Phi_initial = 0."""
    slotted = sim.state.slots[sim.state.slots != NO_TASK]
    phi_final = float(log_progress(sim, slotted).sum())
    return sim.state.completed + sim.config.shaping_weight * phi_final


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds, illegal_share=st.sampled_from([0.0, 0.3]))
def test_aec_masks_rewards_and_illegal_counts(
    config: ClusterConfig, seed: int, action_seed: int, illegal_share: float
) -> None:
    """AEC: every mask matches the slots and the cap; masked actions idle and are counted in
    infos; every agent's return (summed from last()) equals completions (shaping off) or
    completions + w * Phi_final (shaping on), and equals completions on termination."""
    env = mara_env.raw_env(config)
    sim = env.simulator
    rng = np.random.default_rng(action_seed)
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    counts = np.zeros(config.n_actions, dtype=np.int64)
    illegal = 0
    for agent in env.agent_iter(100_000):
        observation, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        mask = observation["action_mask"]
        assert mask.dtype == np.int8
        np.testing.assert_array_equal(mask, expected_mask(sim, counts))
        if rng.random() < illegal_share:
            action = int(rng.integers(config.n_actions))
        else:
            action = int(rng.choice(np.flatnonzero(mask)))
        legal = bool(mask[action])
        illegal += not legal
        epoch = sim.state.epoch
        env.step(action)
        counts[action if legal else config.idle_action] += 1
        if sim.state.epoch != epoch:  # the last node acted: the epoch ended
            assert env.infos[agent]["illegal_actions"] == illegal
            assert env.infos[agent]["epoch"] == epoch
            counts[:] = 0
            illegal = 0
    assert not env.agents
    total = expected_return(sim)
    for value in returns.values():
        assert value == pytest.approx(total, abs=1e-6)
    if sim.terminated:
        assert total == pytest.approx(sim.state.completed, abs=1e-9)
    if config.shaping_weight == 0:
        assert all(value == sim.state.completed for value in returns.values())
    metrics = env.episode_metrics()
    assert metrics["completed"] + metrics["expired"] == metrics["arrived"] or sim.truncated


def previous_slots(sim: ClusterSimulator) -> np.ndarray:
    """Slot of the task each node trained last epoch (n_slots if it idled or the task left)."""
    slot_of = {task: slot for slot, task in enumerate(sim.state.slots.tolist()) if task >= 0}
    idle = sim.config.idle_action
    return np.array([slot_of.get(task, idle) for task in sim.state.node_task.tolist()])


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds)
def test_aec_nodes_see_earlier_choices_and_state_matches_observations(
    config: ClusterConfig, seed: int, action_seed: int
) -> None:
    """AEC (autoregressive): node i's observation counts the choices of nodes 0..i-1 per slot
    and in total; state() is the observation with the node-specific entries at 0, followed by
    every node's previous slot and this epoch's choices so far (as slot / n_slots)."""
    env = mara_env.raw_env(config)
    sim = env.simulator
    rng = np.random.default_rng(action_seed)
    env.reset(seed=seed)
    size = observation_size(config)
    slot_base = GLOBAL_FEATURES + SLOT_FEATURES * np.arange(config.n_slots)
    counts = np.zeros(config.n_actions, dtype=np.int64)
    choices = np.full(config.n_nodes, config.idle_action)
    for steps, agent in enumerate(env.agent_iter(100_000)):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        node = env.possible_agents.index(agent)
        vector = observation["observation"]
        decided = int(counts.sum())
        assert vector[G_DECIDED] == pytest.approx(decided / config.n_nodes)
        assert vector[G_NODE] == pytest.approx(node / config.n_nodes)
        np.testing.assert_allclose(
            vector[slot_base + S_NODES_NOW], counts[:-1] / config.n_nodes, rtol=1e-6
        )
        previous = previous_slots(sim)
        assert vector[G_IDLE] == float(previous[node] == config.idle_action)
        mine = np.zeros(config.n_slots)
        if previous[node] < config.n_slots:
            mine[previous[node]] = 1.0
        np.testing.assert_array_equal(vector[slot_base + S_MINE], mine)
        shared = vector.copy()
        shared[[G_NODE, G_IDLE]] = 0.0
        shared[slot_base + S_MINE] = 0.0
        state = env.state()
        assert env.state_space.contains(state)
        np.testing.assert_array_equal(state[:size], shared)
        np.testing.assert_allclose(
            state[size : size + config.n_nodes], previous / config.n_slots, rtol=1e-6
        )
        np.testing.assert_allclose(
            state[size + config.n_nodes :], choices / config.n_slots, rtol=1e-6
        )
        mask = observation["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask)))
        epoch = sim.state.epoch
        env.step(action)
        counts[action] += 1
        choices[node] = action
        if sim.state.epoch != epoch:
            counts[:] = 0
            choices[:] = config.idle_action
        if steps > 5000:  # long enough; keeps the example fast
            break


def resolve_reference(actions: np.ndarray, sim: ClusterSimulator) -> tuple[np.ndarray, int, int]:
    """Reference joint-action resolution: masked choices idle, then the cap in node order."""
    config = sim.config
    occupied = np.append(sim.state.slots != NO_TASK, True)
    choices = np.where(occupied[actions], actions, config.idle_action)
    illegal = int((~occupied[actions]).sum())
    conflicts = 0
    if config.max_nodes_per_task is not None:
        counts = np.zeros(config.n_actions, dtype=np.int64)
        for node, slot in enumerate(choices.tolist()):
            if slot != config.idle_action and counts[slot] >= config.max_nodes_per_task:
                choices[node] = config.idle_action
                conflicts += 1
            else:
                counts[slot] += 1
    return choices, illegal, conflicts


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds)
def test_parallel_rewards_masks_and_conflicts(
    config: ClusterConfig, seed: int, action_seed: int
) -> None:
    """Parallel: masks show occupied slots (no cap: nobody has chosen yet); masked choices and
    choices over the cap idle and are counted; nodes serve the resolved slots; the summed
    reward equals completions + w * Phi_final."""
    env = mara_env.parallel_env(config)
    sim = env.simulator
    rng = np.random.default_rng(action_seed)
    observations, infos = env.reset(seed=seed)
    total = 0.0
    while env.agents:
        zero = np.zeros(config.n_actions, dtype=np.int64)
        for agent in env.agents:
            np.testing.assert_array_equal(
                observations[agent]["action_mask"], expected_mask(sim, zero)
            )
        actions = rng.integers(config.n_actions, size=config.n_nodes)
        resolved, illegal, conflicts = resolve_reference(actions, sim)
        slots = np.append(sim.state.slots, NO_TASK)
        observations, rewards, terminations, truncations, infos = env.step(
            {agent: int(a) for agent, a in zip(env.possible_agents, actions, strict=True)}
        )
        np.testing.assert_array_equal(sim.state.node_task, slots[resolved])
        assert len(set(rewards.values())) == 1, "the reward is shared"
        total += rewards["node_0"]
        assert infos["node_0"]["illegal_actions"] == illegal
        assert infos["node_0"]["conflicts"] == conflicts
        assert set(rewards) == set(terminations) == set(truncations) == set(infos)
    assert total == pytest.approx(expected_return(sim), abs=1e-6)
    if config.shaping_weight == 0:
        assert total == sim.state.completed


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds)
def test_gym_rewards_and_action_masks(config: ClusterConfig, seed: int, action_seed: int) -> None:
    """Gymnasium: action_masks() is each node's slot mask, tiled; the episode's summed reward
    equals completions + w * Phi_final, and completions when it terminates."""
    env = gym.make(mara_env.ENV_ID, config=config).unwrapped
    sim = env.simulator
    rng = np.random.default_rng(action_seed)
    env.reset(seed=seed)
    total, done = 0.0, False
    zero = np.zeros(config.n_actions, dtype=np.int64)
    while not done:
        masks = env.action_masks()
        np.testing.assert_array_equal(
            masks, np.tile(expected_mask(sim, zero).astype(bool), config.n_nodes)
        )
        action = rng.integers(config.n_actions, size=config.n_nodes)
        _, reward, terminated, truncated, _ = env.step(action)
        total += reward
        done = terminated or truncated
    assert total == pytest.approx(expected_return(sim), abs=1e-6)
    if terminated:
        assert total == pytest.approx(sim.state.completed, abs=1e-6)


@PROPERTY_SETTINGS
@given(
    config=configs(shaping=True),
    gamma=st.sampled_from([1.0, 0.99, 0.9, 0.5]),
    seed=seeds,
    action_seed=seeds,
)
def test_shaping_only_adds_terms_that_telescope_at_its_discount(
    config: ClusterConfig, gamma: float, seed: int, action_seed: int
) -> None:
    """With the same actions, the shaped and unshaped episodes differ per epoch by exactly
    w * (gamma * Phi(s') - Phi(s)), so their returns discounted at gamma differ by
    w * gamma**T * Phi(s_T) (0 on termination), and the shaping starts from Phi(s_0) = 0."""
    config = config.replace(shaping_discount=gamma)
    shaped = mara_env.parallel_env(config)
    plain = mara_env.parallel_env(config.replace(shaping_weight=0.0))
    shaped.reset(seed=seed)
    plain.reset(seed=seed)
    assert float(shaped.simulator.core.potential[0]) == 0.0
    rng = np.random.default_rng(action_seed)
    difference, phi, discount = 0.0, 0.0, 1.0
    while shaped.agents:
        actions = {a: int(rng.integers(config.n_actions)) for a in shaped.agents}
        _, shaped_rewards, *_ = shaped.step(actions)
        _, plain_rewards, *_ = plain.step(actions)
        sim = shaped.simulator
        new_phi = float(log_progress(sim, sim.state.slots[sim.state.slots != NO_TASK]).sum())
        step_difference = shaped_rewards["node_0"] - plain_rewards["node_0"]
        expected = config.shaping_weight * (gamma * new_phi - phi)
        assert step_difference == pytest.approx(expected, abs=1e-9)
        difference += discount * step_difference
        discount *= gamma
        phi = new_phi
    assert not plain.agents, "shaping must not change the dynamics"
    assert difference == pytest.approx(config.shaping_weight * discount * phi, abs=1e-6)
    if shaped.simulator.terminated:
        assert difference == pytest.approx(0.0, abs=1e-6)


def test_shaping_at_another_discount_does_not_telescope() -> None:
    """The check above can fail: gamma = 1 shaping summed at discount 0.9 leaves a remainder
    on a terminated episode, where gamma = 0.9 shaping leaves none."""

    def rewards(config: ClusterConfig) -> np.ndarray:
        env = mara_env.parallel_env(config)
        env.reset(seed=3)
        paid = []
        while env.agents:
            _, step_rewards, *_ = env.step({agent: 0 for agent in env.agents})
            paid.append(step_rewards["node_0"])
        assert env.simulator.terminated
        return np.array(paid)

    config = mara_env.get_config("tiny", load=4.0)
    plain = rewards(config)
    discount = 0.9 ** np.arange(len(plain))
    at_one = rewards(config.replace(shaping_weight=1.0))
    at_gamma = rewards(config.replace(shaping_weight=1.0, shaping_discount=0.9))
    assert abs(discount @ at_one - discount @ plain) > 1e-3
    assert discount @ at_gamma == pytest.approx(discount @ plain, abs=1e-9)


@PROPERTY_SETTINGS
@given(config=configs(), seed=seeds, action_seed=seeds)
def test_aec_parallel_and_gym_forms_agree(
    config: ClusterConfig, seed: int, action_seed: int
) -> None:
    """The same seed and (legal) joint actions give the same world in all three forms: same
    tasks, same state vectors, same rewards, same episode end."""
    config = config.replace(max_nodes_per_task=None)
    aec = mara_env.raw_env(config)
    parallel = mara_env.parallel_env(config)
    gym_env = gym.make(mara_env.ENV_ID, config=config).unwrapped
    aec.reset(seed=seed)
    parallel.reset(seed=seed)
    gym_observation, _ = gym_env.reset(seed=seed)
    np.testing.assert_array_equal(aec.state(), parallel.state())
    np.testing.assert_array_equal(gym_observation, parallel.state())
    rng = np.random.default_rng(action_seed)
    while parallel.agents:
        occupied = np.flatnonzero(parallel.simulator.state.slots != NO_TASK)
        options = np.append(occupied, config.idle_action)
        joint = rng.choice(options, size=config.n_nodes)
        for node in range(config.n_nodes):
            assert aec.agent_selection == f"node_{node}"
            aec.step(int(joint[node]))
        _, rewards, terminations, truncations, _ = parallel.step(
            {f"node_{i}": int(a) for i, a in enumerate(joint)}
        )
        gym_observation, gym_reward, terminated, truncated, _ = gym_env.step(joint)
        assert aec.rewards["node_0"] == rewards["node_0"] == gym_reward
        assert aec.terminations["node_0"] == terminations["node_0"] == terminated
        assert aec.truncations["node_0"] == truncations["node_0"] == truncated
        np.testing.assert_array_equal(gym_observation, parallel.state())
        np.testing.assert_array_equal(aec.state(), parallel.state())
    assert aec.episode_metrics() == parallel.episode_metrics() == gym_env.episode_metrics()
