"""Exceptions raised by mara-env. Each names what was wrong, where, and what to do."""

from __future__ import annotations


class MaraEnvError(Exception):
    """Base class of every error mara-env raises on purpose."""


class ConfigError(MaraEnvError, ValueError):
    """An invalid configuration value or an unknown preset."""


class UnexpectedArgumentError(ConfigError, TypeError):
    """A keyword argument that neither the environment nor ``ClusterConfig`` takes.

    Its message starts as Python's own for such a call (``... got an unexpected keyword argument
    'name'``), so code that drops an argument on that ``TypeError`` (TorchRL's ``GymEnv`` with
    ``frameskip``) works, while ``except ConfigError`` still catches it.
    """


class TraceError(MaraEnvError, ValueError):
    """A trace file or trace pool that fails validation."""


class ActionError(MaraEnvError, ValueError):
    """An action of the wrong type or range, or an illegal action in strict mode."""


class EnvStateError(MaraEnvError, RuntimeError):
    """An environment method called at the wrong time (for example ``step`` before ``reset``)."""


class InstallationError(MaraEnvError, ImportError):
    """mara-env's import packages are hidden by a local folder or owned by another distribution."""


class CheckpointError(MaraEnvError, RuntimeError):
    """A model file (a checkpoint, a trained policy) that is missing, corrupt, or made for a
    different model."""
