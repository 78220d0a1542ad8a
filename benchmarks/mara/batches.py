"""Step batches as training data: merge epochs, take minibatches, score actions.

A rollout is a list of :class:`~mara_env.benchmarks.mara.rollouts.StepBatch`, one per epoch of every
cluster. :func:`merge_steps` concatenates them along the batch axis (the order GAE's flattened
advantages follow), :func:`select_steps` takes a minibatch of rows, and :func:`score_actions`
recomputes every node's log-probability and entropy of given actions under a network, as
imitation's likelihood and PPO's ratio need them.

Example:
    >>> import torch
    >>> from mara_env.agents.mara.policy import MaraPolicy, PolicyConfig
    >>> from mara_env.benchmarks.mara.rollouts import ClusterVector
    >>> from mara_env import get_config
    >>> policy = MaraPolicy(PolicyConfig(width=16, layers=1, heads=2))
    >>> vector = ClusterVector([get_config("tiny")] * 2, policy, seed=0, temperature=0.35)
    >>> batch = merge_steps([vector.step() for _ in range(3)])
    >>> len(batch.reward), len(select_steps(batch, torch.tensor([0, 5])).reward)
    (6, 2)
    >>> with torch.no_grad():
    ...     log_prob, _ = score_actions(
    ...         policy, batch, batch.actions, max_nodes_per_task=None, temperature=0.35
    ...     )
    >>> torch.allclose(log_prob, batch.log_prob, atol=1e-5)  # the rollout's own probabilities
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from mara_env.agents.mara.policy import MaraPolicy
from mara_env.benchmarks.mara.rollouts import StepBatch


def merge_steps(steps: Sequence[StepBatch]) -> StepBatch:
    """Concatenate step batches along the batch axis (a field absent from the first is absent)."""
    fields: dict[str, Any] = {}
    for name in StepBatch.__dataclass_fields__:
        parts = [getattr(step, name) for step in steps]
        fields[name] = None if parts[0] is None else torch.cat(parts)
    return StepBatch(**fields)


def split_steps(batch: StepBatch, sizes: Sequence[int]) -> list[StepBatch]:
    """The inverse of :func:`merge_steps`: ``batch`` cut into consecutive parts of ``sizes``
    rows (views, no copies)."""
    parts: dict[str, Any] = {
        name: (None if getattr(batch, name) is None else getattr(batch, name).split(list(sizes)))
        for name in StepBatch.__dataclass_fields__
    }
    rows: list[dict[str, Any]] = [
        {name: None if part is None else part[i] for name, part in parts.items()}
        for i in range(len(sizes))
    ]
    return [StepBatch(**row) for row in rows]


def select_steps(batch: StepBatch, index: torch.Tensor) -> StepBatch:
    """The rows ``index`` of every field of ``batch``."""
    fields: dict[str, Any] = {
        name: (None if getattr(batch, name) is None else getattr(batch, name)[index])
        for name in StepBatch.__dataclass_fields__
    }
    return StepBatch(**fields)


def on_device(batch: StepBatch, device: torch.device) -> StepBatch:
    """``batch`` with every field on ``device`` (``batch`` itself when it is there)."""
    if batch.slots.device == device:
        return batch
    fields: dict[str, Any] = {
        name: (None if getattr(batch, name) is None else getattr(batch, name).to(device))
        for name in StepBatch.__dataclass_fields__
    }
    return StepBatch(**fields)


def score_actions(
    network: MaraPolicy,
    batch: StepBatch,
    actions: torch.Tensor,
    *,
    max_nodes_per_task: int | None,
    temperature: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-node log-probabilities and entropies of ``actions`` under ``network``.

    Args:
        network: The policy that scores.
        batch: The inputs (slots, globals, masks and earlier choices) the actions were taken on.
        actions: ``(batch, nodes)`` actions to score (the rollout's, or a teacher's labels).
        max_nodes_per_task: The configs' cap on nodes per task, as the rollouts applied it.
        temperature: The sampling temperature to score at (the deployed one for PPO).

    Returns:
        The ``(batch, nodes)`` log-probabilities and entropies.
    """
    encoded = network.encode(batch.slots, batch.globals)
    decoded = network.decode(
        encoded,
        batch.mask,
        batch.previous,
        actions=actions,
        max_nodes_per_task=max_nodes_per_task,
        temperature=temperature,
    )
    return decoded.log_prob, decoded.entropy
