"""Validation episodes of MARA's training, played beside the training on the other core.

A validation plays fixed episodes (train split, every workload, at the deployed temperature) with
a snapshot of the policy's weights; training only needs its score later, to keep the best
weights. :class:`ValidationPlayer` plays them in a worker process, so that the next updates run
meanwhile on the main process's core, or in this process (``workers=0``). Both give the same
scores: each episode is seeded by its own seed, whatever process plays it.

:func:`tune_temperature` is a diagnostic over the same kind of episodes: a checkpoint's
validation completion at several sampling temperatures.

Example:
    >>> from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
    >>> from mara_env import get_config
    >>> network = PolicyConfig(width=16, layers=1, heads=2)
    >>> configs = tuple(get_config("tiny", workload=name) for name in ("rl", "vision"))
    >>> player = ValidationPlayer(Episodes(configs, network, "wls", 4, 0.35), workers=0)
    >>> rates = player.submit(MaraPolicy(network).state_dict(), [900, 901]).result()
    >>> len(rates)  # one rate per config and seed
    4
    >>> player.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from mara_env import ClusterConfig, get_config
from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
from mara_env.benchmarks.common.workers import worker_pool
from mara_env.benchmarks.mara.rollouts import ClusterVector
from mara_env.benchmarks.mara.settings import WORKLOADS

#: The temperatures :func:`tune_temperature` tries by default (the last is the deployed one).
TEMPERATURES = (1.0, 0.7, 0.5, 0.35)
#: The seeds :func:`tune_temperature` plays by default, per workload (train split).
TEMPERATURE_SEEDS = tuple(range(910, 915))


@dataclass(frozen=True)
class Episodes:
    """What a validation plays: each config with each seed, MARA's features from
    ``predictor`` (``n_samples`` per task), sampling at ``temperature``.

    Attributes:
        configs: One config per workload.
        network: The policy's sizes (to rebuild it from a snapshot of its weights).
        predictor: The feature predictor's name.
        n_samples: Prediction samples per task.
        temperature: The sampling temperature (the deployed one).
    """

    configs: tuple[ClusterConfig, ...]
    network: PolicyConfig
    predictor: str
    n_samples: int
    temperature: float


def agent_episodes(
    agent: Mara, configs: Sequence[ClusterConfig], temperature: float | None = None
) -> Episodes:
    """What a loaded MARA agent plays on ``configs``: its network, predictor and samples, at the
    temperature it ships with (or ``temperature``)."""
    return Episodes(
        tuple(configs),
        agent.policy.config,
        agent.predictor_name,
        agent.features.n_samples,
        agent.temperature if temperature is None else temperature,
    )


def weights_snapshot(state: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A copy of a ``state_dict``, on the CPU, that later updates of the network do not
    reach."""
    return {key: value.detach().to("cpu", copy=True) for key, value in state.items()}


def weights_to_send(state: Mapping[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """A copy of a ``state_dict`` as NumPy arrays, to hand to another process
    (:func:`load_weights` puts it into a network there).

    Arrays travel inside the pickle; torch tensors would each cross through shared memory with a
    handshake of its own with the sending process, and a MARA network has dozens of small ones:
    their handover took many times the arrays', and a worker waits for it on every rollout.

    Example:
        >>> network = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
        >>> copy = MaraPolicy(network.config)
        >>> load_weights(copy, weights_to_send(network.state_dict()))
        >>> all(torch.equal(a, b) for a, b in zip(network.parameters(), copy.parameters()))
        True
    """
    return {key: value.detach().to("cpu").numpy().copy() for key, value in state.items()}


def load_weights(policy: MaraPolicy, weights: Mapping[str, np.ndarray]) -> None:
    """Load arrays made by :func:`weights_to_send` into ``policy`` (strictly, as
    :meth:`torch.nn.Module.load_state_dict` does)."""
    policy.load_state_dict({key: torch.from_numpy(value) for key, value in weights.items()})


def play_episodes(episodes: Episodes, policy: MaraPolicy, seeds: Sequence[int]) -> list[float]:
    """Completion rates of ``policy`` on every config of ``episodes`` with each of ``seeds``,
    config-major."""
    configs = list(episodes.configs)
    vector = ClusterVector(
        configs,
        policy,
        0,
        predictor=episodes.predictor,
        n_samples=episodes.n_samples,
        episode_seeds=[list(seeds)] * len(configs),
        temperature=episodes.temperature,
    )
    was_training = policy.training
    policy.eval()
    while vector.live:
        vector.step()
    policy.train(was_training)
    rates = {(row["cluster"], row["seed"]): row["completion_rate"] for row in vector.finished}
    return [float(rates[c, s]) for c in range(len(configs)) for s in seeds]


def _play_state(
    episodes: Episodes, weights: dict[str, np.ndarray], seeds: Sequence[int]
) -> list[float]:
    policy = MaraPolicy(episodes.network)
    load_weights(policy, weights)
    return play_episodes(episodes, policy, seeds)


class ValidationPlayer:
    """Plays validation episodes of weight snapshots, in a worker process or in this one.

    Args:
        episodes: What every validation plays.
        workers: 1 plays in a worker process (a ``spawn`` child that ends with this process),
            0 plays in this process when a snapshot is submitted.

    Raises:
        ValueError: If ``workers`` is not 0 or 1.
    """

    def __init__(self, episodes: Episodes, workers: int = 1) -> None:
        if workers not in (0, 1):
            raise ValueError(f"ValidationPlayer: workers must be 0 or 1, got {workers!r}.")
        self.episodes = episodes
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        if workers:
            self._pool = worker_pool()

    def submit(self, state: dict[str, torch.Tensor], seeds: Sequence[int]) -> Future[list[float]]:
        """Start playing ``seeds`` with the weights ``state`` (a snapshot: later changes to the
        training policy do not reach it); the future's result is :func:`play_episodes`'s."""
        weights = weights_to_send(state)
        if self._pool is not None:
            return self._pool.submit(_play_state, self.episodes, weights, list(seeds))
        future: Future[list[float]] = Future()
        future.set_result(_play_state(self.episodes, weights, seeds))
        return future

    def close(self) -> None:
        """Stop the worker (waits for the episodes it is playing)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def tune_temperature(
    checkpoint: Path,
    temperatures: Sequence[float] = TEMPERATURES,
    seeds: Sequence[int] = TEMPERATURE_SEEDS,
    preset: str = "training",
) -> dict[str, float]:
    """Validation completion of a checkpoint at each sampling temperature (a diagnostic).

    Every temperature plays the same episodes (``preset``, train split, each workload with each
    of ``seeds``, all below 1000). The card is left as it is: the temperature is a training
    setting (``--temperature``), used in rollouts, ratios and validation, so changing it after
    training would ship a policy that was not the one trained.

    Returns:
        The mean completion rate by temperature (as text, e.g. ``"0.35"``), to 4 decimals.
    """
    agent = Mara.load(checkpoint)
    configs = tuple(get_config(preset, workload=workload) for workload in WORKLOADS)
    scores: dict[str, float] = {}
    for temperature in temperatures:
        rates = play_episodes(agent_episodes(agent, configs, temperature), agent.policy, seeds)
        scores[str(temperature)] = round(float(np.mean(rates)), 4)
    return scores
