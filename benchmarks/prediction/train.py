"""Train a learned predictor on the train split and write its checkpoint.

Regenerates the shipped checkpoints ``predictors/checkpoints/flow_matching.pt`` and
``spline_flow.pt`` (each with its JSON card) from the shipped traces::

    python -m mara_env.benchmarks.prediction.train --model flow_matching
    python -m mara_env.benchmarks.prediction.train --model spline_flow

With no other options each command trains with the settings of its shipped checkpoint
(:data:`SHIPPED_SETTINGS`). The curves of the **train split** of the rl, tabular, vision and
synthetic families are split again, by curve, into fitting curves and 10% validation curves
(:func:`mara_env.predictors.calibration.split_train_curves`); the weights with the lowest validation loss
are kept. The test split is never read. ``--quick`` trains a tiny model for a smoke test (write
it elsewhere with ``--output``).

Flow matching is trained as a velocity field (the **teacher**, sampled with ``--solver-steps``
midpoint steps; written beside the checkpoint as ``*_teacher.pt``), then **distilled** into a
one-step sampler (:mod:`mara_env.predictors.distillation`, ``--distill-updates``; 0 ships the teacher
itself), which keeps its final weights (:func:`mara_env.predictors.distillation.distill` says why). Each
is checked on prediction cases drawn from the validation curves
(:func:`mara_env.predictors.calibration.validation_cases`: median error, coverage and sampling time go
to the card), and its ``spread`` is fitted there so that 10-90% intervals cover 80% of the cases
of every cell the prediction benchmark would report (each family and all families pooled, at
each observed fraction, for the tasks as drawn and under each length or resolution shift;
:func:`mara_env.predictors.calibration.fit_spread_in_every_cell`).

Leave-one-family-out checkpoints for the prediction benchmark's ``held_out`` protocol::

    python -m mara_env.benchmarks.prediction.train --model flow_matching --hold-out rl

trains on every family but ``rl`` (written to :func:`held_out_checkpoint`); the family then reads
as unknown to the model.

Flow matching reads the target by default (:mod:`mara_env.predictors.curve_windows`); ``--ignore-target``
trains a target-blind model::

    python -m mara_env.benchmarks.prediction.train --model flow_matching --ignore-target --output FILE

The shipped target-blind checkpoint, which MARA's shipped policy reads, was trained by an earlier
version of this script (4,000 distillation updates, examples drawn by earlier rules; its card
records its settings), so this command makes a different model; the policy keeps the checkpoint
it was trained on.

``--recalibrate CHECKPOINT`` refits a flow-matching checkpoint's spread on the validation curves
of its own training split, around each task's median sample (the current rule, which keeps the
point prediction where it was sampled), and rewrites its card, without training;
``--student-hidden`` sets the student's width: the shipped student keeps 96 of the teacher's
128 units per layer (:func:`mara_env.predictors.distillation.narrowed_copy`: two fifths fewer
multiply-adds per sample), and learns from there.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from mara_env.benchmarks.common.arguments import add_output
from mara_env.benchmarks.common.machine import platform_line
from mara_env.benchmarks.common.threads import set_torch_threads
from mara_env.benchmarks.prediction.calibrate import calibrate, recalibrate
from mara_env.curves.sources import default_trace_source
from mara_env.predictors import flow_matching, normalizing_flow
from mara_env.predictors.calibration import (
    CurveSubset,
    split_train_curves,
)
from mara_env.predictors.checkpoint import save_checkpoint
from mara_env.predictors.distillation import distill, narrowed_copy
from mara_env.predictors.training import TrainingSettings, fit, make_examples, train_curves

FAMILIES = ("rl", "tabular", "vision", "synthetic")
#: Families a leave-one-family-out checkpoint can hold out.
HOLD_OUT_FAMILIES = ("rl", "tabular", "vision")
MODELS = ("flow_matching", "spline_flow")
#: Per model, the settings its shipped checkpoint was trained with (the defaults).
SHIPPED_SETTINGS: dict[str, dict[str, int]] = {
    "flow_matching": {
        "updates": 30_000,
        "examples": 300_000,
        "blocks": 2,
        "threads": 1,
        "solver_steps": 4,
        "distill_updates": 32_000,
        "student_hidden": 96,
    },
    "spline_flow": {"updates": 3_000, "examples": 150_000, "blocks": 3, "threads": 1},
}


def held_out_checkpoint(family: str) -> Path:
    """Where the flow-matching checkpoint trained without ``family`` is kept."""
    return (
        flow_matching.shipped_checkpoint().parent
        / "held_out"
        / f"flow_matching_without_{family}.pt"
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.prediction.train", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--model",
        choices=MODELS,
        default="flow_matching",
        help="model to train (default: %(default)s)",
    )
    parser.add_argument("--updates", type=int, help="gradient steps (default: as shipped)")
    parser.add_argument("--examples", type=int, help="training examples (default: as shipped)")
    parser.add_argument("--hidden", type=int, default=128, help="width of hidden layers")
    parser.add_argument(
        "--blocks", type=int, help="residual blocks (flow matching) or transforms (spline flow)"
    )
    parser.add_argument(
        "--solver-steps", type=int, help="flow matching: ODE steps (default: as shipped)"
    )
    parser.add_argument(
        "--distill-updates",
        type=int,
        help="flow matching: updates of the one-step student (0: ship the ODE sampler; "
        "default: as shipped)",
    )
    parser.add_argument(
        "--recalibrate",
        type=Path,
        metavar="CHECKPOINT",
        help="flow matching: refit the calibration of this checkpoint on its validation curves "
        "(the same split as its training), centred on each task's median sample, and rewrite "
        "its card; no training",
    )
    parser.add_argument(
        "--student-hidden",
        type=int,
        help="flow matching: width of the one-step student, at most the teacher's (default: as "
        "shipped; a narrower student starts from the teacher's strongest units)",
    )
    parser.add_argument(
        "--ignore-target",
        action="store_true",
        help="flow matching: a model that does not read the target (the default reads it)",
    )
    parser.add_argument(
        "--hold-out",
        choices=HOLD_OUT_FAMILIES,
        help="flow matching: train without this family (a leave-one-family-out checkpoint)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seeds the split of the train curves, the examples and the weights (default: 0)",
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: as shipped)")
    add_output(parser, default=None, help="checkpoint path (.pt)")
    parser.add_argument("--quick", action="store_true", help="tiny model and budget (smoke test)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    student_given = args.student_hidden is not None
    for name, value in SHIPPED_SETTINGS[args.model].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.solver_steps is None:
        args.solver_steps = 4
    if args.distill_updates is None:
        args.distill_updates = 0
    if args.quick:
        args.updates, args.examples, args.hidden, args.blocks = 50, 2_000, 16, 1
        args.distill_updates = min(args.distill_updates, 20)
        if args.student_hidden is not None:
            args.student_hidden = min(args.student_hidden, 12)
        args.threads = 1
    for flag in ("hold_out", "ignore_target", "student_hidden", "recalibrate"):
        if getattr(args, flag) not in (None, False) and args.model != "flow_matching":
            parser.error(
                f"--{flag.replace('_', '-')} trains flow matching only (use --model flow_matching)"
            )
    if args.distill_updates < 0:
        parser.error("--distill-updates must be >= 0")
    if args.student_hidden is not None and not 1 <= args.student_hidden <= args.hidden:
        given = "got" if student_given else "the shipped default is"
        parser.error(
            f"--student-hidden must be between 1 and the teacher's width (--hidden "
            f"{args.hidden}), {given} {args.student_hidden}; pass --student-hidden N with N <= "
            f"{args.hidden}"
        )
    for name in ("updates", "examples", "hidden", "blocks", "solver_steps", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def build_model(
    args: argparse.Namespace, families: Sequence[str]
) -> tuple[torch.nn.Module, Any, Any, Path]:
    """The untrained model, its training objective, its config and its default path."""
    if args.model == "flow_matching":
        fm_config = flow_matching.FlowMatchingConfig(
            hidden=args.hidden,
            blocks=args.blocks,
            solver_steps=args.solver_steps,
            known_families=tuple(families),
            reads_target=not args.ignore_target,
        )
        return (
            flow_matching.VelocityField(fm_config),
            flow_matching.flow_matching_loss,
            fm_config,
            flow_matching.shipped_checkpoint(),
        )
    nsf_config = normalizing_flow.SplineFlowConfig(transforms=args.blocks, hidden=args.hidden)
    return (
        normalizing_flow.build_flow(nsf_config),
        normalizing_flow.negative_log_likelihood,
        nsf_config,
        normalizing_flow.shipped_checkpoint(),
    )


def main(argv: Sequence[str] | None = None) -> Path:
    """Run the training (or the recalibration); returns the checkpoint path."""
    args = parse_args(argv)
    set_torch_threads(args.threads)
    if args.recalibrate is not None:
        return recalibrate(args.recalibrate)
    torch.manual_seed(args.seed)
    families = tuple(family for family in FAMILIES if family != args.hold_out)
    model, objective, config, default_path = build_model(args, families)
    if args.hold_out is not None:
        default_path = held_out_checkpoint(args.hold_out)
    out = args.out or default_path
    source = default_trace_source()
    fitting_curves, validation_curves = split_train_curves(source, families, args.seed)
    fitting = train_curves(fitting_curves, families)
    held = train_curves(validation_curves, families)
    rng = np.random.default_rng(args.seed)
    print(f"building {args.examples} examples from {len(fitting)} train-split curves")
    reads_target = getattr(config, "reads_target", False)
    train = make_examples(fitting, args.examples, rng, config.log_scale, reads_target)
    validation = make_examples(
        held, max(args.examples // 20, 100), rng, config.log_scale, reads_target
    )
    settings = TrainingSettings(updates=args.updates, seed=args.seed)
    bar = tqdm(total=settings.updates, desc=args.model, unit="update", disable=args.no_progress)
    last_validation = [float("nan")]

    def on_update(update: int, loss: float, validation_loss: float | None) -> None:
        if validation_loss is not None:
            last_validation[0] = validation_loss
        bar.update(1)
        if update % 100 == 0:
            bar.set_postfix(loss=f"{loss:.4f}", validation=f"{last_validation[0]:.4f}")

    start = time.perf_counter()
    log = fit(
        model,
        objective,
        settings,
        train,
        validation,
        on_update,
        validate_every=max(settings.updates // 30, 1),
    )
    seconds = time.perf_counter() - start
    bar.close()
    best = min(log, key=lambda row: row[2])
    facts: dict[str, Any] = {
        "model": args.model,
        "trained_on": f"train split of {', '.join(families)} ({len(fitting)} curves; "
        f"{len(held)} held out for validation)",
        "held_out_family": args.hold_out,
        "trace_fingerprint": source.fingerprint,
        "examples": args.examples,
        "updates": settings.updates,
        "batch_size": settings.batch_size,
        "learning_rate": settings.learning_rate,
        "seed": args.seed,
        "best_validation_loss": round(best[2], 5),
        "best_update": best[0],
        "training_seconds": round(seconds, 1),
        "machine": f"{platform.machine()}, {args.threads} torch threads, torch {torch.__version__}",
        "platform": platform_line(),
        "log": [[u, round(t, 5), round(v, 5)] for u, t, v in log],
    }
    if isinstance(model, flow_matching.VelocityField):
        config, facts["validation"] = calibrate(model, config, validation_curves, args.seed)
        if args.distill_updates > 0:
            teacher_out = out.with_name(out.stem + "_teacher" + out.suffix)
            save_checkpoint(
                teacher_out,
                model.state_dict(),
                config={**asdict(config), **config.layout()},
                facts=facts,
            )
            print(f"wrote the teacher to {teacher_out}")
            model, config, facts["distillation"] = distill_student(
                model, config, (train[0], validation[0]), validation_curves, args
            )
    save_checkpoint(
        out, model.state_dict(), config={**asdict(config), **config.layout()}, facts=facts
    )
    print(
        f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB): best validation loss "
        f"{best[2]:.4f} at update {best[0]}, {seconds / 60:.1f} min of training"
    )
    return out


def distill_student(
    teacher: flow_matching.VelocityField,
    config: flow_matching.FlowMatchingConfig,
    contexts: tuple[np.ndarray, np.ndarray],
    curves: CurveSubset,
    args: argparse.Namespace,
) -> tuple[flow_matching.VelocityField, flow_matching.FlowMatchingConfig, dict[str, Any]]:
    """The one-step student of ``teacher`` (:mod:`mara_env.predictors.distillation`), calibrated."""
    narrower = args.student_hidden not in (None, config.hidden)
    student_config = replace(
        config,
        hidden=args.student_hidden or config.hidden,
        solver="euler",
        solver_steps=1,
        spread=1.0,
    )
    settings = TrainingSettings(updates=args.distill_updates, learning_rate=5e-4, seed=args.seed)
    bar = tqdm(total=settings.updates, desc="distil", unit="update", disable=args.no_progress)
    start = time.perf_counter()
    start_from = narrowed_copy(teacher, student_config) if narrower else None
    student, log = distill(teacher, *contexts, settings, lambda *_: bar.update(1), start_from)
    bar.close()
    one_step, scores = calibrate(student, student_config, curves, args.seed)
    facts = {
        "teacher": f"{config.solver} x {config.solver_steps} steps",
        "student_hidden": student_config.hidden,
        "student_start": (
            f"the teacher's {student_config.hidden} strongest units"
            if narrower
            else "the teacher's weights"
        ),
        "updates": settings.updates,
        "seconds": round(time.perf_counter() - start, 1),
        "log": [[u, round(t, 5), round(v, 5)] for u, t, v in log],
        "validation": scores,
    }
    return student, one_step, facts


if __name__ == "__main__":
    main()
