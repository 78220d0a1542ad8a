"""An extra baseline: a conditional neural spline flow over the same future windows.

A normalising flow models the density of the future window (:mod:`mara_env.predictors.curve_windows`)
given the same context as :mod:`mara_env.predictors.flow_matching`, through invertible monotone
rational-quadratic spline transforms (Durkan et al., 2019) built with ``zuko``. It is trained by
maximum likelihood on the same train-split examples, and samples a window in one pass per
transform (coupling layers, ``passes=2``), so it isolates the question "does flow matching beat
a likelihood-trained flow with the same inputs?". Its checkpoint is trained by
``python -m mara_env.benchmarks.prediction.train --model spline_flow``.

Example:
    >>> import numpy as np
    >>> from mara_env.predictors.base import TaskHistory
    >>> model = SplineFlow.load()
    >>> steps = np.arange(0.0, 40.0, 4.0)
    >>> history = TaskHistory(steps, (steps + 1.0) ** -0.3, target=0.25, family="vision")
    >>> model.predict([history], 32, np.random.default_rng(0)).samples.shape
    (1, 32)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import zuko

from mara_env.predictors.base import TaskHistory
from mara_env.predictors.checkpoint import load_checkpoint
from mara_env.predictors.curve_windows import CONTEXT_SIZE, WINDOW_SIZE, encode_contexts
from mara_env.predictors.flow_matching import (
    FlowMatchingConfig,
    check_threads,
    load_weights,
    torch_threads,
)
from mara_env.predictors.window_predictor import WindowPredictor


def shipped_checkpoint() -> Path:
    """Path of the spline-flow checkpoint shipped in the package."""
    return Path(__file__).parent / "checkpoints" / "spline_flow.pt"


@dataclass(frozen=True)
class SplineFlowConfig:
    """Architecture of the spline flow (stored in the checkpoint card).

    Attributes:
        transforms: Spline coupling transforms.
        hidden: Width of the two hidden layers of each transform's conditioner.
        bins: Spline bins per feature.
        log_scale: Divisor of log-loss differences in contexts and windows.
    """

    transforms: int = 3
    hidden: int = 128
    bins: int = 8
    log_scale: float = 1.0

    def __post_init__(self) -> None:
        for name in ("transforms", "hidden", "bins"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"SplineFlowConfig.{name} must be an int >= 1, got {value!r}.")
        if not self.log_scale > 0:
            raise ValueError(f"SplineFlowConfig.log_scale must be > 0, got {self.log_scale!r}.")

    def layout(self) -> dict[str, Any]:
        """Facts of the feature layout a checkpoint must agree with."""
        return FlowMatchingConfig().layout()


def build_flow(config: SplineFlowConfig) -> zuko.flows.NSF:
    """An untrained conditional spline flow of ``config``."""
    return zuko.flows.NSF(
        features=WINDOW_SIZE,
        context=CONTEXT_SIZE,
        transforms=config.transforms,
        bins=config.bins,
        hidden_features=(config.hidden, config.hidden),
        passes=2,
    )


def negative_log_likelihood(
    flow: zuko.flows.NSF,
    context: torch.Tensor,
    window: torch.Tensor,
    generator: torch.Generator,  # unused: the objective is deterministic
) -> torch.Tensor:
    """Mean negative log-likelihood of a batch of windows."""
    loss: torch.Tensor = -flow(context).log_prob(window).mean()
    return loss


class SplineFlow(WindowPredictor):
    """The spline-flow predictor (a :class:`mara_env.predictors.base.Predictor`).

    Args:
        flow: A trained flow from :func:`build_flow`.
        config: Its :class:`SplineFlowConfig`.
        threads: Torch threads while sampling (restored afterwards).
    """

    name = "spline_flow"

    def __init__(self, flow: zuko.flows.NSF, config: SplineFlowConfig, threads: int = 1) -> None:
        self.threads = check_threads(threads)
        self.flow = flow.eval()
        self.config = config

    @classmethod
    def load(cls, path: str | Path | None = None) -> SplineFlow:
        """The predictor stored at ``path`` (default: the shipped checkpoint).

        Raises:
            mara_env.predictors.checkpoint.CheckpointError: If the checkpoint is missing, corrupt or
                made for a different feature layout.
        """
        path = shipped_checkpoint() if path is None else Path(path)
        state, card = load_checkpoint(path, expected_config=SplineFlowConfig().layout())
        config = SplineFlowConfig(
            **{key: card["config"][key] for key in asdict(SplineFlowConfig())}
        )
        flow = build_flow(config)
        load_weights(flow, state, path)
        return cls(flow, config)

    @torch.no_grad()
    def sample_log_windows(
        self, histories: Sequence[TaskHistory], n_samples: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``(n_tasks, n_samples, WINDOW_SIZE)`` windows sampled from the flow."""
        context = torch.as_tensor(encode_contexts(histories, self.config.log_scale))
        with torch.random.fork_rng(devices=[]), torch_threads(self.threads):
            torch.manual_seed(int(rng.integers(2**63 - 1)))
            samples = self.flow(context).sample((n_samples,))  # (n_samples, n_tasks, window)
        return samples.transpose(0, 1).numpy().astype(np.float64) * self.config.log_scale
