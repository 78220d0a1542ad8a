"""Prediction wrapper throughput: agent-steps per second of the AEC env with and without
per-slot predictions.

Drives ``mara_env.raw_env`` and :class:`mara_env.predictors.wrappers.PredictionAECWrapper` around it (WLS,
and any other registered predictor given with ``--predictor``) with the random masked policy
loop of :mod:`mara_env.benchmarks.perf.env_throughput` (:func:`mara_env.benchmarks.perf.runners.run_random_masked`):
the same episodes, seeds and policy in every form. Each form is built and warmed up first, then
measured round-robin ``--repeats`` times; the table reports the median rate by wall-clock and by
CPU time of this process (steadier when other processes share the machine), the ratios to the
raw env, and the CPU time the wrapper adds per epoch (``n_nodes`` agent-steps). A wrapper around
:class:`NoPrediction`, a predictor that computes nothing, measures the wrapper's own work
(histories, slot bookkeeping, features, the observations' concatenation), so the table also
splits each predictor's cost into that and the predictor's, and says how much CPU time per
epoch a predictor may take for its wrapper to keep its target share.

Run::

    python -m mara_env.benchmarks.perf.wrapper_throughput                     # training config, 20,000 steps x 5
    python -m mara_env.benchmarks.perf.wrapper_throughput --quick             # a few seconds, for CI
    python -m mara_env.benchmarks.perf.wrapper_throughput --predictor dkf --n-samples 64
    python -m mara_env.benchmarks.perf.wrapper_throughput --checkpoint my_student.pt  # any flow-matching checkpoint
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.benchmarks.perf.env_throughput import (
    Form,
    add_budget_arguments,
    machine_description,
    resolve_budget,
)
from mara_env.benchmarks.perf.runners import run_random_masked

#: Share of the raw env's throughput a wrapped env should keep, per predictor that has a target.
TARGET_SHARES = {"wls": 0.5, "flow_matching": 0.25}
#: Name of the form whose predictor computes nothing (:class:`NoPrediction`).
WRAPPER_ONLY = "+ predictions (none: the wrapper's own work)"


class NoPrediction:
    """A predictor that computes nothing: every task has zero remaining work.

    Wrapped, it leaves the wrapper's own work (its histories, slots, features and the
    observations' concatenation): what any predictor's wrapper costs before the predictor runs.

    Example:
        >>> NoPrediction().predict([None, None], 4, np.random.default_rng(0)).samples.shape
        (2, 4)
    """

    name = "none"

    def predict(self, histories: Sequence[Any], n_samples: int, rng: np.random.Generator) -> Any:
        from mara_env.predictors.base import RemainingWork

        return RemainingWork(np.zeros((len(histories), n_samples)))


def allowed_added(raw_epoch: float, share: float) -> float:
    """CPU time a wrapper may add to a raw epoch of ``raw_epoch`` and keep ``share`` of the raw
    env's throughput: ``raw / (raw + added) >= share`` when ``added <= raw * (1 / share - 1)``.

    Example:
        >>> allowed_added(120.0, 0.25), allowed_added(120.0, 0.5)
        (360.0, 120.0)
    """
    return raw_epoch * (1.0 / share - 1.0)


def predictor_form_name(label: str) -> str:
    """Name of the form wrapping the predictor (or checkpoint file) ``label``.

    Example:
        >>> predictor_form_name("wls")
        '+ predictions (wls)'
    """
    return f"+ predictions ({label})"


def make_forms(
    config: str, predictors: list[str], n_samples: int, checkpoints: Sequence[Path] = ()
) -> list[Form]:
    """The raw AEC env, the wrapper around :class:`NoPrediction`, then one wrapped env per
    registered predictor and per flow-matching checkpoint file (construction deferred)."""
    import mara_env
    from mara_env.predictors.flow_matching import FlowMatching
    from mara_env.predictors.wrappers import PredictionAECWrapper

    def wrapped(predictor: Any) -> Any:
        if isinstance(predictor, Path):
            predictor = FlowMatching.load(predictor)
        return PredictionAECWrapper(mara_env.raw_env(config), predictor, n_samples=n_samples)

    forms = [
        Form("mara_env.raw_env (AEC)", lambda: mara_env.raw_env(config), run_random_masked),
        Form(WRAPPER_ONLY, functools.partial(wrapped, NoPrediction()), run_random_masked),
    ]
    labelled: list[tuple[str, str | Path]] = [(name, name) for name in predictors]
    labelled += [(path.name, path) for path in checkpoints]
    for name, predictor in labelled:
        forms.append(
            Form(
                predictor_form_name(name), functools.partial(wrapped, predictor), run_random_masked
            )
        )
    return forms


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.perf.wrapper_throughput",
        description="Agent-steps per second of the AEC env, raw and with prediction features.",
    )
    add_budget_arguments(parser)
    parser.add_argument(
        "--config", default="training", help="config preset (default: training, 8 x 16)"
    )
    parser.add_argument(
        "--predictor",
        action="append",
        default=[],
        help="another registered predictor to measure besides wls (repeatable)",
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        action="append",
        default=[],
        help="a flow-matching checkpoint file to measure as well, e.g. a narrower student "
        "(repeatable; its share is held to flow_matching's target)",
    )
    parser.add_argument("--n-samples", type=int, default=16, help="samples per task (default 16)")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.checkpoint if not path.is_file()]
    if missing:
        parser.error(f"--checkpoint: no such file {', '.join(missing)}")
    resolve_budget(parser, args)
    if args.n_samples < 1:
        parser.error("--n-samples must be >= 1")
    from mara_env.predictors.registry import require_observation_only

    try:
        require_observation_only(args.predictor, "the wrapper throughput benchmark")
    except ValueError as error:
        parser.error(str(error))
    args.predictors = ["wls", *[name for name in args.predictor if name != "wls"]]
    return args


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    with printed_report(
        args.output,
        "Prediction wrapper throughput",
        argv,
        "python -m mara_env.benchmarks.perf.wrapper_throughput",
    ):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The measurement and its printed report; returns the exit status."""
    import mara_env

    config = mara_env.get_config(args.config)
    forms = make_forms(args.config, args.predictors, args.n_samples, args.checkpoint)
    print("mara-env prediction wrapper throughput (random masked policy, AEC)")
    print(f"machine: {machine_description()}")
    print(
        f"config: {args.config} ({config.n_nodes} nodes, {config.n_slots} slots, "
        f"load {config.load:g}); n_samples {args.n_samples}; {args.steps} agent-steps x "
        f"{args.repeats} repeats, median"
    )
    warmup = max(1, min(args.steps // 10, 2_000))
    for form in forms:
        form.env = form.make()
        form.run(form.env, warmup, np.random.default_rng(args.seed), args.seed)

    wall: dict[str, list[float]] = {form.name: [] for form in forms}
    cpu: dict[str, list[float]] = {form.name: [] for form in forms}
    for _ in range(args.repeats):  # round-robin, so drifts of the machine hit every form alike
        for form in forms:
            start, start_cpu = time.perf_counter(), time.process_time()
            form.run(form.env, args.steps, np.random.default_rng(args.seed), args.seed)
            wall[form.name].append(args.steps / (time.perf_counter() - start))
            cpu[form.name].append(args.steps / max(time.process_time() - start_cpu, 1e-9))
    for form in forms:
        form.env.close()

    median_wall = {name: statistics.median(values) for name, values in wall.items()}
    median_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    raw_name = forms[0].name
    width = max(len(form.name) for form in forms)
    added = {
        form.name: (1.0 / median_cpu[form.name] - 1.0 / median_cpu[raw_name]) * config.n_nodes * 1e6
        for form in forms
    }
    print()
    print(
        f"{'form':<{width}}  {'steps/s':>10}  {'min':>10}  {'max':>10}  {'vs raw':>7}  "
        f"{'steps/CPU-s':>11}  {'vs raw':>7}  {'added CPU us/epoch':>18}"
    )
    for form in forms:
        name = form.name
        print(
            f"{name:<{width}}  {median_wall[name]:>10,.0f}  {min(wall[name]):>10,.0f}  "
            f"{max(wall[name]):>10,.0f}  {median_wall[name] / median_wall[raw_name]:>6.3f}x  "
            f"{median_cpu[name]:>11,.0f}  {median_cpu[name] / median_cpu[raw_name]:>6.3f}x  "
            f"{added[name]:>18,.0f}"
        )
    print()
    labels = [*args.predictors, *(path.name for path in args.checkpoint)]
    # a checkpoint is a flow-matching model: it is held to flow_matching's target
    targets = [TARGET_SHARES.get(name) for name in args.predictors]
    targets += [TARGET_SHARES["flow_matching"]] * len(args.checkpoint)
    raw_epoch = config.n_nodes * 1e6 / median_cpu[raw_name]
    wrapper_own = added[WRAPPER_ONLY]
    for predictor, target in zip(labels, targets, strict=True):
        if target is None:
            continue
        form_name = predictor_form_name(predictor)
        for clock, medians in (("wall-clock", median_wall), ("CPU-time", median_cpu)):
            share = medians[form_name] / medians[raw_name]
            verdict = "met" if share >= target else "NOT met"
            print(
                f"{predictor}-wrapped / raw AEC ({clock}): {share:.3f} "
                f"(target >= {target:g}: {verdict})"
            )
        allowed = allowed_added(raw_epoch, target)
        print(
            f"  CPU us per epoch: raw env {raw_epoch:,.0f}; a share of {target:g} allows "
            f"{allowed:,.0f} added, of which the wrapper's own work takes {wrapper_own:,.0f}, "
            f"leaving {allowed - wrapper_own:,.0f} for the predictor; {predictor} takes "
            f"{added[form_name] - wrapper_own:,.0f}"
        )
    print(
        f"raw = {median_wall[raw_name] / config.n_nodes:,.0f} epochs/s; CPU time (process_time) "
        "counts only this process, so it is steadier than wall-clock on a shared machine"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
