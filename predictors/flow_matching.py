"""MARA's predictor: conditional flow matching over future log-loss windows.

A velocity field ``v(x_t, t | context)`` is trained on pairs of Gaussian noise ``x_0`` and true
future windows ``x_1`` (independent pairing) by regressing ``x_1 - x_0`` at
``x_t = (1 - t) x_0 + t x_1``, ``t ~ U(0, 1)``. Sampling integrates ``dx/dt = v`` from noise at
``t = 0`` to ``t = 1`` with a fixed-step midpoint or RK4 solver, for all tasks and samples of an
epoch in one batch. The context and the window are described in :mod:`mara_env.predictors.curve_windows`
(work in node-epochs, so nothing depends on a curve's length or sampling rate); the remaining
work of each sample is where it first reaches the target (``inf`` if it does not within
:data:`mara_env.predictors.curve_windows.MAX_EPOCHS` node-epochs; see
:class:`mara_env.predictors.window_predictor.WindowPredictor`).

**Calibration.** The remaining-work samples of each task are spread around their median
sample in log-work by the factor ``spread`` of the config (``ln r' = ln m + spread * (ln r -
ln m)``; :func:`mara_env.predictors.window_predictor.spread_samples`), so the point prediction stays
where it was sampled. The factor is fitted after training so that the 10-90% interval covers
80% of the outcomes (or more) in every cell of family and observed fraction of validation
cases from the train split (:mod:`mara_env.predictors.calibration`). Families the model was not trained
on (``known_families``) read as unknown.

**The target.** A model whose config has ``reads_target`` (the shipped one) also reads how far
the target lies below the last loss (:mod:`mara_env.predictors.curve_windows` says why and what it assumes
of how targets are set); ``flow_matching_without_target`` is the previous, target-blind
checkpoint, kept because MARA's shipped policy was trained on its features.

**Cost.** Sampling runs without torch on copies of the weights: the matrix products in NumPy,
the biases, residuals and activations between them in compiled code (:mod:`mara_env.predictors.silu`),
with noise from the caller's NumPy generator (:class:`SamplingField`); torch is used to train
and to load checkpoints. The shipped
checkpoint is a one-step sampler distilled from the trained velocity field
(:mod:`mara_env.predictors.distillation`; ``solver="euler"``, ``solver_steps=1``): one network pass per
sample. The teacher it was distilled from ships beside it (``flow_matching_teacher.pt``) and
samples with its midpoint solver.

The network: the context goes through a two-layer MLP once per task; the noisy window and
sinusoidal features of ``t`` go through a linear layer, are added to the context embedding, and
pass through residual SiLU blocks to the velocity. The shipped checkpoint (trained on the
**train split** by ``python -m mara_env.benchmarks.prediction.train``) loads with
:meth:`FlowMatching.load`.

Example:
    >>> import numpy as np
    >>> from mara_env.predictors.base import TaskHistory
    >>> model = FlowMatching.load()
    >>> steps = np.arange(0.0, 40.0, 4.0)
    >>> history = TaskHistory(steps, (steps + 1.0) ** -0.3, target=0.25, family="vision")
    >>> remaining = model.predict([history], 32, np.random.default_rng(0))
    >>> remaining.samples.shape
    (1, 32)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.base import TaskHistory
from mara_env.predictors.checkpoint import CheckpointError, check_config, load_checkpoint
from mara_env.predictors.curve_windows import (
    FUTURE_EPOCHS,
    LOOKBACK_EPOCHS,
    WINDOW_SIZE,
    context_size,
    encode_contexts,
)
from mara_env.predictors.silu import add_and_silu
from mara_env.predictors.window_predictor import SPREAD_CENTRES, WindowPredictor

SOLVERS = ("euler", "midpoint", "rk4")
TIME_FEATURES = 8


#: The shipped target-blind checkpoint (MARA's shipped policy reads its features).
WITHOUT_TARGET = "flow_matching_without_target"


#: The shipped checkpoints by name, beside this module (file names written out, so that the
#: leaderboard's source closure sees them).
SHIPPED_CHECKPOINTS = {
    "flow_matching": "checkpoints/flow_matching.pt",
    WITHOUT_TARGET: "checkpoints/flow_matching_without_target.pt",
}


def shipped_checkpoint(name: str = "flow_matching") -> Path:
    """Path of the checkpoint ``name`` shipped in the package (``"flow_matching"``, which reads
    the target, or :data:`WITHOUT_TARGET`)."""
    return Path(__file__).parent / SHIPPED_CHECKPOINTS[name]


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch threads, then restore the previous number."""
    previous = torch.get_num_threads()
    if previous != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if previous != threads:
            torch.set_num_threads(previous)


def check_threads(threads: int) -> int:
    """``threads`` if it is an int >= 1; otherwise a ``ValueError`` saying so."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be an int >= 1, got {threads!r}.")
    return threads


def load_weights(model: nn.Module, state: Mapping[str, torch.Tensor], path: Path) -> None:
    """Load ``state`` into ``model``; weights of another shape raise ``CheckpointError``."""
    try:
        model.load_state_dict(state)
    except RuntimeError as error:
        raise CheckpointError(
            f"Checkpoint {path} holds weights of another architecture than its card describes "
            f"({str(error).splitlines()[0]}). Retrain it or restore the shipped files."
        ) from None


@dataclass(frozen=True)
class FlowMatchingConfig:
    """Architecture and sampling settings (stored in the checkpoint card).

    Attributes:
        hidden: Width of every hidden layer.
        blocks: Residual blocks of the velocity network.
        log_scale: Divisor of log-loss differences in contexts and windows.
        solver: ``"midpoint"``, ``"rk4"`` or ``"euler"`` (over-confident; for comparison only).
        solver_steps: Fixed ODE steps from noise to window.
        spread: Calibration factor of the remaining-work samples around their median, in
            log-work (1: as sampled).
        known_families: Families whose one-hot the model was trained with.
        reads_target: Whether the context holds the gap to the target
            (:func:`mara_env.predictors.curve_windows.context_size`); checkpoints saved before it existed
            load as ``False``.
        spread_centre: Around which median ``spread`` acts
            (:data:`mara_env.predictors.window_predictor.SPREAD_CENTRES`); checkpoints calibrated before
            it existed load as ``"finite_median"``.
    """

    hidden: int = 128
    blocks: int = 2
    log_scale: float = 1.0
    solver: str = "midpoint"
    solver_steps: int = 8
    spread: float = 1.0
    known_families: tuple[str, ...] = FAMILY_NAMES
    reads_target: bool = False
    spread_centre: str = "median"

    def __post_init__(self) -> None:
        if not isinstance(self.reads_target, bool):
            raise ValueError(
                f"FlowMatchingConfig.reads_target must be True or False, got {self.reads_target!r}."
            )
        for name in ("hidden", "blocks", "solver_steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"FlowMatchingConfig.{name} must be an int >= 1, got {value!r}.")
        for name in ("log_scale", "spread"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"FlowMatchingConfig.{name} must be > 0, got {value!r}.")
        object.__setattr__(self, "known_families", tuple(self.known_families))
        unknown = [f for f in self.known_families if f not in FAMILY_NAMES]
        if unknown:
            raise ValueError(
                f"FlowMatchingConfig.known_families: {unknown} are not families of this suite "
                f"({list(FAMILY_NAMES)})."
            )
        if self.solver not in SOLVERS:
            raise ValueError(
                f"FlowMatchingConfig.solver must be one of {SOLVERS}, got {self.solver!r}."
            )
        if self.spread_centre not in SPREAD_CENTRES:
            raise ValueError(
                f"FlowMatchingConfig.spread_centre must be one of {SPREAD_CENTRES}, got "
                f"{self.spread_centre!r}."
            )

    def layout(self) -> dict[str, Any]:
        """Facts of the feature layout a checkpoint must agree with."""
        return {
            "context_size": context_size(self.reads_target),
            "window_size": WINDOW_SIZE,
            "future_epochs": FUTURE_EPOCHS.tolist(),
            "lookback_epochs": LOOKBACK_EPOCHS.tolist(),
            "families": list(FAMILY_NAMES),
        }


class VelocityField(nn.Module):
    """``v(x_t, t | context)``: the context embedding is computed once per task."""

    def __init__(self, config: FlowMatchingConfig) -> None:
        super().__init__()
        hidden = config.hidden
        self.context_net = nn.Sequential(
            nn.Linear(context_size(config.reads_target), hidden),
            nn.SiLU(),
            nn.Linear(hidden, hidden),
        )
        self.input = nn.Linear(WINDOW_SIZE + TIME_FEATURES, hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden)) for _ in range(config.blocks)
        )
        self.output = nn.Sequential(nn.SiLU(), nn.Linear(hidden, WINDOW_SIZE))
        self.frequencies: torch.Tensor
        self.register_buffer(
            "frequencies", torch.pi * 2.0 ** torch.arange(TIME_FEATURES // 2, dtype=torch.float32)
        )

    def embed_context(self, context: torch.Tensor) -> torch.Tensor:
        """``(n, hidden)`` embedding of ``(n, context size)`` contexts."""
        embedding: torch.Tensor = self.context_net(context)
        return embedding

    def forward(
        self, window: torch.Tensor, time: torch.Tensor, embedding: torch.Tensor
    ) -> torch.Tensor:
        """Velocity at noisy windows ``(n, WINDOW_SIZE)``, times ``(n, 1)``, embeddings."""
        angles = time * self.frequencies
        hidden = self.input(torch.cat([window, torch.sin(angles), torch.cos(angles)], dim=1))
        hidden = hidden + embedding
        for block in self.blocks:
            hidden = hidden + block(hidden)
        velocity: torch.Tensor = self.output(hidden)
        return velocity

    def velocity_at(
        self, window: torch.Tensor, time: float, embedding: torch.Tensor
    ) -> torch.Tensor:
        """:meth:`forward` with one time for every row (sampling): the time features then add a
        single bias vector, which saves the concatenation and a third of the input layer."""
        angles = time * self.frequencies
        weight, bias = self.input.weight, self.input.bias
        time_bias = bias + weight[:, WINDOW_SIZE:] @ torch.cat(
            [torch.sin(angles), torch.cos(angles)]
        )
        hidden = torch.addmm(embedding + time_bias, window, weight[:, :WINDOW_SIZE].t())
        for block in self.blocks:
            hidden = hidden + block(hidden)
        velocity: torch.Tensor = self.output(hidden)
        return velocity


def flow_matching_loss(
    model: VelocityField, context: torch.Tensor, window: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    """The conditional flow-matching regression loss of a batch (independent pairing)."""
    noise = torch.randn(window.shape, generator=generator)
    time = torch.rand((len(window), 1), generator=generator)
    noisy = (1.0 - time) * noise + time * window
    velocity = model(noisy, time, model.embed_context(context))
    return torch.mean((velocity - (window - noise)) ** 2)


class SamplingField:
    """A trained :class:`VelocityField`'s weights as NumPy arrays, for sampling.

    An epoch's batch is a few tasks times a few samples: at that size a torch call's overhead
    weighs more than its arithmetic, so sampling runs in NumPy (float32, matrix products by
    its BLAS) on copies of the weights (biases as ``(1, width)`` rows). The products are split
    into blocks of rows small enough that OpenBLAS (NumPy's BLAS) runs each on the calling
    thread (:func:`single_thread_product`). Between two products, the bias, the residual
    branch (or each task's context embedding, which is never repeated per sample) and the next
    SiLU take one compiled call (:func:`mara_env.predictors.silu.add_and_silu`), and the input layer's
    time features are computed once per solver time. ``mara_env.benchmarks.perf.wrapper_throughput``
    measures what sampling adds to an epoch. The numbers are the module's own, up to float
    rounding (``tests/test_flow_matching.py``).

    Args:
        model: The trained velocity field.
    """

    def __init__(self, model: VelocityField) -> None:
        def weights(layer: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return (
                layer.weight.detach().numpy().T.copy(),
                layer.bias.detach().numpy().reshape(1, -1).copy(),
            )

        first, second = model.context_net[0], model.context_net[2]
        self.context_layers = [weights(first), weights(second)]  # type: ignore[arg-type]
        input_weight, self.input_bias = weights(model.input)
        self.window_weight = input_weight[:WINDOW_SIZE].copy()
        self.time_weight = input_weight[WINDOW_SIZE:].copy()
        self.blocks = [weights(block[1]) for block in model.blocks]  # type: ignore[index]
        self.output = weights(model.output[1])  # type: ignore[arg-type]
        self.frequencies = model.frequencies.detach().numpy().copy()
        self._time_biases: dict[float, np.ndarray] = {}

    def embed_context(self, context: np.ndarray) -> np.ndarray:
        """``(n, hidden)`` embedding of ``(n, context size)`` float32 contexts."""
        (w1, b1), (w2, b2) = self.context_layers
        embedding = add_and_silu(context @ w1, b1) @ w2
        embedding += b2
        return embedding

    def time_bias(self, time: float) -> np.ndarray:
        """The input layer's bias plus its time features' part at ``time`` (``(hidden,)``),
        computed once per time: a fixed-step solver asks for the same few times every call."""
        bias = self._time_biases.get(time)
        if bias is None:
            angles = np.float32(time) * self.frequencies
            features = np.concatenate([np.sin(angles), np.cos(angles)])
            bias = self._time_biases[time] = self.input_bias + features @ self.time_weight
        return bias

    def velocity_at(self, window: np.ndarray, time: float, embedding: np.ndarray) -> np.ndarray:
        """Velocity at ``(n_tasks, n_samples, WINDOW_SIZE)`` windows, one ``time`` for every
        row; ``embedding`` is ``(n_tasks, hidden)``."""
        n_tasks, n_samples, _ = window.shape
        hidden = single_thread_product(window.reshape(-1, WINDOW_SIZE), self.window_weight)
        # each task's rows get its embedding and the time's bias
        activated = add_and_silu(hidden, embedding + self.time_bias(time), rows_per_bias=n_samples)
        for weight, bias in self.blocks:  # a residual block, then the next one's activation
            activated = add_and_silu(hidden, bias, addend=single_thread_product(activated, weight))
        weight, bias = self.output
        velocity = single_thread_product(activated, weight)
        velocity += bias
        return velocity.reshape(n_tasks, n_samples, -1)


#: Multiply-adds up to which OpenBLAS computes a matrix product on the calling thread (its
#: ``GEMM_MULTITHREAD_THRESHOLD``, 4, times 65,536).
SINGLE_THREAD_PRODUCT = 4 * 65_536


@functools.cache
def rows_per_product(n_rows: int, fan_in: int, fan_out: int) -> int:
    """The most rows, dividing ``n_rows``, whose product with a ``(fan_in, fan_out)`` matrix
    stays within :data:`SINGLE_THREAD_PRODUCT` multiply-adds (at least 1).

    Example:
        >>> rows_per_product(16, 128, 128), rows_per_product(80, 128, 128), rows_per_product(80, 36, 128)
        (16, 16, 40)
    """
    rows = n_rows
    while rows > 1 and (n_rows % rows or rows * fan_in * fan_out > SINGLE_THREAD_PRODUCT):
        rows -= 1
    return rows


def single_thread_product(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``rows @ weight`` for 2-D ``rows``, in blocks of :func:`rows_per_product` rows: above
    :data:`SINGLE_THREAD_PRODUCT` multiply-adds OpenBLAS wakes its other threads, which costs
    more than it saves at this size and stalls when the machine is busy."""
    n_rows, fan_in = rows.shape
    block = rows_per_product(n_rows, fan_in, weight.shape[1])
    product: np.ndarray = (rows.reshape(-1, block, fan_in) @ weight).reshape(n_rows, -1)
    return product


def integrate(velocity: Callable[[Any, float], Any], state: Any, solver: str, steps: int) -> Any:
    """Integrate ``dx/dt = velocity(x, t)`` from ``t = 0`` to 1 with ``steps`` fixed steps of
    ``solver`` (``"euler"``, ``"midpoint"`` or ``"rk4"``); works on NumPy arrays and tensors."""
    step = 1.0 / steps
    for index in range(steps):
        time = index * step
        if solver == "euler":
            state = state + step * velocity(state, time)
        elif solver == "midpoint":
            half = state + 0.5 * step * velocity(state, time)
            state = state + step * velocity(half, time + 0.5 * step)
        else:
            k1 = velocity(state, time)
            k2 = velocity(state + 0.5 * step * k1, time + 0.5 * step)
            k3 = velocity(state + 0.5 * step * k2, time + 0.5 * step)
            k4 = velocity(state + step * k3, time + step)
            state = state + step / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return state


def sample_windows(
    field: SamplingField,
    context: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
    solver: str = "midpoint",
    steps: int = 8,
) -> np.ndarray:
    """``(n_tasks, n_samples, WINDOW_SIZE)`` windows integrated from ``rng``'s Gaussian noise,
    all in one batch (NumPy; torch is not called)."""
    noise = rng.standard_normal((len(context), n_samples, WINDOW_SIZE), dtype=np.float32)
    embedding = field.embed_context(np.ascontiguousarray(context, dtype=np.float32))

    def velocity(x: np.ndarray, time: float) -> np.ndarray:
        return field.velocity_at(x, time, embedding)

    windows: np.ndarray = integrate(velocity, noise, solver, steps)
    return windows


class FlowMatching(WindowPredictor):
    """The conditional flow-matching predictor (a :class:`mara_env.predictors.base.Predictor`).

    Args:
        model: A trained :class:`VelocityField`.
        config: Its :class:`FlowMatchingConfig`.
        solver: Override of the config's ODE solver.
        solver_steps: Override of the config's number of solver steps.
        spread: Override of the config's calibration factor (1: the samples as drawn).
    """

    name = "flow_matching"

    def __init__(
        self,
        model: VelocityField,
        config: FlowMatchingConfig,
        solver: str | None = None,
        solver_steps: int | None = None,
        spread: float | None = None,
    ) -> None:
        self.config = FlowMatchingConfig(
            **{
                **asdict(config),
                "solver": solver or config.solver,
                "solver_steps": solver_steps or config.solver_steps,
                "spread": config.spread if spread is None else spread,
            }
        )
        self.spread, self.spread_centre = self.config.spread, self.config.spread_centre
        self.model = model.eval()
        self.field = SamplingField(self.model)

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> FlowMatching:
        """The predictor stored at ``path`` (default: the shipped checkpoint).

        Raises:
            mara_env.predictors.checkpoint.CheckpointError: If the checkpoint is missing, corrupt or
                made for a different feature layout.
        """
        path = shipped_checkpoint() if path is None else Path(path)
        state, card = load_checkpoint(path)
        # what a card written before a setting existed leaves out, as it then was
        defaults = {**asdict(FlowMatchingConfig()), "spread_centre": "finite_median"}
        settings = {key: card["config"].get(key, value) for key, value in defaults.items()}
        config = FlowMatchingConfig(**settings)
        check_config(path, card["config"], config.layout())
        model = VelocityField(config)
        load_weights(model, state, path)
        return cls(model, config, **overrides)

    def sample_log_windows(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``(n_tasks, n_samples, WINDOW_SIZE)`` windows integrated from ``rng``'s noise."""
        config = self.config
        contexts = encode_contexts(
            histories, config.log_scale, config.known_families, config.reads_target
        )
        windows = sample_windows(
            self.field, contexts, n_samples, rng, self.config.solver, self.config.solver_steps
        )
        return np.multiply(windows, self.config.log_scale, dtype=np.float64)
