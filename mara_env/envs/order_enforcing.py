"""PettingZoo's order-enforcing wrapper, with this project's errors for calls before ``reset``.

:func:`mara_env.env` wraps :class:`mara_env.raw_env` in PettingZoo's ``OrderEnforcingWrapper``,
which checks the order of calls but reports ``step()`` before ``reset()`` with a bare
``AssertionError`` and ``step()`` after the episode ended with a logged warning only.
:class:`OrderEnforcing` keeps every check of that wrapper and raises
:class:`mara_env.EnvStateError` (what was called, and what to call first) for the calls that need
an episode, and for ``step()`` once the episode has ended, as every other form does.

Example:
    >>> import mara_env
    >>> env = mara_env.env(config="tiny")
    >>> env.step(0)
    Traceback (most recent call last):
    ...
    mara_env.errors.EnvStateError: mara_env/Cluster-v3: step() called before reset(); call env.reset(seed=...) first.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils import wrappers

from mara_env.errors import EnvStateError


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """``OrderEnforcingWrapper`` raising :class:`EnvStateError` before the first ``reset`` and
    for ``step`` after the episode ended."""

    def __str__(self) -> str:
        return str(self.env)  # as PettingZoo prints its own wrapper: the environment's name

    def _require_reset(self, call: str) -> None:
        if not self._has_reset:
            name = self.metadata.get("name", type(self.unwrapped).__name__)
            raise EnvStateError(
                f"{name}: {call} called before reset(); call env.reset(seed=...) first."
            )

    def step(self, action: Any) -> None:
        self._require_reset("step()")
        if not self.agents:  # PettingZoo's wrapper only logs a warning here
            name = self.metadata.get("name", type(self.unwrapped).__name__)
            raise EnvStateError(
                f"{name}: step() called after the episode ended; call env.reset() first."
            )
        super().step(action)

    def observe(self, agent: str) -> Any:
        self._require_reset("observe()")
        return super().observe(agent)

    def state(self) -> np.ndarray:
        self._require_reset("state()")
        return super().state()

    def render(self) -> Any:
        self._require_reset("render()")
        return super().render()

    def last(self, observe: bool = True) -> Any:
        self._require_reset("last()")
        return super().last(observe)

    def agent_iter(self, max_iter: int = 2**63) -> Any:
        self._require_reset("agent_iter()")
        return super().agent_iter(max_iter)
