"""Which tasks can still finish: P(reach the target by the deadline | k nodes from now on),
from the observation alone.

A :class:`ReachModel` is a small neural network (fully connected layers with ReLU between them;
one layer is a logistic regression) over :func:`reach_features`, columns a scheduler
computes from one node's decoded observation (:class:`mara_env.sim.observation.SlotView`) and
the cluster's public settings: where the task stands (its loss against its arrival loss and its
target, its curve position, its time left), how far ``k`` nodes would carry it by the deadline
(``speed * k**alpha`` curve steps an epoch, with the alpha schedulers know for its family), and
two extrapolations of its loss to that point (the power law its loss so far follows, and its
last epoch's slope). It never reads the simulator, and it runs on NumPy alone.

``python -m mara_env.benchmarks.prediction.reach_model`` fits one per world on training seeds and
the train split, labelled by the clairvoyant reference's exact stepping, and ships it in the
world's folder (:data:`MODEL_FILE`) with the planner's settings chosen on training seeds
(:mod:`mara_env.agents.reach_planner`). Read a shipped model with :func:`load_reach_model`.

Example:
    >>> import numpy as np, mara_env
    >>> env = mara_env.raw_env(config="tiny")
    >>> env.reset(seed=0)
    >>> view = mara_env.decode_observation(env.observe("node_0")["observation"], env.config)
    >>> features = reach_features(view, env.config)
    >>> features.shape == (env.config.n_slots, env.config.task_node_limit, len(FEATURES))
    True
    >>> model = ReachModel.logistic(np.zeros(len(FEATURES)), 0.0)
    >>> model.probabilities_of(features)[0, :2].tolist()  # log-odds 0 everywhere
    [0.5, 0.5]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from mara_env import ClusterConfig
from mara_env.curves.families import FAMILY_NAMES, OTHER_FAMILY, OTHER_NAME
from mara_env.errors import CheckpointError
from mara_env.sim.observation import SlotView
from mara_env.worlds.world import LATEST_WORLD_VERSION, world

#: The file in a world's shipped folder that holds its fitted model and planner settings. Named
#: literally, so that a result keyed by the planner's source holds the file of its world.
MODEL_FILE = "reach_model.json"
#: The version of the file's layout this module reads.
MODEL_FORMAT = 1
#: The columns of :func:`reach_features`, in order (families as one-hot columns at the end).
NUMERIC_FEATURES = (
    "log_nodes",
    "log_time_left",
    "time_left_fraction",
    "log_target_ratio",
    "gap_to_target",
    "drop_so_far",
    "log_steps_done",
    "log_steps_ahead",
    "log_position_gain",
    "curve_share_in_reach",
    "power_law_margin",
    "slope_margin",
    "progress",
    "log_age",
    "log_work",
    "log_budget",
    "log_speed",
    "recent_slope",
)
FAMILY_FEATURES = tuple(f"family_{name}" for name in (*FAMILY_NAMES, OTHER_NAME))
FEATURES = NUMERIC_FEATURES + FAMILY_FEATURES
#: Bound on the extrapolated margins (log-loss units): beyond it a task is plainly in or out.
_MARGIN_CLIP = 10.0


def reach_features(view: SlotView, config: ClusterConfig) -> np.ndarray:
    """The model's inputs for every slot and node count: shape ``(n_slots, K, len(FEATURES))``
    with ``K = config.task_node_limit`` (row ``k - 1`` for ``k`` nodes from now to the deadline).

    Empty slots get finite rows that mean nothing; callers mask them with ``view.occupied``.

    Example:
        >>> import mara_env
        >>> env = mara_env.raw_env(config="tiny")
        >>> env.reset(seed=0)
        >>> view = mara_env.decode_observation(env.observe("node_0")["observation"], env.config)
        >>> bool(np.isfinite(reach_features(view, env.config)).all())
        True
    """
    occupied = view.occupied
    nodes = np.arange(1, config.task_node_limit + 1, dtype=np.float64)
    family = np.where(occupied, view.family, OTHER_FAMILY).astype(np.int64)
    alpha = config.observed_alphas()[family]
    time_left = np.where(occupied, np.maximum(view.time_left, 0.0), 0.0)
    speed = np.where(occupied, view.speed, 0.0)
    done = np.where(occupied, view.curve_steps, 0.0)
    points = np.maximum(np.where(occupied, view.budget * view.speed, 1.0), 1.0)
    ahead = speed[:, None] * nodes[None, :] ** alpha[:, None] * time_left[:, None]
    in_reach = np.minimum(done[:, None] + ahead, points[:, None])
    position_gain = np.log1p(in_reach) - np.log1p(done)[:, None]
    drop = np.where(occupied, -view.log_loss_ratio, 0.0)
    gap = np.where(occupied, view.log_loss_ratio - view.log_target_ratio, 0.0)
    # A power law through the arrival loss and today's: drop = b * log(1 + steps).
    exponent = drop / np.maximum(np.log1p(done), 1e-3)
    power_law = exponent[:, None] * position_gain - gap[:, None]
    # Last epoch's slope (log-loss per node-epoch), carried at k nodes to the deadline.
    node_epochs = nodes[None, :] ** alpha[:, None] * time_left[:, None]
    slope = np.where(occupied, view.recent_slope, 0.0)
    slope_margin = slope[:, None] * node_epochs - gap[:, None]
    width = len(nodes)
    columns = [
        np.broadcast_to(np.log(nodes)[None, :], (len(occupied), width)),
        _each_k(np.log1p(time_left), width),
        _each_k(np.where(occupied, view.time_left_fraction, 0.0), width),
        _each_k(np.where(occupied, view.log_target_ratio, 0.0), width),
        _each_k(gap, width),
        _each_k(drop, width),
        _each_k(np.log1p(done), width),
        np.log1p(ahead),
        position_gain,
        in_reach / points[:, None],
        np.clip(power_law, -_MARGIN_CLIP, _MARGIN_CLIP),
        np.clip(slope_margin, -_MARGIN_CLIP, _MARGIN_CLIP),
        _each_k(np.where(occupied, view.progress, 0.0), width),
        _each_k(np.log1p(np.where(occupied, view.age, 0.0)), width),
        _each_k(np.log1p(np.where(occupied, view.work, 0.0)), width),
        _each_k(np.log1p(np.where(occupied, view.budget, 0.0)), width),
        _each_k(np.log(np.maximum(speed, 1e-6)), width),
        _each_k(slope, width),
    ]
    one_hot = np.zeros((len(occupied), len(FAMILY_FEATURES)))
    one_hot[np.arange(len(occupied)), np.minimum(family, len(FAMILY_FEATURES) - 1)] = 1.0
    numeric = np.stack(columns, axis=-1)
    families = np.broadcast_to(one_hot[:, None, :], (len(occupied), width, len(FAMILY_FEATURES)))
    return np.nan_to_num(np.concatenate([numeric, families], axis=-1), posinf=0.0, neginf=0.0)


def _each_k(column: np.ndarray, width: int) -> np.ndarray:
    """A per-slot column repeated for every node count."""
    return np.broadcast_to(column[:, None], (len(column), width))


@dataclass(frozen=True)
class ReachModel:
    """A fitted model of P(reach the target by the deadline | k nodes): standardised
    :func:`reach_features`, then fully connected layers with ReLU between them; the last layer
    gives the log-odds.

    Attributes:
        layers: ``(weights, bias)`` per layer, ``weights`` of shape ``(inputs, outputs)``; the
            first takes ``len(FEATURES)`` inputs, the last gives one output.
        mean: Each feature's mean on the fitting rows.
        scale: Each feature's spread on the fitting rows (> 0).
        planner: The planner's settings chosen on training seeds with this model
            (:class:`mara_env.agents.reach_planner.ReachPlanner` keywords).
        facts: Provenance: how, where and on what the model was fitted.

    Raises:
        CheckpointError: For layers that do not chain from ``len(FEATURES)`` inputs to one
            output, or numbers that are not finite.
    """

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    mean: np.ndarray
    scale: np.ndarray
    planner: Mapping[str, Any] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        refit = "fit the model again with python -m mara_env.benchmarks.prediction.reach_model"
        width = len(FEATURES)
        if np.shape(self.mean) != (width,) or np.shape(self.scale) != (width,):
            raise CheckpointError(
                f"ReachModel: expected {width} means and scales (one per feature of "
                f"mara_env.agents.reach.FEATURES), got {np.shape(self.mean)} and "
                f"{np.shape(self.scale)}; {refit}."
            )
        inputs = width
        for index, (weights, bias) in enumerate(self.layers):
            if (
                np.ndim(weights) != 2
                or np.shape(weights)[0] != inputs
                or np.shape(bias) != np.shape(weights)[1:]
            ):
                raise CheckpointError(
                    f"ReachModel: layer {index} has weights {np.shape(weights)} and bias "
                    f"{np.shape(bias)}, expected ({inputs}, n) and (n,); {refit}."
                )
            inputs = np.shape(weights)[1]
        if not self.layers or inputs != 1:
            raise CheckpointError(
                f"ReachModel: the last layer must give one output (the log-odds); {refit}."
            )
        numbers = [self.mean, self.scale, *(array for layer in self.layers for array in layer)]
        if not all(np.isfinite(array).all() for array in numbers) or not (self.scale > 0).all():
            raise CheckpointError(
                f"ReachModel: weights, means and scales must be finite and scales > 0; {refit}."
            )

    @classmethod
    def logistic(cls, coefficients: np.ndarray, bias: float, **fields: Any) -> ReachModel:
        """A one-layer model (a logistic regression on unit-scaled features), e.g. for tests."""
        width = len(FEATURES)
        return cls(
            (
                (
                    np.asarray(coefficients, dtype=np.float64).reshape(width, 1),
                    np.array([float(bias)]),
                ),
            ),
            np.zeros(width),
            np.ones(width),
            **fields,
        )

    def logits(self, features: np.ndarray) -> np.ndarray:
        """The model's log-odds of rows of :func:`reach_features` (any leading shape)."""
        hidden = (features - self.mean) / self.scale
        for index, (weights, bias) in enumerate(self.layers):
            hidden = hidden @ weights + bias
            if index < len(self.layers) - 1:
                hidden = np.maximum(hidden, 0.0)
        return hidden[..., 0]

    def probabilities_of(self, features: np.ndarray) -> np.ndarray:
        """P(reach | k nodes) of rows of :func:`reach_features`, shape ``features.shape[:-1]``;
        never lower with more nodes (a running maximum along the node counts)."""
        logits = np.clip(self.logits(features), -30.0, 30.0)
        return np.maximum.accumulate(1.0 / (1.0 + np.exp(-logits)), axis=-1)

    def probabilities(self, view: SlotView, config: ClusterConfig) -> np.ndarray:
        """P(reach by the deadline | k nodes from now), shape ``(n_slots, K)`` (row ``k - 1``
        for ``k`` nodes), never lower with more nodes, 0 for empty slots."""
        probability = self.probabilities_of(reach_features(view, config))
        return np.where(view.occupied[:, None], probability, 0.0)

    def to_json(self) -> dict[str, Any]:
        """The document :func:`load_reach_model` reads."""
        return {
            "format": MODEL_FORMAT,
            "features": list(FEATURES),
            "layers": [
                {"weights": weights.tolist(), "bias": bias.tolist()}
                for weights, bias in self.layers
            ],
            "mean": [float(value) for value in self.mean],
            "scale": [float(value) for value in self.scale],
            "planner": dict(self.planner),
            "facts": dict(self.facts),
        }


def reach_model_path(world_version: int = LATEST_WORLD_VERSION) -> Path:
    """Where the model of ``world_version`` ships (its world folder's :data:`MODEL_FILE`)."""
    return world(world_version).folder / MODEL_FILE


def load_reach_model(
    path: Path | str | None = None, *, world_version: int = LATEST_WORLD_VERSION
) -> ReachModel:
    """The model in ``path``, or the one shipped for ``world_version``.

    Raises:
        CheckpointError: If the file is missing, not UTF-8 JSON, or not a model of this layout.
    """
    return _load(Path(path) if path is not None else reach_model_path(world_version))


@cache
def _load(path: Path) -> ReachModel:
    refit = "fit it again with python -m mara_env.benchmarks.prediction.reach_model"
    if not path.is_file():
        raise CheckpointError(f"The reach model {path} is missing; {refit}, or reinstall mara-env.")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:
        raise CheckpointError(
            f"The reach model {path} is not UTF-8 JSON ({error}); {refit}."
        ) from None
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise CheckpointError(
            f"The reach model {path} is not a format-{MODEL_FORMAT} model of this mara-env; {refit}."
        )
    if document.get("features") != list(FEATURES):
        raise CheckpointError(
            f"The reach model {path} was fitted on other features than this mara-env computes; "
            f"{refit}."
        )
    try:
        layers = tuple(
            (
                np.asarray(layer["weights"], dtype=np.float64),
                np.asarray(layer["bias"], dtype=np.float64),
            )
            for layer in document["layers"]
        )
        mean, scale = (np.asarray(document[key], dtype=np.float64) for key in ("mean", "scale"))
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"The reach model {path} lacks numeric layers, means or scales ({error!r}); {refit}."
        ) from None
    planner, facts = document.get("planner", {}), document.get("facts", {})
    if not isinstance(planner, dict) or not isinstance(facts, dict):
        raise CheckpointError(
            f"The reach model {path}: 'planner' and 'facts' must be objects; {refit}."
        )
    try:
        return ReachModel(layers, mean, scale, planner=planner, facts=facts)
    except CheckpointError as error:
        raise CheckpointError(f"{path}: {error}") from None
