"""Returns for PPO: generalised advantage estimates and the running normalisation of values.

:func:`gae` turns one rollout's rewards, episode ends and value estimates into advantages and
value targets; :class:`ValueNorm` (MAPPO's) keeps running, debiased statistics of those targets,
so that a critic can predict them in normalised units. Both are plain torch, independent of
the scheduler.

Example:
    >>> rewards = [torch.tensor([1.0]), torch.tensor([0.0])]
    >>> dones = [torch.tensor([0.0]), torch.tensor([1.0])]  # the episode ends at the 2nd step
    >>> values = [torch.tensor([0.5]), torch.tensor([0.5])]
    >>> advantages, returns = gae(rewards, dones, values, torch.tensor([9.0]), 0.5, 1.0)
    >>> advantages.tolist(), returns.tolist()  # the 9.0 after the end is never bootstrapped
    ([0.5, -0.5], [1.0, 0.0])
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def gae(
    rewards: Sequence[torch.Tensor],
    dones: Sequence[torch.Tensor],
    values: Sequence[torch.Tensor],
    last_value: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimates and returns of a rollout, steps concatenated.

    Args:
        rewards: Each step's rewards, one entry per environment (the same shape every step).
        dones: Each step's episode ends (1.0 where an episode ended with the step): an end cuts
            the bootstrap.
        values: Each step's value estimates, in return units.
        last_value: The value estimate of the state after the last step.
        gamma: The discount.
        lam: GAE's lambda (0: one-step TD errors, 1: Monte Carlo returns minus the values).

    Returns:
        The advantages and the returns (advantages plus values), each the steps concatenated
        in order (as ``torch.cat(values)``).
    """
    advantages = []
    running = torch.zeros_like(last_value)
    next_value = last_value
    for reward, done, value in zip(
        reversed(rewards), reversed(dones), reversed(values), strict=True
    ):
        alive = 1.0 - done
        delta = reward + gamma * next_value * alive - value
        running = delta + gamma * lam * alive * running
        advantages.append(running)
        next_value = value
    advantages.reverse()
    flat = torch.cat(advantages)
    return flat, flat + torch.cat(list(values))


class ValueNorm:
    """Running mean and variance of value targets (MAPPO's ValueNorm: debiased moving averages).

    The critic predicts ``normalise(returns)``; its outputs map back with :meth:`denormalise`.

    Args:
        beta: Weight of the past in the moving averages (per :meth:`update`).
        epsilon: Floor of the variance.

    Raises:
        ValueError: If ``beta`` is outside [0, 1) or ``epsilon`` is not positive.

    Example:
        >>> norm = ValueNorm()
        >>> norm.update(torch.tensor([1.0, 3.0]))
        >>> float(norm.mean), round(float(norm.normalise(torch.tensor(3.0))), 3)
        (2.0, 1.0)
    """

    def __init__(self, beta: float = 0.99, epsilon: float = 1e-5) -> None:
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"ValueNorm: beta must lie in [0, 1), got {beta!r}.")
        if not epsilon > 0:
            raise ValueError(f"ValueNorm: epsilon must be > 0, got {epsilon!r}.")
        self.beta, self.epsilon = beta, epsilon
        self._mean = torch.zeros((), dtype=torch.float64)
        self._square = torch.zeros((), dtype=torch.float64)
        self._debias = torch.zeros((), dtype=torch.float64)

    @property
    def mean(self) -> torch.Tensor:
        """The running mean (0 before any update)."""
        return self._mean / self._debias.clamp(min=self.epsilon)

    @property
    def std(self) -> torch.Tensor:
        """The running standard deviation (1 before any update)."""
        if float(self._debias) == 0.0:
            return torch.ones((), dtype=torch.float64)
        variance = self._square / self._debias - self.mean**2
        return variance.clamp(min=self.epsilon).sqrt()

    def update(self, values: torch.Tensor) -> None:
        """Fold a batch of targets into the statistics."""
        values = values.detach().to(torch.float64)
        weight = 1.0 - self.beta
        self._mean = self.beta * self._mean + weight * values.mean()
        self._square = self.beta * self._square + weight * (values**2).mean()
        self._debias = self.beta * self._debias + weight

    def normalise(self, values: torch.Tensor) -> torch.Tensor:
        """Targets in the critic's units."""
        return ((values - self.mean) / self.std).to(values.dtype)

    def denormalise(self, values: torch.Tensor) -> torch.Tensor:
        """Critic outputs in return units."""
        return (values * self.std + self.mean).to(values.dtype)
