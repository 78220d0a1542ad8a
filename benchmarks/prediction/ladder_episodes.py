"""The episodes of the information ladder (:mod:`mara_env.benchmarks.prediction.ladder`): each task judged
once in each band of its deadline window, with every rung's features.

An episode is played by the random masked scheduler, as in the leak audit
(:mod:`mara_env.benchmarks.prediction.audit_episodes`). A task is judged at the first epoch at which it
stands in a visible slot with a share of its deadline window elapsed inside a band of
:data:`BANDS`: its observed columns, the truth (can it still reach its target by its deadline
with every node it may get, by the clairvoyant reference's exact stepping), and the features of
each rung:

- the shipped flow-matching predictor's (MARA's; its success probability with every node and its
  median need);
- ``posterior``: what the task's whole reported-loss history tells, by the posterior over the
  train split's curves (:mod:`~mara_env.benchmarks.prediction.curve_posterior`); its inputs are kept in
  the record so that its bandwidths can be chosen on training seeds without playing again;
- ``denoised``: the denoised oracle (privileged): the task's own curve smoothed, its trend known
  and its noise not (:func:`denoised_margin`);
- ``oracle``: the exact remaining work (privileged), also as its margin to the budget
  (:func:`budget_margin`).

Example:
    >>> from mara_env.benchmarks.prediction.audit_episodes import AuditSettings
    >>> settings = AuditSettings(train_seeds=(100,), eval_seeds=(1000,), predictors=(),
    ...                          arrival_horizon=10)
    >>> records = play_ladder_episode(settings, "evaluation", 1000, {}, "v3")
    >>> {record["band"] for record in records} <= {"10-20%", "30-50%", "60-80%"}
    True
    >>> {"feasible", "denoised_margin", "oracle_success", "history_loss"} <= set(records[0])
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from tqdm.auto import tqdm

from mara_env import node_turns
from mara_env.benchmarks.common.threads import one_torch_thread
from mara_env.benchmarks.prediction.audit_episodes import (
    AuditSettings,
    Record,
    build_predictors,
    judge,
    slot_records,
    start_episode,
)
from mara_env.predictors.base import Predictor
from mara_env.sim.observation import decode_observation
from mara_env.sim.rules import progress_gain
from mara_env.sim.simulator import ClusterSimulator

#: The bands of the deadline window elapsed, ``[low, high)``, in which a task is judged once.
BANDS: tuple[tuple[float, float], ...] = ((0.1, 0.2), (0.3, 0.5), (0.6, 0.8))
#: The smoothing window of the denoised oracle, as a share of the curve's recorded length.
SMOOTHING_SHARE = 0.1
#: Offset of the predictors' generator seeds from the episode seed.
_PREDICTOR_SEED_OFFSET = 7_919


def band_name(band: tuple[float, float]) -> str:
    """``(0.3, 0.5)`` -> ``"30-50%"``."""
    return f"{round(band[0] * 100)}-{round(band[1] * 100)}%"


def band_of(elapsed: float) -> str | None:
    """The name of the band holding ``elapsed`` (a share of the window), or ``None``."""
    for low, high in BANDS:
        if low <= elapsed < high:
            return band_name((low, high))
    return None


def smoothed_log_curve(log_curve: np.ndarray, length: int) -> np.ndarray:
    """The trend of a recorded log-loss curve: a centred moving average over
    :data:`SMOOTHING_SHARE` of its ``length`` recorded points (shorter at the ends), then its
    running minimum (a trend that knows the curve's floor and pace, not its noise). Padding
    beyond ``length`` repeats the last smoothed value."""
    recorded = log_curve[:length]
    half = max(1, round(SMOOTHING_SHARE * length / 2))
    sums = np.concatenate([[0.0], np.cumsum(recorded)])
    low = np.maximum(np.arange(length) - half, 0)
    high = np.minimum(np.arange(length) + half + 1, length)
    trend = np.minimum.accumulate((sums[high] - sums[low]) / (high - low))
    return np.concatenate([trend, np.full(len(log_curve) - length, trend[-1])])


def steps_to_target(trend: np.ndarray, position: float, log_target: float) -> float:
    """Curve steps from ``position`` to the first later step at which ``trend`` (a log-loss
    curve, padded with its last value) is at or below ``log_target``; ``inf`` if it never is."""
    start = min(math.floor(position) + 1, len(trend) - 1)
    below = np.flatnonzero(trend[start:] <= log_target)
    return float(start + below[0] - position) if below.size else math.inf


def denoised_margin(
    log_curve: np.ndarray, length: int, position: float, budget: float, log_target: float
) -> tuple[float, float]:
    """The denoised oracle's features of a task at ``position`` curve steps with ``budget`` more
    steps before its deadline: the margin ``(lowest trend in reach - log target) / noise`` (the
    noise: the standard deviation of the curve about its trend), clipped to [-20, 20], and the
    steps its trend needs to reach the target (``inf`` if it never does)."""
    trend = smoothed_log_curve(log_curve, length)
    noise = float(np.std(log_curve[:length] - trend[:length])) + 1e-6
    start = min(math.floor(position) + 1, len(trend) - 1)
    stop = min(math.floor(position + budget), len(trend) - 1)
    lowest = float(trend[start : max(stop, start) + 1].min())
    margin = float(np.clip((lowest - log_target) / noise, -20.0, 20.0))
    return margin, steps_to_target(trend, position, log_target)


def play_ladder_episode(
    settings: AuditSettings,
    preset: str,
    seed: int,
    predictors: Mapping[str, Predictor],
    world: str,
) -> list[Record]:
    """Play one episode with :data:`DRIVER`; return each task's judgement in each band
    (module docstring)."""
    config, env, driver, rng = start_episode(
        settings, preset, seed, predictors, world, offset=_PREDICTOR_SEED_OFFSET
    )
    judged_in: set[tuple[int, str]] = set()
    records: list[Record] = []
    for agent, node in node_turns(env):
        observation = env.observe(agent)
        if node == 0:
            view = decode_observation(np.asarray(observation["observation"]), config)
            fresh = []
            for record in slot_records(env.simulator, view):
                band = band_of(1.0 - record["time_left_fraction"])
                if band is not None and (record["task"], band) not in judged_in:
                    judged_in.add((record["task"], band))
                    fresh.append({**record, "band": band})
            fresh = judge(env.simulator, fresh, predictors, rng, settings.n_samples)
            records += [_with_ladder_inputs(env.simulator, record) for record in fresh]
        env.step(driver.act(observation, node))
    return records


def _with_ladder_inputs(simulator: ClusterSimulator, record: Record) -> Record:
    """``record`` with the posterior's inputs (observed) and the denoised oracle's features
    (privileged: read from the task's own curve)."""
    state, config = simulator.state, simulator.config
    task = record["task"]
    tasks = state.tasks
    steps = np.array(state.history_progress[task], dtype=np.float64)
    losses = np.array(state.history_loss[task], dtype=np.float64)
    per_epoch = float(
        progress_gain(
            np.array([tasks.speed[task]]), float(config.task_node_limit), tasks.alpha[[task]]
        )[0]
    )
    budget = per_epoch * record["time_left"]
    row = int(tasks.curve_row[task])
    workload = simulator.workload
    margin, need = denoised_margin(
        np.log(workload.curves[row]),
        int(workload.lengths[row]),
        float(steps[-1]),
        budget,
        float(np.log(tasks.target[task])),
    )
    return {
        **record,
        "family_code": int(workload.curve_family[row]),
        "history_steps": steps.tolist(),
        "history_loss": losses.tolist(),
        "target": float(tasks.target[task]),
        "budget_steps": budget,
        "curve_row": row,
        "denoised_margin": margin,
        "denoised_need": need / float(tasks.speed[task]),
        "oracle_margin": budget_margin(record["need"] * float(tasks.speed[task]), budget),
    }


def budget_margin(need_steps: float, budget_steps: float) -> float:
    """``log(need / budget)`` in curve steps, clipped to [-10, 10] (``inf`` need: 10): below 0,
    the need fits in the budget. The exact rung reads it beside the oracle's 0/1 success, so that
    its probe can place the threshold where the exact stepping (switch costs, whole epochs) puts
    it."""
    if not math.isfinite(need_steps):
        return 10.0
    return float(np.clip(np.log((need_steps + 1e-9) / (budget_steps + 1e-9)), -10.0, 10.0))


def collect_ladder(
    settings: AuditSettings, world: str, preset: str, seeds: Sequence[int], progress: bool
) -> list[Record]:
    """Every episode's judgements, seed by seed."""
    predictors = build_predictors(settings)
    records: list[Record] = []
    with one_torch_thread():
        for seed in tqdm(seeds, desc=f"{world} {preset}", unit="episode", disable=not progress):
            records += [
                {**record, "seed": seed}
                for record in play_ladder_episode(settings, preset, seed, predictors, world)
            ]
    return records
