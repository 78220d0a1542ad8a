"""Train the MARA policy: imitation warm start, then PPO; write the shipped checkpoint.

Regenerates ``agents/checkpoints/mara.pt`` (and its card ``mara.json``)::

    python -m benchmarks.train_mara
    python -m benchmarks.train_mara --ablation independent --out benchmarks/results/mara/ablation_independent.pt
    python -m benchmarks.train_mara --quick --out /tmp/mara_quick.pt     # smoke test

Training uses only the ``training`` preset (train split of the curves, load 1.4) with episode
seeds below 1000, cycling the clusters through the in-distribution, RL and vision workloads; the
evaluation seeds (1000 and up, test split) are never played.

1. **Warm start by imitation** (DAgger): the clairvoyant reference labels every epoch with its
   node actions; the first round executes the teacher's actions, later rounds the student's own
   sampled actions, and the student is fitted to all labels gathered so far (cross-entropy of
   each node's label, earlier nodes conditioned on the earlier labels). The teacher reads hidden
   curves, but only its labels are used; the student sees observations only.
2. **PPO**: clipped policy ratio per node with the shared advantage of the epoch, GAE,
   centralised value loss, entropy bonus (``--entropy-coef``, 0 by default), on the
   environment's reward with the potential-based progress shaping (gamma = 1 shaping; discount
   0.99 and GAE lambda 0.95), plus
   ``--imitation-coef`` times the imitation loss on minibatches of the gathered teacher labels,
   which keeps PPO from drifting away from the warm start while its value estimates are poor.
   The first ``--value-warmup`` updates fit only the value head. Every ``--validate-every`` updates
   the policy plays fixed validation episodes (train split, seeds 900 and up); the best
   weights are kept.

The shipped checkpoint came from ``python -m benchmarks.train_mara`` (the defaults), with
flow-matching prediction features: 50.1 minutes of training wall time on a 2-CPU-core x86_64
machine shared with other jobs, one torch thread, then 2.5 minutes of temperature selection;
14 imitation rounds then 206 PPO updates (stopped by ``--minutes 50``), 191,808 cluster-epochs.
The best validation completion, 0.583, came after the 10th imitation round (round 9 in the
log). PPO started from those weights; after its 20 value-only updates, none of its 186 policy
updates beat them on the validation episodes (best 0.568), so the shipped weights are the
imitation warm start (the whole log: ``benchmarks/results/mara/mara_training.csv``). Sampling
temperature 0.35 was chosen on separate validation episodes (0.595 there; 0.560 at 1).

Outputs: the checkpoint, a CSV log (``--log``) and a plot of validation completion rate against
updates (``--plot``). ``--ablation`` trains a variant: ``no_predictions`` (prediction features
constant), ``independent`` (nodes do not see earlier nodes' choices), ``no_shaping`` (completion
reward only). The same seed and budget give the same result (``--minutes`` stops early by wall
clock and then breaks that).
"""

from __future__ import annotations

import argparse
import csv
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from agents.mara.agent import Mara
from agents.mara.policy import MaraPolicy, PolicyConfig
from benchmarks.mara_rollouts import ClusterVector, StepBatch, feature_predictor
from mara_env import ClusterConfig, get_config
from predictors.checkpoint import load_checkpoint

WORKLOADS = ("in_distribution", "rl", "vision")
ABLATIONS = ("none", "no_predictions", "independent", "no_shaping")
VALIDATION_SEEDS = tuple(range(900, 904))
LOG_FIELDS = (
    "phase",
    "update",
    "wall_seconds",
    "env_epochs",
    "train_completion",
    "validation_completion",
    "imitation_loss",
    "policy_loss",
    "value_loss",
    "entropy",
)


@dataclass(frozen=True)
class TrainSettings:
    """Everything that defines a training run (defaults: the shipped checkpoint's run)."""

    seed: int = 0
    preset: str = "training"
    clusters: int = 12
    width: int = 64
    layers: int = 2
    heads: int = 4
    predictor: str = "flow_matching"
    n_samples: int = 16
    ablation: str = "none"
    dagger_rounds: int = 14
    dagger_epochs: int = 200
    imitation_passes: int = 6
    imitation_lr: float = 1e-3
    updates: int = 500
    rollout_epochs: int = 64
    ppo_epochs: int = 4
    minibatch: int = 256
    lr: float = 3e-5
    clip: float = 0.1
    gamma: float = 0.99
    gae_lambda: float = 0.95
    entropy_coef: float = 0.0
    imitation_coef: float = 0.5
    value_coef: float = 0.5
    value_warmup: int = 20
    validate_every: int = 10
    validation_seeds: int = 4
    minutes: float = 50.0

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise ValueError(
                f"TrainSettings.ablation must be one of {ABLATIONS}, got {self.ablation!r}."
            )
        for name in (
            "clusters",
            "rollout_epochs",
            "ppo_epochs",
            "minibatch",
            "n_samples",
            "validate_every",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainSettings.{name} must be >= 1, got {getattr(self, name)!r}.")
        for name in ("dagger_rounds", "updates", "value_warmup", "imitation_passes"):
            if getattr(self, name) < 0:
                raise ValueError(f"TrainSettings.{name} must be >= 0, got {getattr(self, name)!r}.")
        if self.preset not in ("training", "tiny"):
            raise ValueError(
                f"TrainSettings.preset must be 'training' (train split, load 1.4) or 'tiny' "
                f"(smoke tests), got {self.preset!r}."
            )
        if self.validation_seeds > len(VALIDATION_SEEDS):
            raise ValueError(
                f"TrainSettings.validation_seeds must be <= {len(VALIDATION_SEEDS)} (the "
                f"validation episodes {VALIDATION_SEEDS}), got {self.validation_seeds}."
            )
        if not (0.0 < self.gamma <= 1.0 and 0.0 < self.gae_lambda <= 1.0):
            raise ValueError("TrainSettings.gamma and gae_lambda must lie in (0, 1].")

    @property
    def policy_config(self) -> PolicyConfig:
        """The network config (the ``independent`` ablation switches autoregression off)."""
        return PolicyConfig(
            width=self.width,
            layers=self.layers,
            heads=self.heads,
            autoregressive=self.ablation != "independent",
        )

    @property
    def predictor_name(self) -> str:
        """The predictor behind the features (``"none"`` for the ``no_predictions`` ablation)."""
        return "none" if self.ablation == "no_predictions" else self.predictor

    def configs(self, count: int) -> list[ClusterConfig]:
        """``count`` training configs cycling through the workloads."""
        shaping = 0.0 if self.ablation == "no_shaping" else 1.0
        return [
            get_config(self.preset, workload=WORKLOADS[i % len(WORKLOADS)], shaping_weight=shaping)
            for i in range(count)
        ]


QUICK = {
    "preset": "tiny",
    "clusters": 3,
    "width": 16,
    "layers": 1,
    "heads": 2,
    "n_samples": 4,
    "dagger_rounds": 1,
    "dagger_epochs": 8,
    "imitation_passes": 1,
    "updates": 2,
    "rollout_epochs": 8,
    "ppo_epochs": 1,
    "minibatch": 16,
    "value_warmup": 1,
    "validate_every": 2,
    "validation_seeds": 1,
}


class Trainer:
    """Runs imitation and PPO for :class:`TrainSettings`, logging to a CSV file."""

    def __init__(self, settings: TrainSettings, log_path: Path, progress: bool = True) -> None:
        self.settings = settings
        torch.manual_seed(settings.seed)
        self.policy = MaraPolicy(settings.policy_config)
        self.generator = torch.Generator().manual_seed(settings.seed)
        self.log_path = log_path
        self.progress = progress
        self.start = time.perf_counter()
        self.env_epochs = 0
        self.best_validation = -1.0
        self.best_state: dict[str, torch.Tensor] = {}
        self.best_update = -1
        self.imitation_data: StepBatch | None = None
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("w", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writeheader()

    # ------------------------------------------------------------------ helpers
    def _log(self, **row: Any) -> None:
        row.setdefault("wall_seconds", round(time.perf_counter() - self.start, 1))
        row.setdefault("env_epochs", self.env_epochs)
        with self.log_path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=LOG_FIELDS).writerow(row)

    def _vector(self, seed: int, **options: Any) -> ClusterVector:
        settings = self.settings
        return ClusterVector(
            settings.configs(settings.clusters),
            self.policy,
            seed,
            predictor=settings.predictor_name,
            n_samples=settings.n_samples,
            **options,
        )

    def _scores(self, batch: StepBatch, actions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        encoded = self.policy.encode(batch.slots, batch.globals)
        decoded = self.policy.decode(encoded, batch.mask, batch.previous, actions=actions)
        return decoded.log_prob, decoded.entropy, encoded.value

    def validate(self, greedy: bool = False, temperature: float = 1.0) -> float:
        """Mean completion rate of the policy (sampling, as it acts) on the validation episodes."""
        settings = self.settings
        configs = settings.configs(len(WORKLOADS))
        seeds = [list(VALIDATION_SEEDS[: settings.validation_seeds])] * len(configs)
        vector = ClusterVector(
            configs,
            self.policy,
            0,
            predictor=settings.predictor_name,
            n_samples=settings.n_samples,
            episode_seeds=seeds,
        )
        self.policy.eval()
        while vector.live:
            vector.step(greedy=greedy, temperature=temperature)
        self.policy.train()
        return float(np.mean([row["completion_rate"] for row in vector.finished]))

    def _keep_if_best(self, score: float, update: int) -> None:
        if score > self.best_validation:
            self.best_validation = score
            self.best_update = update
            self.best_state = {k: v.detach().clone() for k, v in self.policy.state_dict().items()}

    # ------------------------------------------------------------------ imitation
    def imitate(self) -> None:
        """DAgger rounds with the clairvoyant reference as the teacher."""
        settings = self.settings
        if settings.dagger_rounds == 0:
            return
        optimiser = torch.optim.Adam(self.policy.parameters(), lr=settings.imitation_lr)
        vector = self._vector(settings.seed + 1, teacher=True)
        data: list[StepBatch] = []
        bar = tqdm(range(settings.dagger_rounds), desc="imitation", disable=not self.progress)
        for round_index in bar:
            self.policy.eval()
            for _ in range(settings.dagger_epochs):
                batch = vector.step(follow_teacher=round_index == 0)
                self.env_epochs += len(batch.reward)
                data.append(batch)
            self.policy.train()
            merged = _merge(data)
            self.imitation_data = merged
            size = len(merged.reward)
            losses = []
            for _ in range(settings.imitation_passes):
                order = torch.randperm(size, generator=self.generator)
                for start in range(0, size, settings.minibatch):
                    part = _select(merged, order[start : start + settings.minibatch])
                    labels = part.teacher if part.teacher is not None else part.actions
                    log_prob, _, _ = self._scores(part, labels)
                    loss = -log_prob.mean()
                    optimiser.zero_grad()
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 1.0)
                    optimiser.step()
                    losses.append(loss.item())
            train = [row["completion_rate"] for row in vector.finished]
            vector.finished.clear()
            validation = self.validate()
            self._keep_if_best(validation, 0)
            self._log(
                phase="imitation",
                update=round_index,
                train_completion=round(float(np.mean(train)), 4) if train else "",
                validation_completion=round(validation, 4),
                imitation_loss=round(float(np.mean(losses)), 4),
            )
            bar.set_postfix(validation=f"{validation:.3f}", loss=f"{np.mean(losses):.3f}")

    # ------------------------------------------------------------------ PPO
    def ppo(self) -> None:
        """PPO updates from the current weights."""
        settings = self.settings
        if settings.updates == 0:
            return
        if self.best_state:
            self.policy.load_state_dict(self.best_state)
        value_params = list(self.policy.value_head.parameters())
        optimiser = torch.optim.Adam(self.policy.parameters(), lr=settings.lr)
        value_optimiser = torch.optim.Adam(value_params, lr=1e-3)
        vector = self._vector(settings.seed + 2)
        bar = tqdm(range(1, settings.updates + 1), desc="ppo", disable=not self.progress)
        deadline = self.start + 60.0 * settings.minutes
        for update in bar:
            self.policy.eval()
            steps = [vector.step() for _ in range(settings.rollout_epochs)]
            last_value = vector.values()
            self.policy.train()
            batch = _merge(steps)
            self.env_epochs += len(batch.reward)
            advantages, returns = _gae(steps, last_value, settings.gamma, settings.gae_lambda)
            warmup = update <= settings.value_warmup
            stats = self._ppo_update(
                batch, advantages, returns, value_optimiser if warmup else optimiser, warmup
            )
            train = [row["completion_rate"] for row in vector.finished]
            vector.finished.clear()
            validation: float | str = ""
            if update % settings.validate_every == 0 or update == settings.updates:
                score = self.validate()
                if not warmup:
                    self._keep_if_best(score, update)
                bar.set_postfix(validation=f"{score:.3f}")
                validation = round(score, 4)
            self._log(
                phase="ppo",
                update=update,
                train_completion=round(float(np.mean(train)), 4) if train else "",
                validation_completion=validation,
                **stats,
            )
            if time.perf_counter() > deadline:
                print(
                    f"Stopping after update {update}: the {settings.minutes}-minute budget is spent."
                )
                break

    def _ppo_update(
        self,
        batch: StepBatch,
        advantages: torch.Tensor,
        returns: torch.Tensor,
        optimiser: torch.optim.Optimizer,
        value_only: bool,
    ) -> dict[str, float]:
        settings = self.settings
        size = len(returns)
        normalised = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        totals = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0}
        count = 0
        for _ in range(settings.ppo_epochs):
            order = torch.randperm(size, generator=self.generator)
            for start in range(0, size, settings.minibatch):
                index = order[start : start + settings.minibatch]
                part = _select(batch, index)
                log_prob, entropy, value = self._scores(part, part.actions)
                value_loss = (value - returns[index]).pow(2).mean()
                if value_only:
                    loss = settings.value_coef * value_loss
                    policy_loss = torch.zeros(())
                else:
                    ratio = (log_prob - part.log_prob).exp()
                    advantage = normalised[index][:, None]
                    clipped = ratio.clamp(1.0 - settings.clip, 1.0 + settings.clip)
                    policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                    loss = (
                        policy_loss
                        + settings.value_coef * value_loss
                        - settings.entropy_coef * entropy.mean()
                    )
                anchor = self.imitation_data
                if not value_only and settings.imitation_coef > 0 and anchor is not None:
                    pick = torch.randint(
                        len(anchor.reward), (len(index),), generator=self.generator
                    )
                    labelled = _select(anchor, pick)
                    labels = labelled.teacher if labelled.teacher is not None else labelled.actions
                    loss = loss - settings.imitation_coef * self._scores(labelled, labels)[0].mean()
                optimiser.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.policy.parameters(), 0.5)
                optimiser.step()
                totals["policy_loss"] += policy_loss.item()
                totals["value_loss"] += value_loss.item()
                totals["entropy"] += entropy.mean().item()
                count += 1
        return {key: round(value / max(count, 1), 5) for key, value in totals.items()}


def _merge(steps: Sequence[StepBatch]) -> StepBatch:
    """Concatenate step batches along the batch axis."""
    fields: dict[str, Any] = {}
    for name in StepBatch.__dataclass_fields__:
        parts = [getattr(step, name) for step in steps]
        fields[name] = None if parts[0] is None else torch.cat(parts)
    return StepBatch(**fields)


def _select(batch: StepBatch, index: torch.Tensor) -> StepBatch:
    fields: dict[str, Any] = {
        name: (None if getattr(batch, name) is None else getattr(batch, name)[index])
        for name in StepBatch.__dataclass_fields__
    }
    return StepBatch(**fields)


def _gae(
    steps: Sequence[StepBatch], last_value: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns, flattened like :func:`_merge`."""
    advantages = []
    running = torch.zeros_like(last_value)
    next_value = last_value
    for step in reversed(steps):
        alive = 1.0 - step.done
        delta = step.reward + gamma * next_value * alive - step.value
        running = delta + gamma * lam * alive * running
        advantages.append(running)
        next_value = step.value
    advantages.reverse()
    flat = torch.cat(advantages)
    values = torch.cat([step.value for step in steps])
    return flat, flat + values


def train(
    settings: TrainSettings, out: Path, log: Path, plot: Path | None, progress: bool
) -> dict[str, Any]:
    """Run imitation then PPO, save the best weights to ``out``; returns the run's facts."""
    trainer = Trainer(settings, log, progress)
    trainer.imitate()
    imitation_validation = trainer.best_validation
    _save(trainer, out, {"stage": "after imitation"})
    trainer.ppo()
    if trainer.best_state:
        trainer.policy.load_state_dict(trainer.best_state)
    wall = time.perf_counter() - trainer.start
    facts = {
        "settings": asdict(settings),
        "wall_minutes": round(wall / 60.0, 2),
        "env_epochs": trainer.env_epochs,
        "best_validation_completion": round(trainer.best_validation, 4),
        "imitation_validation_completion": round(imitation_validation, 4),
        "best_update": trainer.best_update,
        "torch_threads": torch.get_num_threads(),
        "machine": f"{platform.machine()}, 2 CPU cores",
        "torch": torch.__version__,
        "training": f"preset {settings.preset!r} (train split), workloads "
        + ", ".join(WORKLOADS)
        + ", episode seeds < 1000",
    }
    _save(trainer, out, facts)
    facts["temperature_validation"] = tune_temperature(out, preset=settings.preset)
    if plot is not None:
        plot_log(log, plot)
    return facts


TEMPERATURES = (1.0, 0.7, 0.5, 0.35)
TEMPERATURE_SEEDS = tuple(range(910, 915))


def tune_temperature(
    checkpoint: Path,
    temperatures: Sequence[float] = TEMPERATURES,
    seeds: Sequence[int] = TEMPERATURE_SEEDS,
    preset: str = "training",
) -> dict[str, float]:
    """Pick the sampling temperature of a checkpoint on validation episodes; rewrite its card.

    Every temperature plays the same episodes (train split, ``seeds`` below 1000, each
    workload); the best mean completion rate wins (ties: the higher temperature) and is stored
    in the checkpoint's config. Returns each temperature's validation completion rate.
    """
    agent = Mara.load(checkpoint)
    configs = [get_config(preset, workload=workload) for workload in WORKLOADS]
    scores: dict[str, float] = {}
    for temperature in temperatures:
        vector = ClusterVector(
            configs,
            agent.policy,
            0,
            predictor=agent.predictor_name,
            n_samples=agent.features.n_samples,
            episode_seeds=[list(seeds)] * len(configs),
        )
        while vector.live:
            vector.step(temperature=temperature)
        scores[str(temperature)] = round(
            float(np.mean([row["completion_rate"] for row in vector.finished])), 4
        )
    best = max(temperatures, key=lambda t: (scores[str(t)], t))
    _, card = load_checkpoint(checkpoint)
    agent.temperature = float(best)
    facts = {**card["facts"], "temperature_validation": scores, "temperature": best}
    agent.save(checkpoint, facts=facts)
    return scores


def _save(trainer: Trainer, out: Path, facts: dict[str, Any]) -> None:
    settings = trainer.settings
    agent = Mara(
        trainer.policy,
        feature_predictor(settings.predictor_name),
        settings.n_samples,
        predictor_name=settings.predictor_name,
    )
    agent.save(out, facts=facts)


def plot_log(log: Path, plot: Path) -> None:
    """Validation completion rate against updates (imitation rounds before update 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs, ys, imitation = [], [], []
    with log.open() as handle:
        for row in csv.DictReader(handle):
            if row["validation_completion"] == "":
                continue
            if row["phase"] == "imitation":
                imitation.append(float(row["validation_completion"]))
            else:
                xs.append(int(row["update"]))
                ys.append(float(row["validation_completion"]))
    figure, axis = plt.subplots(figsize=(6, 3.5))
    if imitation:
        axis.plot(range(-len(imitation), 0), imitation, "o-", label="imitation rounds")
    axis.plot(xs, ys, "o-", label="PPO")
    axis.set_xlabel("PPO update (imitation rounds at negative x)")
    axis.set_ylabel("validation completion rate")
    axis.legend()
    axis.grid(alpha=0.3)
    figure.tight_layout()
    plot.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(plot, dpi=120)
    plt.close(figure)


RESULTS = Path("benchmarks/results/mara")


def output_paths(out: Path | None, stem: str, quick: bool) -> tuple[Path, Path, Path | None]:
    """Checkpoint, log and plot paths of a run (``stem``: ``mara`` or ``ablation_<name>``).

    Without ``out``, the shipped checkpoint or the ablation's file in the results folder, logs
    beside them in the results folder; a ``--quick`` run never touches those and writes
    ``mara_quick.pt`` in the working directory instead. With ``out``, logs go beside it, so a
    side run never overwrites the shipped run's log.

    Example:
        >>> [str(path) for path in output_paths(Path("/tmp/x.pt"), "mara", quick=False)]
        ['/tmp/x.pt', '/tmp/x_training.csv', '/tmp/x_training.png']
        >>> str(output_paths(None, "mara", quick=True)[0])
        'mara_quick.pt'
    """
    if quick:
        out = Path("mara_quick.pt") if out is None else out
        return out, out.with_suffix(".csv"), None
    if out is None:
        out = Path("agents/checkpoints/mara.pt") if stem == "mara" else RESULTS / f"{stem}.pt"
        return out, RESULTS / f"{stem}_training.csv", RESULTS / f"{stem}_training.png"
    return out, out.with_name(f"{out.stem}_training.csv"), out.with_name(f"{out.stem}_training.png")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.train_mara", description=__doc__.split("\n\n")[0]
    )
    defaults = TrainSettings()
    for name, value in asdict(defaults).items():
        flag = "--" + name.replace("_", "-")
        if name == "ablation":
            parser.add_argument(flag, choices=ABLATIONS, default=value)
        else:
            parser.add_argument(flag, type=type(value), default=value)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint path (.pt)")
    parser.add_argument(
        "--log", type=Path, default=None, help="CSV log path (default: beside the checkpoint)"
    )
    parser.add_argument(
        "--plot", type=Path, default=None, help="plot path (default: beside the checkpoint)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny model and budget (smoke test)")
    parser.add_argument(
        "--tune-temperature",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="only choose the sampling temperature of an existing checkpoint on validation episodes",
    )
    parser.add_argument("--no-progress", action="store_true")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.tune_temperature is not None:
        torch.set_num_threads(args.threads)
        scores = tune_temperature(args.tune_temperature)
        print(
            f"Validation completion by temperature: {scores}; card of {args.tune_temperature} updated."
        )
        return 0
    values = {name: getattr(args, name) for name in asdict(TrainSettings())}
    if args.quick:
        values.update(QUICK)
    try:
        settings = TrainSettings(**values)
    except ValueError as error:
        raise SystemExit(f"train_mara: {error}") from None
    torch.set_num_threads(args.threads)
    stem = "mara" if settings.ablation == "none" else f"ablation_{settings.ablation}"
    out, log, plot = output_paths(args.out, stem, args.quick)
    log, plot = args.log or log, args.plot or plot
    facts = train(settings, out, log, plot, progress=not args.no_progress)
    print(
        f"Saved {out}: best validation completion {facts['best_validation_completion']} "
        f"(after imitation {facts['imitation_validation_completion']}), "
        f"{facts['wall_minutes']} min wall, {facts['env_epochs']} cluster-epochs."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
