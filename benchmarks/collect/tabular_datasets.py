"""The tabular family's data sets (scikit-learn's bundled ones, and generated problems built from the fixed seed
:data:`DATA_SEED`; nothing is downloaded):

| name | samples | features | task | what |
|---|---|---|---|---|
| iris | 150 | 4 | 3 classes | ``load_iris`` |
| wine | 178 | 13 | 3 classes | ``load_wine`` |
| breast_cancer | 569 | 30 | 2 classes | ``load_breast_cancer`` |
| digits | 1,797 | 64 | 10 classes | ``load_digits`` (8x8 images as flat rows) |
| moons | 1,000 | 2 | 2 classes | ``make_moons``, noise 0.3 (overlapping half-moons) |
| circles | 1,000 | 2 | 2 classes | ``make_circles``, noise 0.15, factor 0.5 (no linear boundary) |
| classes_easy | 1,000 | 20 | 2 classes | ``make_classification``, 5 informative, class_sep 2, no label noise |
| classes_hard | 1,000 | 20 | 3 classes | ``make_classification``, 4 informative + 4 redundant, 2 clusters a class, class_sep 0.6, 15% labels flipped |
| diabetes | 442 | 10 | regression | ``load_diabetes`` |
| friedman1 | 1,000 | 10 | regression | ``make_friedman1``, noise 1 (5 features unused) |
| friedman3 | 1,000 | 4 | regression | ``make_friedman3``, noise 0.1 (arctan of a ratio) |
| linear | 1,000 | 20 | regression | ``make_regression``, 10 informative, noise 30 |

Every feature is standardised (mean 0, standard deviation 1) and regression targets too, so a
regression's squared error starts near 1 (predicting the mean) whatever the data set. Each data
set is used whole for training: a curve is a training loss.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from sklearn import datasets as sk_datasets

#: Generator of the generated data sets (fixed: every run sees the same data).
DATA_SEED = 0


@dataclass(frozen=True)
class Dataset:
    """A training set: standardised features, and labels or standardised targets.

    Attributes:
        name: Key in :data:`DATASETS`.
        x: Features, each with mean 0 and standard deviation 1, shape ``(n, d)``.
        y: Integer class labels (classification) or targets with mean 0, std 1 (regression).
        task: ``"classification"`` or ``"regression"``.
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    task: str

    @property
    def classes(self) -> np.ndarray:
        """The class labels (empty for regression)."""
        return np.unique(self.y) if self.task == "classification" else np.empty(0)


def _bundled(loader: Callable[..., Any]) -> Callable[[], tuple[Any, Any]]:
    return lambda: loader(return_X_y=True)


def _generated(maker: Callable[..., Any], **kwargs: Any) -> Callable[[], tuple[Any, Any]]:
    return lambda: maker(random_state=DATA_SEED, **kwargs)


@dataclass(frozen=True)
class DataSource:
    """Where a data set comes from: its task and a function returning ``(x, y)``."""

    task: str
    make: Callable[[], tuple[Any, Any]]


def _classification(make: Callable[[], tuple[Any, Any]]) -> DataSource:
    return DataSource("classification", make)


def _regression(make: Callable[[], tuple[Any, Any]]) -> DataSource:
    return DataSource("regression", make)


#: Data set name -> source, in grid order (sizes in the module docstring).
DATASETS: dict[str, DataSource] = {
    "iris": _classification(_bundled(sk_datasets.load_iris)),
    "wine": _classification(_bundled(sk_datasets.load_wine)),
    "breast_cancer": _classification(_bundled(sk_datasets.load_breast_cancer)),
    "digits": _classification(_bundled(sk_datasets.load_digits)),
    "moons": _classification(_generated(sk_datasets.make_moons, n_samples=1000, noise=0.3)),
    "circles": _classification(
        _generated(sk_datasets.make_circles, n_samples=1000, noise=0.15, factor=0.5)
    ),
    "classes_easy": _classification(
        _generated(
            sk_datasets.make_classification,
            n_samples=1000,
            n_features=20,
            n_informative=5,
            class_sep=2.0,
            flip_y=0.0,
        )
    ),
    "classes_hard": _classification(
        _generated(
            sk_datasets.make_classification,
            n_samples=1000,
            n_features=20,
            n_informative=4,
            n_redundant=4,
            n_classes=3,
            n_clusters_per_class=2,
            class_sep=0.6,
            flip_y=0.15,
        )
    ),
    "diabetes": _regression(_bundled(sk_datasets.load_diabetes)),
    "friedman1": _regression(
        _generated(sk_datasets.make_friedman1, n_samples=1000, n_features=10, noise=1.0)
    ),
    "friedman3": _regression(_generated(sk_datasets.make_friedman3, n_samples=1000, noise=0.1)),
    "linear": _regression(
        _generated(
            sk_datasets.make_regression,
            n_samples=1000,
            n_features=20,
            n_informative=10,
            noise=30.0,
        )
    ),
}


@cache
def load_dataset(name: str) -> Dataset:
    """The data set ``name`` of :data:`DATASETS`, standardised (cached per process)."""
    if name not in DATASETS:
        raise ValueError(f"unknown tabular data set {name!r}; known: {sorted(DATASETS)}")
    task = DATASETS[name].task
    x, y = DATASETS[name].make()
    x = _standardise(np.asarray(x, dtype=np.float64))
    if task == "regression":
        y = _standardise(np.asarray(y, dtype=np.float64))
    else:
        y = np.unique(np.asarray(y), return_inverse=True)[1].astype(np.int64)
    x.setflags(write=False)
    y.setflags(write=False)
    return Dataset(name=name, x=x, y=y, task=task)


def _standardise(values: np.ndarray) -> np.ndarray:
    scale = values.std(axis=0)
    return (values - values.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
