"""The information ladder: how well can anything know which tasks can still finish?

A scheduler's edge over earliest deadline first comes from recognising, early, the tasks that
cannot finish in time. This measures how much of that a scheduler *could* know, rung by rung, on
each world (v1, v2, v3, and v3-smoothed: Cluster-v3 with every curve smoothed as practitioners
judge convergence; :mod:`~mara_env.benchmarks.prediction.audit_worlds`): for tasks judged once in each band of their deadline window (10-20%,
30-50%, 60-80% elapsed; :mod:`~mara_env.benchmarks.prediction.ladder_episodes`), the AUC and the Brier
score of a logistic probe for "can still reach its target by its deadline with every node it may
get", from

1. ``observation``: the observation alone (the leak audit's columns and the family);
2. ``+ flow matching``: and the shipped flow-matching predictor MARA reads
   (``flow_matching_without_target``: its success probability with every node, its median need);
3. ``+ loss history (posterior)``: and the posterior over the train split's curves given the
   task's whole reported-loss history and the world's target rule
   (:mod:`~mara_env.benchmarks.prediction.curve_posterior`): an honest estimate of what a predictor that
   reads only what a scheduler sees can know;
4. ``+ denoised oracle``: and the task's own curve smoothed: its trend (floor, pace) known, its
   noise not (privileged);
5. ``+ exact remaining work``: and the true remaining need (privileged).

The gap between the last two rungs is what no predictor can recover (the curve's noise decides
it); the gap between the posterior and the denoised oracle is what better models might. Beside
them, ``posterior alone``: the posterior's probability used directly, not through a probe.

Protocol: probes fitted on judgements of the ``training`` preset's training seeds (train split of
the curves), scored on the ``evaluation`` preset's evaluation seeds (test split); the posterior's
two bandwidths chosen on the training judgements (each task's own curve left out) by Brier score;
brackets are 95% intervals over resampled evaluation episodes, gains paired on them. The verdict
the page states (headroom at 30-50%: the posterior or the denoised oracle at least
:data:`HEADROOM` AUC over the observation alone) is computed, not typed.

Run::

    python -m mara_env.benchmarks.prediction.ladder            # every world, several minutes
    python -m mara_env.benchmarks.prediction.ladder --quick    # a smoke run

Example:
    >>> from mara_env.benchmarks.prediction.audit_episodes import AuditSettings
    >>> settings = AuditSettings(worlds=("v3",), train_seeds=(100, 101), eval_seeds=(1000, 1001),
    ...                          predictors=(), arrival_horizon=10, resamples=10)
    >>> rows, _ = ladder_rows(settings, "v3", progress=False)
    >>> list(dict.fromkeys(row["rung"] for row in rows if row["rung"]))  # doctest: +NORMALIZE_WHITESPACE
    ['observation', '+ loss history (posterior)', '+ denoised oracle', '+ exact remaining work',
     'posterior alone']
"""

from __future__ import annotations

import argparse
import functools
import itertools
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.provenance import git_revision
from mara_env.benchmarks.common.statistics import auc, episode_bootstrap
from mara_env.benchmarks.prediction.audit_episodes import (
    DRIVER,
    WORLD_DESCRIPTIONS,
    AuditSettings,
    Record,
    add_settings_arguments,
    command_line_settings,
)
from mara_env.benchmarks.prediction.audit_statistics import fitted_probe_scores
from mara_env.benchmarks.prediction.audit_worlds import WORLDS
from mara_env.benchmarks.prediction.curve_posterior import CurvePosterior
from mara_env.benchmarks.prediction.ladder_episodes import BANDS, band_name, collect_ladder
from mara_env.benchmarks.prediction.ladder_report import FIELDS, markdown, write_results

DEFAULT_OUTPUT = Path("benchmarks/results/ladder")
#: The shipped predictor whose features rung 2 reads (MARA's).
SHIPPED = "flow_matching_without_target"
#: The rungs, in order: name -> the extra columns its probe reads beside the observation.
RUNGS: Mapping[str, tuple[str, ...]] = {
    "observation": (),
    "+ flow matching": (f"{SHIPPED}_success", f"{SHIPPED}_need"),
    "+ loss history (posterior)": ("posterior_logit",),
    "+ denoised oracle": ("denoised_margin", "denoised_need"),
    "+ exact remaining work": ("oracle_success", "oracle_need", "oracle_margin"),
}
#: The posterior's probability used directly (no probe).
POSTERIOR_ALONE = "posterior alone"
#: The bandwidths searched for the posterior (log-loss units): reported losses, targets.
LOSS_BANDWIDTHS = (0.1, 0.3, 1.0, 3.0)
TARGET_BANDWIDTHS = (0.01, 0.03, 0.1, 0.3)
#: The AUC over the observation alone at 30-50% that counts as headroom for prediction.
HEADROOM = 0.05
HEADROOM_BAND = band_name(BANDS[1])


def posterior_probabilities(
    posterior: CurvePosterior, records: Sequence[Record], *, leave_own_curve_out: bool
) -> np.ndarray:
    """The posterior's success probability of each judged task."""
    return np.array(
        [
            posterior.success_probability(
                record["family_code"],
                np.asarray(record["history_steps"]),
                np.asarray(record["history_loss"]),
                record["target"],
                record["budget_steps"],
                exclude_row=record["curve_row"] if leave_own_curve_out else -1,
            )
            for record in records
        ]
    )


def brier(probability: np.ndarray, label: np.ndarray) -> float:
    """Mean squared difference between predicted probabilities and 0/1 outcomes."""
    return float(np.mean((probability - label) ** 2))


def choose_bandwidths(
    posterior: CurvePosterior, train: Sequence[Record], progress: bool
) -> tuple[CurvePosterior, list[Record]]:
    """The posterior with the bandwidths of lowest Brier score on the training judgements (each
    task's own curve left out), and the search's rows."""
    label = np.array([record["feasible"] for record in train], dtype=np.float64)
    searched = []
    grid = list(itertools.product(LOSS_BANDWIDTHS, TARGET_BANDWIDTHS))
    for loss, target in tqdm(grid, desc="posterior bandwidths", disable=not progress):
        candidate = posterior.with_bandwidths(loss, target)
        probability = posterior_probabilities(candidate, train, leave_own_curve_out=True)
        searched.append((brier(probability, label), loss, target))
    _, loss, target = min(searched)
    rows = [
        {
            "loss_bandwidth": lb,
            "target_bandwidth": tb,
            "train_brier": b,
            "chosen": lb == loss and tb == target,
        }
        for b, lb, tb in searched
    ]
    return posterior.with_bandwidths(loss, target), rows


def _logit(probability: np.ndarray) -> np.ndarray:
    clipped = np.clip(probability, 1e-4, 1 - 1e-4)
    return np.log(clipped / (1 - clipped))


def _sigmoid(score: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(score, -30, 30)))


def band_values(
    test: Sequence[Record], probabilities: Mapping[str, np.ndarray], picked: np.ndarray
) -> dict[tuple[str, str], float]:
    """AUC, Brier score and paired AUC gain over the observation of every rung, over the
    judgements ``picked``."""
    label = np.array([record["feasible"] for record in test], dtype=np.float64)[picked]
    values: dict[tuple[str, str], float] = {}
    for rung, probability in probabilities.items():
        values[(rung, "AUC")] = auc(probability[picked], label.astype(bool))
        values[(rung, "Brier")] = brier(probability[picked], label)
    for rung in probabilities:
        if rung != "observation":
            values[(rung, "AUC gain")] = values[(rung, "AUC")] - values[("observation", "AUC")]
    values[("", "feasible share")] = float(label.mean())
    return values


def ladder_rows(
    settings: AuditSettings, world: str, *, progress: bool
) -> tuple[list[Record], list[Record]]:
    """Every rung's statistics in every band of one world, and the posterior's bandwidth search."""
    train = collect_ladder(settings, world, "training", settings.train_seeds, progress)
    test = collect_ladder(settings, world, "evaluation", settings.eval_seeds, progress)
    posterior = CurvePosterior.for_world(
        settings.config("training", world), trace_source=WORLDS[world].trace_source()
    )
    posterior, searched = choose_bandwidths(posterior, train, progress)
    for records, out in ((train, True), (test, False)):
        probability = posterior_probabilities(posterior, records, leave_own_curve_out=out)
        for record, value in zip(records, probability, strict=True):
            record["posterior_success"] = float(value)
            record["posterior_logit"] = float(_logit(np.array([value]))[0])
    rungs = {
        rung: columns
        for rung, columns in RUNGS.items()
        if all(column in (train[0] if train else {}) for column in columns)
    }
    rng = np.random.default_rng(0)
    rows: list[Record] = []
    for low, high in BANDS:
        band = band_name((low, high))
        band_train = [record for record in train if record["band"] == band]
        band_test = [record for record in test if record["band"] == band]
        if not band_train or not band_test:
            continue
        probabilities = {
            rung: _sigmoid(fitted_probe_scores(band_train, band_test, extra))
            for rung, extra in rungs.items()
        }
        probabilities[POSTERIOR_ALONE] = np.array(
            [record["posterior_success"] for record in band_test]
        )
        found = episode_bootstrap(
            band_test,
            functools.partial(band_values, band_test, probabilities),
            settings.resamples,
            rng,
        )
        rows += [
            dict(zip(FIELDS, (world, band, rung, statistic, *value), strict=True))
            for (rung, statistic), value in found.items()
        ]
        rows.append(
            dict(
                zip(
                    FIELDS,
                    (world, band, "", "judgements", *(float(len(band_test)),) * 3),
                    strict=True,
                )
            )
        )
    return rows, [{"world": world, **row} for row in searched]


def headroom_verdict(rows: Sequence[Record], world: str) -> str:
    """Whether ``world`` leaves headroom for prediction at :data:`HEADROOM_BAND`, in words."""
    gains = {
        row["rung"]: row
        for row in rows
        if row["world"] == world and row["band"] == HEADROOM_BAND and row["statistic"] == "AUC gain"
    }
    best = max(
        (
            gains[rung]
            for rung in ("+ loss history (posterior)", "+ denoised oracle")
            if rung in gains
        ),
        key=lambda row: row["value"],
        default=None,
    )
    if best is None:
        return "not measured"
    verdict = "headroom" if best["value"] >= HEADROOM else "no headroom"
    text = (
        f"{verdict}: the best of the posterior and the denoised oracle ({best['rung']}) adds "
        f"{best['value']:+.3f} [{best['low']:+.3f}, {best['high']:+.3f}] AUC to the observation "
        f"at {HEADROOM_BAND} (threshold {HEADROOM:+.2f})"
    )
    posterior = gains.get("+ loss history (posterior)")
    if posterior is not None and posterior is not best:
        text += (
            f"; the posterior, which reads only what a scheduler sees, adds "
            f"{posterior['value']:+.3f} [{posterior['low']:+.3f}, {posterior['high']:+.3f}]"
        )
    return text


def introduction(settings: AuditSettings, note: str) -> str:
    """The page's first paragraph: what was measured, how, where."""
    return (
        "How well can a scheduler know which tasks can still finish? Written by `python -m "
        "mara_env.benchmarks.prediction.ladder` (driver `"
        f"{DRIVER}`; each task judged once per band of its deadline window elapsed; probes "
        f"fitted on training seeds {settings.train_seeds[0]}-{settings.train_seeds[-1]} of the "
        "`training` preset (train split), scored on evaluation seeds "
        f"{settings.eval_seeds[0]}-{settings.eval_seeds[-1]} of the `evaluation` preset (test "
        f"split); {settings.n_samples} samples per flow-matching prediction; brackets: 95% "
        f"intervals over {settings.resamples} resamples of the evaluation episodes, gains "
        "paired on them). Truth: the task can still reach its target by its deadline with "
        "every node it may get (the clairvoyant reference's exact stepping). Rungs: the "
        "observation alone; and the shipped flow matching MARA reads; and the posterior over "
        "the train split's curves given the whole reported-loss history and the world's target "
        "rule (observation only); and the denoised oracle (the task's own curve smoothed: its "
        "trend known, its noise not; privileged); and the exact remaining work (privileged). "
        "`posterior alone` is the posterior's probability used directly. Headroom means the "
        f"posterior or the denoised oracle adds at least {HEADROOM:+.2f} AUC to the observation "
        f"at {HEADROOM_BAND}. Worlds: "
        + "; ".join(f"`{world}`, {WORLD_DESCRIPTIONS[world]}" for world in settings.worlds)
        + f". {note}"
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.ladder",
        description="Measure, rung by rung, how well anything can know which tasks can still "
        "finish: the observation, flow matching, the loss-history posterior, the denoised "
        "oracle, the exact remaining work.",
    )
    add_settings_arguments(
        parser,
        output=DEFAULT_OUTPUT,
        writes="ladder.csv, bandwidths.csv, README.md and ladder.png",
        quick="no flow matching",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure the ladder and write its results; returns 0."""
    parser = build_parser()
    args = parser.parse_args(argv)
    settings = command_line_settings(parser, args, () if args.quick else (SHIPPED,))
    start = time.perf_counter()
    rows: list[Record] = []
    searched: list[Record] = []
    for world in settings.worlds:
        found, search = ladder_rows(settings, world, progress=not args.no_progress)
        rows += found
        searched += search
    seconds = time.perf_counter() - start
    note = f"Run in {seconds:.0f} s at commit {git_revision()} on {platform_line()}."
    verdicts = {world: headroom_verdict(rows, world) for world in settings.worlds}
    rungs = [*RUNGS, POSTERIOR_ALONE]
    page = markdown(rows, searched, settings.worlds, rungs, introduction(settings, note), verdicts)
    written = write_results(args.output, rows, searched, page, settings.worlds, rungs)
    print(page)
    print(f"Wrote {', '.join(written)} to {args.output}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
