"""Train a learned predictor on the train split and write its checkpoint.

Regenerates the shipped checkpoints ``predictors/checkpoints/flow_matching.pt`` and
``spline_flow.pt`` (each with its JSON card) from the shipped traces::

    python -m benchmarks.train_predictors --model flow_matching
    python -m benchmarks.train_predictors --model spline_flow

With no other options each command trains with the settings of its shipped checkpoint
(:data:`SHIPPED_SETTINGS`). The curves of the **train split** of the rl, tabular, vision and
synthetic families are split again, by curve, into fitting curves and 10% validation curves; the
weights with the lowest validation loss are kept. The test split is never read. ``--quick`` trains a tiny model for a
smoke test (write it elsewhere with ``--out``).
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from mara_env.sources import default_trace_source
from predictors import flow_matching, normalizing_flow
from predictors.checkpoint import save_checkpoint
from predictors.training import TrainingSettings, fit, make_examples, train_curves

FAMILIES = ("rl", "tabular", "vision", "synthetic")
VALIDATION_SHARE = 0.1
MODELS = ("flow_matching", "spline_flow")
#: Per model, the settings its shipped checkpoint was trained with (the defaults).
SHIPPED_SETTINGS: dict[str, dict[str, int]] = {
    "flow_matching": {"updates": 30_000, "examples": 300_000, "blocks": 2, "threads": 2},
    "spline_flow": {"updates": 3_000, "examples": 150_000, "blocks": 3, "threads": 1},
}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.train_predictors", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--model", choices=MODELS, default="flow_matching")
    parser.add_argument("--updates", type=int, help="gradient steps (default: as shipped)")
    parser.add_argument("--examples", type=int, help="training examples (default: as shipped)")
    parser.add_argument("--hidden", type=int, default=128, help="width of hidden layers")
    parser.add_argument(
        "--blocks", type=int, help="residual blocks (flow matching) or transforms (spline flow)"
    )
    parser.add_argument("--solver-steps", type=int, default=8, help="flow matching: ODE steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, help="torch threads (default: as shipped)")
    parser.add_argument("--out", type=Path, default=None, help="checkpoint path (.pt)")
    parser.add_argument("--quick", action="store_true", help="tiny model and budget (smoke test)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    for name, value in SHIPPED_SETTINGS[args.model].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.quick:
        args.updates, args.examples, args.hidden, args.blocks = 50, 2_000, 16, 1
        args.threads = 1
    for name in ("updates", "examples", "hidden", "blocks", "solver_steps", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    return args


def build_model(args: argparse.Namespace) -> tuple[torch.nn.Module, Any, Any, Path]:
    """The untrained model, its training objective, its config and its default path."""
    if args.model == "flow_matching":
        fm_config = flow_matching.FlowMatchingConfig(
            hidden=args.hidden, blocks=args.blocks, solver_steps=args.solver_steps
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
    """Run the training; returns the checkpoint path."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model, objective, config, default_path = build_model(args)
    out = args.out or default_path
    source = default_trace_source()
    curves = train_curves(source, FAMILIES, split="train")
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(curves))
    n_validation = max(1, int(VALIDATION_SHARE * len(curves)))
    validation_curves = [curves[i] for i in order[:n_validation]]
    fitting_curves = [curves[i] for i in order[n_validation:]]
    print(f"building {args.examples} examples from {len(fitting_curves)} train-split curves")
    train = make_examples(fitting_curves, args.examples, rng, config.log_scale)
    validation = make_examples(
        validation_curves, max(args.examples // 20, 100), rng, config.log_scale
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
    facts = {
        "model": args.model,
        "trained_on": f"train split of {', '.join(FAMILIES)} ({len(fitting_curves)} curves; "
        f"{len(validation_curves)} held out for validation)",
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
        "log": [[u, round(t, 5), round(v, 5)] for u, t, v in log],
    }
    save_checkpoint(
        out, model.state_dict(), config={**asdict(config), **config.layout()}, facts=facts
    )
    print(
        f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB): best validation loss "
        f"{best[2]:.4f} at update {best[0]}, {seconds / 60:.1f} min of training"
    )
    return out


if __name__ == "__main__":
    main()
