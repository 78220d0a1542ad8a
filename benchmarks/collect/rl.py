# long: one family's collector is one unit: its tasks, its learners and their budgets side by side, so a reader checks a family's curves in one file.
"""The rl family: learning curves of real reinforcement-learning agents.

Deep agents (stable-baselines3's PPO, A2C and DQN) train on Gymnasium's classic-control tasks and
tabular agents (this module's Q-learning, SARSA and expected SARSA, in numpy) on its toy-text
tasks. A curve's loss is the agent's normalised return gap, recorded at 100 points of the run's
budget of environment steps.

Tasks
-----

==========================  =============  =======  =========  ========
Task                        Algorithms     Budget   Random R   Solved R
==========================  =============  =======  =========  ========
CartPole-v1                 PPO, A2C, DQN  32,000   22.51      475 (a)
Acrobot-v1                  PPO, A2C, DQN  32,000   -499.925   -100 (a)
MountainCar-v0              PPO, A2C, DQN  24,000   -200.0     -110 (a)
Pendulum-v1                 PPO, A2C       32,000   -1226.911  -200 (b)
FrozenLake-v1-slippery      tabular (c)    20,000   0.018      0.70 (a)
FrozenLake-v1-not-slippery  tabular (c)    20,000   0.015      1.0 (d)
Taxi-v4                     tabular (c)    40,000   -776.193   8 (a)
CliffWalking-v1-200         tabular (c)    20,000   -2093.211  -13 (e)
==========================  =============  =======  =========  ========

Tasks are the Gymnasium ids of their names, except: the FrozenLake tasks are ``FrozenLake-v1`` on
its 4x4 map with ``is_slippery`` True / False, and CliffWalking-v1-200 is ``CliffWalking-v1`` with
``max_episode_steps=200`` (it has no time limit of its own, and falling off the cliff only returns
the agent to the start at a cost of -100, so the limit makes every episode end). Budgets are in
environment steps; R is an episode's undiscounted return.

(a) the id's ``reward_threshold`` in Gymnasium's registry; (b) the customary threshold (the
registry has none); (c) Q-learning, SARSA and expected SARSA; (d) every episode reaches the goal;
(e) the return of the shortest path. Gymnasium 1.4 ships Taxi-v4 and CliffWalking-v1 (no v3 / v0).

**Random returns** (:func:`measure_random_return`): uniformly random actions drawn from
``numpy.random.default_rng(0)``, the environment reset with seed 0 once and then continuing its own
stream; mean undiscounted return over 200 episodes (classic control) or 1,000 (toy text), rounded to
three decimals.

Loss
----

``loss = (R_solved - R) / (R_solved - R_random)``: 1 at a random policy's return, 0 at the solved
threshold. ``R`` is the mean undiscounted return of the last 10 (deep agents) or 20 (tabular agents)
*training* episodes finished by the point, exploration included (epsilon-greedy for DQN and the
tabular agents, the stochastic policy for PPO and A2C); no separate evaluation episodes are run
(they would cost more than the training). Before the first episode ends, ``R = R_random``
(loss 1): there is no measured return yet, and the untrained agent acts nearly at random.

Losses are capped at ``MAX_LOSS = 2`` (Taxi's illegal moves and CliffWalking's cliff can make
returns far worse than random) and clipped from below at ``LOSS_FLOOR`` by
:class:`~mara_env.benchmarks.collect.spec.Curve` (better than the threshold). Nothing is smoothed beyond the
window: RL curves rise and fall (exploration noise, policy collapse), and runs that never learn
(MountainCar's sparse reward within the budget, most Pendulum runs) stay near 1; both are kept, as
real behaviour and as infeasible targets.

Work axis
---------

Environment steps, summed over the vectorised environments (8 for PPO and A2C, 4 for DQN, 1 for
tabular agents). Point ``k`` of 100 is at ``budget * k / 100`` steps; budgets are multiples of
100 x environments, so every point falls on a step. Training stops at the last point.

Algorithms
----------

**Deep** (stable-baselines3, ``MlpPolicy`` with two hidden layers of ``net_width`` units, separate
actor and critic for PPO / A2C, ``device="cpu"``, one torch thread; environments from
``make_vec_env``, whose ``Monitor`` wrappers report episode returns). Fixed settings: PPO 8
environments, ``gae_lambda=0.95``, ``clip_range=0.2``; A2C 8 environments (SB3's RMSprop); DQN 4
environments, ``learning_starts=1000``, ``buffer_size=50_000``, one gradient step every
``train_freq`` vector steps (``4 * train_freq`` environment steps); everything else SB3's defaults.

**Tabular** (numpy): a Q-table of zeros; epsilon-greedy behaviour with uniformly random tie-breaking
among greedy actions; targets ``r + gamma * max Q(s')`` (Q-learning), ``r + gamma * Q(s', a')``
(SARSA) and ``r + gamma * E[Q(s', .)]`` under the epsilon-greedy policy (expected SARSA); no
bootstrap after a termination, bootstrap after a time-limit truncation. Epsilon falls linearly from
its start to its end over a fraction of the budget, then stays.

Grid
----

For each task and algorithm, ``Task.configs`` distinct configurations are drawn without replacement
from the product of the algorithm's axes (a numpy generator seeded with the CRC-32 of
``"<task>/<algorithm>"``), and each runs with seeds 0 and 1: 7 configurations on CartPole and
Acrobot, 4 on Pendulum, 2 on MountainCar, 9 per tabular task and algorithm.

- PPO: ``learning_rate`` {1e-4, 3e-4, 1e-3, 3e-3}, ``n_steps`` per environment {64, 128, 256},
  ``batch_size`` {128, 256, 512}, ``n_epochs`` {4, 10}, ``gamma`` {0.95, 0.98, 0.99, 0.999},
  ``ent_coef`` {0, 0.01}, ``net_width`` {32, 64, 128}.
- A2C: ``learning_rate`` {2e-4, 7e-4, 2e-3, 7e-3}, ``n_steps`` {5, 8, 16, 32}, ``gamma`` {0.95,
  0.98, 0.99, 0.999}, ``ent_coef`` {0, 0.01}, ``gae_lambda`` {0.9, 1.0}, ``net_width`` {32, 64,
  128}.
- DQN: ``learning_rate`` {2.5e-4, 1e-3, 2.5e-3}, ``batch_size`` {32, 64, 128}, ``train_freq`` {1, 2,
  4}, ``target_update_interval`` {250, 1000, 4000} environment steps, ``exploration_fraction`` {0.1,
  0.2, 0.4}, ``exploration_final_eps`` {0.02, 0.1}, ``gamma`` {0.98, 0.99}, ``net_width`` {32, 64,
  128}.
- Tabular: ``alpha`` {0.05, 0.1, 0.2, 0.4, 0.8}, ``gamma`` {0.9, 0.95, 0.99, 1.0}, epsilon (start,
  end, decay fraction) {(0.05, 0.05, 0), (0.1, 0.1, 0), (0.2, 0.2, 0), (1, 0.05, 0.2), (1, 0.01,
  0.5), (0.5, 0.02, 0.3)}.

That makes 112 deep curves (CartPole 42, Acrobot 42, Pendulum 16, MountainCar 12) and 216 tabular
ones (54 per task): 328 in all. ``grid(smoke=True)`` is three tiny runs (PPO on CartPole, Q-learning
on FrozenLake, expected SARSA on CliffWalking) for tests.

Determinism: a run's seed goes to SB3's ``seed=`` (which also seeds Python's, numpy's and torch's
global generators: unavoidable, and only inside :func:`run`) and to ``make_vec_env`` (environment
``i`` gets ``seed + i``); tabular runs reset the environment with it once and draw exploration from
``numpy.random.default_rng(seed)``. The same spec gives the same curve (same library versions).

Cost
----

Each run trains on one thread; deep agents cost several times what tabular ones do, the most
DQN with ``train_freq=1``. Every collection session's wall seconds are logged beside the curves
(:meth:`mara_env.benchmarks.collect.store.CurveStore.log_session`, ``collection.json``).

Metadata of each curve: ``env_id``, ``make_kwargs``, ``algorithm``, ``hyperparameters`` (budget,
environments, width, SB3 arguments / alpha, gamma, epsilon schedule), ``random_return``,
``solved_return``, ``return_window_episodes``, ``final_return`` (``R`` at the last point),
``episodes`` (finished), ``first_episode_step`` and library ``versions``.
"""

from __future__ import annotations

import itertools
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from mara_env.benchmarks.collect.spec import Curve, RunSpec
from mara_env.benchmarks.common.threads import one_torch_thread

if TYPE_CHECKING:
    from stable_baselines3.common.callbacks import BaseCallback

FAMILY = "rl"
#: Points of every curve's work grid: evenly spaced over the run's budget of environment steps.
POINTS = 100
#: Losses are capped here (returns far below a random policy's, e.g. Taxi's illegal moves).
MAX_LOSS = 2.0
#: Finished training episodes averaged into the return at a point, per kind of agent.
RETURN_WINDOW = {"deep": 10, "tabular": 20}
#: Seeds of every hyperparameter configuration.
SEEDS = (0, 1)


#: Algorithms of the deep tasks with discrete / continuous actions, and of the tabular tasks.
DEEP_ALGORITHMS = ("PPO", "A2C", "DQN")
CONTINUOUS_ALGORITHMS = ("PPO", "A2C")
TABULAR_ALGORITHMS = ("q_learning", "sarsa", "expected_sarsa")


@dataclass(frozen=True)
class Task:
    """A Gymnasium task, the agents trained on it, their budget and the task's loss scale.

    Attributes:
        env_id: Gymnasium id.
        algorithms: Algorithms trained on it (stable-baselines3 names, or tabular ones).
        random_return: Mean return of a uniformly random policy (see
            :func:`measure_random_return`), where the loss is 1.
        solved_return: The return at which the task counts as solved, where the loss is 0.
        budget: Environment steps of a run.
        configs: Hyperparameter configurations per algorithm (each run with every seed).
        make_kwargs: Keyword arguments of ``gymnasium.make``.
    """

    env_id: str
    algorithms: tuple[str, ...]
    random_return: float
    solved_return: float
    budget: int
    configs: int
    make_kwargs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``"tabular"`` for table-based agents, else ``"deep"`` (stable-baselines3)."""
        return "tabular" if self.algorithms == TABULAR_ALGORITHMS else "deep"


#: Every task by name: id, algorithms, random and solved returns, budget, configurations, kwargs.
TASKS: dict[str, Task] = {
    "CartPole-v1": Task("CartPole-v1", DEEP_ALGORITHMS, 22.51, 475.0, 32_000, 7),
    "Acrobot-v1": Task("Acrobot-v1", DEEP_ALGORITHMS, -499.925, -100.0, 32_000, 7),
    "MountainCar-v0": Task("MountainCar-v0", DEEP_ALGORITHMS, -200.0, -110.0, 24_000, 2),
    "Pendulum-v1": Task("Pendulum-v1", CONTINUOUS_ALGORITHMS, -1226.911, -200.0, 32_000, 4),
    "FrozenLake-v1-slippery": Task(
        "FrozenLake-v1", TABULAR_ALGORITHMS, 0.018, 0.70, 20_000, 9, {"is_slippery": True}
    ),
    "FrozenLake-v1-not-slippery": Task(
        "FrozenLake-v1", TABULAR_ALGORITHMS, 0.015, 1.0, 20_000, 9, {"is_slippery": False}
    ),
    "Taxi-v4": Task("Taxi-v4", TABULAR_ALGORITHMS, -776.193, 8.0, 40_000, 9),
    "CliffWalking-v1-200": Task(
        "CliffWalking-v1",
        TABULAR_ALGORITHMS,
        -2093.211,
        -13.0,
        20_000,
        9,
        {"max_episode_steps": 200},
    ),
}
#: Episodes of the random-policy measurement, per kind (seed 0).
RANDOM_EPISODES = {"deep": 200, "tabular": 1000}

#: Hyperparameter axes sampled per algorithm, and the settings every run of it shares.
AXES: dict[str, dict[str, tuple[Any, ...]]] = {
    "PPO": {
        "learning_rate": (1e-4, 3e-4, 1e-3, 3e-3),
        "n_steps": (64, 128, 256),
        "batch_size": (128, 256, 512),
        "n_epochs": (4, 10),
        "gamma": (0.95, 0.98, 0.99, 0.999),
        "ent_coef": (0.0, 0.01),
        "net_width": (32, 64, 128),
    },
    "A2C": {
        "learning_rate": (2e-4, 7e-4, 2e-3, 7e-3),
        "n_steps": (5, 8, 16, 32),
        "gamma": (0.95, 0.98, 0.99, 0.999),
        "ent_coef": (0.0, 0.01),
        "gae_lambda": (0.9, 1.0),
        "net_width": (32, 64, 128),
    },
    "DQN": {
        "learning_rate": (2.5e-4, 1e-3, 2.5e-3),
        "batch_size": (32, 64, 128),
        "train_freq": (1, 2, 4),
        "target_update_interval": (250, 1000, 4000),
        "exploration_fraction": (0.1, 0.2, 0.4),
        "exploration_final_eps": (0.02, 0.1),
        "gamma": (0.98, 0.99),
        "net_width": (32, 64, 128),
    },
    "tabular": {
        "alpha": (0.05, 0.1, 0.2, 0.4, 0.8),
        "gamma": (0.9, 0.95, 0.99, 1.0),
        # (start, end, fraction of the budget over which it decays linearly; 0: constant)
        "epsilon": (
            (0.05, 0.05, 0.0),
            (0.1, 0.1, 0.0),
            (0.2, 0.2, 0.0),
            (1.0, 0.05, 0.2),
            (1.0, 0.01, 0.5),
            (0.5, 0.02, 0.3),
        ),
    },
}
FIXED: dict[str, dict[str, Any]] = {
    "PPO": {"n_envs": 8, "gae_lambda": 0.95, "clip_range": 0.2},
    "A2C": {"n_envs": 8},
    "DQN": {
        "n_envs": 4,
        "learning_starts": 1000,
        "buffer_size": 50_000,
        "gradient_steps": 1,
    },
}


# --- the loss ------------------------------------------------------------------------------------


def return_gap(mean_return: float, task: Task) -> float:
    """Normalised return gap: 1 at the random policy's return, 0 at the solved return.

    Capped at :data:`MAX_LOSS`; values <= 0 (better than the threshold) are floored by
    :class:`~mara_env.benchmarks.collect.spec.Curve`.
    """
    gap = (task.solved_return - mean_return) / (task.solved_return - task.random_return)
    return min(gap, MAX_LOSS)


class ReturnLog:
    """Finished episodes' returns and the loss at each point of a run's work grid.

    Args:
        task: The task (its returns fix the loss scale).
        budget: Environment steps of the run; the grid is ``budget * k / POINTS``, k = 1..POINTS.
        window: Finished episodes averaged at each point. Before the first episode ends the
            agent has no measured return and the loss is 1 (a random policy's).
    """

    def __init__(self, task: Task, budget: int, window: int) -> None:
        if budget % POINTS:
            raise ValueError(f"budget {budget} is not a multiple of {POINTS}")
        self.task = task
        self.window = window
        self.grid = [budget // POINTS * k for k in range(1, POINTS + 1)]
        self.returns: list[float] = []
        self.losses: list[float] = []
        self.first_episode_step: int | None = None

    @property
    def complete(self) -> bool:
        """Whether every point of the grid is recorded."""
        return len(self.losses) == len(self.grid)

    def add_episode(self, episode_return: float, step: int) -> None:
        """Note an episode that finished at environment step ``step``."""
        if self.first_episode_step is None:
            self.first_episode_step = step
        self.returns.append(episode_return)

    def mean_return(self) -> float:
        """Mean return of the last ``window`` finished episodes (random return if none)."""
        if not self.returns:
            return self.task.random_return
        return float(np.mean(self.returns[-self.window :]))

    def advance(self, step: int) -> None:
        """Record every grid point reached once ``step`` environment steps are done."""
        while not self.complete and self.grid[len(self.losses)] <= step:
            self.losses.append(return_gap(self.mean_return(), self.task))


# --- the grid ------------------------------------------------------------------------------------


def _sample_configs(axes: Mapping[str, Sequence[Any]], count: int, key: str) -> list[dict]:
    """``count`` distinct points of the axes' product, drawn by a generator seeded by ``key``."""
    names = list(axes)
    product = list(itertools.product(*(axes[name] for name in names)))
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    picks = rng.choice(len(product), size=count, replace=False)
    return [dict(zip(names, product[int(i)], strict=True)) for i in picks]


def _deep_params(task_name: str, algorithm: str, config: dict[str, Any], budget: int) -> dict:
    hyperparameters = {**FIXED[algorithm], **config}
    return {
        "kind": "deep",
        "task": task_name,
        "algorithm": algorithm,
        "budget": budget,
        "n_envs": hyperparameters.pop("n_envs"),
        "net_width": hyperparameters.pop("net_width"),
        "sb3_kwargs": hyperparameters,
    }


def _tabular_params(task_name: str, algorithm: str, config: dict[str, Any], budget: int) -> dict:
    start, end, fraction = config["epsilon"]
    return {
        "kind": "tabular",
        "task": task_name,
        "algorithm": algorithm,
        "budget": budget,
        "alpha": config["alpha"],
        "gamma": config["gamma"],
        "epsilon_start": start,
        "epsilon_end": end,
        "epsilon_decay_fraction": fraction,
    }


def grid(smoke: bool = False) -> list[RunSpec]:
    """Every run of the family (see the module docstring), or a few tiny ones if ``smoke``."""
    if smoke:
        return _smoke_grid()
    specs: list[RunSpec] = []
    for task_name, task in TASKS.items():
        for algorithm in task.algorithms:
            axes = AXES["tabular" if task.kind == "tabular" else algorithm]
            configs = _sample_configs(axes, task.configs, f"{task_name}/{algorithm}")
            make = _tabular_params if task.kind == "tabular" else _deep_params
            for config in configs:
                params = make(task_name, algorithm, config, task.budget)
                specs.extend(RunSpec(FAMILY, params, seed) for seed in SEEDS)
    return specs


def _smoke_grid() -> list[RunSpec]:
    ppo = {"learning_rate": 1e-3, "n_steps": 32, "batch_size": 128, "n_epochs": 2}
    ppo.update(gamma=0.99, ent_coef=0.0, net_width=16)
    tabular = {"alpha": 0.5, "gamma": 0.95, "epsilon": (1.0, 0.05, 0.5)}
    return [
        RunSpec(FAMILY, _deep_params("CartPole-v1", "PPO", ppo, 1600), 0),
        RunSpec(FAMILY, _tabular_params("FrozenLake-v1-not-slippery", "q_learning", tabular, 2000)),
        RunSpec(FAMILY, _tabular_params("CliffWalking-v1-200", "expected_sarsa", tabular, 2000)),
    ]


# --- one run -------------------------------------------------------------------------------------


def run(spec: RunSpec) -> Curve:
    """Train the agent of ``spec`` and return its return-gap curve over environment steps."""
    start = time.perf_counter()
    params = spec.params
    task = TASKS[params["task"]]
    log = ReturnLog(task, params["budget"], RETURN_WINDOW[params["kind"]])
    if params["kind"] == "deep":
        _train_deep(params, spec.seed, task, log)
    else:
        _train_tabular(params, spec.seed, task, log)
    if not log.complete:
        raise RuntimeError(f"training stopped after {len(log.losses)} of {POINTS} points")
    return Curve(
        losses=np.array(log.losses),
        work=np.array(log.grid, dtype=np.float64),
        work_unit="env steps",
        wall_seconds=time.perf_counter() - start,
        metadata=_metadata(params, task, log),
    )


def _metadata(params: Mapping[str, Any], task: Task, log: ReturnLog) -> dict[str, Any]:
    libraries = ["gymnasium", "numpy"]
    if params["kind"] == "deep":
        libraries += ["stable-baselines3", "torch"]
    return {
        "env_id": task.env_id,
        "make_kwargs": dict(task.make_kwargs),
        "algorithm": params["algorithm"],
        "hyperparameters": _hyperparameters(params),
        "random_return": task.random_return,
        "solved_return": task.solved_return,
        "return_window_episodes": log.window,
        "final_return": log.mean_return(),
        "episodes": len(log.returns),
        "first_episode_step": log.first_episode_step,
        "versions": {name: metadata.version(name) for name in libraries},
    }


def _hyperparameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """A run's settings in one flat mapping (budget, agent, schedule; SB3 arguments inlined)."""
    flat = {k: v for k, v in params.items() if k not in ("kind", "task", "algorithm", "sb3_kwargs")}
    return {**flat, **params.get("sb3_kwargs", {})}


# --- deep RL (stable-baselines3) -----------------------------------------------------------------


def _train_deep(params: Mapping[str, Any], seed: int, task: Task, log: ReturnLog) -> None:
    from stable_baselines3 import A2C, DQN, PPO
    from stable_baselines3.common.env_util import make_vec_env

    algorithms = {"PPO": PPO, "A2C": A2C, "DQN": DQN}
    n_envs = params["n_envs"]
    if params["budget"] % (POINTS * n_envs):
        raise ValueError(f"budget {params['budget']} is not a multiple of {POINTS} x {n_envs}")
    width = params["net_width"]
    with one_torch_thread():
        env = make_vec_env(task.env_id, n_envs=n_envs, seed=seed, env_kwargs=dict(task.make_kwargs))
        model = algorithms[params["algorithm"]](
            "MlpPolicy",
            env,
            policy_kwargs={"net_arch": [width, width]},
            seed=seed,
            device="cpu",
            verbose=0,
            **params["sb3_kwargs"],
        )
        model.learn(total_timesteps=params["budget"], callback=_recorder(log))
        env.close()


def _recorder(log: ReturnLog) -> BaseCallback:
    """A callback that feeds finished episodes (from the ``Monitor`` wrappers) to ``log``."""
    from stable_baselines3.common.callbacks import BaseCallback

    class RecordCurve(BaseCallback):
        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    log.add_episode(float(info["episode"]["r"]), self.num_timesteps)
            log.advance(self.num_timesteps)
            return not log.complete

    return RecordCurve()


# --- tabular RL (numpy) --------------------------------------------------------------------------


def epsilon_at(params: Mapping[str, Any], step: int) -> float:
    """Exploration rate after ``step`` steps: linear from start to end, then constant."""
    start, end = params["epsilon_start"], params["epsilon_end"]
    decay_steps = params["epsilon_decay_fraction"] * params["budget"]
    if step >= decay_steps:
        return float(end)
    return float(start + (end - start) * step / decay_steps)


def _greedy(row: np.ndarray, rng: np.random.Generator) -> int:
    """A greedy action of a Q-table row, ties broken uniformly at random."""
    best = np.flatnonzero(row == row.max())
    return int(best[0]) if best.size == 1 else int(best[rng.integers(best.size)])


def _act(row: np.ndarray, epsilon: float, rng: np.random.Generator) -> int:
    """Epsilon-greedy action."""
    if rng.random() < epsilon:
        return int(rng.integers(row.size))
    return _greedy(row, rng)


def _q_learning_value(row: np.ndarray, next_action: int, epsilon: float) -> float:
    """Q-learning's value of the next state: its greedy action's."""
    return float(row.max())


def _sarsa_value(row: np.ndarray, next_action: int, epsilon: float) -> float:
    """SARSA's value of the next state: the action the behaviour policy took there."""
    return float(row[next_action])


def _expected_sarsa_value(row: np.ndarray, next_action: int, epsilon: float) -> float:
    """Expected SARSA's: the mean under the epsilon-greedy policy (tied greedy actions share
    the maximum, so their split of the greedy mass does not matter)."""
    return float((1.0 - epsilon) * row.max() + epsilon * row.mean())


#: Each tabular algorithm's value of the next state in its update target.
NEXT_STATE_VALUE = {
    "q_learning": _q_learning_value,
    "sarsa": _sarsa_value,
    "expected_sarsa": _expected_sarsa_value,
}


def _discrete_size(space: gym.Space[Any]) -> int:
    if not isinstance(space, gym.spaces.Discrete):
        raise TypeError(f"tabular agents need discrete spaces, got {space}")
    return int(space.n)


def _train_tabular(params: Mapping[str, Any], seed: int, task: Task, log: ReturnLog) -> None:
    """Q-learning, SARSA or expected SARSA with an epsilon-greedy behaviour policy.

    The next action is chosen before the update (SARSA's target needs it). Updates bootstrap
    through time-limit truncations (the state is not terminal), not through terminations. The
    Q-table starts at zero.
    """
    env = gym.make(task.env_id, disable_env_checker=True, **task.make_kwargs)
    rng = np.random.default_rng(seed)
    q = np.zeros((_discrete_size(env.observation_space), _discrete_size(env.action_space)))
    next_value = NEXT_STATE_VALUE[params["algorithm"]]
    alpha, gamma = params["alpha"], params["gamma"]
    state, _ = env.reset(seed=seed)
    action = _act(q[state], epsilon_at(params, 0), rng)
    episode_return, step = 0.0, 0
    while not log.complete:
        next_state, reward, terminated, truncated, _ = env.step(action)
        step += 1
        episode_return += float(reward)
        epsilon = epsilon_at(params, step)
        next_action = _act(q[next_state], epsilon, rng)
        bootstrap = 0.0 if terminated else next_value(q[next_state], next_action, epsilon)
        q[state, action] += alpha * (float(reward) + gamma * bootstrap - q[state, action])
        if terminated or truncated:
            log.add_episode(episode_return, step)
            episode_return = 0.0
            next_state, _ = env.reset()
            next_action = _act(q[next_state], epsilon, rng)
        log.advance(step)
        state, action = next_state, next_action
    env.close()


# --- random-policy returns -----------------------------------------------------------------------


def measure_random_return(task_name: str, episodes: int | None = None, seed: int = 0) -> float:
    """Mean return of a uniformly random policy on a task (how :data:`TASKS`' values were set).

    The environment is reset with ``seed`` once, then continues its own stream; actions come from
    ``numpy.random.default_rng(seed)``.
    """
    task = TASKS[task_name]
    episodes = RANDOM_EPISODES[task.kind] if episodes is None else episodes
    env = gym.make(task.env_id, **task.make_kwargs)
    rng = np.random.default_rng(seed)
    space = env.action_space
    total = 0.0
    env.reset(seed=seed)
    for _ in range(episodes):
        done = False
        while not done:
            if isinstance(space, gym.spaces.Box):
                action: Any = rng.uniform(space.low, space.high).astype(space.dtype)
            else:
                action = int(rng.integers(_discrete_size(space)))
            _, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        env.reset()
    env.close()
    return total / episodes
