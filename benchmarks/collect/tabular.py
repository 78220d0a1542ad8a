# long: one family's collector is one unit: its learners and their budgets side by side, so a reader checks a family's curves in one file (its data sets are in tabular_datasets.py).
"""Tabular family: scikit-learn and torch learners on bundled and generated tabular data.

Data sets: :mod:`mara_env.benchmarks.collect.tabular_datasets` (nothing is downloaded).

Learners (:data:`LEARNERS`); every curve has exactly 100 points (:data:`EPOCHS` epochs or
:data:`STAGES` boosting stages) at work 1, 2, ..., 100:

| learner | model | loss recorded at each point | work unit |
|---|---|---|---|
| sgd | ``SGDClassifier(loss="log_loss")`` / ``SGDRegressor`` (linear), one ``partial_fit`` pass over the set (shuffled) per epoch | log loss / squared error of the whole set after the epoch (without the L2 penalty) | epochs |
| mlp | ``MLPClassifier`` / ``MLPRegressor``, one ``partial_fit`` pass per epoch | the epoch's mean minibatch loss ``loss_``: log loss / squared error, plus the L2 penalty (sklearn halves the squared error; the regression loss is doubled back, penalty included) | epochs |
| boosting | ``GradientBoostingClassifier`` / ``GradientBoostingRegressor``, 100 stages | ``train_score_``: log loss / squared error of the stage's in-bag sample (the whole set when subsample is 1) | boosting stages |
| torch | torch linear model (logistic / least-squares regression) or ReLU MLP, minibatch SGD / Adam | the epoch's mean minibatch cross-entropy / squared error (without weight decay) | epochs |

Log losses are in nats; with ``k`` classes a uniform guess scores ``ln k``.

Grid (:func:`grid`): every learner on every data set, 10 runs each (:attr:`Learner.runs_per_dataset`):
4 x 12 x 10 = 480 runs. The 10 runs of a (learner, data set) cell draw each axis below, and the
seed (0, 1, 2), in a Latin-hypercube-style design: each value of an axis appears equally often
(up to one) in the cell, in an order shuffled per axis by a generator seeded with the cell's
names, and no two runs coincide. The order is fixed: learners, then data sets, as listed.

| learner | axis | values |
|---|---|---|
| sgd | alpha (L2) | 1e-5, 1e-4, 1e-3, 1e-2 |
| sgd | schedule | invscaling (``eta0 / t^power_t``, sklearn's power_t: 0.5 classifying, 0.25 regressing), constant |
| sgd | eta0 | classification: 0.001, 0.01, 0.1, 0.5; regression: 0.0003, 0.001, 0.003, 0.01, 0.03 (squared error diverges at larger steps) |
| mlp | hidden | [16], [64], [32, 32] (ReLU) |
| mlp | solver | adam, sgd (momentum 0.9, Nesterov; sklearn's defaults) |
| mlp | lr | 0.001, 0.01, 0.1 |
| mlp | batch_size | 32, 128 |
| mlp | alpha (L2) | 1e-4, 1e-2 |
| boosting | lr | 0.02, 0.1, 0.5 |
| boosting | max_depth | 1, 2, 4 |
| boosting | subsample | 1.0, 0.5 (stochastic boosting: noisy in-bag loss) |
| boosting | max_features | all (None), sqrt; on digits sqrt only (all 64 features with 10 trees a stage cost up to 13 s a curve) |
| torch | hidden | [] (linear), [32], [128], [64, 64] (ReLU) |
| torch | optimiser | sgd (plain), momentum (SGD, momentum 0.9), adam |
| torch | lr | 0.001, 0.01, 0.1 |
| torch | batch_size | 32, 128, 512 (a batch is the whole set when it is smaller) |
| torch | weight_decay | 0, 1e-3 |

The seed sets every random choice of a run: sklearn's ``random_state`` (shuffling, weight
initialisation, subsampling), and for torch ``torch.manual_seed`` (initialisation, inside
``fork_rng``) and a ``torch.Generator`` (batch order); torch runs on one thread. The same spec
gives the same curve.

The mix gives varied shapes: fast convergence (boosting at lr 0.5, linear models on
classes_easy / linear), high plateaus (linear models on circles and classes_hard, small learning
rates), noise (constant-step SGD, Adam at lr 0.1, subsampled boosting) and late instabilities.

Divergence: a run whose loss becomes non-finite or reaches :data:`LOSS_CAP` (100) is diverged.
SGD and MLP runs stop when sklearn reports an overflow or non-finite weights, torch runs when an
epoch's loss is not finite; every point from the first diverged one on records ``LOSS_CAP``.
``metadata["diverged_at"]`` is that point's index (None for a sound run), and the final training
metric is then None. Kept on purpose, as failed runs are real: stochastic boosting with large
steps on log loss diverges (Newton leaf values on small, pure in-bag samples; the in-bag loss
grows past 1e100), and 3 of the grid's 15 classification boosting runs at lr 0.5 and subsample
0.5 do (on iris, digits and moons). No other diverged run was seen in ~100 sampled grid runs.

``metadata`` holds the data set, task, n_samples, n_features, n_classes (0 for regression), the
learner, its hyperparameters, what the loss is, the final loss, ``diverged_at``, the final
training metric (``train_accuracy``, or ``train_r2`` = 1 - squared error, as targets have
variance 1) and the scikit-learn (and torch) version.

Cost: each run trains on one thread; the slowest settings are torch at batch 32 on digits and
boosting at depth 4 on digits or classes_hard. Every collection session's wall seconds are
logged beside the curves (``collection.json``).
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mara_env.benchmarks.collect.spec import Curve, RunSpec
from mara_env.benchmarks.collect.tabular_datasets import DATASETS, Dataset, load_dataset
from mara_env.benchmarks.common.threads import one_torch_thread

FAMILY = "tabular"

#: Epochs of the epoch-based learners, and stages of gradient boosting: points per curve.
EPOCHS = 100
STAGES = 100
#: A run diverges at its first loss that is not finite or reaches this; it records this from there.
LOSS_CAP = 100.0
#: Seeds a grid run can have (drawn with its hyperparameters).
SEEDS = (0, 1, 2)

Axes = dict[str, list[Any]]


# ---------------------------------------------------------------------------- learners
@dataclass(frozen=True)
class Trace:
    """What a trainer records: one loss per work point, and the final training predictions."""

    losses: np.ndarray
    work: np.ndarray
    work_unit: str
    loss: str
    predictions: np.ndarray | None


Trainer = Callable[[Dataset, dict[str, Any], int], Trace]


def _pad(losses: list[float], length: int) -> np.ndarray:
    """The losses of a run that stopped early (it diverged), padded with :data:`LOSS_CAP`."""
    padded = np.full(length, LOSS_CAP)
    padded[: len(losses)] = losses
    return padded


def _predictions(losses: list[float], predict: Callable[[], Any]) -> np.ndarray | None:
    """The final training predictions, or None if the run stopped early."""
    return np.asarray(predict()) if len(losses) == EPOCHS else None


def _mean_log_loss(probabilities: np.ndarray, y: np.ndarray) -> float:
    picked = probabilities[np.arange(len(y)), y]
    return float(-np.mean(np.log(np.clip(picked, 1e-15, 1.0))))


def _mean_squared_error(predictions: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((predictions - y) ** 2))


def _train_sgd(data: Dataset, params: dict[str, Any], seed: int) -> Trace:
    """Linear model by SGD, one ``partial_fit`` pass per epoch; loss on the whole training set."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    options = {
        "alpha": params["alpha"],
        "learning_rate": params["schedule"],
        "eta0": params["eta0"],
        "random_state": seed,
    }
    classify = data.task == "classification"
    model = SGDClassifier(loss="log_loss", **options) if classify else SGDRegressor(**options)
    losses: list[float] = []
    for _ in range(EPOCHS):
        if not _fit_one_epoch(model, data):
            break
        if classify:
            losses.append(_mean_log_loss(model.predict_proba(data.x), data.y))
        else:
            losses.append(_mean_squared_error(model.predict(data.x), data.y))
    return Trace(
        losses=_pad(losses, EPOCHS),
        work=np.arange(1.0, EPOCHS + 1),
        work_unit="epochs",
        loss=("log loss" if classify else "squared error") + " of the whole set after each epoch",
        predictions=_predictions(losses, lambda: model.predict(data.x)),
    )


def _fit_one_epoch(model: Any, data: Dataset) -> bool:
    """One ``partial_fit`` pass over the whole set; False once the learner diverges.

    scikit-learn reports divergence with a ValueError ("Floating-point under-/overflow" from
    SGD, "Solver produced non-finite parameter weights" from the MLP).
    """
    try:
        if data.task == "classification":
            model.partial_fit(data.x, data.y, classes=data.classes)
        else:
            model.partial_fit(data.x, data.y)
    except ValueError:
        return False
    return True


def _train_mlp(data: Dataset, params: dict[str, Any], seed: int) -> Trace:
    """scikit-learn MLP, one ``partial_fit`` pass per epoch; loss = the epoch's mean batch loss."""
    from sklearn.neural_network import MLPClassifier, MLPRegressor

    classify = data.task == "classification"
    model = (MLPClassifier if classify else MLPRegressor)(
        hidden_layer_sizes=tuple(params["hidden"]),
        solver=params["solver"],
        learning_rate_init=params["lr"],
        batch_size=params["batch_size"],
        alpha=params["alpha"],
        random_state=seed,
    )
    # MLPRegressor's loss is half the squared error: doubled to the mean squared error.
    scale = 1.0 if classify else 2.0
    losses: list[float] = []
    for _ in range(EPOCHS):
        if not _fit_one_epoch(model, data):
            break
        if not np.isfinite(model.loss_):
            break
        losses.append(scale * float(model.loss_))
    objective = "log loss" if classify else "squared error"
    return Trace(
        losses=_pad(losses, EPOCHS),
        work=np.arange(1.0, EPOCHS + 1),
        work_unit="epochs",
        loss=f"{objective} + L2 penalty, mean over the epoch's minibatches",
        predictions=_predictions(losses, lambda: model.predict(data.x)),
    )


def _train_boosting(data: Dataset, params: dict[str, Any], seed: int) -> Trace:
    """Gradient boosted trees; loss = ``train_score_`` (in-bag training loss) at each stage."""
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    classify = data.task == "classification"
    model = (GradientBoostingClassifier if classify else GradientBoostingRegressor)(
        n_estimators=STAGES,
        learning_rate=params["lr"],
        max_depth=params["max_depth"],
        subsample=params["subsample"],
        max_features=params["max_features"],
        random_state=seed,
    )
    model.fit(data.x, data.y)
    objective = "log loss" if classify else "squared error"
    return Trace(
        losses=np.asarray(model.train_score_, dtype=np.float64),
        work=np.arange(1.0, STAGES + 1),
        work_unit="boosting stages",
        loss=f"{objective} of the stage's in-bag sample (train_score_)",
        predictions=model.predict(data.x),
    )


def _train_torch(data: Dataset, params: dict[str, Any], seed: int) -> Trace:
    """torch linear model or MLP by minibatch SGD / Adam, on one thread (see :mod:`mara_env.benchmarks.collect.threads`)."""

    with one_torch_thread():
        return _train_torch_model(data, params, seed)


def _train_torch_model(data: Dataset, params: dict[str, Any], seed: int) -> Trace:
    """The torch run; loss = the epoch's mean minibatch loss."""
    import torch

    classify = data.task == "classification"
    x = torch.tensor(data.x, dtype=torch.float32)
    y = torch.tensor(data.y, dtype=torch.int64 if classify else torch.float32)
    outputs = len(data.classes) if classify else 1
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = _torch_model(x.shape[1], list(params["hidden"]), outputs)
    optimiser = _torch_optimiser(model.parameters(), params)
    criterion: Callable[[Any, Any], Any] = (
        torch.nn.functional.cross_entropy
        if classify
        else lambda out, target: torch.nn.functional.mse_loss(out.squeeze(1), target)
    )
    shuffler = torch.Generator().manual_seed(seed)
    batch_size = params["batch_size"]
    losses: list[float] = []
    for _ in range(EPOCHS):
        order = torch.randperm(len(x), generator=shuffler)
        total = 0.0
        for start in range(0, len(x), batch_size):
            batch = order[start : start + batch_size]
            loss = criterion(model(x[batch]), y[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * len(batch)
        if not np.isfinite(total):
            break
        losses.append(total / len(x))

    def predict() -> np.ndarray:
        with torch.no_grad():
            out = model(x)
        return (out.argmax(1) if classify else out.squeeze(1)).numpy()

    objective = "cross-entropy" if classify else "squared error"
    return Trace(
        losses=_pad(losses, EPOCHS),
        work=np.arange(1.0, EPOCHS + 1),
        work_unit="epochs",
        loss=f"{objective}, mean over the epoch's minibatches",
        predictions=_predictions(losses, predict),
    )


def _torch_model(inputs: int, hidden: list[int], outputs: int) -> Any:
    import torch

    layers: list[torch.nn.Module] = []
    width = inputs
    for size in hidden:
        layers += [torch.nn.Linear(width, size), torch.nn.ReLU()]
        width = size
    layers.append(torch.nn.Linear(width, outputs))
    return torch.nn.Sequential(*layers)


def _torch_optimiser(parameters: Any, params: dict[str, Any]) -> Any:
    import torch

    lr, decay = params["lr"], params["weight_decay"]
    # fused: the same update, a quarter faster on small CPU models
    if params["optimiser"] == "adam":
        return torch.optim.Adam(parameters, lr=lr, weight_decay=decay, fused=True)
    momentum = 0.9 if params["optimiser"] == "momentum" else 0.0
    return torch.optim.SGD(parameters, lr=lr, momentum=momentum, weight_decay=decay, fused=True)


# ---------------------------------------------------------------------------- grid
@dataclass(frozen=True)
class Learner:
    """A learner of the grid.

    Attributes:
        train: Trains on a data set with the run's hyperparameters and seed.
        axes: Hyperparameter name -> the values the grid draws from, per task.
        runs_per_dataset: How many distinct (hyperparameters, seed) draws per data set.
        overrides: Data set name -> axes replacing the task's on that data set (to bound cost).
    """

    train: Trainer
    axes: dict[str, Axes]
    runs_per_dataset: int
    overrides: dict[str, Axes] = field(default_factory=dict)


def _same_axes(axes: Axes) -> dict[str, Axes]:
    return {"classification": axes, "regression": axes}


#: Learner name -> how it trains and the grid it draws from.
LEARNERS: dict[str, Learner] = {
    "sgd": Learner(
        train=_train_sgd,
        axes={
            "classification": {
                "alpha": [1e-5, 1e-4, 1e-3, 1e-2],
                "schedule": ["invscaling", "constant"],
                "eta0": [0.001, 0.01, 0.1, 0.5],
            },
            # squared loss diverges at the step sizes classification tolerates
            "regression": {
                "alpha": [1e-5, 1e-4, 1e-3, 1e-2],
                "schedule": ["invscaling", "constant"],
                "eta0": [0.0003, 0.001, 0.003, 0.01, 0.03],
            },
        },
        runs_per_dataset=10,
    ),
    "mlp": Learner(
        train=_train_mlp,
        axes=_same_axes(
            {
                "hidden": [[16], [64], [32, 32]],
                "solver": ["adam", "sgd"],
                "lr": [0.001, 0.01, 0.1],
                "batch_size": [32, 128],
                "alpha": [1e-4, 1e-2],
            }
        ),
        runs_per_dataset=10,
    ),
    "boosting": Learner(
        train=_train_boosting,
        axes=_same_axes(
            {
                "lr": [0.02, 0.1, 0.5],
                "max_depth": [1, 2, 4],
                "subsample": [1.0, 0.5],
                "max_features": [None, "sqrt"],
            }
        ),
        runs_per_dataset=10,
        # ten trees a stage on 64 features: all features would cost up to ~13 s a curve
        overrides={"digits": {"max_features": ["sqrt"]}},
    ),
    "torch": Learner(
        train=_train_torch,
        axes=_same_axes(
            {
                "hidden": [[], [32], [128], [64, 64]],
                "optimiser": ["sgd", "momentum", "adam"],
                "lr": [0.001, 0.01, 0.1],
                "batch_size": [32, 128, 512],
                "weight_decay": [0.0, 1e-3],
            }
        ),
        runs_per_dataset=10,
    ),
}


def axes_of(learner: str, dataset: str) -> Axes:
    """The hyperparameter axes ``learner`` draws from on ``dataset``."""
    spec = LEARNERS[learner]
    return {**spec.axes[DATASETS[dataset].task], **spec.overrides.get(dataset, {})}


def _draw(learner: str, dataset: str) -> list[RunSpec]:
    """``runs_per_dataset`` distinct runs of ``learner`` on ``dataset``, fixed by the two names.

    Each axis (and the seed) takes each of its values equally often, up to one, in an order
    shuffled independently per axis (a Latin-hypercube-style design); draws repeat until no two
    runs coincide.
    """
    axes = {**axes_of(learner, dataset), "seed": list(SEEDS)}
    count = LEARNERS[learner].runs_per_dataset
    rng = np.random.default_rng(zlib.crc32(f"{learner}/{dataset}".encode()))
    while True:
        columns = [_balanced_column(len(values), count, rng) for values in axes.values()]
        rows = list(zip(*columns, strict=True))
        if len(set(rows)) == count:
            break
    specs = []
    for row in rows:
        values = {name: axes[name][index] for name, index in zip(axes, row, strict=True)}
        seed = values.pop("seed")
        specs.append(RunSpec(FAMILY, {"learner": learner, "dataset": dataset, **values}, seed))
    return specs


def _balanced_column(size: int, count: int, rng: np.random.Generator) -> list[int]:
    """``count`` indices into ``size`` values, each used ``count // size`` or one more times."""
    cycled = np.resize(rng.permutation(size), count)
    return [int(index) for index in rng.permutation(cycled)]


def grid(smoke: bool = False) -> list[RunSpec]:
    """The tabular runs: every learner on every data set (or three tiny runs if ``smoke``)."""
    if smoke:
        return [
            RunSpec(
                FAMILY,
                {
                    "learner": "sgd",
                    "dataset": "iris",
                    "alpha": 1e-4,
                    "schedule": "invscaling",
                    "eta0": 0.01,
                },
            ),
            RunSpec(
                FAMILY,
                {
                    "learner": "boosting",
                    "dataset": "diabetes",
                    "lr": 0.1,
                    "max_depth": 1,
                    "subsample": 0.5,
                    "max_features": None,
                },
                seed=1,
            ),
            RunSpec(
                FAMILY,
                {
                    "learner": "torch",
                    "dataset": "wine",
                    "hidden": [16],
                    "optimiser": "adam",
                    "lr": 0.01,
                    "batch_size": 64,
                    "weight_decay": 0.0,
                },
                seed=2,
            ),
        ]
    return [
        spec for learner in LEARNERS for dataset in DATASETS for spec in _draw(learner, dataset)
    ]


# ---------------------------------------------------------------------------- one run
def check_params(params: dict[str, Any]) -> None:
    """Raise ``ValueError`` unless ``params`` name a learner, a data set and its axes' keys."""
    learner, dataset = params.get("learner"), params.get("dataset")
    if learner not in LEARNERS:
        raise ValueError(f"unknown tabular learner {learner!r}; known: {sorted(LEARNERS)}")
    if dataset not in DATASETS:
        raise ValueError(f"unknown tabular data set {dataset!r}; known: {sorted(DATASETS)}")
    expected = {"learner", "dataset", *axes_of(learner, dataset)}
    if set(params) != expected:
        raise ValueError(f"{learner} on {dataset} needs params {sorted(expected)}, got {params}")


def run(spec: RunSpec) -> Curve:
    """Train ``spec``'s learner on its data set and return the training-loss curve."""
    from sklearn.exceptions import ConvergenceWarning

    check_params(spec.params)
    data = load_dataset(spec.params["dataset"])
    start = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", ConvergenceWarning)
        trace = LEARNERS[spec.params["learner"]].train(data, spec.params, spec.seed)
    seconds = time.perf_counter() - start
    diverged_at = _divergence(trace.losses)
    losses = trace.losses.copy()
    if diverged_at is not None:
        losses[diverged_at:] = LOSS_CAP
    return Curve(
        losses=losses,
        work=trace.work,
        work_unit=trace.work_unit,
        wall_seconds=seconds,
        metadata=_metadata(spec, data, trace, losses, diverged_at),
    )


def _divergence(losses: np.ndarray) -> int | None:
    """The first point whose loss is not finite or reaches :data:`LOSS_CAP`, if any."""
    bad = np.flatnonzero(~(losses < LOSS_CAP))  # NaN compares False
    return int(bad[0]) if bad.size else None


def _metadata(
    spec: RunSpec, data: Dataset, trace: Trace, losses: np.ndarray, diverged_at: int | None
) -> dict[str, Any]:
    import sklearn

    hyperparameters = {k: v for k, v in spec.params.items() if k not in ("learner", "dataset")}
    metric_name = "train_accuracy" if data.task == "classification" else "train_r2"
    metadata: dict[str, Any] = {
        "dataset": data.name,
        "task": data.task,
        "n_samples": int(data.x.shape[0]),
        "n_features": int(data.x.shape[1]),
        "n_classes": len(data.classes),
        "learner": spec.params["learner"],
        "hyperparameters": hyperparameters,
        "loss": trace.loss,
        "final_loss": float(losses[-1]),
        "diverged_at": diverged_at,
        metric_name: None if diverged_at is not None else _final_metric(data, trace.predictions),
        "sklearn_version": sklearn.__version__,
    }
    if spec.params["learner"] == "torch":
        import torch

        metadata["torch_version"] = torch.__version__
    return metadata


def _final_metric(data: Dataset, predictions: np.ndarray | None) -> float | None:
    """Training accuracy, or R² (targets have variance 1); None for a diverged run."""
    if predictions is None:
        return None
    predictions = np.asarray(predictions)
    if data.task == "classification":
        return float(np.mean(predictions == data.y))
    return float(1.0 - np.mean((predictions - data.y) ** 2))
