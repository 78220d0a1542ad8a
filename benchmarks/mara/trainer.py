"""The state of one MARA training run, shared by its imitation and PPO phases.

A :class:`Trainer` owns what both phases read and change: the policy (fresh, seeded by the
settings' seed, or a warm start's weights), the generator of minibatch orders, the count of
cluster-epochs played, the phases' timings and the :class:`~benchmarks.mara.selection.Selection`
that logs rows and keeps the best validated weights. The phases themselves are
:func:`benchmarks.mara.imitation.imitate` and :func:`benchmarks.mara.ppo.ppo`; the order in
which they draw from the one generator is part of what makes a run reproducible.

Example:
    >>> import tempfile
    >>> from benchmarks.mara.settings import QUICK, TrainSettings
    >>> settings = TrainSettings(**{**QUICK, "predictor": "wls"})
    >>> trainer = Trainer(settings, Path(tempfile.mkdtemp()) / "log.csv", progress=False)
    >>> trainer.log(phase="ppo", update=0)
    >>> trainer.log_path.read_text().splitlines()[1].split(",")[:2]
    ['ppo', '0']
    >>> trainer.close()
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from agents.mara.agent import Mara
from agents.mara.policy import MaraPolicy
from benchmarks.mara.batches import score_actions
from benchmarks.mara.rollouts import ClusterVector, StepBatch
from benchmarks.mara.selection import Selection
from benchmarks.mara.settings import WORKLOADS, TrainSettings
from benchmarks.mara.training_log import TrainingLog
from benchmarks.mara.validation import Episodes, ValidationPlayer, weights_snapshot


class Trainer:
    """The policy and bookkeeping of a run of :class:`~benchmarks.mara.settings.TrainSettings`.

    Args:
        settings: The run's settings.
        log_path: The CSV log (rewritten).
        progress: Show progress bars.
        init: Starting weights (a MARA checkpoint of the same network and predictor) instead of
            a fresh network.
        validation_workers: 1 plays the validation episodes in a worker process while the
            training goes on (the scores, the kept weights and the log are the same as with
            0, which plays them in this process before going on).
        rollout_workers: PPO's rollout worker processes
            (:class:`~benchmarks.mara.rollout_worker.PPORollouts`): with
            ``settings.rollout_lag == 1``, N >= 1 play the rollouts beside the updates (0: in
            this process, the same rollouts one after the other); with lag 0, N >= 2 share
            each update's rollouts while the learner waits (0 or 1: in this process).
        rollout_backend: ``"process"`` (local processes) or ``"ray"`` (Ray actors; the same
            rollouts).
        ray_address: The Ray cluster of ``"ray"`` (None: a local instance for the run).

    Raises:
        ValueError: If ``init`` was made for another network, predictor or temperature, or
            ``rollout_workers`` is negative or exceeds the clusters.
    """

    def __init__(
        self,
        settings: TrainSettings,
        log_path: Path,
        progress: bool = True,
        init: Path | None = None,
        validation_workers: int = 0,
        rollout_workers: int = 1,
        rollout_backend: str = "process",
        ray_address: str | None = None,
    ) -> None:
        if not 0 <= rollout_workers <= settings.clusters:
            raise ValueError(
                f"rollout_workers must be between 0 and the run's {settings.clusters} clusters "
                f"(each worker plays a share of them), got {rollout_workers!r}."
            )
        self.settings = settings
        self.rollout_workers = rollout_workers
        self.rollout_backend, self.ray_address = rollout_backend, ray_address
        #: Where PPO's time went: the learner's parts (``rollouts``: playing them or waiting
        #: for them) and the rollouts' own parts, summed over the processes that played them.
        self.ppo_seconds: dict[str, dict[str, float]] = {}
        torch.manual_seed(settings.seed)
        self.policy = MaraPolicy(settings.policy_config)
        self.init_sha256: str | None = None
        if init is not None:
            self._load_init(init)
        #: Orders every minibatch of both phases, in the order they draw.
        self.generator = torch.Generator().manual_seed(settings.seed)
        self.max_nodes_per_task = settings.configs(1)[0].max_nodes_per_task
        self.log_path = log_path
        self.progress = progress
        self.start = time.perf_counter()
        self.env_epochs = 0
        self.phases: dict[str, dict[str, float]] = {}
        self.confirmation: dict[str, Any] = {}
        episodes = Episodes(
            tuple(settings.configs(len(WORKLOADS))),
            settings.policy_config,
            settings.predictor_name,
            settings.n_samples,
            settings.temperature,
        )
        self.selection = Selection(
            ValidationPlayer(episodes, validation_workers),
            TrainingLog(log_path),
            settings.validation_episodes,
            settings.confirmation_episodes,
        )

    def _load_init(self, path: Path) -> None:
        agent = Mara.load(path)
        settings = self.settings
        if agent.policy.config != settings.policy_config:
            raise ValueError(
                f"--init {path}: network {agent.policy.config} differs from the settings' "
                f"{settings.policy_config}."
            )
        if agent.predictor_name != settings.predictor_name:
            raise ValueError(
                f"--init {path}: trained with predictor {agent.predictor_name!r}, the settings "
                f"use {settings.predictor_name!r}."
            )
        if agent.temperature != settings.temperature:
            raise ValueError(
                f"--init {path}: ships at temperature {agent.temperature}, the settings train at "
                f"{settings.temperature}."
            )
        self.policy.load_state_dict(agent.policy.state_dict())
        self.init_sha256 = agent.checkpoint_sha256

    def log(self, validate: bool = False, round_index: int | None = None, **row: Any) -> None:
        """Log a row stamped now; with ``validate``, score the current weights on the
        validation episodes first (in the worker, if any: the row, and the rows after it, are
        written once the score is in, keeping the best weights as if it had been played
        here). ``round_index``: the imitation round the validated weights end."""
        wall = time.perf_counter() - self.start
        row.setdefault("wall_seconds", round(wall, 1))
        row.setdefault("env_epochs", self.env_epochs)
        row.setdefault("epochs_per_second", round(self.env_epochs / max(wall, 1e-9), 1))
        state = weights_snapshot(self.policy.state_dict()) if validate else None
        self.selection.add(row, state=state, round_index=round_index)

    def vector(self, count: int, seed: int, **options: Any) -> ClusterVector:
        """``count`` training clusters stepped by the policy, seeded by ``seed``, with the
        run's predictor, samples and temperature (``options``: more of
        :class:`~benchmarks.mara.rollouts.ClusterVector`'s)."""
        settings = self.settings
        return ClusterVector(
            settings.configs(count),
            self.policy,
            seed,
            predictor=settings.predictor_name,
            n_samples=settings.n_samples,
            temperature=settings.temperature,
            **options,
        )

    def scores(
        self,
        batch: StepBatch,
        actions: torch.Tensor,
        *,
        policy: MaraPolicy | None = None,
        temperature: float | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-node log-probabilities and entropies of ``actions`` under the policy (or
        ``policy``), by default at the deployed temperature, with the same masks and
        ``max_nodes_per_task`` as the rollouts."""
        return score_actions(
            self.policy if policy is None else policy,
            batch,
            actions,
            max_nodes_per_task=self.max_nodes_per_task,
            temperature=self.settings.temperature if temperature is None else temperature,
        )

    def phase_done(self, name: str, began: float, epochs_before: int) -> None:
        """Record phase ``name``'s minutes and cluster-epochs (it began at ``began``, with
        ``epochs_before`` cluster-epochs played)."""
        seconds = time.perf_counter() - began
        epochs = self.env_epochs - epochs_before
        self.phases[name] = {
            "minutes": round(seconds / 60.0, 2),
            "cluster_epochs": epochs,
            "cluster_epochs_per_second": round(epochs / max(seconds, 1e-9), 1),
        }

    def close(self) -> None:
        """Stop the validation worker, if any."""
        self.selection.close()
