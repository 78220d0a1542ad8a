"""Predictor names.

:data:`PREDICTORS` maps the short names used on the command line, in wrappers and in result tables
to factories of :class:`predictors.base.Predictor` objects; :func:`make_predictor` builds one.

Example:
    >>> from predictors.registry import make_predictor
    >>> make_predictor("wls").name
    'wls'
    >>> make_predictor("wsl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    predictors.registry.UnknownPredictorError: Unknown predictor 'wsl'. Known predictors: wls...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from predictors.base import Predictor
from predictors.dkf import DKF
from predictors.wls import WLS


def _flow_matching(**kwargs: Any) -> Predictor:
    """The flow-matching predictor from its shipped checkpoint (imports torch only now)."""
    from predictors.flow_matching import FlowMatching

    return FlowMatching.load(**kwargs)


def _flow_matching_without_target(**kwargs: Any) -> Predictor:
    """The target-blind flow-matching predictor MARA's shipped policy was trained with."""
    from predictors.flow_matching import WITHOUT_TARGET, FlowMatching, shipped_checkpoint

    predictor = FlowMatching.load(shipped_checkpoint(WITHOUT_TARGET), **kwargs)
    predictor.name = WITHOUT_TARGET
    return predictor


def _spline_flow(**kwargs: Any) -> Predictor:
    """The spline-flow baseline from its shipped checkpoint (imports torch only now)."""
    from predictors.normalizing_flow import SplineFlow

    return SplineFlow.load(**kwargs)


#: The shipped predictors by name.
PREDICTORS: Mapping[str, Callable[..., Predictor]] = MappingProxyType(
    {
        "wls": WLS,
        "dkf": DKF,
        "flow_matching": _flow_matching,
        "flow_matching_without_target": _flow_matching_without_target,
        "spline_flow": _spline_flow,
    }
)


class UnknownPredictorError(ValueError):
    """A predictor name that is not in :data:`PREDICTORS`."""


def known_predictors() -> tuple[str, ...]:
    """Names of the shipped predictors."""
    return tuple(PREDICTORS)


def make_predictor(name: str, **kwargs: Any) -> Predictor:
    """Build the predictor called ``name`` with keyword arguments for its constructor.

    Raises:
        UnknownPredictorError: If ``name`` is not a shipped predictor.
    """
    if name not in PREDICTORS:
        raise UnknownPredictorError(
            f"Unknown predictor {name!r}. Known predictors: {', '.join(PREDICTORS)}."
        )
    return PREDICTORS[name](**kwargs)
