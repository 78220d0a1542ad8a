"""From episode rows to the leaderboard: the score array, its statistics and episode means.

Only agents with every cell of the grid finished are ranked (the statistics need the same
episodes for every agent); agents with missing cells (a scheduler that failed) are listed apart
with the count of missing episodes. Rows are looked up by (agent, stratum, seed), so the result
does not depend on the order in which cells finished, nor on the backend that ran them.

Example:
    >>> from mara_env.benchmarks.leaderboard.grid import Grid
    >>> grid = Grid(agents=("a", "b"), workloads=("rl",), load_factors=(1.0,), n_seeds=2)
    >>> rows = [{"agent": agent, "workload": "rl", "load_factor": 1.0, "seed": seed,
    ...          "completion_rate": rate, "illegal_actions": 0.0, "invalid_actions": 0.0}
    ...         for agent, seed, rate in [("a", 1000, 0.5), ("a", 1001, 0.7),
    ...                                   ("b", 1000, 0.9), ("b", 1001, 0.9)]]
    >>> board = build_leaderboard(grid, rows, n_resamples=100)
    >>> board.ranked, round(board.summary.overall[0].estimate, 2)
    (('b', 'a'), 0.6)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mara_env.benchmarks.common.statistics import StratifiedSummary, stratified_summary
from mara_env.benchmarks.leaderboard.grid import Grid

#: Probabilities of improvement compare every agent with this one, when it is in the grid.
REFERENCE_AGENT = "lara"
#: Fixed seed of the bootstrap generator: the same episodes always give the same table.
BOOTSTRAP_SEED = 0
#: Per-episode metrics averaged in the episode-means table: (heading, column, format).
EPISODE_METRICS: tuple[tuple[str, str, str], ...] = (
    ("completed", "completed", ".1f"),
    ("arrived", "arrived", ".1f"),
    ("utilisation", "utilisation", ".3f"),
    ("useful utilisation", "useful_utilisation", ".3f"),
    ("node-epochs on expired tasks", "wasted_node_epochs", ".1f"),
    ("idle while feasible", "idle_while_feasible", ".1f"),
    ("switches", "switches", ".0f"),
    ("illegal actions", "illegal_actions", ".1f"),
    ("invalid actions", "invalid_actions", ".1f"),
    ("decision ms/epoch", "decision_ms_per_epoch", ".3f"),
)


@dataclass(frozen=True)
class Leaderboard:
    """The grid's results, ready to print.

    Attributes:
        grid: The grid.
        rows: The grid's episode rows, in grid order (agent, stratum, seed).
        agents: The agents with every cell finished, in grid order; ``summary`` indexes them.
        ranked: The same agents, best overall mean first.
        missing: ``{agent: number of unfinished cells}`` for the other agents.
        summary: Statistics of ``agents`` (``None`` if no agent is complete).
        reference: The agent probabilities of improvement compare with (``None``: none).
        illegal: ``{agent: (illegal actions, invalid actions)}`` summed over its episodes, for
            agents that returned any.
        privileged: The agents whose episodes say they read hidden state (the clairvoyant
            reference, schedulers fed the oracle): references, marked in every table.
    """

    grid: Grid
    rows: tuple[dict[str, Any], ...]
    agents: tuple[str, ...]
    ranked: tuple[str, ...]
    missing: dict[str, int]
    summary: StratifiedSummary | None
    reference: str | None
    illegal: dict[str, tuple[float, float]]
    privileged: frozenset[str] = frozenset()

    def index(self, agent: str) -> int:
        """``agent``'s index in :attr:`agents` (and in the statistics)."""
        return self.agents.index(agent)

    def episode_means(self, agent: str) -> dict[str, float]:
        """Means of :data:`EPISODE_METRICS` over ``agent``'s episodes."""
        episodes = [row for row in self.rows if row["agent"] == agent]
        return {
            column: float(np.mean([row.get(column, np.nan) for row in episodes]))
            for _, column, _ in EPISODE_METRICS
        }


def build_leaderboard(
    grid: Grid,
    rows: Iterable[dict[str, Any]],
    *,
    reference: str | None = REFERENCE_AGENT,
    confidence: float = 0.95,
    n_resamples: int = 5000,
) -> Leaderboard:
    """Collect the grid's rows and compute every statistic.

    Args:
        grid: The grid the rows belong to.
        rows: Episode rows with ``agent``, ``workload``, ``load_factor``, ``seed`` and the
            metrics, as written by the leaderboard. Rows whose ``cell`` key is not one of the
            grid's cells (another config, trace data or package version) are ignored.
        reference: The agent to compare with (skipped if not complete in the grid).
        confidence: Coverage of the intervals.
        n_resamples: Bootstrap resamples.
    """
    keys = {cell.key for cell in grid.cells()}
    strata = {stratum: index for index, stratum in enumerate(grid.strata)}
    seeds = {seed: index for index, seed in enumerate(grid.seeds)}
    agents = {agent: index for index, agent in enumerate(grid.agents)}
    found: dict[tuple[int, int, int], dict[str, Any]] = {}
    for row in rows:
        if "cell" in row and row["cell"] not in keys:
            continue  # another config, trace data or package version
        place = (row.get("workload"), row.get("load_factor"))
        if row.get("agent") in agents and place in strata and row.get("seed") in seeds:
            key = (agents[row["agent"]], strata[place], seeds[row["seed"]])
            found.setdefault(key, row)
    scores = np.full((len(agents), len(strata), len(seeds)), np.nan)
    for (agent, stratum, seed), row in found.items():
        scores[agent, stratum, seed] = row["completion_rate"]
    complete = ~np.isnan(scores).any(axis=(1, 2))
    ranked_agents = tuple(agent for agent in grid.agents if complete[agents[agent]])
    missing = {
        agent: int(np.isnan(scores[agents[agent]]).sum())
        for agent in grid.agents
        if not complete[agents[agent]]
    }
    reference = reference if reference in ranked_agents else None
    summary = None
    order: Sequence[str] = ()
    if ranked_agents:
        summary = stratified_summary(
            scores[complete],
            [workload for workload, _ in grid.strata],
            reference=None if reference is None else ranked_agents.index(reference),
            confidence=confidence,
            n_resamples=n_resamples,
            rng=np.random.default_rng(BOOTSTRAP_SEED),
        )
        means = [interval.estimate for interval in summary.overall]
        order = sorted(ranked_agents, key=lambda agent: -means[ranked_agents.index(agent)])
    ordered_rows = tuple(row for _, row in sorted(found.items()))
    return Leaderboard(
        grid=grid,
        rows=ordered_rows,
        agents=ranked_agents,
        ranked=tuple(order),
        missing=missing,
        summary=summary,
        reference=reference,
        illegal=_illegal_actions(ordered_rows),
        privileged=frozenset(row["agent"] for row in ordered_rows if row.get("privileged")),
    )


def _illegal_actions(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    totals: dict[str, list[float]] = {}
    for row in rows:
        counts = totals.setdefault(row["agent"], [0.0, 0.0])
        counts[0] += float(row.get("illegal_actions", 0.0))
        counts[1] += float(row.get("invalid_actions", 0.0))
    return {agent: (c[0], c[1]) for agent, c in totals.items() if c[0] > 0 or c[1] > 0}
