"""The cluster: scheduling deadline-bound training tasks on discrete nodes (PettingZoo AEC).

| | |
|---|---|
| Import | ``mara_env.env(...)``, ``mara_env.raw_env(...)``, ``pettingzoo.make("aec", "mara_env/Cluster-v3")`` |
| Agents | ``node_0 .. node_{K-1}`` (``K = n_nodes``), acting in order within an epoch |
| Action space | ``Discrete(n_slots + 1)``: train the task in a slot, or idle (the last action) |
| Observation space | ``Dict(observation=Box(float32, (8 + 20 * n_slots,)), action_mask=Box(int8, (n_slots + 1,)))`` |
| State space | ``Box(float32, (8 + 20 * n_slots + 2 * n_nodes,))`` |
| Reward | shared: tasks completed in the epoch (+ optional progress shaping) |
| Parallel form | ``mara_env.parallel_env(...)`` |

Each compute node is an agent. In every epoch node 0 chooses first, then node 1, ... ; each node's
observation includes how many nodes already chose each slot this epoch, which is what makes a
policy autoregressive. When the last node has chosen, the world advances one epoch (see
:mod:`mara_env.sim.core` for the dynamics).

Observation:
    A float32 vector of global features and per-slot features, documented in
    :mod:`mara_env.sim.observation` (``decode_observation`` turns it into named arrays). It holds only
    what a real scheduler knows: each visible task's reported loss history summary, target,
    deadline, speed, family, progress and the node assignments. The rest of each loss curve is
    hidden.

Action mask:
    int8, ``1`` for each slot holding a task (unless ``max_nodes_per_task`` nodes already chose
    it this epoch) and always ``1`` for idle. A masked action becomes idle and is counted in
    ``infos[agent]["illegal_actions"]``; with ``strict=True`` it raises ``ActionError``. An action
    outside the action space always raises ``ActionError``.

Rewards:
    Cooperative. At the end of each epoch every node receives the number of tasks that completed
    in it, plus ``shaping_weight * (shaping_discount * Phi(s') - Phi(s))`` where Phi sums each
    slotted task's normalised log-loss progress toward its target (0 at arrival, 1 at the
    target). The shaping telescopes in returns discounted at ``shaping_discount`` (default 1;
    set it to your learner's gamma): such a return equals the discounted completion count (plus
    ``shaping_weight * gamma**T * Phi`` at truncation), so shaping cannot change which policy
    is optimal.

Episode end:
    Terminates when the arrival horizon has passed and every arrived task has completed or
    expired; truncates at ``max_epochs`` (a safety limit that does not bind with the presets),
    or after ``max_cycles`` epochs when that argument is given (PettingZoo's convention: one
    cycle is one epoch, every node acting once).
    Every form then refuses ``step()`` with :class:`mara_env.EnvStateError` until ``reset()``
    (PettingZoo's own wrapper only logs a warning; the vector form resets the sub-env itself,
    see its autoreset mode).

Infos:
    One fixed schema (:mod:`mara_env.envs.infos`), the same keys after ``reset`` and after every
    epoch, each value a NumPy scalar: ``epoch`` (-1 after ``reset``), ``completed``,
    ``expired``, ``arrived``, ``switches``, ``illegal_actions``, ``conflicts`` (int64) and the
    episode's ``completion_rate`` so far (float64). Every node gets its own copy. The ids of the
    tasks that completed or expired (``completed_tasks``, ``expired_tasks``; int64 arrays of
    varying length) only with ``info_task_ids=True``.

Arguments:
    ``config``: a preset name (see ``mara_env.PRESETS``) or a ``ClusterConfig``;
    ``trace_source``: where curves come from; ``render_mode``: ``"human"``, ``"ansi"`` or
    ``"rgb_array"``; ``strict``: raise on masked actions; ``max_cycles``: truncate after this
    many epochs (``None``: the world's own end); ``observation_key``: the key of the
    observation vector in each node's observation dict (default ``"observation"``; RLlib's
    action-masking modules read ``"observations"``); ``info_task_ids``: add the task ids to the
    infos; any ``ClusterConfig`` field (or ``workload``) as a keyword overrides the config
    (``mara_env.env(n_nodes=4, load=1.5)``). Any other keyword raises
    :class:`mara_env.errors.UnexpectedArgumentError`, both a ``ConfigError`` and a
    ``TypeError`` with Python's message (``... got an unexpected keyword argument 'name'``).

Version history:
    Infos (every id): one fixed schema of NumPy scalars at ``reset`` and every step, with the
    completion rate so far at every step; task ids only on request (``info_task_ids``).
    v1: two slot columns after the family one-hot (``serial``: the task's arrival serial,
    ``budget``: its step budget in node-epochs); every earlier column is unchanged.
    v0: initial release.

Example:
    >>> import mara_env
    >>> env = mara_env.env(config="tiny")
    >>> env.reset(seed=42)
    >>> for agent in env.agent_iter():
    ...     observation, reward, termination, truncation, info = env.last()
    ...     action = None if termination or truncation else env.action_space(agent).sample(
    ...         observation["action_mask"])
    ...     env.step(action)
    >>> env.unwrapped.episode_metrics()["arrived"] > 0
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from mara_env.curves.traces import TraceSourceLike
from mara_env.envs.actions import check_action
from mara_env.envs.env_base import (
    OBSERVATION_KEY,
    ClusterEnvBase,
    build_spaces,
    check_observation_key,
)
from mara_env.envs.epoch import finish_epoch
from mara_env.envs.infos import copy_info
from mara_env.envs.order_enforcing import OrderEnforcing
from mara_env.envs.render import RENDER_MODES
from mara_env.errors import ActionError, EnvStateError
from mara_env.worlds.config import LATEST_WORLD_VERSION, ClusterConfig, env_id

#: The id of the latest world (older ones stay registered: ``mara_env.worlds.config.env_id``).
ENV_ID = env_id(LATEST_WORLD_VERSION)


class raw_env(ClusterEnvBase, AECEnv):
    """The cluster as a PettingZoo AEC environment; see the module docstring."""

    metadata = {  # noqa: RUF012 - PettingZoo reads a class attribute
        "name": ENV_ID,
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": True,
        "render_fps": 4,
    }

    def __init__(
        self,
        config: str | ClusterConfig = "training",
        *,
        trace_source: TraceSourceLike | None = None,
        render_mode: str | None = None,
        strict: bool = False,
        max_cycles: int | None = None,
        observation_key: str = OBSERVATION_KEY,
        info_task_ids: bool = False,
        **overrides: Any,
    ) -> None:
        super().__init__()
        self._build_cluster(
            config,
            trace_source,
            render_mode,
            strict,
            overrides,
            max_cycles=max_cycles,
            info_task_ids=info_task_ids,
        )
        self.observation_key = check_observation_key(observation_key, "raw_env")
        self.possible_agents = [f"node_{i}" for i in range(self.config.n_nodes)]
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        self._step_caller = {
            agent: f"{self.config.env_id} step() for {agent}" for agent in self.possible_agents
        }
        observation_space, action_space, self.state_space = build_spaces(
            self.config, self.observation_key
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, action_space)
        self._observation_space, self._action_space = observation_space, action_space
        self.np_random, self.np_random_seed = seeding.np_random()
        self._turn = 0
        self._last_node = self.config.n_nodes - 1
        self.agents: list[str] = []
        self._choices = np.full(self.config.n_nodes, self.config.idle_action, dtype=np.int64)
        self._illegal_this_epoch = 0
        self._rewards_pending = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        self.simulator.reset(self.np_random)
        self.builder.refresh()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        info = self._reset_info()
        self.infos: dict[str, dict[str, Any]] = {agent: copy_info(info) for agent in self.agents}
        self._turn = 0
        self.agent_selection = self.possible_agents[0]
        self._start_epoch()
        if self.render_mode == "human":
            self.render()

    def _start_epoch(self) -> None:
        self._choices[:] = self.config.idle_action
        self._illegal_this_epoch = 0

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if not self.simulator.has_episode:
            raise EnvStateError("observe() called before reset(); call env.reset(seed=...) first.")
        return {
            self.observation_key: self.builder.observe(self._index[agent]),
            "action_mask": self.builder.mask(),
        }

    def state(self) -> np.ndarray:
        if not self.simulator.has_episode:
            raise EnvStateError("state() called before reset(); call env.reset(seed=...) first.")
        return self.builder.state_vector(self._choices)

    def step(self, action: Any) -> None:
        if not self.agents:
            raise EnvStateError(
                "step() called before reset() or after the episode ended; call "
                "env.reset(seed=...) first."
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        node = self._turn
        slot = check_action(action, self.config, self._step_caller[agent])
        if not self.builder.legal[slot]:
            if self.strict:
                raise ActionError(
                    f"{self.config.env_id}: {agent} chose action {slot}, which its action mask forbids "
                    "(empty slot or task at max_nodes_per_task); strict=True turns this into an "
                    "error. Sample with the mask, or use strict=False to idle instead."
                )
            slot = self.config.idle_action
            self._illegal_this_epoch += 1
            self.simulator.core.illegal_actions[0] += 1
        self.builder.record_choice(slot)
        self._choices[node] = slot
        self._cumulative_rewards[agent] = 0.0
        if node == self._last_node:
            self._end_epoch()
            self._accumulate_rewards()
        elif self._rewards_pending:
            # Rewards are paid at the end of an epoch; the next step clears them once.
            self._clear_rewards()
            self._rewards_pending = False
        self._turn = 0 if node == self._last_node else node + 1
        self.agent_selection = self.possible_agents[self._turn]
        if self.render_mode == "human" and self._turn == 0:
            self.render()

    def _end_epoch(self) -> None:
        reward, info = finish_epoch(
            self.simulator,
            self.builder,
            self._choices,
            self._illegal_this_epoch,
            0,
            task_ids=self.info_task_ids,
        )
        terminated, truncated = self._episode_end()
        for agent in self.agents:
            self.rewards[agent] = reward
            self.infos[agent] = copy_info(info)
            self.terminations[agent] = terminated
            self.truncations[agent] = truncated
        self._rewards_pending = True
        self._start_epoch()


def env(config: str | ClusterConfig = "training", **kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's order-enforcing wrapper (use ``raw_env`` in hot loops).

    Takes the same arguments as :class:`raw_env`. Calls that need an episode (``step``,
    ``observe``, ``last``, ``state``, ``render``, ``agent_iter``) raise
    :class:`mara_env.EnvStateError` before the first ``reset`` (see
    :mod:`mara_env.envs.order_enforcing`).
    """
    return OrderEnforcing(raw_env(config, **kwargs))


def node_turns(env: AECEnv) -> Iterator[tuple[str, int]]:
    """The turns of an AEC episode that need an action: ``(agent, node index)`` pairs.

    Steps every terminated or truncated agent with ``None`` (as PettingZoo requires) and stops
    when no agent is left; the caller steps each yielded agent with its action.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=0)
        >>> for agent, node in node_turns(env):
        ...     env.step(env.config.idle_action)
        >>> env.agents
        []
    """
    index = {agent: i for i, agent in enumerate(env.possible_agents)}
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        yield agent, index[agent]
