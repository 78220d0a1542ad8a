# long: one family's collector is one unit: its tasks, its learners and their budgets side by side, so a reader checks a family's curves in one file.
"""Vision family: small torch CNNs and MLPs trained on image data built offline.

Data sets (all built in memory from a fixed seed; nothing is downloaded):

========== ======= ======= ===================================================================
name       images  classes what
========== ======= ======= ===================================================================
digits     8x8     10      scikit-learn's bundled handwritten digits (1,797 images)
shapes     12x12   6       generated: disc, ring, square, triangle, plus, diagonal cross at a
                           random position, size and brightness, in Gaussian pixel noise
                           (2,400 images, 400 a class)
textures   12x12   8       generated: sine gratings of 4 orientations x 2 frequencies with
                           jittered angle, frequency, phase and contrast, in Gaussian pixel
                           noise (2,400 images, 300 a class)
========== ======= ======= ===================================================================

Digits' pixels (0-16) are divided by 16 first. Every data set is then standardised (one mean and
one standard deviation over all pixels) and used whole for training; the generated ones depend
on :data:`DATA_SEED` only, never on the run.

Grid (:func:`grid`): :data:`N_CONFIGS` settings drawn from the cartesian product of the axes below
by a generator seeded with :data:`GRID_SEED` (each axis uniformly and independently), each run
with seed 0; the first :data:`N_REPEATED` settings also run with seeds 1 and 2 (run-to-run
noise of one setting): 360 runs. Duplicates would be dropped; the order is fixed.

============== ==============================================================================
axis           values
============== ==============================================================================
dataset        digits, shapes, textures
arch           ``mlp`` (flatten, ``depth`` hidden layers of ``width`` units) or ``cnn``
               (``depth`` 3x3 conv blocks of ``width``, ``2 width``, ``2 width`` channels, a
               2x2 max-pool after each of the first two, then a linear classifier)
width          mlp: 32, 64, 128, 256; cnn: 4, 8, 12, 16
depth          1, 2, 3
activation     relu, tanh
optimizer      sgd (plain), momentum (SGD, momentum 0.9), adam, rmsprop
lr             sgd: 0.003 ... 1; momentum: 0.001 ... 0.3; adam and rmsprop: 1e-4 ... 0.03
               (half-decade steps, see :data:`LEARNING_RATES`)
batch_size     16, 32, 64, 128, 256
weight_decay   0, 1e-4, 1e-3, 1e-2
augment        none, noise (Gaussian, std 0.3 of the standardised pixels), shift (random
               translation of up to one pixel each way, zero padded), both
schedule       constant, cosine (decay to zero over the run)
epochs         6, 12, 20 (passes over the training set; sets the run's length)
seed           0, and 1, 2 for the repeated settings
============== ==============================================================================

Loss and work: a run draws batches from a stream of fresh random permutations of the training
set and records :data:`N_POINTS` (120) points. Each point is the mean training cross-entropy
(nats) of the batches of one recording interval -- the averaged loss a real cluster logs every
so many samples -- computed on the augmented batches the optimiser steps on. Its work is the
number of training **samples** processed at the interval's end (``work_unit="samples"``, not
epochs). An interval is ``max(1, round(epochs * n_train / (N_POINTS * batch_size)))`` batches,
so work is evenly spaced and strictly increasing, and a run sees about ``epochs`` passes.

Diverging runs are kept: every recorded loss is capped at ``DIVERGED_FACTOR * ln(classes)`` (ten
times the loss of a uniform guess), and once a batch loss is not finite the run stops training
and records the cap for all its remaining points (``metadata["diverged"]`` is then true, and
``metadata["capped_points"]`` counts the points at the cap, diverged or not). An optional
``points`` parameter overrides :data:`N_POINTS` (the smoke grid's tiny runs use it).

``metadata`` holds the data set, its size, classes and image side, the model's one-line summary
and parameter count, the batches and samples per point, the cap, whether the run diverged, and
its final accuracy on the whole (non-augmented) training set.

Cost: each run trains on one thread; the largest setting is the cnn of width 16, depth 3,
batch 16 and 20 epochs. Every collection session's wall seconds are logged beside the curves
(``collection.json``).
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from mara_env.benchmarks.collect.spec import Curve, RunSpec

FAMILY = "vision"

#: Points recorded per curve.
N_POINTS = 120
#: Seed of the generated data sets (the same for every run).
DATA_SEED = 20_251_129
#: Seed of the generator that samples the grid's settings.
GRID_SEED = 7_919
#: Settings sampled from the cartesian product (before duplicates are dropped).
N_CONFIGS = 300
#: The first settings of the grid that also run with seeds 1 and 2.
N_REPEATED = 30
#: A recorded loss is at most this many times ln(classes), the loss of a uniform guess.
DIVERGED_FACTOR = 10.0
#: Standard deviation of the ``noise`` augmentation, in standardised pixel units.
NOISE_STD = 0.3

DATASETS = ("digits", "shapes", "textures")
ARCHS = ("mlp", "cnn")
WIDTHS = {"mlp": (32, 64, 128, 256), "cnn": (4, 8, 12, 16)}
DEPTHS = (1, 2, 3)
ACTIVATIONS = ("relu", "tanh")
LEARNING_RATES = {
    "sgd": (0.003, 0.01, 0.03, 0.1, 0.3, 1.0),
    "momentum": (0.001, 0.003, 0.01, 0.03, 0.1, 0.3),
    "adam": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
    "rmsprop": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
}
BATCH_SIZES = (16, 32, 64, 128, 256)
WEIGHT_DECAYS = (0.0, 1e-4, 1e-3, 1e-2)
AUGMENTS = ("none", "noise", "shift", "both")
SCHEDULES = ("constant", "cosine")
EPOCHS = (6, 12, 20)


# ---------------------------------------------------------------------------- data sets
@functools.cache
def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(n, 1, side, side)`` float32, standardised, and labels ``(n,)`` int64.

    The arrays are read-only and cached: every run of a process shares them.
    """
    builders = {"digits": _digits, "shapes": make_shapes, "textures": make_textures}
    if name not in builders:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(builders)}")
    images, labels = builders[name]()
    images = (images - images.mean()) / images.std()
    images = images.astype(np.float32)[:, None]
    labels = labels.astype(np.int64)
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return bunch.images.astype(np.float64) / 16.0, bunch.target


def _grid(side: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre row and column coordinates, each ``(1, side, side)``."""
    rows, cols = np.mgrid[0:side, 0:side].astype(np.float64)
    return rows[None], cols[None]


def make_shapes(
    n_per_class: int = 400, side: int = 12, seed: int = DATA_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy images of six shapes; returns images ``(n, side, side)`` and labels ``(n,)``.

    Classes: 0 disc, 1 ring, 2 square, 3 triangle, 4 plus, 5 diagonal cross. Each image has a
    random centre (at least 3.5 pixels from the border), size 2.5-4.5 pixels and brightness
    0.6-1, in Gaussian noise of standard deviation 0.35.
    """
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(6), n_per_class)
    rng.shuffle(labels)
    n = labels.size
    centre_row, centre_col = rng.uniform(3.5, side - 4.5, (2, n, 1, 1))
    size = rng.uniform(2.5, 4.5, (n, 1, 1))
    rows, cols = _grid(side)
    dy, dx = rows - centre_row, cols - centre_col
    radius = np.hypot(dx, dy)
    box = np.maximum(np.abs(dx), np.abs(dy))
    masks = np.stack(
        [
            radius <= size,
            np.abs(radius - size) <= 0.75,
            box <= 0.8 * size,
            (dy >= -size) & (dy <= 0.6 * size) & (np.abs(dx) <= 0.6 * (dy + size)),
            ((np.abs(dx) <= 0.75) | (np.abs(dy) <= 0.75)) & (box <= size),
            ((np.abs(dx - dy) <= 1.0) | (np.abs(dx + dy) <= 1.0)) & (box <= 0.85 * size),
        ]
    )
    shape = masks[labels, np.arange(n)].astype(np.float64)
    brightness = rng.uniform(0.6, 1.0, (n, 1, 1))
    images = brightness * shape + rng.normal(0.0, 0.35, (n, side, side))
    return images, labels


def make_textures(
    n_per_class: int = 300, side: int = 12, seed: int = DATA_SEED
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy sine gratings; returns images ``(n, side, side)`` and labels ``(n,)``.

    Class ``k`` has orientation ``45 * (k % 4)`` degrees (jittered by up to 12 degrees) and a
    period of 6 pixels (``k < 4``) or 3 pixels (``k >= 4``), jittered by up to 15 %; phase is
    uniform, contrast 0.4-1, and the Gaussian pixel noise has standard deviation 0.6.
    """
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(8), n_per_class)
    rng.shuffle(labels)
    n = labels.size
    angle = np.deg2rad(45.0 * (labels % 4) + rng.uniform(-12.0, 12.0, n))[:, None, None]
    period = np.where(labels < 4, 6.0, 3.0)[:, None, None] * rng.uniform(0.85, 1.15, (n, 1, 1))
    phase = rng.uniform(0.0, 2.0 * np.pi, (n, 1, 1))
    contrast = rng.uniform(0.4, 1.0, (n, 1, 1))
    rows, cols = _grid(side)
    along = cols * np.cos(angle) + rows * np.sin(angle)
    images = contrast * np.sin(2.0 * np.pi * along / period + phase)
    images = images + rng.normal(0.0, 0.6, (n, side, side))
    return images, labels


# ---------------------------------------------------------------------------- models
def build_model(params: dict[str, Any], side: int, n_classes: int) -> nn.Module:
    """The network of ``params`` (``arch``, ``width``, ``depth``, ``activation``)."""
    activation = {"relu": nn.ReLU, "tanh": nn.Tanh}[params["activation"]]
    width, depth = int(params["width"]), int(params["depth"])
    layers: list[nn.Module] = []
    if params["arch"] == "mlp":
        layers.append(nn.Flatten())
        features = side * side
        for _ in range(depth):
            layers += [nn.Linear(features, width), activation()]
            features = width
    elif params["arch"] == "cnn":
        channels = 1
        for block in range(depth):
            out = width if block == 0 else 2 * width
            layers += [nn.Conv2d(channels, out, 3, padding=1), activation()]
            if block < 2:
                layers.append(nn.MaxPool2d(2))
                side //= 2
            channels = out
        layers.append(nn.Flatten())
        features = channels * side * side
    else:
        raise ValueError(f"unknown arch {params['arch']!r}")
    layers.append(nn.Linear(features, n_classes))
    return nn.Sequential(*layers)


def build_optimizer(params: dict[str, Any], model: nn.Module) -> torch.optim.Optimizer:
    """The optimiser of ``params`` (``optimizer``, ``lr``, ``weight_decay``)."""
    lr, decay = float(params["lr"]), float(params["weight_decay"])
    name = params["optimizer"]
    weights = model.parameters()
    if name == "sgd":
        return torch.optim.SGD(weights, lr=lr, weight_decay=decay)
    if name == "momentum":
        return torch.optim.SGD(weights, lr=lr, momentum=0.9, weight_decay=decay)
    if name == "adam":
        return torch.optim.Adam(weights, lr=lr, weight_decay=decay)
    if name == "rmsprop":
        return torch.optim.RMSprop(weights, lr=lr, weight_decay=decay)
    raise ValueError(f"unknown optimizer {name!r}")


# ---------------------------------------------------------------------------- training
def augment(images: torch.Tensor, how: str, generator: torch.Generator) -> torch.Tensor:
    """Apply the ``augment`` setting (``none``, ``noise``, ``shift``, ``both``) to a batch."""
    if how in ("shift", "both"):
        images = random_shift(images, generator)
    if how in ("noise", "both"):
        images = images + NOISE_STD * torch.randn(images.shape, generator=generator)
    return images


def random_shift(images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Translate each image of ``(b, 1, h, w)`` by -1, 0 or 1 pixel per axis (zero padding)."""
    b, _, h, w = images.shape
    padded = nn.functional.pad(images, (1, 1, 1, 1))
    offsets = torch.randint(0, 3, (2, b), generator=generator)
    rows = offsets[0][:, None] + torch.arange(h)[None]
    cols = offsets[1][:, None] + torch.arange(w)[None]
    picked = padded[torch.arange(b)[:, None, None], 0, rows[:, :, None], cols[:, None, :]]
    return picked[:, None]


class BatchStream:
    """Batches of indices from a stream of random permutations of ``range(n)``."""

    def __init__(self, n: int, batch_size: int, generator: torch.Generator) -> None:
        self.n, self.batch_size, self.generator = n, batch_size, generator
        self._order = torch.randperm(n, generator=generator)
        self._cursor = 0

    def next(self) -> torch.Tensor:
        """The next ``batch_size`` indices (a batch may span two permutations)."""
        parts = []
        needed = self.batch_size
        while needed:
            if self._cursor == self.n:
                self._order = torch.randperm(self.n, generator=self.generator)
                self._cursor = 0
            take = min(needed, self.n - self._cursor)
            parts.append(self._order[self._cursor : self._cursor + take])
            self._cursor += take
            needed -= take
        return parts[0] if len(parts) == 1 else torch.cat(parts)


def batches_per_point(params: dict[str, Any], n_train: int, n_points: int) -> int:
    """Batches in one recording interval: the run's epochs spread over ``n_points``."""
    samples = float(params["epochs"]) * n_train
    return max(1, round(samples / (n_points * int(params["batch_size"]))))


def run(spec: RunSpec) -> Curve:
    """Train the model of ``spec`` and record its training loss every interval."""
    start = time.perf_counter()
    params = spec.params
    images_np, labels_np = load_dataset(params["dataset"])
    images, labels = torch.from_numpy(images_np.copy()), torch.from_numpy(labels_np.copy())
    n_train, side = images.shape[0], images.shape[-1]
    n_classes = int(labels.max()) + 1
    n_points = int(params.get("points", N_POINTS))
    per_point = batches_per_point(params, n_train, n_points)
    cap = DIVERGED_FACTOR * math.log(n_classes)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        model = build_model(params, side, n_classes)
    generator = torch.Generator().manual_seed(spec.seed)
    losses, diverged = train(model, params, images, labels, generator, n_points, per_point, cap)
    samples_per_point = int(params["batch_size"]) * per_point
    work = samples_per_point * np.arange(1, n_points + 1, dtype=np.float64)
    metadata = {
        "dataset": params["dataset"],
        "n_train": int(n_train),
        "n_classes": n_classes,
        "image_side": int(side),
        "model": _summary(model),
        "n_parameters": sum(p.numel() for p in model.parameters()),
        "batches_per_point": per_point,
        "samples_per_point": samples_per_point,
        "epochs_done": round(float(work[-1]) / n_train, 3),
        "loss_cap": cap,
        "diverged": diverged,
        "capped_points": int(np.sum(losses >= cap)),
        "final_train_accuracy": None if diverged else _accuracy(model, images, labels),
    }
    return Curve(losses, work, "samples", time.perf_counter() - start, metadata)


def train(
    model: nn.Module,
    params: dict[str, Any],
    images: torch.Tensor,
    labels: torch.Tensor,
    generator: torch.Generator,
    n_points: int,
    per_point: int,
    cap: float,
) -> tuple[np.ndarray, bool]:
    """Train ``model`` for ``n_points`` intervals of ``per_point`` batches.

    Returns the mean batch loss of each interval (at most ``cap``; ``cap`` from the first
    non-finite batch loss on, when training stops) and whether that happened.
    """
    optimizer = build_optimizer(params, model)
    scheduler = _scheduler(params["schedule"], optimizer, n_points * per_point)
    stream = BatchStream(images.shape[0], int(params["batch_size"]), generator)
    losses = np.full(n_points, cap)
    for point in range(n_points):
        total = 0.0
        for _ in range(per_point):
            index = stream.next()
            batch = augment(images[index], params["augment"], generator)
            loss = nn.functional.cross_entropy(model(batch), labels[index])
            if not torch.isfinite(loss):
                return losses, True
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            total += loss.item()
        losses[point] = min(total / per_point, cap)
    return losses, False


def _scheduler(
    name: str, optimizer: torch.optim.Optimizer, total_steps: int
) -> torch.optim.lr_scheduler.LRScheduler:
    if name == "constant":
        return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    if name == "cosine":
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=total_steps)
    raise ValueError(f"unknown schedule {name!r}")


@torch.no_grad()
def _accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    predictions = model(images).argmax(dim=1)
    return round(float((predictions == labels).float().mean()), 4)


def _summary(model: nn.Module) -> str:
    """A one-line description, e.g. ``Conv2d(1,8)-ReLU-MaxPool2d-Flatten-Linear(128,10)``."""
    parts = []
    for layer in model.children():
        if isinstance(layer, nn.Conv2d):
            parts.append(f"Conv2d({layer.in_channels},{layer.out_channels})")
        elif isinstance(layer, nn.Linear):
            parts.append(f"Linear({layer.in_features},{layer.out_features})")
        else:
            parts.append(type(layer).__name__)
    return "-".join(parts)


# ---------------------------------------------------------------------------- grid
def sample_params(rng: np.random.Generator) -> dict[str, Any]:
    """One setting: every axis drawn uniformly and independently."""

    def pick(values: tuple[Any, ...]) -> Any:
        return values[int(rng.integers(len(values)))]

    arch = pick(ARCHS)
    optimizer = pick(tuple(LEARNING_RATES))
    return {
        "dataset": pick(DATASETS),
        "arch": arch,
        "width": pick(WIDTHS[arch]),
        "depth": pick(DEPTHS),
        "activation": pick(ACTIVATIONS),
        "optimizer": optimizer,
        "lr": pick(LEARNING_RATES[optimizer]),
        "batch_size": pick(BATCH_SIZES),
        "weight_decay": pick(WEIGHT_DECAYS),
        "augment": pick(AUGMENTS),
        "schedule": pick(SCHEDULES),
        "epochs": pick(EPOCHS),
    }


def grid(smoke: bool = False) -> list[RunSpec]:
    """The vision runs, in a fixed order (``smoke``: three runs of a second or less)."""
    if smoke:
        return _smoke_grid()
    rng = np.random.default_rng(GRID_SEED)
    settings = [sample_params(rng) for _ in range(N_CONFIGS)]
    specs = [RunSpec(FAMILY, params, seed=0) for params in settings]
    specs += [
        RunSpec(FAMILY, params, seed=seed) for seed in (1, 2) for params in settings[:N_REPEATED]
    ]
    unique: dict[str, RunSpec] = {}
    for spec in specs:
        unique.setdefault(spec.run_id, spec)
    return list(unique.values())


def _smoke_grid() -> list[RunSpec]:
    base = {
        "width": 8,
        "depth": 1,
        "activation": "relu",
        "batch_size": 32,
        "weight_decay": 0.0,
        "schedule": "constant",
        "epochs": 1,
        "points": 100,
    }
    changes: list[dict[str, Any]] = [
        dict(dataset="digits", arch="mlp", width=32, optimizer="adam", lr=1e-3, augment="none"),
        dict(dataset="shapes", arch="cnn", optimizer="momentum", lr=0.03, augment="both"),
        dict(dataset="textures", arch="cnn", optimizer="rmsprop", lr=1e-3, augment="shift"),
    ]
    changes[1]["schedule"] = "cosine"
    return [
        RunSpec(FAMILY, {**base, **change}, seed=index // 2) for index, change in enumerate(changes)
    ]
