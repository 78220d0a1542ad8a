"""How the MARA decoder turns a node's scores into an action: the legal actions, their
log-probabilities at a temperature, the entropy, and the draw from the CDF
(:func:`inverse_cdf`, batched in torch; :func:`fast_choice`, one node in plain Python).

:class:`mara_env.agents.mara.policy.MaraPolicy` samples and scores through these, so sampling
and scoring apply the mask and the temperature in one place.

Example:
    >>> import torch
    >>> logits = torch.tensor([[2.0, 0.0, 1.0]])
    >>> legal = torch.tensor([[True, False, True]])
    >>> log_p = log_probabilities(logits, legal, temperature=1.0)
    >>> inverse_cdf(log_p.exp(), torch.tensor([0.5])).tolist()
    [0]
    >>> fast_choice([2.0, 1.0], draw=None)
    0
"""

from __future__ import annotations

import math

import torch


def log_probabilities(
    logits: torch.Tensor, legal: torch.Tensor, temperature: float
) -> torch.Tensor:
    """Log-probabilities of ``softmax(logits / temperature)`` over the ``legal`` actions (the
    others get ``-inf``): the one place sampling and scoring apply the mask and temperature."""
    logits = logits.masked_fill(~legal, float("-inf"))
    if temperature != 1.0:
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1)


def action_entropy(
    probabilities: torch.Tensor, log_p: torch.Tensor, legal: torch.Tensor
) -> torch.Tensor:
    """Entropy over the last axis; illegal actions (probability 0, log ``-inf``) add nothing."""
    return -(probabilities * log_p.masked_fill(~legal, 0.0)).sum(dim=-1)


def legal_actions(
    mask: torch.Tensor, counts: torch.Tensor, max_nodes_per_task: int | None
) -> torch.Tensor:
    """``mask`` without the slots ``max_nodes_per_task`` earlier nodes chose (idle stays)."""
    if max_nodes_per_task is None:
        return mask
    full = counts >= max_nodes_per_task
    full[..., -1] = False
    return mask & ~full


def inverse_cdf(probabilities: torch.Tensor, draws: torch.Tensor) -> torch.Tensor:
    """``(batch,)`` actions drawn from ``probabilities`` ``(batch, n_actions)`` by inverting
    each row's CDF at its uniform number in ``draws`` ``(batch,)``."""
    cdf = probabilities.cumsum(dim=-1)
    below = (cdf <= draws[:, None]).sum(dim=-1)
    # The first action whose CDF exceeds the draw has positive probability; rounding past the
    # end falls on idle (the last action), which is always legal.
    return below.clamp(max=probabilities.shape[-1] - 1)


#: How close (in probability, or in logits when greedy) a draw may come to a step of a node's
#: CDF before :meth:`MaraPolicy.act` leaves the node to :meth:`MaraPolicy.decode`'s own code.
#: The two differ by float32 rounding, below 1e-5 in the logits, so this is a wide margin.
EXACT_MARGIN = 1e-3


def fast_choice(scaled: list[float], draw: float | None) -> int | None:
    """The action drawn at ``draw`` from ``softmax(scaled)`` (the most likely one if ``draw`` is
    ``None``), or ``None`` if rounding could decide it (within :data:`EXACT_MARGIN`).

    Plain Python: on one node's few actions it costs less than array calls.
    """
    best = max(scaled)
    if draw is None:
        action = scaled.index(best)
        runner_up = max(scaled[:action] + scaled[action + 1 :], default=-math.inf)
        return action if best - runner_up > EXACT_MARGIN else None
    weights = [math.exp(x - best) for x in scaled]
    total = math.fsum(weights)
    cumulative = 0.0
    for action, weight in enumerate(weights):
        cumulative += weight
        step = cumulative / total
        if abs(step - draw) <= EXACT_MARGIN:
            return None
        if step > draw:
            return action
    return len(scaled) - 1
