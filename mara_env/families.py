"""Task families: the kinds of training job the cluster runs, with their physical defaults.

The family of a task is visible to schedulers (one-hot in the observation). ``alpha`` is the
default data-parallel scaling exponent of the family: how many curve steps ``k`` nodes advance
a task per epoch, by :func:`mara_env.rules.progress_gain`.
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
