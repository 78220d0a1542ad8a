"""Starting Ray for the scripts that can run on it (the leaderboard, MARA's rollout workers).

Ray is optional (``pip install 'mara-env[ray]'``). :func:`start_ray` joins a running cluster
(``address="auto"`` on one of its nodes, ``"ray://head:10001"`` from outside, as for
:func:`ray.init`) or starts a local instance with the given CPUs, whose workers import this
process's ``sys.path`` and run one OpenMP thread; it says whether it started Ray (so that the
caller shuts down only what it started). Failures are :class:`RayUnavailable` with what to do.
"""

from __future__ import annotations

import os
import sys
from typing import Any


class RayUnavailable(RuntimeError):
    """Ray is not installed, or could not be started or reached."""


def import_ray(option: str) -> Any:
    """The ``ray`` module; ``option`` names the command-line option that asked for it.

    Raises:
        RayUnavailable: If Ray is not installed.
    """
    try:
        import ray
    except ImportError as error:
        raise RayUnavailable(
            f"{option} needs Ray, which is not installed: pip install 'mara-env[ray]' (or leave "
            "it out to use local processes)."
        ) from error
    return ray


def start_ray(option: str, address: str | None, cpus: int) -> bool:
    """Connect to Ray at ``address``, or start a local instance of ``cpus`` CPUs when
    ``address`` is None; nothing if Ray is already initialised. Returns whether it started Ray.

    Raises:
        RayUnavailable: If Ray is missing or cannot be started or reached.
    """
    ray = import_ray(option)
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
    if address is None:
        path = os.pathsep.join(entry or os.getcwd() for entry in sys.path)
        options.update(
            num_cpus=cpus,
            runtime_env={"env_vars": {"PYTHONPATH": path, "OMP_NUM_THREADS": "1"}},
        )
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except Exception as error:
        where = "local instance" if address is None else repr(address)
        raise RayUnavailable(
            f"Could not start Ray ({where}): {type(error).__name__}: {error}. Check the address "
            "(e.g. 'auto' on a cluster node, 'ray://head:10001' from outside) or leave "
            f"{option} out to use local processes."
        ) from error
    return True
