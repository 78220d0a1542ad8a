"""PPO rollouts of MARA's training, played before each update or one update ahead of it.

:class:`PPORollouts` is where PPO's rollouts come from. With ``rollout_lag`` 0 it steps its own
:class:`~mara_env.benchmarks.mara.rollouts.ClusterVector` with the current weights, in this process,
before each update (on-policy). With ``--rollout-lag 1``
(:class:`mara_env.benchmarks.mara.settings.TrainSettings`), the learner hands a :class:`RolloutWorker`
its current weights and trains on the rollouts the worker played with the weights before them,
so that both cores are busy: the worker plays the next rollouts while the learner updates. The
worker keeps its vector between calls, so its episodes run on across updates exactly as the
learner's own vector's would; what changes is only which weights chose the actions (one update
older). PPO's ratio divides by the log-probabilities the rollout policy had, and the critic
recomputes the rollout's values before GAE, so the update stays correct for the policy that
played; the price is one update of lag. With ``--rollout-workers N`` the clusters are split into
N shards (:meth:`RolloutPlan.shard`), one worker each, on-policy or one update behind, and the
learner merges their rollouts (:func:`merge_rollouts`); the workers are local processes or, with
``--backend ray``, Ray actors, which play the same rollouts.

Example:
    >>> from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
    >>> from mara_env import get_config
    >>> network = PolicyConfig(width=16, layers=1, heads=2)
    >>> plan = RolloutPlan((get_config("tiny"),) * 2, network, "wls", 4, 0.35, seed=0, epochs=3)
    >>> worker = RolloutWorker(plan, workers=0)
    >>> rollout = worker.submit(MaraPolicy(network).state_dict()).result()
    >>> len(rollout.steps), tuple(rollout.steps[0].actions.shape)
    (3, (2, 2))
    >>> worker.close()
    >>> policy = MaraPolicy(network)
    >>> rollouts = PPORollouts(plan, policy, policy, lag=1, workers=0)
    >>> steps, batch, values, last, finished = rollouts.next(more=False)
    >>> len(steps), len(batch.reward), len(values), tuple(last.shape)
    (3, 6, 3, (2,))
    >>> rollouts.close()
"""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import torch

from mara_env import ClusterConfig
from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
from mara_env.benchmarks.common.ray_runtime import import_ray, start_ray
from mara_env.benchmarks.common.stopwatch import Stopwatch
from mara_env.benchmarks.common.threads import set_torch_threads
from mara_env.benchmarks.common.workers import worker_pool
from mara_env.benchmarks.mara.batches import merge_steps, split_steps
from mara_env.benchmarks.mara.rollouts import ClusterVector, StepBatch
from mara_env.benchmarks.mara.validation import load_weights, weights_to_send

#: Where rollout workers run: local processes, or Ray actors.
BACKENDS = ("process", "ray")


@dataclass(frozen=True)
class RolloutPlan:
    """What the worker plays: the clusters of the learner's rollout vector.

    Attributes:
        configs: One config per cluster.
        network: The policy's sizes (to rebuild it from a snapshot of its weights).
        predictor: The feature predictor's name.
        n_samples: Prediction samples per task.
        temperature: The sampling temperature (the deployed one).
        seed: Seeds the vector's episode seeds (as the learner's own vector would be seeded).
        epochs: Epochs every cluster plays per rollout.
    """

    configs: tuple[ClusterConfig, ...]
    network: PolicyConfig
    predictor: str
    n_samples: int
    temperature: float
    seed: int
    epochs: int

    def shard(self, index: int, count: int) -> RolloutPlan:
        """The clusters ``index, index + count, ...`` of this plan, which worker ``index`` of
        ``count`` plays; with one worker, the plan itself. Each shard draws its episode seeds
        from a seed of its own (derived from ``seed`` and ``index``), so a run depends on the
        number of workers, never on their timing.

        Example:
            >>> from mara_env.agents.mara.policy import PolicyConfig
            >>> from mara_env import get_config
            >>> plan = RolloutPlan((get_config("tiny"),) * 5, PolicyConfig(), "wls", 4, 0.35, 0, 3)
            >>> [len(plan.shard(k, 2).configs) for k in range(2)], plan.shard(0, 1) == plan
            ([3, 2], True)
        """
        if count == 1:
            return self
        seed = int(np.random.SeedSequence([self.seed, index]).generate_state(1)[0])
        return replace(self, configs=self.configs[index::count], seed=seed)


@dataclass
class Rollout:
    """One update's rollouts.

    The epochs travel merged, as one tensor per field: a process hands torch tensors over in
    shared memory one by one, and an update's hundreds of small ones cost more to pass than to
    play.

    Attributes:
        batch: Every epoch's :class:`~mara_env.benchmarks.mara.rollouts.StepBatch`, epoch after epoch
            (its ``value`` is the rollout policy's own value head: a learner with a critic
            recomputes it).
        sizes: The rows of each epoch in ``batch``.
        last_slots, last_globals: The inputs of the state after the last epoch (to bootstrap).
        finished: The metrics of the episodes that ended during these epochs.
        seconds: Where the rollout's time went (features, policy, simulation; see
            :attr:`~mara_env.benchmarks.mara.rollouts.ClusterVector.stopwatch`).
    """

    batch: StepBatch
    sizes: tuple[int, ...]
    last_slots: torch.Tensor
    last_globals: torch.Tensor
    finished: list[dict[str, Any]]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def steps(self) -> list[StepBatch]:
        """One step batch per epoch (views of ``batch``)."""
        return split_steps(self.batch, self.sizes)


class _Player:
    """The worker's side: the policy and the vector, kept between rollouts."""

    def __init__(self, plan: RolloutPlan) -> None:
        self.plan = plan
        self.policy = MaraPolicy(plan.network).eval()
        self.vector = ClusterVector(
            list(plan.configs),
            self.policy,
            plan.seed,
            predictor=plan.predictor,
            n_samples=plan.n_samples,
            temperature=plan.temperature,
        )

    def play(self, weights: dict[str, np.ndarray]) -> Rollout:
        load_weights(self.policy, weights)
        steps = [self.vector.step() for _ in range(self.plan.epochs)]
        slots, globals_ = self.vector.inputs()
        finished = list(self.vector.finished)
        self.vector.finished.clear()
        sizes = tuple(len(step.reward) for step in steps)
        batch = merge_steps(steps)
        return Rollout(batch, sizes, slots, globals_, finished, self.vector.stopwatch.take())


class _RayPlayer(_Player):
    """The player as a Ray actor: torch on one thread, as in a worker process."""

    def __init__(self, plan: RolloutPlan) -> None:
        set_torch_threads(1)
        super().__init__(plan)


#: The player of this worker process (built by its first rollout).
_PLAYER: _Player | None = None


def _play(plan: RolloutPlan, weights: dict[str, np.ndarray]) -> Rollout:
    global _PLAYER
    if _PLAYER is None:
        _PLAYER = _Player(plan)
    return _PLAYER.play(weights)


class RolloutWorker:
    """Plays rollouts of weight snapshots in a worker process (or, ``workers=0``, in this one).

    Args:
        plan: What every rollout plays.
        workers: 1 plays in a ``spawn`` child that ends with this process (or, with ``backend``
            ``"ray"``, in a Ray actor of one CPU: Ray must be started); 0 plays in this process
            when a snapshot is submitted (the same rollouts, one after the other).
        backend: ``"process"`` or ``"ray"``.

    Raises:
        ValueError: If ``workers`` is not 0 or 1, or ``backend`` is unknown.
    """

    def __init__(self, plan: RolloutPlan, workers: int = 1, backend: str = "process") -> None:
        if workers not in (0, 1):
            raise ValueError(f"RolloutWorker: workers must be 0 or 1, got {workers!r}.")
        if backend not in BACKENDS:
            raise ValueError(f"RolloutWorker: backend must be one of {BACKENDS}, got {backend!r}.")
        self.plan = plan
        self._pool: ProcessPoolExecutor | None = None
        self._player: _Player | None = None
        self._actor: Any = None
        if workers and backend == "ray":
            ray = import_ray("--backend ray")
            self._actor = ray.remote(num_cpus=1)(_RayPlayer).remote(plan)
        elif workers:
            self._pool = worker_pool()
        else:
            self._player = _Player(plan)

    def submit(self, state: dict[str, torch.Tensor]) -> Future[Rollout]:
        """Start the next rollout with the weights ``state`` (a snapshot is taken: later updates
        of the learner's network do not reach it)."""
        weights = weights_to_send(state)
        if self._actor is not None:
            return cast("Future[Rollout]", self._actor.play.remote(weights).future())
        if self._pool is not None:
            return self._pool.submit(_play, self.plan, weights)
        if self._player is None:
            raise RuntimeError("RolloutWorker.submit() after close(); make a new worker.")
        future: Future[Rollout] = Future()
        future.set_result(self._player.play(weights))
        return future

    def close(self) -> None:
        """Stop the worker (a process waits for a rollout it is playing; an actor is ended)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        if self._actor is not None:
            import_ray("--backend ray").kill(self._actor)
        self._pool = self._player = self._actor = None


class PPORollouts:
    """Where PPO's rollouts come from.

    * ``lag`` 0, ``workers`` 0 or 1: a vector of its own, stepped with the current weights in
      this process before each update (on-policy);
    * ``lag`` 0, ``workers`` N >= 2: the clusters split into N shards
      (:meth:`RolloutPlan.shard`), each played by its own worker process with the current
      weights while the learner waits (on-policy, N cores sampling);
    * ``lag`` 1: N shards (one when N is 0 or 1) played one update behind, so that the workers
      play the next rollouts while the learner updates; ``workers`` 0 plays in this process
      (the same rollouts as 1, one after the other).

    The learner's critic recomputes the values of rollouts played elsewhere. After each
    :meth:`next`, :attr:`seconds` says where that rollout's time went (summed over the
    processes that played it).

    Args:
        plan: What every rollout plays (the clusters, network, predictor, temperature, seed
            and epochs per update).
        policy: The learner's policy (its weights play the rollouts, or the next ones).
        critic: The value network whose estimates the rollouts carry.
        lag: 0 (on-policy) or 1 (one update behind).
        workers: Rollout worker processes (see above).
        backend: ``"process"`` (local processes) or ``"ray"`` (Ray actors of one CPU each, on
            the cluster at ``ray_address``, or on a local Ray instance started for the run and
            shut down by :meth:`close`); the same rollouts either way.
        ray_address: As for :func:`ray.init` (``"auto"``, ``"ray://head:10001"``).

    Raises:
        ValueError: If ``lag`` is not 0 or 1, or ``workers`` is negative or exceeds the
            clusters.
        mara_env.benchmarks.common.ray_runtime.RayUnavailable: If Ray is asked for and cannot start.
    """

    def __init__(
        self,
        plan: RolloutPlan,
        policy: MaraPolicy,
        critic: MaraPolicy,
        *,
        lag: int,
        workers: int,
        backend: str = "process",
        ray_address: str | None = None,
    ) -> None:
        if lag not in (0, 1):
            raise ValueError(f"PPORollouts: lag must be 0 or 1, got {lag!r}.")
        if not 0 <= workers <= len(plan.configs):
            raise ValueError(
                f"PPORollouts: workers must be between 0 and the {len(plan.configs)} clusters, "
                f"got {workers!r}."
            )
        self.policy, self.critic = policy, critic
        self.epochs, self.lag = plan.epochs, lag
        self.seconds: dict[str, float] = {}
        self.vector: ClusterVector | None = None
        self.workers: list[RolloutWorker] = []
        self.pending: list[Future[Rollout]] | None = None
        self.ray_started = False
        if lag or rollout_processes(lag, workers):
            count = max(workers, 1)
            if backend == "ray" and workers:
                self.ray_started = start_ray("--backend ray", ray_address, count)
            self.workers = [
                RolloutWorker(plan.shard(index, count), min(workers, 1), backend)
                for index in range(count)
            ]
            if lag:
                self.pending = self._submit()
        else:
            self.vector = ClusterVector(
                list(plan.configs),
                policy,
                plan.seed,
                predictor=plan.predictor,
                n_samples=plan.n_samples,
                temperature=plan.temperature,
                critic=critic,
            )

    def _submit(self) -> list[Future[Rollout]]:
        state = self.policy.state_dict()
        return [worker.submit(state) for worker in self.workers]

    def next(
        self, *, more: bool
    ) -> tuple[list[StepBatch], StepBatch, list[torch.Tensor], torch.Tensor, list[dict[str, Any]]]:
        """The next update's steps and their merged batch, the critic's raw value of each step
        and of the state after them, and the episodes that ended (``more``: another update will
        follow)."""
        if self.vector is not None:
            steps = [self.vector.step() for _ in range(self.epochs)]
            finished = list(self.vector.finished)
            self.vector.finished.clear()
            self.seconds = self.vector.stopwatch.take()
            own = [step.value for step in steps]
            return steps, merge_steps(steps), own, self.vector.values(), finished
        if not self.lag and self.workers:
            self.pending = self._submit()
        if self.pending is None:
            raise RuntimeError("PPORollouts.next() after the last update or close().")
        rollout = merge_rollouts([future.result() for future in self.pending])
        # with lag 1, the rollout after this one plays with the weights this update starts from
        self.pending = self._submit() if self.lag and more else None
        self.seconds = rollout.seconds
        batch = rollout.batch
        with torch.no_grad():
            values = self.critic.encode(batch.slots, batch.globals).value
            last = self.critic.encode(rollout.last_slots, rollout.last_globals).value
        sizes = list(rollout.sizes)
        return rollout.steps, batch, list(values.split(sizes)), last, rollout.finished

    def close(self) -> None:
        """Stop the workers, if any (and Ray, if it was started for them)."""
        for worker in self.workers:
            worker.close()
        self.workers, self.pending = [], None
        if self.ray_started:
            import_ray("--backend ray").shutdown()
            self.ray_started = False


def rollout_processes(lag: int, workers: int) -> int:
    """The worker processes :class:`PPORollouts` plays in for ``lag`` and ``workers`` (0: the
    learner's own process).

    Example:
        >>> [rollout_processes(0, n) for n in (0, 1, 2)], [rollout_processes(1, n) for n in (0, 1, 2)]
        ([0, 0, 2], [0, 1, 2])
    """
    return workers if lag or workers >= 2 else 0


def merge_rollouts(shards: list[Rollout]) -> Rollout:
    """One rollout of the shards' clusters, shard after shard in each epoch; a finished
    episode's ``cluster`` is renumbered to its index in the whole plan (shard ``k`` of ``n``
    holds clusters ``k, k + n, ...``); seconds are summed. One shard is returned as it is."""
    if len(shards) == 1:
        return shards[0]
    count = len(shards)
    finished = [
        {**row, "cluster": index + count * row["cluster"]}
        for index, shard in enumerate(shards)
        for row in shard.finished
    ]
    watch = Stopwatch()
    for shard in shards:
        watch.add(shard.seconds)
    steps = [merge_steps(epoch) for epoch in zip(*(shard.steps for shard in shards), strict=True)]
    return Rollout(
        merge_steps(steps),
        tuple(len(step.reward) for step in steps),
        torch.cat([shard.last_slots for shard in shards]),
        torch.cat([shard.last_globals for shard in shards]),
        finished,
        watch.totals,
    )
