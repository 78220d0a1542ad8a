"""Predictor names.

:data:`PREDICTORS` maps the short names used on the command line, in wrappers and in result tables
to factories of :class:`mara_env.predictors.base.Predictor` objects; :data:`PRIVILEGED_PREDICTORS` adds the
oracle (:mod:`mara_env.predictors.oracle`), which reads the hidden truth and serves to measure what
prediction is worth. :func:`make_predictor` builds either kind; benchmarks that score
observation-only predictors refuse the privileged ones (:func:`require_observation_only`).

Example:
    >>> from mara_env.predictors.registry import make_predictor
    >>> make_predictor("wls").name
    'wls'
    >>> make_predictor("oracle", noise=0.5).name
    'oracle_noise_0.5'
    >>> make_predictor("wsl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mara_env.predictors.registry.UnknownPredictorError: Unknown predictor 'wsl'. Known predictors: wls...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, cast

from mara_env.predictors.base import Predictor
from mara_env.predictors.dkf import DKF
from mara_env.predictors.oracle import Oracle
from mara_env.predictors.wls import WLS


def _flow_matching(**kwargs: Any) -> Predictor:
    """The flow-matching predictor from its shipped checkpoint (imports torch only now)."""
    from mara_env.predictors.flow_matching import FlowMatching

    return FlowMatching.load(**kwargs)


def _flow_matching_without_target(**kwargs: Any) -> Predictor:
    """The target-blind flow-matching predictor MARA's shipped policy was trained with."""
    from mara_env.predictors.flow_matching import WITHOUT_TARGET, FlowMatching, shipped_checkpoint

    predictor = FlowMatching.load(shipped_checkpoint(WITHOUT_TARGET), **kwargs)
    predictor.name = WITHOUT_TARGET
    return predictor


def _spline_flow(**kwargs: Any) -> Predictor:
    """The spline-flow baseline from its shipped checkpoint (imports torch only now)."""
    from mara_env.predictors.normalizing_flow import SplineFlow

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


#: Predictors that read the environment's hidden state (bound to it every episode); results
#: that use them are marked privileged.
PRIVILEGED_PREDICTORS: Mapping[str, Callable[..., Predictor]] = MappingProxyType({"oracle": Oracle})


class UnknownPredictorError(ValueError):
    """A predictor name that is in neither :data:`PREDICTORS` nor :data:`PRIVILEGED_PREDICTORS`."""


class PrivilegedPredictorError(ValueError):
    """A privileged predictor where only observation-only ones may be used."""


def known_predictors(*, privileged: bool = False) -> tuple[str, ...]:
    """Names of the shipped observation-only predictors (with ``privileged=True``, of
    :data:`PRIVILEGED_PREDICTORS` too)."""
    return tuple(PREDICTORS) + (tuple(PRIVILEGED_PREDICTORS) if privileged else ())


def require_observation_only(names: Sequence[str], where: str) -> None:
    """Refuse privileged or unknown predictor names in ``where``.

    Raises:
        PrivilegedPredictorError: For a name of :data:`PRIVILEGED_PREDICTORS`.
        UnknownPredictorError: For a name that is not registered at all.

    Example:
        >>> require_observation_only(["oracle"], "the prediction benchmark")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        mara_env.predictors.registry.PrivilegedPredictorError: the prediction benchmark scores ...
    """
    for name in names:
        if name in PRIVILEGED_PREDICTORS:
            raise PrivilegedPredictorError(
                f"{where} scores observation-only predictors, and {name!r} is privileged (it "
                "reads the hidden truth of a live environment). Use it inside a scheduler, e.g. "
                "make_agent('lara_oracle'), or with the prediction wrappers. Observation-only "
                f"predictors: {', '.join(PREDICTORS)}."
            )
        if name not in PREDICTORS:
            raise UnknownPredictorError(
                f"Unknown predictor {name!r} in {where}. Known predictors: {', '.join(PREDICTORS)}."
            )


def is_known_predictor(name: str) -> bool:
    """Whether :func:`make_predictor` builds ``name`` without keyword arguments (a registered
    name, or ``oracle_noise_<sigma>``), checked without building it.

    Example:
        >>> is_known_predictor("oracle_noise_1"), is_known_predictor("wsl")
        (True, False)
    """
    if name in PREDICTORS or name in PRIVILEGED_PREDICTORS:
        return True
    try:
        return Oracle.from_name(name) is not None
    except ValueError:
        return False


def make_predictor(name: str, **kwargs: Any) -> Predictor:
    """Build the predictor called ``name`` with keyword arguments for its constructor.

    A noisy oracle may also be named as its ``name`` reads (``oracle_noise_0.5``), which is how
    checkpoints and training settings record it.

    Raises:
        UnknownPredictorError: If ``name`` is not a shipped predictor.
    """
    factory = PREDICTORS.get(name) or PRIVILEGED_PREDICTORS.get(name)
    if factory is not None:
        return factory(**kwargs)
    if is_known_predictor(name) and not kwargs:
        return cast(Predictor, Oracle.from_name(name))
    raise UnknownPredictorError(
        f"Unknown predictor {name!r}. Known predictors: "
        f"{', '.join(known_predictors(privileged=True))} (and oracle_noise_<sigma>)."
    )
