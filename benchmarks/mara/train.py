"""Train the MARA policy: imitation warm start, then PPO; write a checkpoint and its card.

Run ``python -m mara_env.benchmarks.mara.train [options]`` (also ``python -m mara_env.benchmarks.mara.train``);
every field of :class:`~mara_env.benchmarks.mara.settings.TrainSettings` is an option of the same name,
with its documented meaning as help. The commands that made the two shipped checkpoints (how
they came about, with their figures: ``benchmarks/results/v1/mara/README.md``)::

    python -m mara_env.benchmarks.mara.train --updates 0 --output agents/worlds/v3/mara_imitation.pt \
        --log benchmarks/results/v1/mara/mara_imitation_training.csv \
        --plot benchmarks/results/v1/mara/mara_imitation_training.png
    python -m mara_env.benchmarks.mara.train --init agents/worlds/v3/mara_imitation.pt \
        --dagger-rounds 0 --rollout-lag 1 --lr 2.5e-4 --lr-schedule linear --kl-coef 0.02 \
        --minutes 35 --updates 10000 --output benchmarks/results/v1/mara/mara_ppo.pt
    python -m mara_env.benchmarks.mara.train --quick --output /tmp/mara_quick.pt     # smoke test

Training plays only the ``training`` preset (train split of the curves, load 1.4) with episode
seeds below 1000; the evaluation seeds (1000 and up, test split) are never played. The policy
acts at the temperature it ships with (``--temperature``) everywhere it plays: DAgger
rollouts, PPO rollouts, the update's log-probabilities, validation and the saved checkpoint.
A run is, in order:

1. a warm start by imitation (:mod:`mara_env.benchmarks.mara.imitation`: DAgger with ``--teacher``,
   the clairvoyant reference by default; skipped with ``--dagger-rounds 0``, e.g. with ``--init``);
2. PPO from the best imitation round (:mod:`mara_env.benchmarks.mara.ppo`; skipped with ``--updates 0``);
3. the choice of the weights to keep, on validation episodes played beside the training, and
   its confirmation on episodes that took no part in choosing
   (:mod:`mara_env.benchmarks.mara.selection`, :mod:`mara_env.benchmarks.mara.validation`).

This module reads the command line and runs them (:func:`train`). Outputs: the checkpoint with
its card (the settings, the command, the warm start's hash, the phases' wall minutes and
cluster-epochs per second, the validation and confirmation scores), a CSV log (``--log``,
:mod:`mara_env.benchmarks.mara.training_log`) and a plot of validation completion against updates
(``--plot``). ``--ablation`` trains a variant: ``no_predictions`` (prediction features
constant), ``independent`` (nodes do not see earlier nodes' choices), ``no_shaping``
(completion reward only). ``--tune-temperature CHECKPOINT`` only reports a checkpoint's
validation completion at several temperatures (:func:`mara_env.benchmarks.mara.validation.tune_temperature`).

The same command with the same seed writes the same checkpoint and log on one machine (the
log's ``wall_seconds`` and ``epochs_per_second`` apart), whatever ``--validation-workers`` and
``--rollout-workers``; ``--minutes`` and ``--imitation-minutes`` stop early by wall clock, and
then break that.

Example:
    >>> settings = settings_of(parse_args(["--quick", "--updates", "3"]))
    >>> settings.preset, settings.updates, settings.dagger_rounds
    ('tiny', 3, 1)
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from mara_env.agents.mara.agent import Mara
from mara_env.benchmarks.common.arguments import add_output, attribute_help
from mara_env.benchmarks.common.machine import available_cores, platform_line
from mara_env.benchmarks.common.ray_runtime import RayUnavailable, import_ray
from mara_env.benchmarks.common.world_results import mara_results
from mara_env.benchmarks.common.write_faults import write_faults_end
from mara_env.benchmarks.mara.imitation import imitate
from mara_env.benchmarks.mara.ppo import ppo, print_ppo_time
from mara_env.benchmarks.mara.rollout_worker import BACKENDS, rollout_processes
from mara_env.benchmarks.mara.rollouts import feature_predictor
from mara_env.benchmarks.mara.settings import (
    ABLATIONS,
    LR_SCHEDULES,
    QUICK,
    TEACHERS,
    TRUST_REGIONS,
    VALIDATION_SEEDS,
    WORKLOADS,
    TrainSettings,
)
from mara_env.benchmarks.mara.trainer import DEVICES, Placement, Trainer, device_line
from mara_env.benchmarks.mara.training_log import log_rows, plot_log
from mara_env.benchmarks.mara.validation import tune_temperature
from mara_env.predictors.checkpoint import CheckpointError
from mara_env.worlds.world import LATEST_WORLD_VERSION, WORLD_VERSIONS, world


def train(
    settings: TrainSettings,
    out: Path,
    log: Path,
    plot: Path | None,
    progress: bool,
    *,
    init: Path | None = None,
    command: Sequence[str] = (),
    placement: Placement | None = None,
) -> dict[str, Any]:
    """Run imitation then PPO, save the kept weights to ``out``; returns the run's facts.

    Args:
        settings: The run's settings.
        out: The checkpoint to write (its card beside it).
        log: The CSV log.
        plot: The plot of the log (``None``: no plot).
        progress: Show progress bars.
        init: Start from this checkpoint's weights instead of a fresh network.
        command: The command line, recorded in the card.
        placement: Where the work runs: the learner's device, the validation and rollout
            workers (:class:`~mara_env.benchmarks.mara.trainer.Placement`; default: all in this
            process, on the CPU).
    """
    trainer = Trainer(settings, log, progress, init=init, placement=placement or Placement())
    try:
        return _run(trainer, settings, out, plot, init, command)
    finally:
        trainer.close()


def _run(
    trainer: Trainer,
    settings: TrainSettings,
    out: Path,
    plot: Path | None,
    init: Path | None,
    command: Sequence[str],
) -> dict[str, Any]:
    log, selection = trainer.log_path, trainer.selection
    imitate(trainer)
    facts: dict[str, Any] = {
        "settings": asdict(settings),
        "command": ["python", "-m", "mara_env.benchmarks.mara.train", *command],
        "init": None if init is None else {"path": str(init), "sha256": trainer.init_sha256},
        "training": f"preset {settings.preset!r} (train split), workloads "
        + ", ".join(WORKLOADS)
        + ", episode seeds < 1000",
        "validation_episodes": f"seeds {VALIDATION_SEEDS[0]}-"
        f"{VALIDATION_SEEDS[settings.validation_seeds - 1]} x {len(WORKLOADS)} workloads "
        f"at temperature {settings.temperature}",
        "torch_threads": torch.get_num_threads(),
        "validation_workers": selection.player.workers,
        "rollout_workers": rollout_processes(
            settings.rollout_lag, trainer.placement.rollout_workers
        ),
        "rollout_backend": trainer.placement.rollout_backend,
        "learner_device": device_line(trainer.device),
        "machine": f"{platform.machine()}, {available_cores()} CPU cores",
        "platform": platform_line(),
        "torch": torch.__version__,
        "log": str(log),
    }
    if settings.dagger_rounds:
        facts["imitation"] = {
            "rounds_run": sum(1 for _ in log_rows(log, "imitation")),
            "best_round": selection.best_round,
            "best_validation_completion": round(selection.best_validation, 4),
        }
        _save(trainer, out, {**facts, "stage": "after imitation"})
    ppo(trainer)
    if selection.best_state:
        trainer.policy.load_state_dict(selection.best_state)
    if settings.updates:
        facts["ppo"] = {
            "updates_run": max(int(row["update"]) for row in log_rows(log, "ppo")),
            "update_size_cluster_epochs": settings.update_size,
            "best_update": selection.best_update,
            "best_validation_completion": round(selection.best_validation, 4),
            "seconds": {
                part: {name: round(value, 2) for name, value in seconds.items()}
                for part, seconds in trainer.ppo_seconds.items()
            },
        }
        print_ppo_time(trainer.ppo_seconds, 60.0 * trainer.phases["ppo"]["minutes"])
    else:
        trainer.confirmation = selection.confirm(trainer.actor.sync())
    wall = time.perf_counter() - trainer.start
    facts.update(
        wall_minutes=round(wall / 60.0, 2),
        env_epochs=trainer.env_epochs,
        cluster_epochs_per_second=round(trainer.env_epochs / max(wall, 1e-9), 1),
        phases=trainer.phases,
        confirmation=trainer.confirmation,
        stage="after PPO" if settings.updates else "after imitation",
    )
    _save(trainer, out, facts)
    if plot is not None:
        plot_log(log, plot)
    return facts


def _save(trainer: Trainer, out: Path, facts: dict[str, Any]) -> None:
    """Write the trainer's current weights as a MARA checkpoint at ``out``, with ``facts`` in
    its card."""
    settings = trainer.settings
    agent = Mara(
        trainer.actor.sync(),  # on the CPU, so the checkpoint loads anywhere
        feature_predictor(settings.predictor_name),
        settings.n_samples,
        predictor_name=settings.predictor_name,
        temperature=settings.temperature,
    )
    agent.save(out, facts=facts)


def output_paths(
    out: Path | None, stem: str, quick: bool, world_version: int = LATEST_WORLD_VERSION
) -> tuple[Path, Path, Path | None]:
    """Checkpoint, log and plot paths of a run (``stem``: ``mara`` or ``ablation_<name>``) on
    ``world_version``.

    Without ``out``, the world's shipped checkpoint or the ablation's file in the world's MARA
    results folder (:func:`mara_env.benchmarks.common.world_results.mara_results`), logs beside
    them in that folder; a ``--quick`` run never touches those and writes
    ``mara_quick.pt`` in the working directory instead. With ``out``, logs go beside it, so a
    side run never overwrites the shipped run's log.

    Example:
        >>> [str(path) for path in output_paths(Path("/tmp/x.pt"), "mara", quick=False)]
        ['/tmp/x.pt', '/tmp/x_training.csv', '/tmp/x_training.png']
        >>> str(output_paths(None, "mara", quick=True)[0])
        'mara_quick.pt'
    """
    if quick:
        out = Path("mara_quick.pt") if out is None else out
        return out, out.with_suffix(".csv"), None
    if out is None:
        results = mara_results(world_version)
        shipped = Path(world(world_version).shipped) / "mara.pt"
        out = shipped if stem == "mara" else results / f"{stem}.pt"
        return out, results / f"{stem}_training.csv", results / f"{stem}_training.png"
    return out, out.with_name(f"{out.stem}_training.csv"), out.with_name(f"{out.stem}_training.png")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.mara.train", description=__doc__.split("\n\n")[0]
    )
    defaults = TrainSettings()
    described = attribute_help(TrainSettings)
    choices = {
        "ablation": ABLATIONS,
        "teacher": TEACHERS,
        "lr_schedule": LR_SCHEDULES,
        "trust_region": TRUST_REGIONS,
        "world_version": WORLD_VERSIONS,
    }
    types = {"hopeless_curve_share": float}  # the settings whose default is None
    for name, value in asdict(defaults).items():
        flag = "--" + name.replace("_", "-")
        text = described[name].replace("%", "%%") + " (default: %(default)s)"
        kind = types.get(name, type(value))
        parser.add_argument(flag, type=kind, choices=choices.get(name), default=value, help=text)
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument(
        "--validation-workers",
        type=int,
        choices=(0, 1),
        default=1,
        help="1 (default): play validation episodes in a worker process while training goes "
        "on, on the second core; 0: in this process (same results, more wall time)",
    )
    parser.add_argument(
        "--rollout-workers",
        type=int,
        default=1,
        metavar="N",
        help="PPO's rollout worker processes, each playing its share of the clusters. With "
        "--rollout-lag 1: N >= 1 play beside the updates (0: in this process, the same rollouts "
        "one after the other); with --rollout-lag 0: N >= 2 share each update's rollouts while "
        "the learner waits (0 or 1: in this process). The same seed and N give the same run; "
        "a different N plays other episodes. Default 1, as the shipped runs were trained; on "
        "a bigger machine try the cores minus one",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="process",
        help="where the rollout workers run: local processes (default) or Ray actors of one "
        "CPU each (the same run; pip install 'mara-env[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="with --backend ray: the cluster to join, as for ray.init ('auto' on one of its "
        "nodes, 'ray://head:10001' from outside); default: a local Ray instance for the run",
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="cpu",
        help="where the learner trains: 'cpu' (default, as the shipped runs), 'cuda', or "
        "'auto' (CUDA when torch sees one); episodes play on the CPU either way, and the "
        "checkpoint loads on a CPU whatever trained it",
    )
    add_output(parser, default=None, help="checkpoint path (.pt)")
    parser.add_argument(
        "--log", type=Path, default=None, help="CSV log path (default: beside the checkpoint)"
    )
    parser.add_argument(
        "--plot", type=Path, default=None, help="plot path (default: beside the checkpoint)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny model and budget (smoke test; explicit flags override its values)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="start from this MARA checkpoint's weights (same network, predictor, temperature)",
    )
    parser.add_argument(
        "--tune-temperature",
        type=Path,
        default=None,
        metavar="CHECKPOINT",
        help="only report an existing checkpoint's validation completion at several sampling "
        "temperatures (its card is not changed)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    if parser.parse_known_args(argv)[0].quick:  # tiny defaults; explicit flags still win
        parser.set_defaults(**QUICK)
    return parser.parse_args(argv)


def settings_of(args: argparse.Namespace) -> TrainSettings:
    """The settings a parsed command line asks for (with ``--quick``, :data:`QUICK` replaces the
    defaults of the flags not given).

    Raises:
        ValueError: If a setting is invalid.
    """
    return TrainSettings(**{name: getattr(args, name) for name in asdict(TrainSettings())})


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.tune_temperature is not None:
        torch.set_num_threads(args.threads)
        scores = tune_temperature(args.tune_temperature)
        print(f"Validation completion of {args.tune_temperature} by temperature: {scores}.")
        return 0
    try:
        settings = settings_of(args)
    except ValueError as error:
        raise SystemExit(f"mara.train: {error}") from None
    if args.ray_address is not None and args.backend != "ray":
        raise SystemExit("mara.train: --ray-address needs --backend ray.")
    if args.backend == "ray" and not rollout_processes(settings.rollout_lag, args.rollout_workers):
        raise SystemExit(
            "mara.train: --backend ray runs the rollout workers as Ray actors, but with these "
            "settings the rollouts play in this process: give --rollout-workers N >= 2, or N >= 1 "
            "with --rollout-lag 1."
        )
    if args.backend == "ray":
        try:
            import_ray("--backend ray")
        except RayUnavailable as error:
            raise SystemExit(f"mara.train: {error}") from None
    torch.set_num_threads(args.threads)
    stem = "mara" if settings.ablation == "none" else f"ablation_{settings.ablation}"
    out, log, plot = output_paths(args.out, stem, args.quick, settings.world_version)
    log, plot = args.log or log, args.plot or plot
    command = list(sys.argv[1:] if argv is None else argv)
    kept = f"The training log so far is in {log}, and the last stage saved, if any, in {out}"
    with write_faults_end("mara.train", lambda: kept, "training starts over"):
        try:
            facts = train(
                settings,
                out,
                log,
                plot,
                not args.no_progress,
                init=args.init,
                command=command,
                placement=Placement(
                    device=args.device,
                    validation_workers=args.validation_workers,
                    rollout_workers=args.rollout_workers,
                    rollout_backend=args.backend,
                    ray_address=args.ray_address,
                ),
            )
        except (ValueError, CheckpointError, RayUnavailable) as error:
            raise SystemExit(f"mara.train: {error}") from None
    print(
        f"Saved {out} ({facts['stage']}): confirmation {facts['confirmation']}, "
        f"{facts['wall_minutes']} min wall, {facts['env_epochs']} cluster-epochs "
        f"({facts['cluster_epochs_per_second']} per second)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
