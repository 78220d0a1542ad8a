"""Shared helpers and fixtures of the mara-env test suite.

Everything here is small on purpose: configs short enough that a whole episode takes
milliseconds, a trace source of exactly known curves for hand-computed answers, and episode
runners that drive each API form with random (optionally illegal) actions.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest

from mara_env import ClusterConfig, CurvePool, node_turns, raw_env
from mara_env.agents import PrivilegedScheduler
from mara_env.curves.families import FAMILY_NAMES
from mara_env.sim.workload import TaskTable

#: Short configurations covering the edge cases of the API (keyword overrides of a preset).
#: Loads are set so that an episode expects >= ~15 arrivals (load * n_nodes / mean demand of
#: ~9 node-epochs, over 20 epochs): PettingZoo's checkers reset without seeds, and episodes in
#: which no task arrives have their own tests in test_known_answers.py.
CONFIG_CASES: dict[str, dict[str, Any]] = {
    "tiny": {"config": "tiny", "load": 4.0},
    "one_node": {"config": "tiny", "n_nodes": 1, "load": 8.0},
    "many_nodes": {"config": "tiny", "n_nodes": 32, "n_slots": 32},
    "two_slots": {"config": "tiny", "n_nodes": 4, "n_slots": 2, "load": 2.0},
    "heavy_load": {"config": "tiny", "n_nodes": 4, "load": 3.0},
    "one_node_per_task": {"config": "tiny", "n_nodes": 4, "max_nodes_per_task": 1, "load": 2.0},
    "shaped": {"config": "tiny", "shaping_weight": 1.0, "load": 4.0},
}


def registered_ids(registry: Iterable[str]) -> list[str]:
    """The ids of a registry that belong to mara-env (so new ids are covered automatically)."""
    return sorted(env_id for env_id in registry if env_id.startswith("mara_env/"))


GYM_IDS = registered_ids(gymnasium.registry)
AEC_IDS = registered_ids(pettingzoo.aec_registry)
PARALLEL_IDS = registered_ids(pettingzoo.parallel_registry)

#: Warnings PettingZoo's checkers always raise for a Dict observation with an action mask (the
#: format PettingZoo itself recommends); any other warning fails a conformance test.
BENIGN_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be",
    "The old environment creation API has been deprecated",
)


def unexpected_warnings(records: Sequence[warnings.WarningMessage]) -> list[str]:
    """Messages of recorded warnings that are not in :data:`BENIGN_WARNINGS`."""
    messages = [str(record.message) for record in records]
    return [m for m in messages if not any(m.startswith(b) for b in BENIGN_WARNINGS)]


# ---------------------------------------------------------------------------- known curves
class ExactTraceSource:
    """A trace source whose curves are given verbatim (same curves on both splits).

    The fingerprint hashes the curves, so two sources with equal curves share cached workloads
    and sources with different curves never do.
    """

    def __init__(self, curves: dict[str, Sequence[Sequence[float]]]) -> None:
        self._pools = {
            family: CurvePool.from_curves(family, [np.asarray(c, dtype=np.float64) for c in rows])
            for family, rows in curves.items()
        }
        digest = hashlib.sha256()
        for family in sorted(self._pools):
            digest.update(family.encode())
            digest.update(self._pools[family].losses.tobytes())
            digest.update(self._pools[family].lengths.tobytes())
        self._fingerprint = "exact-" + digest.hexdigest()[:16]

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(self._pools)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def pool(self, family: str, split: str) -> CurvePool:
        return self._pools[family]


#: Loss 1.0, 0.9, ..., 0.1 at curve steps 0..9: step ``k`` reports ``1 - k / 10``.
LINEAR_CURVE = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]


def synthetic_config(**fields: Any) -> ClusterConfig:
    """A config whose workload is the synthetic family alone (what the exact test sources
    provide)."""
    return ClusterConfig(family_weights=(("synthetic", 1.0),), **fields)


def make_tasks(n: int = 1, **columns: Any) -> TaskTable:
    """A TaskTable of ``n`` tasks on curve row 0 of the synthetic family.

    Defaults: arrival 0, deadline 100, target 0.55 (reached at step 5 of ``LINEAR_CURVE``),
    speed 1, alpha 1, initial loss 1, demand 5. Any column can be given as a scalar or a
    sequence of length ``n``.
    """
    defaults: dict[str, Any] = {
        "family": FAMILY_NAMES.index("synthetic"),
        "curve_row": 0,
        "arrival": 0,
        "deadline": 100,
        "target": 0.55,
        "speed": 1.0,
        "alpha": 1.0,
        "initial_loss": 1.0,
        "demand": 5.0,
    }
    unknown = set(columns) - set(defaults)
    if unknown:
        raise TypeError(f"unknown task columns {sorted(unknown)}")
    defaults.update(columns)
    ints = {"family", "curve_row", "arrival", "deadline"}
    table = {
        name: np.broadcast_to(
            np.asarray(value, dtype=np.int64 if name in ints else np.float64), (n,)
        ).copy()
        for name, value in defaults.items()
    }
    return TaskTable(**table)


def prepared_env(tasks: TaskTable, curves: Sequence[Sequence[float]], **overrides: Any) -> Any:
    """A ``raw_env`` running exactly ``tasks`` on ``curves`` (the synthetic family): one node,
    four slots, no switch cost, alpha 1, arrivals in epoch 0 unless ``overrides`` say otherwise."""
    fields: dict[str, Any] = {
        "n_nodes": 1,
        "n_slots": 4,
        "switch_cost": 0.0,
        "alpha": 1.0,
        "arrival_horizon": 1,
    }
    fields.update(overrides)
    source = ExactTraceSource({"synthetic": curves})
    env = raw_env(synthetic_config(**fields), trace_source=source)
    env.reset(seed=0)
    env.simulator.reset(np.random.default_rng(0), tasks=tasks)
    env.builder.refresh()
    return env


def play(env: Any, scheduler: Any) -> list[int]:
    """Run to the end; returns every action in order."""
    scheduler.reset(env.config, seed=0)
    if isinstance(scheduler, PrivilegedScheduler):
        scheduler.bind(env)
    actions = []
    for agent, node in node_turns(env):
        action = scheduler.act(env.observe(agent), node)
        actions.append(int(action))
        env.step(action)
    return actions


# ---------------------------------------------------------------------------- episode runners
def random_choice(rng: np.random.Generator, mask: np.ndarray, illegal_share: float = 0.0) -> int:
    """A random action: with probability ``illegal_share`` any action, else a legal one."""
    if illegal_share and rng.random() < illegal_share:
        return int(rng.integers(len(mask)))
    return int(rng.choice(np.flatnonzero(mask)))


def run_aec_episode(
    env: Any, seed: int, *, illegal_share: float = 0.0, max_steps: int = 100_000
) -> dict[str, Any]:
    """Play one AEC episode with random actions; return per-agent returns and step count."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    for agent in env.agent_iter(max_steps):
        observation, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        if termination or truncation:
            action = None
        else:
            action = random_choice(rng, observation["action_mask"], illegal_share)
        env.step(action)
        steps += 1
    return {"returns": returns, "steps": steps}


@pytest.fixture
def isolated_workload_cache() -> Iterator[None]:
    """Clear the process-wide workload cache around a test.

    Workloads are cached per process, so without this a test could see a workload built by an
    earlier test, and its outcome would depend on test order.
    """
    from mara_env.sim import workload

    cached = getattr(workload, "_build_workload_cached", None)
    clear = getattr(cached, "cache_clear", lambda: None)
    clear()
    yield
    clear()


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Run a module on one torch thread, then restore the count: tiny networks train fastest
    there (and as the project's workers do), and other modules see no change."""
    from mara_env.predictors.flow_matching import torch_threads

    with torch_threads(1):
        yield


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stable-Baselines3 makes a folder in the system's temporary directory at every ``learn``
    unless ``SB3_LOGDIR`` names one: the tests' go under pytest's temporary folder instead."""
    import os

    before = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    yield
    if before is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = before
