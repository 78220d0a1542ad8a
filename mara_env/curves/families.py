"""Task families: the kinds of training job the cluster runs, with their physical defaults.

The family of a task is visible to schedulers (one-hot in the observation). ``alpha`` is the
default data-parallel scaling exponent of the family: how many curve steps ``k`` nodes advance
a task per epoch, by :func:`mara_env.sim.rules.progress_gain`.

**Your own families** (``ClusterConfig.own_families``: a name and an alpha each, for curves of
a kind none of these is) run with their own alpha, but schedulers see them as one code,
:data:`OTHER_FAMILY` (an all-zero one-hot: the observation has a column per shipped family
only, so trained policies keep their inputs), and assume ``ClusterConfig.other_alpha`` for them.

Example:
    >>> family_code("vision"), family_code("speech") == OTHER_FAMILY, observed_name(OTHER_FAMILY)
    (1, True, 'other')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FamilySpec:
    """Defaults of one task family.

    Attributes:
        name: Family name used in configs and trace files.
        alpha: Default parallel-scaling exponent in (0, 1].
        description: What the family's curves come from.
    """

    name: str
    alpha: float
    description: str


FAMILIES: dict[str, FamilySpec] = {
    spec.name: spec
    for spec in (
        FamilySpec("tabular", 0.7, "scikit-learn / torch learners on tabular data"),
        FamilySpec("vision", 0.9, "small CNNs and MLPs on image data"),
        FamilySpec("rl", 0.6, "RL agents; loss = normalised return gap"),
        FamilySpec("synthetic", 0.8, "parametric learning-curve families with noise"),
    )
}

#: Fixed order of families in one-hot observation features.
FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)
#: The code a family of your own has in observations and task tables (after the shipped ones).
OTHER_FAMILY = len(FAMILY_NAMES)
#: What schedulers call a family of your own.
OTHER_NAME = "other"


def family_code(name: str) -> int:
    """A family's code: its index in :data:`FAMILY_NAMES`, or :data:`OTHER_FAMILY`."""
    return FAMILY_NAMES.index(name) if name in FAMILIES else OTHER_FAMILY


def observed_name(code: int) -> str:
    """The name schedulers know a family code by (:data:`OTHER_NAME` for your own)."""
    return FAMILY_NAMES[code] if 0 <= code < OTHER_FAMILY else OTHER_NAME
