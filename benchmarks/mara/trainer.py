"""The state of one MARA training run, shared by its imitation and PPO phases.

A :class:`Trainer` owns what both phases read and change: the policy (fresh, seeded by the
settings' seed, or a warm start's weights), the generator of minibatch orders, the count of
cluster-epochs played, the phases' timings and the :class:`~mara_env.benchmarks.mara.selection.Selection`
that logs rows and keeps the best validated weights. Where the work runs is its
:class:`Placement`: the learner's device (the policy trains there; episodes are always played
on the CPU, by :attr:`Trainer.actor`, a copy of the policy synchronised before each rollout),
and the validation and rollout workers. The phases themselves are
:func:`mara_env.benchmarks.mara.imitation.imitate` and :func:`mara_env.benchmarks.mara.ppo.ppo`; the order in
which they draw from the one generator is part of what makes a run reproducible.

Example:
    >>> import tempfile
    >>> from mara_env.benchmarks.mara.settings import QUICK, TrainSettings
    >>> settings = TrainSettings(**{**QUICK, "predictor": "wls"})
    >>> trainer = Trainer(settings, Path(tempfile.mkdtemp()) / "log.csv", progress=False)
    >>> trainer.log(phase="ppo", update=0)
    >>> trainer.log_path.read_text().splitlines()[1].split(",")[:2]
    ['ppo', '0']
    >>> trainer.close()
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from mara_env.agents.mara.agent import Mara
from mara_env.agents.mara.policy import MaraPolicy
from mara_env.benchmarks.mara.batches import on_device, score_actions
from mara_env.benchmarks.mara.rollouts import ClusterVector, StepBatch
from mara_env.benchmarks.mara.selection import Selection
from mara_env.benchmarks.mara.settings import WORKLOADS, TrainSettings
from mara_env.benchmarks.mara.training_log import TrainingLog
from mara_env.benchmarks.mara.validation import Episodes, ValidationPlayer, weights_snapshot

#: The learner's device choices (``--device``): ``auto`` is CUDA when torch sees one.
DEVICES = ("auto", "cpu", "cuda")


def learner_device(name: str) -> torch.device:
    """The torch device ``name`` (one of :data:`DEVICES`) stands for on this machine.

    Raises:
        ValueError: For another name, or ``cuda`` where torch sees no CUDA device.

    Example:
        >>> learner_device("cpu")
        device(type='cpu')
    """
    if name not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {name!r}.")
    cuda = torch.cuda.is_available()
    if name == "cuda" and not cuda:
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise ValueError(
            f"device 'cuda': torch {torch.__version__} ({build}) sees no CUDA device. Use "
            "'cpu', or 'auto' to take CUDA only where there is one."
        )
    return torch.device("cuda" if name == "cuda" or (name == "auto" and cuda) else "cpu")


def device_line(device: torch.device) -> str:
    """``device`` as a training card records it: ``cpu``, or ``cuda`` with the card's name.

    Example:
        >>> device_line(torch.device("cpu"))
        'cpu'
    """
    if device.type != "cuda":
        return device.type
    return f"cuda ({torch.cuda.get_device_name(device)}, CUDA {torch.version.cuda})"


@dataclass(frozen=True)
class Placement:
    """Where a run's work goes. None of it changes the run's results on one machine, except
    ``rollout_workers`` (each worker's share of the clusters plays its own episodes) and a
    device other than the CPU (other floating-point kernels).

    Attributes:
        device: The learner's device (:data:`DEVICES`): where the policy, its anchor and the
            critic train. Episodes are played on the CPU whatever it is.
        validation_workers: 1 plays the validation episodes in a worker process while the
            training goes on (the scores, the kept weights and the log are the same as with
            0, which plays them in this process before going on).
        rollout_workers: PPO's rollout worker processes
            (:class:`~mara_env.benchmarks.mara.rollout_worker.PPORollouts`): with
            ``settings.rollout_lag == 1``, N >= 1 play the rollouts beside the updates (0: in
            this process, the same rollouts one after the other); with lag 0, N >= 2 share
            each update's rollouts while the learner waits (0 or 1: in this process).
        rollout_backend: ``"process"`` (local processes) or ``"ray"`` (Ray actors; the same
            rollouts).
        ray_address: The Ray cluster of ``"ray"`` (None: a local instance for the run).
    """

    device: str = "cpu"
    validation_workers: int = 0
    rollout_workers: int = 1
    rollout_backend: str = "process"
    ray_address: str | None = None


class ActingCopy:
    """The network that plays episodes for a learner's ``network``: the network itself on the
    CPU, else a CPU copy that :meth:`sync` brings up to date (episodes run on the CPU).

    Example:
        >>> from mara_env.agents.mara.policy import PolicyConfig
        >>> network = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
        >>> ActingCopy(network).sync() is network
        True
    """

    def __init__(self, network: MaraPolicy) -> None:
        self.network = network
        on_cpu = next(network.parameters()).device.type == "cpu"
        self.copy = network if on_cpu else copy.deepcopy(network).cpu().eval()

    def sync(self) -> MaraPolicy:
        """The CPU network, with the learner's current weights."""
        if self.copy is not self.network:
            self.copy.load_state_dict(self.network.state_dict())
        return self.copy


class Trainer:
    """The policy and bookkeeping of a run of :class:`~mara_env.benchmarks.mara.settings.TrainSettings`.

    Args:
        settings: The run's settings.
        log_path: The CSV log (rewritten).
        progress: Show progress bars.
        init: Starting weights (a MARA checkpoint of the same network and predictor) instead of
            a fresh network.
        placement: Where the work runs (:class:`Placement`; default: all in this process, on
            the CPU).

    Raises:
        ValueError: If ``init`` was made for another network, predictor or temperature,
            ``placement.rollout_workers`` is negative or exceeds the clusters, or its device
            is unknown or absent (:func:`learner_device`).
    """

    def __init__(
        self,
        settings: TrainSettings,
        log_path: Path,
        progress: bool = True,
        init: Path | None = None,
        placement: Placement = Placement(),
    ) -> None:
        workers = placement.rollout_workers
        if not 0 <= workers <= settings.clusters:
            raise ValueError(
                f"rollout_workers must be between 0 and the run's {settings.clusters} clusters "
                f"(each worker plays a share of them), got {workers!r}."
            )
        self.settings = settings
        self.placement = placement
        self.device = learner_device(placement.device)
        #: Where PPO's time went: the learner's parts (``rollouts``: playing them or waiting
        #: for them) and the rollouts' own parts, summed over the processes that played them.
        self.ppo_seconds: dict[str, dict[str, float]] = {}
        torch.manual_seed(settings.seed)
        self.policy = MaraPolicy(settings.policy_config)
        self.init_sha256: str | None = None
        if init is not None:
            self._load_init(init)
        self.policy.to(self.device)
        #: Plays the policy's episodes on the CPU (:class:`ActingCopy`).
        self.actor = ActingCopy(self.policy)
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
            ValidationPlayer(episodes, placement.validation_workers),
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
        """``count`` training clusters stepped by the policy's acting copy (synchronise it
        before stepping: :attr:`actor`), seeded by ``seed``, with the run's predictor, samples
        and temperature (``options``: more of
        :class:`~mara_env.benchmarks.mara.rollouts.ClusterVector`'s)."""
        settings = self.settings
        return ClusterVector(
            settings.configs(count),
            self.actor.copy,
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
        ``max_nodes_per_task`` as the rollouts, on the learner's device."""
        return score_actions(
            self.policy if policy is None else policy,
            on_device(batch, self.device),
            actions.to(self.device),
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
