"""Train sb3-contrib's MaskablePPO on the default world and compare it with random masked play.

A worked example of the Gymnasium form: one central scheduler picks, every epoch, a task slot
(or idle) for each node through a ``MultiDiscrete`` action, and ``env.action_masks()`` tells
MaskablePPO which choices are legal. The script

1. trains ``MaskablePPO("MlpPolicy", make_vec_env("mara_env:mara_env/Cluster-v3", n_envs=4,
   env_kwargs=...))`` with a fixed seed on a small cluster (3 nodes, 4 slots, training load) with
   the dense, potential-based progress shaping (``shaping_weight=1.0``, paid at PPO's discount:
   ``shaping_discount=0.99``), on the *train* curves;
2. evaluates the trained policy (deterministic, masked with ``action_masks()``) and a uniformly
   random masked policy on the *same* held-out episodes: the *test* curves
   (``split="test"``) and evaluation seeds disjoint from the training seeds;
3. prints each policy's mean completion rate (completed / arrived per episode) with a 95%
   bootstrap confidence interval, the paired differences (same episodes) with their intervals,
   and whether PPO beats random (the paired interval lies above 0). The untrained network (same
   seed, deterministic) is evaluated too: a fixed deterministic rule can beat random choices
   without any learning, and that row shows what training itself adds.

The default budget (100,000 timesteps, 480-1,000 timesteps per second with one torch thread on
this project's 2-core machine, depending on its other load) trains in two to four minutes. The
cluster is small on purpose: with 3 nodes and 4 slots a flat MLP policy learns well within that
budget, while on larger clusters (4 nodes, 6 slots) it barely improved on its untrained self in
250,000 timesteps.

Run::

    python -m mara_env.benchmarks.baselines.maskable_ppo                 # train, evaluate, compare
    python -m mara_env.benchmarks.baselines.maskable_ppo --quick         # seconds, for CI smoke runs
    python -m mara_env.benchmarks.baselines.maskable_ppo --timesteps 200000 --save runs/ppo_cluster.zip

Needs the ``torch`` extra (``pip install "mara-env[torch]"``). A progress bar is shown with
``rich`` and ``tqdm`` (SB3's own), with ``tqdm`` alone (a plain bar), or not at all.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from mara_env.benchmarks.common.report import add_output_argument, printed_report
from mara_env.predictors.bootstrap import percentile_bootstrap

#: PPO's discount; the shaping is paid at the same gamma, so it telescopes in PPO's returns.
GAMMA = 0.99
#: The training environment: a small cluster with dense (shaped) reward.
TRAIN_KWARGS: dict[str, Any] = {
    "config": "training",
    "n_nodes": 3,
    "n_slots": 4,
    "shaping_weight": 1.0,
    "shaping_discount": GAMMA,
}
#: Evaluation: the same cluster on the held-out test curves (the reward does not matter there).
EVAL_KWARGS: dict[str, Any] = {**TRAIN_KWARGS, "split": "test"}
#: Evaluation episodes are seeded from here on, far from the training seeds.
EVAL_SEED_BASE = 1_000_000
DEFAULT_TIMESTEPS, QUICK_TIMESTEPS = 100_000, 256
DEFAULT_EVAL_EPISODES, QUICK_EVAL_EPISODES = 30, 2
N_ENVS = 4
#: PPO hyperparameters (full run); ``--quick`` shrinks the rollout so that a tiny budget works.
PPO_KWARGS: dict[str, Any] = {
    "n_steps": 256,
    "batch_size": 256,
    "n_epochs": 5,
    "learning_rate": 3e-4,
    "gamma": GAMMA,
    "gae_lambda": 0.95,
    "ent_coef": 0.01,
}
QUICK_PPO_KWARGS: dict[str, Any] = {**PPO_KWARGS, "n_steps": 32, "batch_size": 64, "n_epochs": 1}

Policy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def bootstrap_ci(
    values: np.ndarray, *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values``
    (:func:`mara_env.predictors.bootstrap.percentile_bootstrap`, linear quantiles)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return float(values.mean()), float(values.mean())
    rng = np.random.default_rng(seed)

    def means(drawn: np.ndarray) -> np.ndarray:
        return values[drawn].mean(axis=1)

    return percentile_bootstrap(values.size, rng, means, resamples, confidence, method="linear")


def evaluate(env: Any, policy: Policy, seeds: list[int]) -> np.ndarray:
    """Completion rate of each episode (one per seed) of ``policy(observation, masks)``.

    ``masks`` is the ``(n_nodes, n_slots + 1)`` boolean view of ``action_masks()``.
    """
    unwrapped = env.unwrapped
    n_nodes = unwrapped.config.n_nodes
    rates = []
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        done = False
        while not done:
            masks = unwrapped.action_masks().reshape(n_nodes, -1)
            observation, _, terminated, truncated, _ = env.step(policy(observation, masks))
            done = terminated or truncated
        rates.append(unwrapped.episode_metrics()["completion_rate"])
    return np.array(rates, dtype=np.float64)


def random_policy(seed: int) -> Policy:
    """Each node picks uniformly among its legal choices (idle included)."""
    from mara_env.benchmarks.common.random_policy import random_legal_action

    rng = np.random.default_rng(seed)

    def act(observation: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.array([random_legal_action(rng, mask) for mask in masks], dtype=np.int64)

    return act


def ppo_policy(model: Any) -> Policy:
    """The trained model, deterministic, with the action masks applied."""

    def act(observation: np.ndarray, masks: np.ndarray) -> np.ndarray:
        action, _ = model.predict(observation, action_masks=masks.ravel(), deterministic=True)
        return np.asarray(action, dtype=np.int64)

    return act


def progress_callback(enabled: bool) -> tuple[bool, list[Any]]:
    """``(progress_bar, callbacks)`` for ``model.learn``: SB3's bar when ``rich`` and ``tqdm`` are
    installed, a plain ``tqdm`` bar when only ``tqdm`` is, nothing otherwise."""
    if not enabled:
        return False, []
    has = {name: importlib.util.find_spec(name) is not None for name in ("rich", "tqdm")}
    if has["rich"] and has["tqdm"]:
        return True, []
    if not has["tqdm"]:
        return False, []
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class TqdmCallback(BaseCallback):
        """A plain tqdm progress bar over the training timesteps."""

        def _on_training_start(self) -> None:
            self.bar = tqdm(total=self.locals["total_timesteps"], unit="step", desc="training")

        def _on_step(self) -> bool:
            # SB3 finishes the last rollout past total_timesteps: keep the bar at 100%.
            self.bar.update(min(self.training_env.num_envs, self.bar.total - self.bar.n))
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return False, [TqdmCallback()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.baselines.maskable_ppo",
        description="Train MaskablePPO on a small cluster of the default world (Gymnasium form) and compare its "
        "completion rate with a random masked policy on held-out episodes.",
    )
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help=f"training timesteps (default {DEFAULT_TIMESTEPS}, {QUICK_TIMESTEPS} with --quick)",
    )
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=None,
        help="held-out evaluation episodes per policy "
        f"(default {DEFAULT_EVAL_EPISODES}, {QUICK_EVAL_EPISODES} with --quick)",
    )
    parser.add_argument("--seed", type=int, default=0, help="training seed (default 0)")
    parser.add_argument(
        "--quick", action="store_true", help="a tiny budget and short rollouts, for CI smoke runs"
    )
    parser.add_argument("--save", metavar="PATH", help="save the trained model to PATH (.zip)")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch intra-op threads (default 1: fastest for this small network on a few cores)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    if args.timesteps is None:
        args.timesteps = QUICK_TIMESTEPS if args.quick else DEFAULT_TIMESTEPS
    if args.eval_episodes is None:
        args.eval_episodes = QUICK_EVAL_EPISODES if args.quick else DEFAULT_EVAL_EPISODES
    if args.timesteps < 1 or args.eval_episodes < 1 or args.torch_threads < 1:
        parser.error("--timesteps, --eval-episodes and --torch-threads must be >= 1")
    return args


def format_row(name: str, rates: np.ndarray, seed: int) -> str:
    low, high = bootstrap_ci(rates, seed=seed)
    return (
        f"{name:<24} {rates.mean():>7.3f} ± {(high - low) / 2:.3f}   "
        f"[{low:.3f}, {high:.3f}]   {rates.size:>8}"
    )


def main(argv: list[str] | None = None) -> int:
    """Measure and print the report (also to ``--output``); returns the exit status."""
    args = parse_args(argv)
    with printed_report(
        args.output,
        "MaskablePPO against random masked play",
        argv,
        "python -m mara_env.benchmarks.baselines.maskable_ppo",
    ):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The measurement and its printed report; returns the exit status."""
    try:
        import gymnasium as gym
        import torch  # noqa: F401 - the clear message below if it is missing
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.env_util import make_vec_env
    except ImportError as error:
        raise SystemExit(
            f"This example needs torch, stable-baselines3 and sb3-contrib ({error}). "
            'Install them with: pip install "mara-env[torch]"'
        ) from error
    import mara_env  # registers the ids
    from mara_env.benchmarks.common.threads import set_torch_threads

    set_torch_threads(args.torch_threads)
    ppo_kwargs = QUICK_PPO_KWARGS if args.quick else PPO_KWARGS
    train_config = mara_env.get_config(
        TRAIN_KWARGS["config"], **{k: v for k, v in TRAIN_KWARGS.items() if k != "config"}
    )
    print(f"MaskablePPO on {mara_env.ENV_ID} (Gymnasium form, central scheduler)")
    print(
        f"cluster: {train_config.n_nodes} nodes, {train_config.n_slots} slots, load "
        f"{train_config.load:g}, shaping_weight {train_config.shaping_weight:g}; train on "
        f'split="train", evaluate on split="test"'
    )
    print(
        f"training: {args.timesteps} timesteps, {N_ENVS} envs, seed {args.seed}, "
        f"torch threads {args.torch_threads}, "
        + ", ".join(f"{key}={value}" for key, value in ppo_kwargs.items())
    )

    start = time.perf_counter()
    vec_env = make_vec_env(
        f"mara_env:{mara_env.ENV_ID}", n_envs=N_ENVS, seed=args.seed, env_kwargs=TRAIN_KWARGS
    )
    model = MaskablePPO("MlpPolicy", vec_env, seed=args.seed, verbose=0, **ppo_kwargs)
    seeds = [EVAL_SEED_BASE + i for i in range(args.eval_episodes)]
    env = gym.make(mara_env.ENV_ID, **EVAL_KWARGS)
    # Even an untrained network, used deterministically, is a fixed assignment rule that can
    # beat random choices by a wide margin: this row shows what training itself adds.
    untrained_rates = evaluate(env, ppo_policy(model), seeds)
    progress_bar, callbacks = progress_callback(not args.no_progress)
    model.learn(total_timesteps=args.timesteps, progress_bar=progress_bar, callback=callbacks)
    train_seconds = time.perf_counter() - start
    vec_env.close()
    if args.save:
        directory = os.path.dirname(args.save)
        if directory:
            os.makedirs(directory, exist_ok=True)
        model.save(args.save)
        print(f"saved the model to {args.save}")

    start = time.perf_counter()
    ppo_rates = evaluate(env, ppo_policy(model), seeds)
    random_rates = evaluate(env, random_policy(args.seed), seeds)
    env.close()
    eval_seconds = time.perf_counter() - start

    print()
    print(f"held-out evaluation: {args.eval_episodes} episodes, seeds {seeds[0]}..{seeds[-1]}")
    print(f"{'policy':<24} {'completion rate':>15}   {'95% bootstrap CI':<16}   {'episodes':>8}")
    print(format_row("MaskablePPO (trained)", ppo_rates, args.seed))
    print(format_row("MaskablePPO (untrained)", untrained_rates, args.seed))
    print(format_row("random masked", random_rates, args.seed))
    print("paired differences (same episodes), mean [95% bootstrap CI]:")
    lows = {}
    for name, other in (("random", random_rates), ("untrained", untrained_rates)):
        difference = ppo_rates - other
        lows[name], high = bootstrap_ci(difference, seed=args.seed)
        print(f"  trained - {name:<10} {difference.mean():+.3f} [{lows[name]:+.3f}, {high:+.3f}]")
    print(f"PPO beats random (paired 95% CI above 0): {'yes' if lows['random'] > 0 else 'no'}")
    print(
        "PPO beats its untrained self (paired 95% CI above 0): "
        f"{'yes' if lows['untrained'] > 0 else 'no'}"
    )
    print(
        f"wall time: training {train_seconds:.1f} s, evaluation {eval_seconds:.1f} s, "
        f"total {train_seconds + eval_seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
