"""Running one cell: build the agent, play its episode, return its row (or why it failed).

:func:`execute_cell` never raises for a scheduler's own failure: an agent that cannot be built
or that raises while acting gives a :class:`CellOutcome` with ``error`` set, so one broken agent
does not stop a leaderboard of hundreds of episodes. Illegal actions are not failures: the
environment turns masked actions into idle and counts them (``illegal_actions``), and
:func:`mara_env.agents.evaluate` does the same for ints outside the action space (``invalid_actions``);
the leaderboard reports both. An action that is not an int (a float, ``None``) fails the cell
with an error naming the value.

Torch, once an agent has imported it (at the latest while being built), runs on one thread
inside a cell whatever the backend: two worker processes on two cores should not oversubscribe
them, and a fixed thread count keeps float reductions, and so the numbers, independent of the
backend.

Example:
    >>> from mara_env import get_config
    >>> outcome = execute_cell(Cell("edf", 1000, get_config("tiny"), "tiny"))
    >>> outcome.error is None, outcome.row["agent"], outcome.row["seed"]
    (True, 'edf', 1000)
    >>> execute_cell(Cell("mara_env.agents.statistics:Summary", 1000, get_config("tiny"), "tiny")).error
    "AgentBuildError: Building agent 'mara_env.agents.statistics:Summary' failed: ..."
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from mara_env.agents import evaluate, known_agents, make_agent
from mara_env.agents.base import Scheduler
from mara_env.benchmarks.common.threads import TorchThreadLimit
from mara_env.benchmarks.leaderboard.grid import Cell, config_hash
from mara_env.predictors.base import is_privileged

#: Row columns that identify the cell, in the order the CSV export lists them: the agent's
#: label and spec (its registered name or import path), the stratum, the seed, the config, the
#: cell key and the fingerprints of the agent's code and of the code every episode shares.
KEY_COLUMNS = (
    "agent",
    "agent_spec",
    "workload",
    "load_factor",
    "load",
    "seed",
    "config",
    "config_hash",
    "cell",
    "agent_code",
    "shared_code",
)
#: Row columns that measure wall time: they differ from run to run, everything else does not.
TIMING_COLUMNS = ("decision_ms_per_epoch", "episode_seconds")


class CellError(RuntimeError):
    """A cell failed (its agent could not be built or raised while acting)."""


@dataclass(frozen=True)
class CellOutcome:
    """What running a cell produced: its row, or the error that stopped it.

    Attributes:
        cell: The cell.
        row: The episode's metrics keyed by :data:`KEY_COLUMNS` (empty on failure).
        error: ``None``, or a one-line description of the failure.
        details: The failure's traceback (empty on success).
    """

    cell: Cell
    row: dict[str, Any]
    error: str | None = None
    details: str = ""

    def rows(self) -> list[dict[str, Any]]:
        """The cell's rows (one); raises :class:`CellError` if it failed."""
        if self.error is not None:
            cell = self.cell
            raise CellError(
                f"Cell agent={cell.agent!r} seed={cell.seed} config={cell.config_name!r} "
                f"failed: {self.error}\n{self.details}"
            )
        return [self.row]


#: Registered agents built in this process, by (name, world): a worker builds each once (MARA
#: loads its checkpoints once) and every episode resets it with its own seed, so a cell's result
#: does not depend on which cells the process played before (``tests/test_leaderboard.py``).
#: Import-path agents are built afresh for every cell: nothing promises they reset fully.
_BUILT: dict[tuple[str, int], Scheduler] = {}


def _scheduler(cell: Cell) -> Scheduler:
    """The scheduler of ``cell`` (a registered one from :data:`_BUILT`)."""
    world = cell.config.world_version
    if cell.agent not in known_agents(variants=True):
        return make_agent(cell.agent, world_version=world)
    key = (cell.agent, world)
    if key not in _BUILT:
        _BUILT[key] = make_agent(cell.agent, world_version=world)
    return _BUILT[key]


def execute_cell(cell: Cell) -> CellOutcome:
    """Run ``cell``'s episode and return its outcome; scheduler failures become ``error``."""
    threads = TorchThreadLimit()
    try:
        threads.limit()
        scheduler = _scheduler(cell)
        threads.limit()  # the agent may have imported torch
        (metrics,) = evaluate(scheduler, cell.config, [cell.seed], trace_source=cell.traces)
    except Exception as error:
        message = f"{type(error).__name__}: {error}"
        return CellOutcome(cell, {}, message.splitlines()[0], traceback.format_exc())
    finally:
        threads.restore()
    metrics = {key: value for key, value in metrics.items() if key not in ("agent", "seed")}
    row = {
        "agent": cell.name,
        "agent_spec": cell.agent,
        "workload": cell.workload,
        "load_factor": cell.load_factor,
        "load": float(cell.config.load),
        "seed": cell.seed,
        "config": cell.config_name,
        "config_hash": config_hash(cell.config),
        "cell": cell.key,
        "agent_code": cell.agent_fingerprint,
        "shared_code": cell.fingerprint,
        "privileged": is_privileged(scheduler),
        "traces": cell.traces,
        **metrics,
    }
    return CellOutcome(cell, row)


def run_cell(cell: Cell) -> list[dict[str, Any]]:
    """Run ``cell`` and return its rows (one); raises :class:`CellError` if it fails."""
    return execute_cell(cell).rows()
