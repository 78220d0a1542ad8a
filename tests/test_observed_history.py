"""ObservedHistories: histories rebuilt from observations match the simulator's own records."""

from __future__ import annotations

import numpy as np
import pytest

import mara_env
from mara_env.agents import make_agent
from mara_env.agents.base import NotResetError
from mara_env.agents.observed_history import HistoryScheduler, ObservedHistories
from mara_env.agents.tracking import NO_TASK, SlotTracker
from mara_env.curves.families import FAMILY_NAMES
from mara_env.sim.observation import SlotView

#: Observations are float32: agreement to float32 precision.
RTOL, ATOL = 2e-6, 1e-6


def play_and_compare(config: mara_env.ClusterConfig, seed: int, agent: str) -> int:
    """Play an episode with ``agent``; at every epoch compare each slot's observed history with
    the simulator's records of the task in it. Returns the number of comparisons made."""
    env = mara_env.raw_env(config)
    env.reset(seed=seed)
    scheduler = make_agent(agent)
    scheduler.reset(env.config, seed=seed)
    histories = ObservedHistories()
    histories.reset(env.config)
    state = env.simulator.state
    tasks = state.tasks
    true_of_id: dict[int, int] = {}
    compared = 0
    for agent_name, node in mara_env.node_turns(env):
        if node == 0:
            histories.update(env.observe(agent_name)["observation"])
            for slot, task in enumerate(state.slots.tolist()):
                observed = histories.history(slot)
                if task == NO_TASK:
                    assert observed is None
                    assert histories.task_ids[slot] == NO_TASK
                    continue
                assert observed is not None
                task_id = int(histories.task_ids[slot])
                assert true_of_id.setdefault(task_id, task) == task, "one id, one task"
                progress = np.array(state.history_progress[task])
                ratio = np.array(state.history_loss[task]) / tasks.initial_loss[task]
                np.testing.assert_allclose(observed.work, progress, rtol=RTOL, atol=ATOL)
                np.testing.assert_allclose(observed.loss, ratio, rtol=RTOL, atol=ATOL)
                assert observed.loss[0] == 1.0 and observed.work[0] == 0.0
                assert observed.target == pytest.approx(
                    tasks.target[task] / tasks.initial_loss[task], rel=1e-5
                )
                assert observed.time_left == tasks.deadline[task] - state.epoch
                assert observed.speed == pytest.approx(tasks.speed[task], rel=1e-6)
                assert observed.family == FAMILY_NAMES[tasks.family[task]]
                compared += 1
        env.step(scheduler.act(env.observe(agent_name), node))
    assert len(set(true_of_id.values())) == len(true_of_id), "distinct tasks get distinct ids"
    return compared


@pytest.mark.parametrize(
    ("preset", "overrides", "agent"),
    [
        ("training", {"arrival_horizon": 40}, "edf"),
        ("tiny", {"load": 4.0, "n_nodes": 1}, "round_robin"),
        ("training", {"arrival_horizon": 30, "load": 2.8, "workload": "vision"}, "uniform"),
    ],
)
def test_observed_histories_match_the_simulator_records(
    preset: str, overrides: dict, agent: str
) -> None:
    config = mara_env.get_config(preset, **overrides)
    assert play_and_compare(config, seed=3, agent=agent) > 50


def test_new_points_are_exactly_the_points_added_at_the_latest_update() -> None:
    """Concatenating new_points over updates rebuilds every history, point for point."""
    env = mara_env.raw_env("tiny", load=4.0)
    env.reset(seed=1)
    scheduler = make_agent("edf")
    scheduler.reset(env.config, seed=0)
    histories = ObservedHistories()
    histories.reset(env.config)
    rebuilt: dict[int, tuple[list[float], list[float]]] = {}
    departed_seen: set[int] = set()
    for name, node in mara_env.node_turns(env):
        if node == 0:
            histories.update(env.observe(name)["observation"])
            departed_seen.update(histories.departed_ids)
            for task in histories.departed_ids:
                assert task in rebuilt and task not in histories.task_ids.tolist()
            for slot, task in enumerate(histories.task_ids.tolist()):
                if task == NO_TASK:
                    assert [len(a) for a in histories.new_points(slot)] == [0, 0]
                    assert not histories.reported(slot)
                    continue
                work, loss = histories.new_points(slot)
                assert histories.reported(slot) == (len(work) > 0)
                points = rebuilt.setdefault(task, ([], []))
                points[0].extend(work.tolist())
                points[1].extend(loss.tolist())
                history = histories.history(slot)
                assert history is not None
                assert points[0] == history.work.tolist()
                assert points[1] == history.loss.tolist()
        env.step(scheduler.act(env.observe(name), node))
    assert departed_seen, "some tasks left during the episode"


def test_a_task_keeps_its_history_when_it_changes_slot() -> None:
    """Histories belong to tasks, not slots: moving a task (as a fresh tracker sees it when the
    slot contents are permuted) keeps its points."""
    env = mara_env.raw_env("tiny", load=6.0)
    env.reset(seed=2)
    histories = ObservedHistories()
    histories.reset(env.config)
    for _ in range(3):
        histories.update(env.observe("node_0")["observation"])
        env.step(0)
        env.step(1)
    histories.update(env.observe("node_0")["observation"])
    config = env.config
    before = {slot: histories.history(slot) for slot in range(config.n_slots)}
    ids_before = histories.task_ids.copy()
    vector = env.observe("node_0")["observation"].copy()
    start = mara_env.sim.observation.GLOBAL_FEATURES
    width = mara_env.sim.observation.SLOT_FEATURES
    slots = vector[start:].reshape(config.n_slots, width)
    vector[start:] = slots[::-1].ravel()  # the same tasks, in reversed slots
    histories.update(vector)
    for slot in range(config.n_slots):
        moved = config.n_slots - 1 - slot
        assert histories.task_ids[moved] == ids_before[slot]
        old, new = before[slot], histories.history(moved)
        if old is None:
            assert new is None
            continue
        assert new is not None
        np.testing.assert_array_equal(old.work, new.work)
    assert histories.departed_ids == []


def test_update_before_reset_and_bad_slots_raise_clear_errors() -> None:
    histories = ObservedHistories()
    with pytest.raises(NotResetError, match="reset"):
        histories.update(np.zeros(10, dtype=np.float32))
    config = mara_env.get_config("tiny")
    histories.reset(config)
    with pytest.raises(ValueError, match="expected a vector of length"):
        histories.update(np.zeros(10, dtype=np.float32))
    with pytest.raises(IndexError, match="outside"):
        histories.history(config.n_slots)


@pytest.mark.parametrize(
    ("column", "value"),
    [("S_LOG_LOSS", np.nan), ("S_LOG_TARGET", np.inf), ("S_SPEED", 0.0), ("S_BUDGET", -1.0)],
)
def test_an_observation_no_history_can_hold_is_refused_by_name(column: str, value: float) -> None:
    """The histories are built without TaskHistory's checks, so update() refuses the values
    those checks would: a clear error naming the slot, not a wrong prediction later."""
    from mara_env.sim import observation as layout

    env = mara_env.raw_env("tiny", load=4.0)
    env.reset(seed=0)
    vector = env.observe("node_0")["observation"].copy()
    slots = vector[layout.GLOBAL_FEATURES :].reshape(env.config.n_slots, layout.SLOT_FEATURES)
    slot = int(np.flatnonzero(slots[:, layout.S_OCCUPIED] > 0.5)[0])
    slots[slot, getattr(layout, column)] = value
    histories = ObservedHistories()
    histories.reset(env.config)
    with pytest.raises(ValueError, match=f"slot {slot} of the observation"):
        histories.update(vector)


class _FirstSlotWithHistory(HistoryScheduler):
    name = "first_slot_with_history"

    def __init__(self) -> None:
        super().__init__()
        self.lengths: list[int] = []

    def plan_epoch(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        history = self.histories.history(0)
        self.lengths.append(0 if history is None else len(history.work))
        slot = 0 if view.occupied[0] else self.config.idle_action
        return np.full(self.config.n_nodes, slot, dtype=np.int64)


def test_history_scheduler_updates_histories_before_each_plan() -> None:
    from mara_env.agents import evaluate

    scheduler = _FirstSlotWithHistory()
    rows = evaluate(scheduler, mara_env.get_config("tiny", load=4.0), seeds=[0])
    assert rows[0]["illegal_actions"] == 0
    assert max(scheduler.lengths) >= 2, "the trained task's history grows"
    assert scheduler.histories.task_ids.tolist() == scheduler.tracker.task_ids.tolist()


def _vector_with_serials(config: mara_env.ClusterConfig, serials: list[int]) -> np.ndarray:
    """The tiny env's observation at reset with every slot showing a copy of one task (same
    constants and state) under the given serials (-1: empty)."""
    env = mara_env.raw_env(config)
    env.reset(seed=0)
    vector = env.observe("node_0")["observation"].astype(np.float64)
    start, width = mara_env.sim.observation.GLOBAL_FEATURES, mara_env.sim.observation.SLOT_FEATURES
    slots = vector[start:].reshape(config.n_slots, width)
    occupied = np.flatnonzero(slots[:, mara_env.sim.observation.S_OCCUPIED] > 0.5)
    assert occupied.size, "the episode starts with a slotted task"
    template = slots[occupied[0]].copy()
    for slot, serial in enumerate(serials):
        slots[slot] = 0.0
        if serial >= 0:
            slots[slot] = template
            slots[slot, mara_env.sim.observation.S_SERIAL] = (serial + 1) / (
                mara_env.sim.observation.SERIAL_SCALE
            )
    vector[start:] = slots.ravel()
    return vector.astype(np.float32)


def _view_with_serials(config: mara_env.ClusterConfig, serials: list[int]) -> SlotView:
    return mara_env.decode_observation(_vector_with_serials(config, serials), config)


def test_tasks_are_told_apart_by_serial_alone() -> None:
    """Identical constants and state under different serials are different tasks; a serial
    that changes slot keeps its id; a slot whose serial changes holds a new task."""
    config = mara_env.get_config("tiny", load=6.0)
    tracker = SlotTracker()
    tracker.reset(config.n_slots)
    tracker.update(_view_with_serials(config, [4, 7, -1]))
    assert tracker.task_ids.tolist() == [0, 1, NO_TASK] and tracker.new_ids == [0, 1]
    tracker.update(_view_with_serials(config, [4, 9, 7]))
    assert tracker.task_ids.tolist() == [0, 2, 1]
    assert tracker.continuing.tolist() == [True, False, False]
    assert tracker.new_ids == [2]
    tracker.update(_view_with_serials(config, [-1, 9, 4]))
    assert tracker.task_ids.tolist() == [NO_TASK, 2, 0]
    with pytest.raises(ValueError, match="two slots"):
        tracker.update(_view_with_serials(config, [3, 3, -1]))


def test_identical_looking_tasks_keep_separate_histories() -> None:
    config = mara_env.get_config("tiny", load=6.0)
    histories = ObservedHistories()
    histories.reset(config)
    histories.update(_vector_with_serials(config, [1, 2, -1]))
    assert histories.task_ids.tolist() == [0, 1, NO_TASK]
    histories.update(_vector_with_serials(config, [1, 3, -1]))  # slot 1 shows another task
    assert histories.task_ids.tolist() == [0, 2, NO_TASK]
    assert histories.departed_ids == [1]
    histories.update(_vector_with_serials(config, [3, -1, 1]))  # both move
    assert histories.task_ids.tolist() == [2, NO_TASK, 0]
    assert histories.departed_ids == []
