"""The observation's layout and scales (one home, read by the core and the observation).

The columns are documented in :mod:`mara_env.sim.observation`. Every observation and state value
lies in ``[-FEATURE_BOUND, FEATURE_BOUND]`` (values are clipped); times are in units of
``TIME_SCALE`` epochs, speeds of ``SPEED_SCALE`` curve steps per node-epoch, progress of
``STEP_SCALE`` curve steps.
"""

from __future__ import annotations

from mara_env.curves.families import FAMILY_NAMES

FEATURE_BOUND = 100.0
TIME_SCALE = 50.0
SPEED_SCALE = 10.0
STEP_SCALE = 100.0

GLOBAL_FEATURES = 8
SLOT_FEATURES = 14 + len(FAMILY_NAMES) + 2

G_EPOCH, G_OPEN, G_QUEUE, G_QUEUE_TIME, G_ACTIVE, G_DECIDED, G_NODE, G_IDLE = range(8)
(
    S_OCCUPIED,
    S_LOG_LOSS,
    S_LOG_TARGET,
    S_PROGRESS,
    S_TIME_LEFT,
    S_TIME_FRACTION,
    S_AGE,
    S_WORK,
    S_SPEED,
    S_STEPS,
    S_SLOPE,
    S_NODES_LAST,
    S_NODES_NOW,
    S_MINE,
) = range(14)
S_FAMILY = 14
#: The arrival serial and the step budget follow the family one-hot (added in v1).
S_SERIAL = S_FAMILY + len(FAMILY_NAMES)
S_BUDGET = S_SERIAL + 1
#: ``S_SERIAL`` holds ``(serial + 1) / SERIAL_SCALE``: 0 only for an empty slot, and exact after
#: ``rint(value * SERIAL_SCALE) - 1`` in float32 (serials stay below
#: ``mara_env.sim.core.MAX_TASKS_PER_EPISODE``).
SERIAL_SCALE = 100_000.0
