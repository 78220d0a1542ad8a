"""Calibrating a trained flow-matching model on the validation curves of the train split.

:func:`calibrate` fits the sampling spread so that every validation cell's 80% intervals cover
(:func:`mara_env.predictors.calibration.fit_spread_in_every_cell`) and scores the model there (median
error, coverage before and after, sampling time); :func:`recalibrate` refits a shipped checkpoint's
card in place. The test split is never read."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.curves.sources import default_trace_source
from mara_env.predictors import flow_matching
from mara_env.predictors.calibration import (
    VALIDATION_SETS,
    CurveSubset,
    calibration_cells,
    fit_spread,
    fit_spread_in_every_cell,
    split_train_curves,
    validation_cases,
)
from mara_env.predictors.checkpoint import card_path, rewrite_card
from mara_env.predictors.metrics import interval_coverage, median_log_ratio_error
from mara_env.predictors.window_predictor import spread_samples

#: Samples per validation case.
VALIDATION_SAMPLES = 64


def recalibrate(path: Path) -> Path:
    """Refit the calibration of the flow-matching checkpoint at ``path`` on the validation
    curves it was trained beside, and rewrite its card (the weights stay as they are)."""
    predictor = flow_matching.FlowMatching.load(path)  # checks the weights against the card
    facts = json.loads(card_path(path).read_text())["facts"]
    families = predictor.config.known_families
    _, validation_curves = split_train_curves(default_trace_source(), families, facts["seed"])
    current_rule = replace(predictor.config, spread_centre="median")
    config, scores = calibrate(predictor.model, current_rule, validation_curves, facts["seed"])
    scored = facts.get("distillation", facts)
    scored["validation"] = scores
    facts["recalibrated_by"] = (
        f"python -m mara_env.benchmarks.prediction.train --recalibrate {path}"
    )
    rewrite_card(path, {**asdict(config), **config.layout()}, facts)
    print(f"rewrote the card of {path}")
    return path


def calibrate(
    model: flow_matching.VelocityField,
    config: flow_matching.FlowMatchingConfig,
    curves: CurveSubset,
    seed: int,
) -> tuple[flow_matching.FlowMatchingConfig, dict[str, Any]]:
    """The config with its ``spread`` fitted on the validation cases so that every cell's are
    covered (:func:`mara_env.predictors.calibration.fit_spread_in_every_cell`, around the median the
    config's ``spread_centre`` names), and its scores there
    (median error, coverage before and after, overall and per cell, and milliseconds per
    16 x 16 sampling call)."""
    groups = validation_cases(curves, seed)
    histories = [h for group in groups for h in group.cases.histories]
    truth = np.concatenate([group.cases.truth for group in groups])
    cap = np.concatenate([group.cases.cap for group in groups])
    predictor = flow_matching.FlowMatching(model, config, spread=1.0)
    raw = predictor.predict(histories, VALIDATION_SAMPLES, np.random.default_rng(seed)).samples
    families = np.array([h.family for h in histories])
    fractions = np.concatenate(
        [np.full(len(group.cases), group.cases.fraction) for group in groups]
    )
    task_sets = np.concatenate([np.full(len(group.cases), group.task_set) for group in groups])
    cells = calibration_cells(families, fractions, truth, task_sets)
    centre = config.spread_centre
    spread, by_cell = fit_spread_in_every_cell(raw, truth, cells, centre=centre)
    calibrated = spread_samples(raw, spread, centre)
    scores = {
        "cases": len(truth),
        "task_sets": sorted(set(task_sets.tolist()), key=VALIDATION_SETS.index),
        "feasible": int(np.isfinite(truth).sum()),
        "sampler": f"{config.solver} x {config.solver_steps}",
        "spread": spread,
        "spread_by_cell": by_cell,
        "spread_centre": centre,
        "spread_over_every_case": fit_spread(raw, truth, centre=centre),
        "median_log_error": round(median_log_ratio_error(calibrated, truth, cap), 4),
        "coverage_80": round(interval_coverage(calibrated, truth), 4),
        "coverage_80_uncalibrated": round(interval_coverage(raw, truth), 4),
        "coverage_80_by_cell": {
            name: round(interval_coverage(calibrated[mask], truth[mask]), 4)
            for name, mask in cells.items()
        },
        "sampling_ms_16x16": round(sampling_ms(predictor, histories[:16]), 3),
    }
    print(f"validation: {scores}")
    return replace(config, spread=spread), scores


def sampling_ms(predictor: flow_matching.FlowMatching, histories: Sequence[Any]) -> float:
    """Median milliseconds of predicting ``histories`` with 16 samples each (torch on one thread)."""
    timings = []
    for repeat in range(25):
        start = time.perf_counter()
        predictor.predict(histories, 16, np.random.default_rng(repeat))
        timings.append(time.perf_counter() - start)
    return 1000.0 * float(np.median(timings[5:]))
