"""The prediction benchmark's protocols: which cases a cell holds and which model scores them.

A **cell** is ``(protocol, set, fraction)``. Every cell is made from one draw of tasks: the test
split of the ``in_distribution`` workload (:func:`mara_env.predictors.cases.draw_tasks`, families rl,
tabular and vision in equal shares), observed at ``fraction`` (:func:`mara_env.predictors.cases.make_cases`).

==============  ===========================  ====================================================
protocol        sets                         scored by
==============  ===========================  ====================================================
``test``        ``rl``, ``tabular``,         the shipped predictors; histories name their family
                ``vision``: that family's
                tasks; ``pooled``: all
                (the ``in_distribution``
                workload)
``held_out``    as ``test``                  for the tasks of family F, each predictor's version
                                             that never saw F in training
                                             (:class:`PredictorBank`); histories name the family
                                             :data:`mara_env.predictors.base.UNKNOWN_FAMILY`, so no model
                                             reads F's one-hot; ``pooled``: every family, each
                                             scored by its own held-out version
``shift``       ``resolution_x2``,           the shipped predictors, on all tasks shifted by
                ``duration_x2``              :data:`mara_env.predictors.shifted_curves.SHIFTS`
==============  ===========================  ====================================================

Held-out versions (:class:`PredictorBank`): predictors fitted to each task's own history alone
(:data:`UNTRAINED`: WLS, DKF) are their shipped selves (DKF's handful of default settings were
chosen on the train split of every family; they are kept as they are); a trained predictor with a loader in
:data:`HELD_OUT_LOADERS` is loaded from ``<held-out dir>/<name>_without_<family>.pt``
(:func:`held_out_checkpoint`, trained by :func:`train_command`); any other predictor (the spline
flow) has no held-out version and is not scored in the ``held_out`` protocol.

Example:
    >>> from mara_env.predictors.cases import draw_tasks
    >>> tasks = draw_tasks(TASK_WORKLOAD, seed=0, draws_per_curve=1)
    >>> cells = build_cells(tasks, ["held_out"], [0.4])
    >>> rl = cells[Cell("held_out", "rl", 0.4)]
    >>> [group.held_out for group in rl.groups], {h.family for h in rl.groups[0].cases.histories}
    (['rl'], {'unknown'})
    >>> len(cells[Cell("held_out", "pooled", 0.4)]) == sum(len(cells[Cell("held_out", f, 0.4)]) for f in FAMILIES)
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import mara_env.predictors
from mara_env.predictors.base import UNKNOWN_FAMILY, Predictor
from mara_env.predictors.cases import (
    PredictionCases,
    PredictionTask,
    concatenate_cases,
    make_cases,
)
from mara_env.predictors.loaded_checkpoints import recording_checkpoint_loads
from mara_env.predictors.shifted_curves import SHIFTS, shift_tasks

#: The protocols, in report order.
PROTOCOLS = ("test", "held_out", "shift")
#: What each protocol measures (report headings).
PROTOCOL_TITLES: Mapping[str, str] = MappingProxyType(
    {
        "test": "test split (in distribution)",
        "held_out": "leave one family out",
        "shift": "length and resolution shift",
    }
)
#: The workload whose tasks every protocol uses.
TASK_WORKLOAD = "in_distribution"
#: The families with a cell of their own in ``test`` and ``held_out``.
FAMILIES = ("rl", "tabular", "vision")
#: The set of every family's cases together.
POOLED = "pooled"
#: Predictors fitted to each task's own history only: nothing to hold out.
UNTRAINED = frozenset({"wls", "dkf"})
#: Where held-out checkpoints are looked for by default.
DEFAULT_HELD_OUT_DIR = Path(mara_env.predictors.__file__).parent / "checkpoints" / "held_out"


def _load_flow_matching(path: Path) -> Predictor:
    from mara_env.predictors.flow_matching import FlowMatching

    return FlowMatching.load(path)


#: Trained predictors that have held-out versions: name -> loader of a checkpoint path.
HELD_OUT_LOADERS: Mapping[str, Callable[[Path], Predictor]] = MappingProxyType(
    {"flow_matching": _load_flow_matching}
)


def protocol_sets(protocol: str) -> tuple[str, ...]:
    """The sets of ``protocol``, in report order.

    Raises:
        ValueError: For an unknown protocol.

    Example:
        >>> protocol_sets("shift")
        ('resolution_x2', 'duration_x2')
    """
    if protocol == "shift":
        return tuple(SHIFTS)
    if protocol in ("test", "held_out"):
        return (*FAMILIES, POOLED)
    raise ValueError(f"Unknown protocol {protocol!r}; known protocols: {', '.join(PROTOCOLS)}.")


@dataclass(frozen=True, order=True)
class Cell:
    """One cell of the benchmark: a protocol, a set of tasks and an observed fraction."""

    protocol: str
    set: str
    fraction: float

    @property
    def label(self) -> str:
        """E.g. ``"held_out rl 20%"``."""
        return f"{self.protocol} {self.set} {self.fraction:.0%}"


@dataclass(frozen=True)
class CaseGroup:
    """Cases scored by one version of each predictor.

    Attributes:
        held_out: The family the scoring version never saw (``None``: the shipped version).
        cases: The cases.
    """

    held_out: str | None
    cases: PredictionCases


@dataclass(frozen=True)
class CellCases:
    """The cases of a cell, in groups (one per held-out family; one group otherwise)."""

    cell: Cell
    groups: tuple[CaseGroup, ...]

    def __len__(self) -> int:
        return sum(len(group.cases) for group in self.groups)

    @property
    def cases(self) -> PredictionCases:
        """Every group's cases, one after another."""
        return concatenate_cases([group.cases for group in self.groups])


def build_cells(
    tasks: Sequence[PredictionTask], protocols: Sequence[str], fractions: Sequence[float]
) -> dict[Cell, CellCases]:
    """Every cell of ``protocols`` x their sets x ``fractions`` made from ``tasks`` (see the
    module docstring), in report order.

    Raises:
        ValueError: For an unknown protocol.
        mara_env.predictors.cases.CaseError: If a set has no task left to predict at a fraction.
    """
    by_family = {family: [t for t in tasks if t.family == family] for family in FAMILIES}
    shifted = {name: shift_tasks(tasks, shift) for name, shift in SHIFTS.items()}
    cells: dict[Cell, CellCases] = {}
    for protocol in protocols:
        for name in protocol_sets(protocol):
            for fraction in fractions:
                cell = Cell(protocol, name, fraction)
                if protocol == "shift":
                    groups = [CaseGroup(None, make_cases(shifted[name], fraction))]
                else:
                    families = FAMILIES if name == POOLED else (name,)
                    groups = [_family_group(protocol, f, by_family[f], fraction) for f in families]
                cells[cell] = CellCases(cell, tuple(groups))
    return cells


def _family_group(
    protocol: str, family: str, tasks: Sequence[PredictionTask], fraction: float
) -> CaseGroup:
    cases = make_cases(tasks, fraction)
    if protocol == "held_out":
        return CaseGroup(family, cases.relabelled(UNKNOWN_FAMILY))
    return CaseGroup(None, cases)


# --------------------------------------------------------------------------------- predictors
def held_out_checkpoint(directory: Path, name: str, family: str) -> Path:
    """Where the version of predictor ``name`` trained without ``family`` is stored.

    Example:
        >>> held_out_checkpoint(Path("held_out"), "flow_matching", "rl").as_posix()
        'held_out/flow_matching_without_rl.pt'
    """
    return directory / f"{name}_without_{family}.pt"


def train_command(name: str, family: str, path: Path) -> str:
    """The command that trains predictor ``name`` without ``family`` into ``path``."""
    return f"python -m mara_env.benchmarks.prediction.train --model {name} --hold-out {family} --output {path}"


class MissingHeldOutError(FileNotFoundError):
    """A held-out checkpoint the ``held_out`` protocol needs is not there."""


@dataclass(frozen=True)
class Scored:
    """A predictor version and the checkpoints it was loaded from (SHA-256 prefixes)."""

    predictor: Predictor
    weights: tuple[str, ...]


class PredictorBank:
    """The predictors of one run: shipped versions by name, held-out versions by (name, family).

    Args:
        shipped: Name -> factory of the shipped predictor (e.g. ``mara_env.predictors.registry.make_predictor``
            bound to the name). Checkpoints loaded by a factory are recorded as its weights.
        held_out_dir: Folder of the held-out checkpoints.
        untrained: Names whose held-out version is the shipped one.
        loaders: Name -> loader of a held-out checkpoint.
    """

    def __init__(
        self,
        shipped: Mapping[str, Callable[[], Predictor]],
        held_out_dir: Path = DEFAULT_HELD_OUT_DIR,
        *,
        untrained: frozenset[str] = UNTRAINED,
        loaders: Mapping[str, Callable[[Path], Predictor]] = HELD_OUT_LOADERS,
    ) -> None:
        self.held_out_dir = held_out_dir
        self.untrained = untrained
        self.loaders = loaders
        self._shipped = {name: _scored(factory) for name, factory in shipped.items()}
        self._held_out: dict[tuple[str, str], Scored] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The predictors' names, in the order given."""
        return tuple(self._shipped)

    def has_held_out_version(self, name: str) -> bool:
        """Whether ``name`` can be scored in the ``held_out`` protocol."""
        return name in self.untrained or name in self.loaders

    def missing(self, name: str) -> dict[str, Path]:
        """Family -> path of each held-out checkpoint of ``name`` that does not exist (none for
        untrained predictors)."""
        if name in self.untrained or name not in self.loaders:
            return {}
        paths = {f: held_out_checkpoint(self.held_out_dir, name, f) for f in FAMILIES}
        return {family: path for family, path in paths.items() if not path.exists()}

    def version(self, name: str, held_out: str | None) -> Scored:
        """The version of ``name`` that never saw ``held_out`` (``None``: the shipped one).

        Raises:
            KeyError: If ``name`` is not in the bank.
            ValueError: If ``name`` has no held-out version.
            MissingHeldOutError: If its checkpoint is missing (naming the command to train it).
        """
        if held_out is None or name in self.untrained:
            return self._shipped[name]
        if name not in self.loaders:
            raise ValueError(f"Predictor {name!r} has no version trained without a family.")
        key = (name, held_out)
        if key not in self._held_out:
            path = held_out_checkpoint(self.held_out_dir, name, held_out)
            if not path.exists():
                raise MissingHeldOutError(
                    f"No checkpoint of {name} trained without {held_out} at {path}. Train it with "
                    f"`{train_command(name, held_out, path)}`, or pass --skip-missing-held-out."
                )
            loader = self.loaders[name]
            scored = _scored(lambda: loader(path))
            config = getattr(scored.predictor, "config", None)
            if held_out in getattr(config, "known_families", ()):
                raise ValueError(
                    f"{path} was trained on {held_out} (its card lists it among the families it "
                    f"knows), so it cannot score {held_out} as held out. Retrain it with "
                    f"`{train_command(name, held_out, path)}`."
                )
            self._held_out[key] = scored
        return self._held_out[key]


def _scored(factory: Callable[[], Predictor]) -> Scored:
    with recording_checkpoint_loads() as loads:
        predictor = factory()
    return Scored(predictor, tuple(load.sha256[:12] for load in loads))
