"""The statistics of the leak audit (:mod:`mara_env.benchmarks.prediction.leak_audit`), from the records
of :mod:`mara_env.benchmarks.prediction.audit_episodes`.

At first sight: each observed column's within-family Spearman correlation with the true need,
the share of tasks on the most common exact target ratio (and how many of them are
unreachable), the target ratio's AUC for "unreachable". Mid-task: each probe's AUC for
"feasible" and its paired gain over the observation alone. Every figure comes with a 95%
interval over resampled episodes (:func:`mara_env.benchmarks.common.statistics.episode_bootstrap`).

Example:
    >>> records = [{"family": "rl", "x": float(i), "need": float(i)} for i in range(5)]
    >>> within_family_spearman(records, "x")
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from mara_env.benchmarks.common.probes import logistic_probe, probe_scores
from mara_env.benchmarks.common.statistics import auc, episode_bootstrap, spearman
from mara_env.benchmarks.prediction.audit_episodes import (
    COLUMNS,
    ORACLE,
    WINDOW,
    Record,
)
from mara_env.curves.families import FAMILY_NAMES

#: A statistic's name and the column it is about.
Statistic = tuple[str, str]
#: The names of the statistics the page lays out specially.
SPEARMAN = "within-family Spearman with need"
PROBE_AUC = "probe AUC for feasible"
#: A probe's AUC minus the observation-only probe's, on the same resampled episodes.
AUC_GAIN = "AUC gain over the observation alone (paired)"
OBSERVATION_ONLY = "observation only"
#: The probe that reads the oracle's features: the true remaining need, as a perfect predictor.
ORACLE_PROBE = "+ oracle (true need)"
#: Counts, reported without intervals.
COUNTS = ("tasks", "judgements")


def within_family_spearman(records: Sequence[Record], column: str) -> float:
    """Spearman correlation of ``column`` with the true need, within each family, averaged
    with the families' task counts as weights (``nan`` with fewer than 3 tasks in all)."""
    total, weight = 0.0, 0
    for family in sorted({record["family"] for record in records}):
        rows = [r for r in records if r["family"] == family and math.isfinite(r[column])]
        if len(rows) < 3:
            continue
        value = spearman(np.array([r[column] for r in rows]), np.array([r["need"] for r in rows]))
        if math.isfinite(value):
            total, weight = total + value * len(rows), weight + len(rows)
    return total / weight if weight else math.nan


def first_sight_values(sights: Sequence[Record]) -> dict[Statistic, float]:
    """The first-sight statistics of a set of first-sight records (module docstring)."""
    values = {
        (SPEARMAN, column): within_family_spearman(sights, column) for column in (WINDOW, *COLUMNS)
    }
    ratios = np.array([record["log_target_ratio"] for record in sights])
    unreachable = np.array([record["unreachable"] for record in sights])
    levels, counts = np.unique(ratios, return_counts=True)
    modal = levels[counts.argmax()]
    target_auc = auc(-ratios, unreachable)
    values[("share of tasks on the most common exact target ratio", "log_target_ratio")] = float(
        counts.max() / len(ratios)
    )
    values[("unreachable share among them", "log_target_ratio")] = float(
        unreachable[ratios == modal].mean()
    )
    values[("AUC for unreachable (orientation-free)", "log_target_ratio")] = max(
        target_auc, 1.0 - target_auc
    )
    values[("unreachable share", "")] = float(unreachable.mean())
    return values


def probe_scores_by_name(
    train: Sequence[Record], test: Sequence[Record], predictors: Sequence[str]
) -> dict[str, np.ndarray]:
    """Each probe's scores of the ``test`` judgements, fitted on the ``train`` ones: the
    observation only, and with the features of each predictor and of the oracle (a perfect
    predictor: the same two features, its success probability with every node and its median
    need, from the true remaining need)."""
    probes: dict[str, tuple[str, ...]] = {OBSERVATION_ONLY: ()}
    for name in (*predictors, ORACLE):
        probes[ORACLE_PROBE if name == ORACLE else f"+ {name}"] = (
            f"{name}_success",
            f"{name}_need",
        )
    return {probe: fitted_probe_scores(train, test, extra) for probe, extra in probes.items()}


def fitted_probe_scores(
    train: Sequence[Record], test: Sequence[Record], extra: Sequence[str]
) -> np.ndarray:
    """The scores of the ``test`` records by a probe for ``feasible`` fitted on the ``train``
    records, both read through :func:`features` with ``extra`` (built over both at once, so that
    they have the same columns)."""
    rows = features([*train, *test], extra)
    label = np.array([record["feasible"] for record in train])
    return probe_scores(logistic_probe(rows[: len(train)], label), rows[len(train) :])


def mid_task_values(
    test: Sequence[Record], scores: Mapping[str, np.ndarray], picked: np.ndarray
) -> dict[Statistic, float]:
    """Each probe's feasibility AUC over the judgements ``picked`` (indices into ``test``)."""
    label = np.array([record["feasible"] for record in test])[picked]
    values = {(PROBE_AUC, probe): auc(score[picked], label) for probe, score in scores.items()}
    alone = values[(PROBE_AUC, OBSERVATION_ONLY)]
    for probe in scores:
        if probe != OBSERVATION_ONLY:
            values[(AUC_GAIN, probe)] = values[(PROBE_AUC, probe)] - alone
    values[("feasible share", "")] = float(label.mean())
    return values


def world_rows(
    world: str,
    sights: Sequence[Record],
    train: Sequence[Record],
    test: Sequence[Record],
    predictors: Sequence[str],
    resamples: int,
) -> list[Record]:
    """Every statistic of one world, with its interval over episodes, as result rows."""
    rng = np.random.default_rng(0)
    found = episode_bootstrap(
        sights, lambda picked: first_sight_values([sights[i] for i in picked]), resamples, rng
    )
    rows = [_row(world, "first sight", key, value) for key, value in found.items()]
    rows.append(_row(world, "first sight", ("tasks", ""), (float(len(sights)),) * 3))
    scores = probe_scores_by_name(train, test, predictors)
    found = episode_bootstrap(
        test, lambda picked: mid_task_values(test, scores, picked), resamples, rng
    )
    rows += [_row(world, "mid-task", key, value) for key, value in found.items()]
    rows.append(_row(world, "mid-task", ("judgements", ""), (float(len(test)),) * 3))
    return rows


def _row(world: str, moment: str, key: Statistic, value: tuple[float, float, float]) -> Record:
    return {
        "world": world,
        "moment": moment,
        "statistic": key[0],
        "column": key[1],
        "value": value[0],
        "low": value[1],
        "high": value[2],
    }


def features(records: Sequence[Record], extra: Sequence[str]) -> np.ndarray:
    """The probe's inputs: the observed columns (positive ones also as logs), the family one-hot
    and the ``extra`` columns (needs as logs, capped)."""
    columns = []
    for column in (WINDOW, *COLUMNS):
        values = np.array([r[column] for r in records], dtype=np.float64)
        values = np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)
        columns.append(values)
        if values.min() >= 0.0:
            columns.append(np.log1p(values))
    for family in FAMILY_NAMES:
        columns.append(np.array([r["family"] == family for r in records], dtype=np.float64))
    for column in extra:
        values = np.array([r[column] for r in records], dtype=np.float64)
        if column.endswith("need"):
            values = np.log1p(np.minimum(values, 1e6))
        columns.append(values)
    return np.stack(columns, axis=1)
