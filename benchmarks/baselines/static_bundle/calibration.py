"""Calibrating the paper bundle's deadline scale on seeds that are never reported.

The procedure (``python -m mara_env.benchmarks.baselines.static_bundle --calibrate``): for every deadline scale of a
grid, draw the paper bundle of each calibration seed (:data:`CALIBRATION_SEEDS`, 500-549) with
that scale and play the clairvoyant reference on it; the chosen scale is the one whose mean
completions are closest to :data:`CLAIRVOYANT_TARGET` (7 of 10), the smaller scale on a tie. The
bundle of a seed changes only in its deadlines from one scale to the next (the same generator
draws the same tasks). Reported bundles use seeds 0-9, and calibration plays training seeds
only (:mod:`mara_env.benchmarks.common.seeds`); :func:`check_calibration_seeds` refuses both.

Example:
    >>> result = calibrate(scales=(1.0, 3.0), seeds=range(500, 502))
    >>> result.scales, result.chosen in result.scales
    ((1.0, 3.0), True)
    >>> calibrate(scales=(1.0,), seeds=[3])
    Traceback (most recent call last):
    ...
    ValueError: calibration seeds must avoid the reported bundle seeds 0-9; got [3]. Pick seeds from 10 to 999.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from mara_env import default_trace_source
from mara_env.agents import make_agent
from mara_env.benchmarks.baselines.static_bundle.bundles import (
    BUNDLES,
    N_TASKS,
    BundleSpec,
    bundle_config,
    draw_bundle,
)
from mara_env.benchmarks.baselines.static_bundle.play import play
from mara_env.benchmarks.common.seeds import TRAINING_SEEDS, require_training_seeds
from mara_env.sim.workload import build_workload

#: Seeds of the calibration (never reported; training seeds, below the evaluation seeds).
CALIBRATION_SEEDS = range(500, 550)
#: Mean tasks of 10 the clairvoyant reference should complete on the paper bundle.
CLAIRVOYANT_TARGET = 7.0
#: Deadline scales tried: 1.0, 1.1, ..., 4.0.
DEFAULT_SCALES = tuple(round(1.0 + 0.1 * step, 1) for step in range(31))
#: Seeds reported in the README and results (``python -m mara_env.benchmarks.baselines.static_bundle``).
REPORTED_SEEDS = range(10)


@dataclass(frozen=True)
class Calibration:
    """Mean clairvoyant completions per deadline scale, and the scale chosen.

    Attributes:
        scales: The scales tried, in order.
        means: Mean tasks completed (of ``N_TASKS``) at each scale.
        seeds: The calibration seeds.
        target: The mean aimed at.
        chosen: The scale whose mean is closest to ``target`` (the smaller on a tie).
    """

    scales: tuple[float, ...]
    means: tuple[float, ...]
    seeds: tuple[int, ...]
    target: float
    chosen: float

    def markdown(self) -> str:
        """The calibration as a Markdown table, the chosen scale marked."""
        seeds = f"{self.seeds[0]}-{self.seeds[-1]}" if self.seeds else "none"
        lines = [
            f"Clairvoyant reference on the paper bundle, seeds {seeds} ({len(self.seeds)} "
            f"bundles of {N_TASKS}); aim: {self.target:g} of {N_TASKS}.",
            "",
            "| deadline scale | clairvoyant completed of 10 |",
            "| ---: | ---: |",
        ]
        for scale, mean in zip(self.scales, self.means, strict=True):
            mark = " **(chosen)**" if scale == self.chosen else ""
            lines.append(f"| {scale:.2f}{mark} | {mean:.2f} |")
        return "\n".join(lines)


def check_calibration_seeds(seeds: Iterable[int]) -> list[int]:
    """The seeds as a list, or :class:`ValueError` if one is not a training seed
    (:func:`mara_env.benchmarks.common.seeds.require_training_seeds`) or is a reported bundle seed."""
    values = list(require_training_seeds(seeds, where="calibration seeds"))
    reported = [seed for seed in values if seed in REPORTED_SEEDS]
    if reported:
        raise ValueError(
            f"calibration seeds must avoid the reported bundle seeds {REPORTED_SEEDS.start}-"
            f"{REPORTED_SEEDS.stop - 1}; got {reported}. Pick seeds from {REPORTED_SEEDS.stop} to "
            f"{TRAINING_SEEDS.stop - 1}."
        )
    return values


def calibrate(
    scales: Sequence[float] = DEFAULT_SCALES,
    seeds: Iterable[int] = CALIBRATION_SEEDS,
    *,
    spec: BundleSpec = BUNDLES["paper"],
    target: float = CLAIRVOYANT_TARGET,
    progress: bool = False,
) -> Calibration:
    """Mean clairvoyant completions at each deadline scale (see the module docstring).

    Raises:
        ValueError: For no scales, a scale <= 0, or forbidden seeds.
    """
    chosen_seeds = check_calibration_seeds(seeds)
    tried = tuple(float(scale) for scale in scales)
    if not tried:
        raise ValueError("calibrate: give at least one deadline scale.")
    config = bundle_config()
    source = default_trace_source()
    workload = build_workload(config, source)
    means = []
    for scale in tqdm(tried, desc="deadline scales", disable=not progress):
        bundle = spec.with_scale(scale)
        completed = [
            play(
                make_agent("clairvoyant"),
                draw_bundle(workload, np.random.default_rng(seed), bundle),
                config,
                seed,
                trace_source=source,
            )["completed"]
            for seed in chosen_seeds
        ]
        means.append(float(np.mean(completed)))
    gaps = [abs(mean - target) for mean in means]
    best = min(range(len(tried)), key=lambda index: (gaps[index], tried[index]))
    return Calibration(tried, tuple(means), tuple(chosen_seeds), float(target), tried[best])
