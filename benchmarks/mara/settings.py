"""The settings of a MARA training run: one frozen dataclass, validated when it is made.

:class:`TrainSettings` holds everything that defines a run of :mod:`mara_env.benchmarks.mara.train`;
each documented attribute is a command-line option of the same name (its description is the
option's help, read by :func:`mara_env.benchmarks.common.arguments.attribute_help`). Derived quantities
(the network config, the predictor and shaping weight an ablation leaves, the update size, the
training configs) are properties, never fields. :data:`QUICK` is the smoke test's tiny run.

Training plays only the ``training`` preset (train split of the curves, load 1.4) with episode
seeds below 1000, cycling the clusters through :data:`WORKLOADS`; the checkpoint is chosen on
:data:`VALIDATION_SEEDS` and confirmed on :data:`CONFIRMATION_SEEDS`, both training seeds.

Example:
    >>> settings = TrainSettings(**QUICK)
    >>> settings.update_size, settings.policy_config.width, settings.predictor_name
    (24, 16, 'flow_matching_without_target')
    >>> len(settings.configs(4)), settings.configs(1)[0].shaping_discount  # gamma's
    (4, 0.99)
    >>> TrainSettings(clip=0.0)
    Traceback (most recent call last):
    ...
    ValueError: TrainSettings.clip must be > 0, got 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass

from mara_env import ClusterConfig, get_config
from mara_env.agents.mara.policy import PolicyConfig
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.common.seeds import training_seeds
from mara_env.predictors.registry import is_known_predictor, known_predictors
from mara_env.worlds.config import LATEST_WORLD_VERSION, WORLD_VERSIONS

#: The workloads the training clusters cycle through (and validation plays, one each).
WORKLOADS = EVALUATION_WORKLOADS
#: The parts a run can take away (``none``: the full recipe).
ABLATIONS = ("none", "no_predictions", "independent", "no_shaping")
#: The schedulers imitation can learn from: the clairvoyant reference (privileged: it reads the
#: hidden curves) or the observation-only reach planner.
TEACHERS = ("clairvoyant", "reach_planner")
#: How the policy's learning rate moves over the PPO budget.
LR_SCHEDULES = ("constant", "linear")
#: Which probability ratio PPO clips: each node's (MAPPO's and MAT's choice) or the joint
#: ratio of an epoch's decisions, the product of its nodes' ratios.
TRUST_REGIONS = ("per_node", "joint")
#: The presets a run can train on: the real one and the smoke tests'.
PRESETS = ("training", "tiny")
#: Validation episodes (train split), per workload: the checkpoint is chosen on these.
VALIDATION_SEEDS = training_seeds(900, 10, where="mara.train validation")
#: Confirmation episodes (train split), per workload: never used for choosing.
CONFIRMATION_SEEDS = training_seeds(950, 10, where="mara.train confirmation")

#: Lower bounds of the numeric settings, checked in this order: (names, bound, bound allowed).
_LOWER_BOUNDS: tuple[tuple[tuple[str, ...], int, bool], ...] = (
    (
        (
            "clusters",
            "imitation_clusters",
            "rollout_epochs",
            "ppo_epochs",
            "minibatch",
            "n_samples",
            "validate_every",
            "validation_seeds",
        ),
        1,
        True,
    ),
    (
        (
            "dagger_rounds",
            "updates",
            "value_warmup",
            "imitation_passes",
            "entropy_coef",
            "kl_coef",
            "target_kl",
            "value_warmup_loss",
            "shaping",
        ),
        0,
        True,
    ),
    (
        ("lr", "critic_lr", "imitation_lr", "clip", "temperature", "minutes", "imitation_minutes"),
        0,
        False,
    ),
)


@dataclass(frozen=True)
class TrainSettings:
    """Everything that defines a training run (defaults: the first PPO recipe; the shipped PPO
    run changed ``rollout_lag``, ``lr``, ``lr_schedule``, ``kl_coef`` and ``minutes``, see
    ``benchmarks/results/v1/mara/README.md``).

    Attributes:
        seed: Seeds the network, the episode draws and the minibatch orders.
        preset: ``"training"`` (train split, load 1.4) or ``"tiny"`` (smoke tests).
        clusters: Clusters stepped together in PPO rollouts.
        imitation_clusters: Clusters stepped together in DAgger rollouts.
        width, layers, heads: Network sizes (:class:`mara_env.agents.mara.policy.PolicyConfig`): embedding
            width, transformer encoder layers, attention heads.
        predictor: Predictor behind the prediction features (the target-blind flow matching
            the shipped policy was trained with; ``flow_matching`` reads the target too;
            ``oracle`` and ``oracle_noise_<sigma>`` are the privileged true need).
        n_samples: Prediction samples per task.
        ablation: A part taken away (:data:`ABLATIONS`): ``none`` (the full recipe),
            ``no_predictions`` (prediction features held constant), ``independent`` (nodes do not
            see earlier nodes' choices), ``no_shaping`` (completion reward only).
        teacher: The scheduler whose actions imitation learns (:data:`TEACHERS`), built by the
            registry for the run's world.
        dagger_rounds: DAgger rounds (0: no imitation, e.g. with ``--init``).
        dagger_epochs: Epochs every imitation cluster plays per round.
        imitation_passes: Passes over the gathered labels per round.
        imitation_lr: Adam learning rate of imitation.
        imitation_minutes: Wall-clock budget of the imitation phase.
        updates: PPO updates at most (0: imitation only).
        rollout_epochs: Epochs every cluster plays per update.
        ppo_epochs: Passes over each rollout (policy and critic).
        minibatch: Cluster-epochs per minibatch.
        lr: Adam learning rate of the policy (at the first PPO update).
        lr_schedule: ``constant``, or ``linear``: the policy's learning rate falls linearly to 0
            over the PPO budget, whichever of ``updates`` and ``minutes`` is nearer its end.
        critic_lr: Adam learning rate of the critic.
        clip: PPO ratio clip.
        gamma: Discount of the returns and of the shaping.
        gae_lambda: GAE lambda.
        entropy_coef: Entropy bonus per node.
        kl_coef: Weight of the KL anchor to the starting weights (per node).
        target_kl: An update stops its epochs once the approximate KL per node from the
            rollout policy exceeds this (0: no early stop).
        value_warmup: Most updates that train only the critic before the policy's first one.
        value_warmup_loss: The critic's warm-up ends after the first update whose value loss
            (on normalised returns) is at most this, or after ``value_warmup`` updates; 0: after
            exactly ``value_warmup`` updates.
        trust_region: The ratio PPO clips (:data:`TRUST_REGIONS`): ``per_node`` (each node's
            ratio, with the epoch's shared advantage) or ``joint`` (the epoch's joint ratio,
            the product of its nodes' ratios). Either way every update logs the joint
            policy's KL from the rollout policy (``joint_kl``) and its largest joint ratio.
        world_version: The rules of the training clusters (``ClusterConfig.world_version``).
        hopeless_curve_share: Cluster-v2 and later: the share of a family's never-reaching
            curves a hopeless task runs, nearest first (``ClusterConfig.hopeless_curve_share``;
            1: all of them; 0.1: the nearest tenth, which stall just short of their targets;
            ``None``: the world's own, 1 on Cluster-v2 and 0.1 on Cluster-v3).
        validate_every: Updates between validations.
        validation_seeds: Validation seeds per workload (from 900).
        temperature: Sampling temperature of every rollout, ratio, validation and of the
            saved checkpoint.
        shaping: Weight of the progress shaping (0 for the ``no_shaping`` ablation).
        minutes: Wall-clock budget of the PPO phase.
        rollout_lag: 0: every update's rollouts are played with the current weights, in this
            process, before the update (on-policy). 1: a worker process plays them with the
            weights of one update before, while this process trains on the previous rollouts
            (:mod:`mara_env.benchmarks.mara.rollout_worker`): both cores busy, the ratio's old
            log-probabilities are the rollout policy's, and the critic's values are
            recomputed by the current critic.

    Raises:
        ValueError: If a setting is out of its range or not one of its choices (the message
            names the setting).
    """

    seed: int = 0
    preset: str = "training"
    clusters: int = 48
    imitation_clusters: int = 12
    width: int = 64
    layers: int = 2
    heads: int = 4
    predictor: str = "flow_matching_without_target"
    n_samples: int = 16
    ablation: str = "none"
    teacher: str = "clairvoyant"
    dagger_rounds: int = 14
    dagger_epochs: int = 200
    imitation_passes: int = 6
    imitation_lr: float = 1e-3
    imitation_minutes: float = 20.0
    updates: int = 500
    rollout_epochs: int = 64
    ppo_epochs: int = 4
    minibatch: int = 512
    lr: float = 5e-5
    lr_schedule: str = "constant"
    critic_lr: float = 5e-4
    clip: float = 0.1
    gamma: float = 0.99
    gae_lambda: float = 0.5
    entropy_coef: float = 0.0
    kl_coef: float = 0.1
    target_kl: float = 0.02
    value_warmup: int = 2
    value_warmup_loss: float = 0.0
    trust_region: str = "per_node"
    world_version: int = LATEST_WORLD_VERSION
    hopeless_curve_share: float | None = None
    validate_every: int = 4
    validation_seeds: int = 10
    temperature: float = 0.35
    shaping: float = 1.0
    minutes: float = 30.0
    rollout_lag: int = 0

    def __post_init__(self) -> None:
        if self.ablation not in ABLATIONS:
            raise ValueError(
                f"TrainSettings.ablation must be one of {ABLATIONS}, got {self.ablation!r}."
            )
        for names, bound, allowed in _LOWER_BOUNDS:
            for name in names:
                value = getattr(self, name)
                if not (value >= bound if allowed else value > bound):
                    relation = ">=" if allowed else ">"
                    raise ValueError(
                        f"TrainSettings.{name} must be {relation} {bound}, got {value!r}."
                    )
        if self.predictor != "none" and not is_known_predictor(self.predictor):
            raise ValueError(
                f"TrainSettings.predictor must be a registered predictor "
                f"({', '.join(known_predictors(privileged=True))}, oracle_noise_<sigma>) or "
                f"'none', got "
                f"{self.predictor!r}."
            )
        if self.teacher not in TEACHERS:
            raise ValueError(
                f"TrainSettings.teacher must be one of {TEACHERS}, got {self.teacher!r}."
            )
        if self.trust_region not in TRUST_REGIONS:
            raise ValueError(
                f"TrainSettings.trust_region must be one of {TRUST_REGIONS}, got "
                f"{self.trust_region!r}."
            )
        if self.world_version not in WORLD_VERSIONS:
            raise ValueError(
                f"TrainSettings.world_version must be one of {WORLD_VERSIONS}, got "
                f"{self.world_version!r}."
            )
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(
                f"TrainSettings.lr_schedule must be one of {LR_SCHEDULES}, got "
                f"{self.lr_schedule!r}."
            )
        if self.preset not in PRESETS:
            raise ValueError(
                f"TrainSettings.preset must be 'training' (train split, load 1.4) or 'tiny' "
                f"(smoke tests), got {self.preset!r}."
            )
        if self.validation_seeds > len(VALIDATION_SEEDS):
            raise ValueError(
                f"TrainSettings.validation_seeds must be <= {len(VALIDATION_SEEDS)} (the "
                f"validation episodes {VALIDATION_SEEDS}), got {self.validation_seeds}."
            )
        if self.rollout_lag not in (0, 1):
            raise ValueError(
                f"TrainSettings.rollout_lag must be 0 (on-policy rollouts in this process) or 1 "
                f"(a worker plays them one update behind), got {self.rollout_lag!r}."
            )
        if not (0.0 < self.gamma <= 1.0 and 0.0 <= self.gae_lambda <= 1.0):
            raise ValueError("TrainSettings.gamma must lie in (0, 1] and gae_lambda in [0, 1].")

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

    @property
    def shaping_weight(self) -> float:
        """The shaping weight the rollouts pay (0 for the ``no_shaping`` ablation)."""
        return 0.0 if self.ablation == "no_shaping" else self.shaping

    @property
    def update_size(self) -> int:
        """Cluster-epochs per PPO update."""
        return self.clusters * self.rollout_epochs

    @property
    def validation_episodes(self) -> tuple[int, ...]:
        """The validation seeds this run plays, per workload."""
        return VALIDATION_SEEDS[: self.validation_seeds]

    @property
    def confirmation_episodes(self) -> tuple[int, ...]:
        """The confirmation seeds this run plays, per workload (as many as it validates on)."""
        return CONFIRMATION_SEEDS[: self.validation_seeds]

    def configs(self, count: int) -> list[ClusterConfig]:
        """``count`` training configs cycling through the workloads, paying the shaping at the
        returns' discount ``gamma``."""
        return [
            get_config(
                self.preset,
                workload=WORKLOADS[i % len(WORKLOADS)],
                shaping_weight=self.shaping_weight,
                shaping_discount=self.gamma,
                world_version=self.world_version,
                hopeless_curve_share=self.hopeless_curve_share,
            )
            for i in range(count)
        ]


#: The smoke test's run (``--quick``): a tiny network on the ``tiny`` preset, one DAgger round
#: and two PPO updates; flags given on the command line still override these.
QUICK = {
    "preset": "tiny",
    "clusters": 3,
    "imitation_clusters": 3,
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
