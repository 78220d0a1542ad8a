"""The scheduler protocol every agent follows, and a base class for epoch-planning schedulers.

A scheduler is reset with the cluster configuration and a seed, then asked for one action per
node: ``act(observation, node)`` receives exactly what the AEC environment gives that node, the
dict ``{"observation": float32 vector, "action_mask": int8 vector}``, and returns a slot index or
``config.idle_action``. Nothing else crosses the boundary: a scheduler never sees the simulator,
so it knows only what a real cluster scheduler knows (see :mod:`mara_env.sim.observation`).

Most heuristics decide the whole epoch at once. :class:`EpochScheduler` does that bookkeeping:
its subclasses implement :meth:`EpochScheduler.plan`, called at the first node of each epoch,
and the planned action of every later node is replayed (or replaced by idle if that node's mask
forbids it).

Example:
    >>> import numpy as np
    >>> import mara_env
    >>> from mara_env.agents.base import EpochScheduler
    >>> class EveryoneOnSlotZero(EpochScheduler):
    ...     name = "slot_zero"
    ...     def plan(self, view, mask):
    ...         return np.zeros(self.config.n_nodes, dtype=np.int64)
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=0)
    >>> scheduler = EveryoneOnSlotZero()
    >>> scheduler.reset(env.config, seed=0)
    >>> observation = env.observe("node_0")
    >>> expected = 0 if observation["action_mask"][0] else env.config.idle_action  # slot 0 empty?
    >>> scheduler.act(observation, node=0) == expected
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

from mara_env import ClusterConfig, decode_observation
from mara_env.agents.tracking import SlotTracker
from mara_env.envs.env_base import ClusterEnvBase
from mara_env.sim.observation import SlotView, nodes_decided

#: What ``act`` receives: the AEC observation dict of one node.
Observation = Mapping[str, np.ndarray]


@runtime_checkable
class Scheduler(Protocol):
    """What the evaluation harness and the leaderboard need from a scheduler.

    Attributes:
        name: Short identifier shown in result tables.
    """

    name: str

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Prepare for a new episode of ``config``; seed the scheduler's own generator."""
        ...

    def act(self, observation: Observation, node: int) -> int:
        """Return node ``node``'s action (a slot index, or ``config.idle_action``)."""
        ...


@runtime_checkable
class PrivilegedScheduler(Scheduler, Protocol):
    """A scheduler that reads hidden environment state on purpose (clairvoyant references,
    schedulers fed the oracle predictor).

    It breaks the information boundary by design, so it says so (``privileged = True``, which
    result tables show) and must be handed the environment: :func:`mara_env.agents.evaluation.evaluate`
    calls :meth:`bind` after resetting the environment and the scheduler, every episode, on
    every scheduler :func:`mara_env.predictors.base.is_privileged` calls privileged. Other harnesses
    must do the same. A scheduler whose ``privileged`` is false is never bound, so it cannot
    read what it does not declare.
    """

    privileged: bool

    def bind(self, env: ClusterEnvBase) -> None:
        """Give the scheduler the environment whose episode it is about to act in."""
        ...


class NotResetError(RuntimeError):
    """A scheduler was asked to act before ``reset(config, seed)``."""


class EpochScheduler(ABC):
    """Base class for schedulers that plan every node of an epoch at once.

    At the first node of an epoch (no node has decided yet, and the node index did not grow
    since the previous call) :meth:`act` decodes the observation, updates :attr:`tracker`
    (which tells whether each slot still holds the task it held last epoch) and calls
    :meth:`plan`. Later nodes of the epoch get their planned action, or idle if their action
    mask forbids it. The index rule also makes it work with the Parallel form, where every
    node sees ``nodes_decided == 0``, provided nodes are asked in index order.

    Subclasses set ``name`` and implement :meth:`plan`; they may override :meth:`on_reset` to
    clear their own per-episode memory. :attr:`rng` is the scheduler's only source of
    randomness.

    Attributes:
        config: The configuration of the current episode (set by :meth:`reset`).
        rng: Generator created from the seed given to :meth:`reset`.
        tracker: Task identity per slot across epochs.
        previous_slots: Per node, the slot it trained last epoch if that slot still holds the
            same task, else ``config.idle_action``. Planning with it keeps nodes on their task,
            which avoids the ``switch_cost``.
    """

    name: str = "epoch_scheduler"

    def __init__(self) -> None:
        self._config: ClusterConfig | None = None
        self.rng = np.random.default_rng()
        self.tracker = SlotTracker()
        self.previous_slots = np.zeros(0, dtype=np.int64)
        self._planned = np.zeros(0, dtype=np.int64)
        self._chosen = np.zeros(0, dtype=np.int64)

    @property
    def config(self) -> ClusterConfig:
        """The configuration passed to the last :meth:`reset`."""
        if self._config is None:
            raise NotResetError(
                f"{type(self).__name__} ({self.name!r}) has no configuration yet: call "
                "reset(config, seed) before act()."
            )
        return self._config

    def reset(self, config: ClusterConfig, seed: int | None = None) -> None:
        """Start a new episode of ``config``; all randomness comes from ``seed``."""
        self._config = config
        self.rng = np.random.default_rng(seed)
        self.tracker.reset(config.n_slots)
        idle = np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        self.previous_slots = idle.copy()
        self._planned = idle.copy()
        self._chosen = idle.copy()
        self._last_node = config.n_nodes
        self.on_reset()

    def on_reset(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """Clear subclass memory at the start of an episode (default: nothing to clear)."""

    def act(self, observation: Observation, node: int) -> int:
        """Node ``node``'s action: planned at the epoch's first node, replayed for the others."""
        config = self.config
        mask = np.asarray(observation["action_mask"])
        if not 0 <= node < config.n_nodes:
            raise ValueError(
                f"{type(self).__name__}.act: node {node} is outside 0..{config.n_nodes - 1} for "
                "this config; pass the index of the acting node (node_i -> i)."
            )
        vector = observation["observation"]
        if nodes_decided(vector, config) == 0 and node <= self._last_node:
            self._start_epoch(decode_observation(vector, config), mask)
        self._last_node = node
        action = int(self._planned[node])
        if not 0 <= action < config.n_actions or mask[action] == 0:
            action = config.idle_action
        self._chosen[node] = action
        return action

    def _start_epoch(self, view: SlotView, mask: np.ndarray) -> None:
        config = self.config
        continuing = self.tracker.update(view)
        previous = self._chosen
        keep = (previous < config.n_slots) & continuing[np.minimum(previous, config.n_slots - 1)]
        self.previous_slots = np.where(keep, previous, config.idle_action)
        self._chosen = np.full(config.n_nodes, config.idle_action, dtype=np.int64)
        planned = np.asarray(self.plan(view, mask))
        if planned.shape != (config.n_nodes,) or not np.issubdtype(planned.dtype, np.integer):
            raise ValueError(
                f"{type(self).__name__}.plan must return an int array of shape "
                f"({config.n_nodes},) (one action per node), got dtype {planned.dtype} and "
                f"shape {planned.shape}."
            )
        self._planned = planned.astype(np.int64)

    @abstractmethod
    def plan(self, view: SlotView, mask: np.ndarray) -> np.ndarray:
        """One action per node for this epoch.

        Args:
            view: The first node's decoded observation (no node has chosen yet).
            mask: The first node's action mask (occupied slots and idle).

        Returns:
            An int array of shape ``(n_nodes,)``: a slot index or ``config.idle_action`` each.
        """
