"""Training learned predictors: examples from curves, and the optimisation loop.

An **example** is what the predictor would see at some moment of a task's life, with the truth
that followed. Examples are drawn so that no prediction can hinge on a curve's length or
sampling rate, which a scheduler does not know (:mod:`mara_env.predictors.curve_windows` measures work in
node-epochs):

* work is in node-epochs (:mod:`mara_env.predictors.curve_windows`), so a curve's sampling rate cannot
  matter; one node's speed is ``length / E`` curve steps per epoch, ``E`` the node-epochs of
  the whole curve, drawn as the simulator's tasks have it (``U(EPOCHS_PER_CURVE)``) except for a
  share :data:`WIDE_SHARE` of examples, drawn from the wider ``U_log(WIDE_EPOCHS_PER_CURVE)``
  (jobs shorter or longer than any of the simulator's);
* each epoch advances ``speed`` times a speed-up of up to :data:`MAX_SPEEDUP` (several nodes),
  jittered by a log-normal factor (switch costs, changing node counts), and the history is cut
  at a uniform point of up to :data:`CUT_BEYOND_END` curve lengths (a task can keep training
  after its curve has ended);
* with probability :data:`UNKNOWN_FAMILY_SHARE` the family reads as unknown, so the model also
  predicts for families it has never seen, and the curve is varied beyond the families it knows
  (:func:`vary_curve`: its noise rescaled, its trend warped in time). Families differ most in
  how noisy their curves are, and a noisy curve reaches a target early on a dip of its noise;
  without the variation, a model would lend an unseen family the noise of the families it was
  trained on, predicting too little work for a family with smoother curves and too much for one
  with noisier curves. With probability :data:`UNKNOWN_BUDGET_SHARE` the step budget (the
  curve's length) is hidden, so it also predicts without one;
* for a model that reads the target, each example is a task as the simulator sets it: a target
  drawn from the curve by :func:`mara_env.sim.rules.draw_task_terms` (the ``training`` preset's
  ``target_fraction`` and ``infeasible_share``), and the history ends before the first report
  at or below it (a task that has reached its target is done: nothing is predicted for it); a
  cut past that report moves to a report before it, drawn uniformly.

The context encodes the reports up to the cut; the window is the curve's true future.

Only curves passed in are used: :func:`train_curves` takes the **train split** of a trace source,
so the test split stays unseen for the prediction benchmark.

Example:
    >>> import numpy as np
    >>> curve = np.log(np.linspace(1.0, 0.1, 100))
    >>> contexts, windows = make_examples([(curve, "vision")], 8, np.random.default_rng(0), 1.0)
    >>> contexts.shape, windows.shape
    ((8, 58), (8, 36))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from mara_env import ClusterConfig, get_config
from mara_env.curves.traces import TraceSource
from mara_env.predictors.base import UNKNOWN_FAMILY
from mara_env.predictors.curve_windows import (
    WINDOW_SIZE,
    context_size,
    encode_context,
    future_window,
)
from mara_env.predictors.flow_matching import FlowMatchingConfig, VelocityField, flow_matching_loss
from mara_env.sim import rules

#: A curve as ln(loss) at steps 0, 1, ... and its family name.
LogCurve = tuple[np.ndarray, str]

EPOCHS_PER_CURVE = (10.0, 40.0)
WIDE_EPOCHS_PER_CURVE = (5.0, 100.0)
WIDE_SHARE = 0.25
MAX_SPEEDUP = 4.0
ADVANCE_JITTER = 0.25
CUT_BEYOND_END = 1.25
UNKNOWN_FAMILY_SHARE = 0.5
UNKNOWN_BUDGET_SHARE = 0.2
#: Width of the window of :func:`curve_trend`: the ratio of its last step to its centre.
TREND_RATIO = 1.5
#: Range of the factor of a varied curve's noise (drawn log-uniformly): from almost smooth to
#: four times as noisy, as the shipped families span more than a hundredfold in noise.
NOISE_SCALES = (0.01, 4.0)
#: Largest exponent of a varied curve's time warp, or its inverse (drawn log-uniformly).
MAX_WARP = 2.0


def train_curves(
    source: TraceSource, families: Sequence[str], split: str = "train"
) -> list[LogCurve]:
    """Every curve of ``families`` in ``split`` of ``source``, as log-losses."""
    curves: list[LogCurve] = []
    for family in families:
        pool = source.pool(family, split)
        for row, length in zip(pool.losses, pool.lengths.tolist(), strict=True):
            curves.append((np.log(row[:length]), family))
    return curves


def curve_trend(log_curve: np.ndarray, ratio: float = TREND_RATIO) -> np.ndarray:
    """A curve's trend: at each step ``s``, the mean of the curve over the steps from
    ``s / ratio`` to ``s * ratio`` (a window narrowed near the end, to stay centred on ``s`` in
    log-steps). The window grows with ``s``, as learning curves slow down: a few points where
    the loss falls fast, many in the tail, so the noise averages out there. The first and the
    last point are their own trend.

    Example:
        >>> curve_trend(np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0]), 1.5).round(4).tolist()
        [1.0, 0.6667, 0.3333, 0.5, 0.3333, 0.0]
    """
    steps = np.arange(len(log_curve))
    end = len(log_curve) - 1
    ratios = np.minimum(ratio, end / np.maximum(steps, 1))
    first = np.floor(steps / ratios).astype(np.intp)
    last = np.minimum(np.ceil(steps * ratios).astype(np.intp), end)
    sums = np.concatenate([[0.0], np.cumsum(log_curve)])
    return (sums[last + 1] - sums[first]) / (last + 1 - first)


def vary_curve(log_curve: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A curve of a family unlike the shipped ones, made from ``log_curve``: its noise (the
    curve minus :func:`curve_trend`) scaled by a factor drawn log-uniformly from
    :data:`NOISE_SCALES`, and its trend warped in time, the point at share ``u`` of the curve
    moving to share ``u ** (1 / gamma)``, with ``ln gamma ~ U(-ln MAX_WARP, ln MAX_WARP)``
    (above 1 the trend falls later). The length and the first and last losses stay as they
    were.

    Example:
        >>> curve = np.log(np.linspace(1.0, 0.1, 100))
        >>> varied = vary_curve(curve, np.random.default_rng(0))
        >>> varied.shape, np.allclose(varied[[0, -1]], curve[[0, -1]])
        ((100,), True)
    """
    trend = curve_trend(log_curve)
    noise = log_curve - trend
    scale = math.exp(rng.uniform(*np.log(NOISE_SCALES)))
    gamma = math.exp(rng.uniform(-math.log(MAX_WARP), math.log(MAX_WARP)))
    grid = np.arange(len(log_curve), dtype=np.float64)
    positions = (len(log_curve) - 1) * (grid / (len(log_curve) - 1)) ** gamma
    return np.interp(positions, grid, trend) + scale * noise


def sample_history(length: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Curve steps of the reports of one simulated task, from 0 up to a random cut, and the
    curve steps one node does per epoch."""
    if rng.random() >= WIDE_SHARE:
        epochs_per_curve = rng.uniform(*EPOCHS_PER_CURVE)
    else:
        epochs_per_curve = math.exp(rng.uniform(*np.log(WIDE_EPOCHS_PER_CURVE)))
    speed = length / epochs_per_curve
    advance = speed * math.exp(rng.uniform(0, math.log(MAX_SPEEDUP)))
    cut = rng.uniform(1.0, CUT_BEYOND_END * length - 1.0)
    advances = advance * np.exp(ADVANCE_JITTER * rng.standard_normal(int(cut / advance * 2) + 8))
    steps = rules.progress_after_epochs(advances)
    kept = steps[steps <= cut]
    if len(kept) == 1:  # the first report may overshoot a cut near the start
        kept = steps[:2]
    return kept, speed


def draw_log_target(
    log_curve: np.ndarray, rng: np.random.Generator, config: ClusterConfig
) -> float:
    """ln of a target for a task on ``log_curve``, drawn as the simulator draws it."""
    curve = np.exp(log_curve)[None, :]
    terms = rules.draw_task_terms(curve, np.array([len(log_curve)]), 1.0, config, rng)
    return float(np.log(terms.target[0]))


def make_examples(
    curves: Sequence[LogCurve],
    n_examples: int,
    rng: np.random.Generator,
    log_scale: float,
    reads_target: bool = False,
    unknown_family_share: float = UNKNOWN_FAMILY_SHARE,
) -> tuple[np.ndarray, np.ndarray]:
    """``n_examples`` (context, window) pairs; each example picks a family, then a curve (and,
    if ``reads_target``, a target: see the module docstring). ``unknown_family_share`` of them
    hide the family and vary the curve (0 keeps every curve as it is)."""
    families = sorted({family for _, family in curves})
    by_family = {f: [c for c, family in curves if family == f] for f in families}
    contexts = np.empty((n_examples, context_size(reads_target)), dtype=np.float32)
    windows = np.empty((n_examples, WINDOW_SIZE), dtype=np.float32)
    task_config = get_config("training")
    for index in range(n_examples):
        family = families[rng.integers(len(families))]
        options = by_family[family]
        curve = options[rng.integers(len(options))]
        unknown = rng.random() < unknown_family_share
        if unknown:
            curve = vary_curve(curve, rng)
        log_target = draw_log_target(curve, rng, task_config) if reads_target else None
        steps, speed = sample_history(len(curve), rng)
        observed = rules.loss_at(curve[None, :], np.zeros(len(steps), dtype=np.intp), steps)
        if log_target is not None:
            # the task ends at its first report at or below the target (never at arrival: a
            # drawn target is below the curve's first loss); a cut past it moves to one of the
            # reports before it, uniformly, so that every moment of a task's life is as likely
            done = np.flatnonzero(observed <= log_target)
            if len(done):
                kept = 1 + int(rng.integers(done[0]))
                steps, observed = steps[:kept], observed[:kept]
        shown = UNKNOWN_FAMILY if unknown else family
        budget = np.inf if rng.random() < UNKNOWN_BUDGET_SHARE else len(curve) / speed
        contexts[index] = encode_context(
            steps / speed, observed, shown, log_scale, budget_epochs=budget, log_target=log_target
        )
        windows[index] = future_window(curve, float(steps[-1]), speed) / log_scale
    return contexts, windows


@dataclass(frozen=True)
class TrainingSettings:
    """Optimisation settings.

    Attributes:
        updates: Gradient steps.
        batch_size: Examples per step.
        learning_rate: Peak AdamW learning rate (cosine decay to 5% of it).
        weight_decay: AdamW weight decay.
        seed: Seed of example sampling, initialisation and noise.
    """

    updates: int = 30_000
    batch_size: int = 512
    learning_rate: float = 2e-3
    weight_decay: float = 1e-4
    seed: int = 0


#: A training objective: (model, contexts, windows, generator) -> scalar loss.
Objective = Callable[[Any, torch.Tensor, torch.Tensor, torch.Generator], torch.Tensor]


def train_velocity_field(
    config: FlowMatchingConfig,
    settings: TrainingSettings,
    train: tuple[np.ndarray, np.ndarray],
    validation: tuple[np.ndarray, np.ndarray],
    on_update: Callable[[int, float, float | None], None] | None = None,
    validate_every: int = 1000,
) -> tuple[VelocityField, list[tuple[int, float, float]]]:
    """Train a flow-matching velocity field with :func:`fit`."""
    torch.manual_seed(settings.seed)
    model = VelocityField(config)
    log = fit(model, flow_matching_loss, settings, train, validation, on_update, validate_every)
    return model, log


def fit(
    model: torch.nn.Module,
    objective: Objective,
    settings: TrainingSettings,
    train: tuple[np.ndarray, np.ndarray],
    validation: tuple[np.ndarray, np.ndarray],
    on_update: Callable[[int, float, float | None], None] | None = None,
    validate_every: int = 1000,
    keep_best: bool = True,
) -> list[tuple[int, float, float]]:
    """Minimise ``objective`` with AdamW; keep the weights with the lowest validation loss.

    The model is left in eval mode with the best weights (with ``keep_best=False``, the final
    ones; the validation loss is logged either way).

    Args:
        model: The model to train in place.
        objective: Its loss on a batch.
        settings: The optimisation settings.
        train, validation: ``(contexts, windows)`` arrays from :func:`make_examples`.
        on_update: Called after every update with (update, training loss, validation loss or
            None).
        validate_every: Updates between validation passes.
        keep_best: Whether to keep the weights of the lowest validation loss seen (else the
            weights after the last update).

    Returns:
        ``(update, training loss, validation loss)`` rows.
    """
    generator = torch.Generator().manual_seed(settings.seed)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda step: 0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * min(step / settings.updates, 1))),
    )
    contexts, windows = (torch.as_tensor(a) for a in train)
    valid_contexts, valid_windows = (torch.as_tensor(a) for a in validation)
    valid_generator = torch.Generator()
    best_loss, best_state = math.inf, None
    log: list[tuple[int, float, float]] = []
    running = 0.0
    for update in range(1, settings.updates + 1):
        index = torch.randint(len(contexts), (settings.batch_size,), generator=generator)
        loss = objective(model, contexts[index], windows[index], generator)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()
        running = loss.item() if update == 1 else 0.98 * running + 0.02 * loss.item()
        valid_loss = None
        if update % validate_every == 0 or update == settings.updates:
            with torch.no_grad():
                valid_generator.manual_seed(settings.seed + 1)
                valid_loss = float(objective(model, valid_contexts, valid_windows, valid_generator))
            log.append((update, running, valid_loss))
            if keep_best and valid_loss < best_loss:
                best_loss = valid_loss
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
        if on_update is not None:
            on_update(update, running, valid_loss)
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return log
