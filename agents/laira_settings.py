"""LaiRA's settings: :class:`LairaSettings`, validated when built, with the allocation rules
(:data:`ALLOCATIONS`) and the calibration table of its look-ahead.

:class:`mara_env.agents.laira.Laira` reads them; the tuning
(``python -m mara_env.benchmarks.baselines.tuning``) searches them.

Example:
    >>> LairaSettings().allocation in ALLOCATIONS
    True
    >>> LairaSettings(gamma=1.5)
    Traceback (most recent call last):
    ...
    ValueError: LairaSettings.gamma must be a number in (0, 1], got 1.5. See the LairaSettings ...
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from mara_env.curves.families import FAMILY_NAMES
from mara_env.predictors.dkf import DKF, Feasibility, FilterState
from mara_env.sim.rules import progress_gain

#: How the ranked tasks share the nodes: ``"need"`` gives each the nodes its look-ahead says it
#: needs, ``"one_each"`` one node each down the ranking (both then wrap around).
ALLOCATIONS = ("need", "one_each")


@dataclass(frozen=True)
class LairaSettings:
    """LaiRA's hyperparameters (the paper gives no values; these defaults are ours, and
    ``make_agent("laira")`` uses the ones ``python -m mara_env.benchmarks.baselines.tuning`` chose).

    Attributes:
        gamma: Forgetting factor of the discounted least-squares fit, in (0, 1].
        ridge: Ridge penalty ``lambda`` of the fit (> 0).
        beta: Width of the confidence bound on the next log-loss (>= 0; 0 removes the UCB).
        offset: ``s0`` in node-epochs at one node, added to the work before taking logarithms,
            for the fit and the DKF alike (> 0; larger values let a curve start flat).
        first_slice: ``M_1``: epochs per slice during the first ``warmup_slices`` slices.
        warmup_slices: Slices of fixed length before the PD control takes over (>= 1).
        max_slice: Longest slice in epochs (>= ``first_slice``).
        error_reference: Mean absolute log-loss prediction error at which the slice length
            stays put (> 0).
        proportional_gain: ``k_p``: epochs added per unit of ``error_reference - error``.
        derivative_gain: ``k_d``: epochs removed per unit of error increase since the
            previous slice.
        min_reports: Reports after arrival a task needs before the look-ahead may drop it.
        success_threshold: The look-ahead drops a task for the slice when its success
            probability with all the nodes (:meth:`success_probability`) is below this, in
            [0, 1) (0 never drops).
        ratio_cap: Ranking scores ``rho_hat / rho`` above this count as equal, and ties go to
            the earliest deadline (> 0; ``inf``: the paper's raw ratio).
        lookahead: Run the DKF look-ahead (``False``: STA, LaiRA without it).
        allocation: ``"need"``: each ranked task gets the nodes its look-ahead needs;
            ``"one_each"``: one node each down the ranking (then both wrap around).
        fitted_loss: The optimistic slope starts from the fit's log-loss now (``False``: from
            the latest report, as in the paper).
        probe_excluded: Nodes no feasible task can use probe the dropped tasks, one each
            (``False``: they idle, as in the paper).
        calibration: ``{family: (scale, shift)}`` of the logistic map from the DKF's margin to
            a success probability, fitted on training episodes
            (:mod:`mara_env.benchmarks.baselines.lookahead_calibration`); ``None`` or a missing family: the DKF's
            own normal probability.
        dkf: The Dynamic Kalman Filter used for the look-ahead (its ``offset`` is replaced by
            this ``offset``).
    """

    gamma: float = 0.95
    ridge: float = 1e-3
    beta: float = 0.1
    offset: float = 2.0
    first_slice: int = 2
    warmup_slices: int = 3
    max_slice: int = 8
    error_reference: float = 0.1
    proportional_gain: float = 10.0
    derivative_gain: float = 2.0
    min_reports: int = 2
    success_threshold: float = 0.2
    ratio_cap: float = 2.0
    lookahead: bool = True
    allocation: str = "need"
    fitted_loss: bool = True
    probe_excluded: bool = True
    calibration: tuple[tuple[str, float, float], ...] | None = None
    dkf: DKF = field(default_factory=DKF)

    def __post_init__(self) -> None:
        def number(value: object) -> bool:
            return isinstance(value, (int, float)) and not isinstance(value, bool)

        def whole(value: object) -> bool:
            return isinstance(value, int) and not isinstance(value, bool)

        checks = (
            ("gamma", number(self.gamma) and 0.0 < self.gamma <= 1.0, "a number in (0, 1]"),
            ("ridge", number(self.ridge) and 0.0 < self.ridge < math.inf, "a finite number > 0"),
            ("beta", number(self.beta) and 0.0 <= self.beta < math.inf, "a finite number >= 0"),
            ("offset", number(self.offset) and 0.0 < self.offset < math.inf, "a finite number > 0"),
            ("first_slice", whole(self.first_slice) and self.first_slice >= 1, "an int >= 1"),
            ("warmup_slices", whole(self.warmup_slices) and self.warmup_slices >= 1, "an int >= 1"),
            (
                "max_slice",
                whole(self.max_slice)
                and whole(self.first_slice)
                and self.max_slice >= self.first_slice,
                f"an int >= first_slice ({self.first_slice})",
            ),
            (
                "error_reference",
                number(self.error_reference) and 0.0 < self.error_reference < math.inf,
                "a finite number > 0",
            ),
            (
                "proportional_gain",
                number(self.proportional_gain) and 0.0 <= self.proportional_gain < math.inf,
                "a finite number >= 0",
            ),
            (
                "derivative_gain",
                number(self.derivative_gain) and 0.0 <= self.derivative_gain < math.inf,
                "a finite number >= 0",
            ),
            ("min_reports", whole(self.min_reports) and self.min_reports >= 1, "an int >= 1"),
            (
                "success_threshold",
                number(self.success_threshold) and 0.0 <= self.success_threshold < 1.0,
                "a number in [0, 1)",
            ),
            (
                "ratio_cap",
                number(self.ratio_cap) and 0.0 < self.ratio_cap <= math.inf,
                "a number > 0 (inf: no cap)",
            ),
            ("lookahead", isinstance(self.lookahead, bool), "True or False"),
            ("allocation", self.allocation in ALLOCATIONS, f"one of {ALLOCATIONS}"),
            ("fitted_loss", isinstance(self.fitted_loss, bool), "True or False"),
            ("probe_excluded", isinstance(self.probe_excluded, bool), "True or False"),
            ("dkf", isinstance(self.dkf, DKF), "a mara_env.predictors.dkf.DKF"),
        )
        for name, ok, rule in checks:
            if not ok:
                raise ValueError(
                    f"LairaSettings.{name} must be {rule}, got {getattr(self, name)!r}. See "
                    "the LairaSettings docstring for what it controls and its default."
                )
        object.__setattr__(self, "calibration", _calibration_table(self.calibration))

    @cached_property
    def lookahead_filter(self) -> DKF:
        """The look-ahead's DKF on LaiRA's work axis (node-epochs, ``offset``), built once."""
        return replace(self.dkf, offset=self.offset)

    def judge(
        self,
        state: FilterState,
        target: float,
        time_left: float,
        alpha: float,
        nodes: int,
        family: str,
    ) -> tuple[Feasibility, float]:
        """The look-ahead of one task with ``nodes`` nodes until its deadline: the DKF's
        verdict (from ``state``, filtered by :attr:`lookahead_filter`) and the success
        probability of its margin (:meth:`success_probability`)."""
        extra = max(time_left, 1.0) * float(progress_gain(1.0, nodes, alpha))
        verdict = self.lookahead_filter.lookahead(state, target, extra)
        return verdict, self.success_probability(verdict.margin, family)

    def success_probability(self, margin: float, family: str) -> float:
        """The look-ahead's success probability for a DKF margin (in predicted std devs).

        Without a ``calibration`` entry for ``family`` it is the DKF's own normal CDF of the
        margin; with ``(scale, shift)`` it is the logistic ``1 / (1 + exp(-(scale * margin +
        shift)))`` fitted to outcomes on training episodes
        (:mod:`mara_env.benchmarks.baselines.lookahead_calibration`).

        Example:
            >>> LairaSettings().success_probability(0.0, "rl")
            0.5
            >>> settings = LairaSettings(calibration={"rl": (2.0, 1.0)})
            >>> round(settings.success_probability(0.0, "rl"), 3)
            0.731
        """
        for name, scale, shift in self.calibration or ():
            if name == family:
                logit = min(max(scale * margin + shift, -700.0), 700.0)
                return 1.0 / (1.0 + math.exp(-logit))
        return 0.5 * math.erfc(-margin / math.sqrt(2.0))


def _calibration_table(value: object) -> tuple[tuple[str, float, float], ...] | None:
    """``LairaSettings.calibration`` as ``((family, scale, shift), ...)`` sorted by family.

    Accepts that form or a mapping ``{family: (scale, shift)}`` (as JSON holds it).
    """
    if value is None:
        return None
    entries: list[tuple[object, ...]] = []
    if isinstance(value, dict):
        entries = [(key, *pair) for key, pair in value.items() if isinstance(pair, (list, tuple))]
    elif isinstance(value, (list, tuple)):
        entries = [tuple(entry) for entry in value if isinstance(entry, (list, tuple))]
    table = [
        (str(entry[0]), float(entry[1]), float(entry[2]))  # type: ignore[arg-type]
        for entry in entries
        if len(entry) == 3
        and entry[0] in FAMILY_NAMES
        and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for v in entry[1:]
        )
    ]
    if not table or len(table) != len(entries) or len(entries) != len(value):  # type: ignore[arg-type]
        raise ValueError(
            "LairaSettings.calibration must be None or a mapping {family: (scale, shift)} with "
            f"families from {FAMILY_NAMES} and finite numbers, got {value!r}."
        )
    return tuple(sorted(table))
