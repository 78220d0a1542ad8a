"""The layout of a task's row: its fields, in the per-task table and in the slot holding it.

:class:`mara_env.sim.core.ClusterBatch` keeps every task as a row of float64 fields (ids and epochs
are exact whole numbers); the compiled epoch (:mod:`mara_env.sim.dynamics`) and the observation read
the fields by the indices defined here.
"""

from __future__ import annotations

import numpy as np

from mara_env.sim.layout import SLOT_FEATURES

#: A task's status (:meth:`mara_env.sim.core.ClusterBatch.status`).
FUTURE, ACTIVE, COMPLETED, EXPIRED = 0, 1, 2, 3
NO_TASK = -1


#: Fields of a task's row, in the packed per-task table and in the slot holding it (float64;
#: ids and epochs are exact whole numbers). The first eight change while the task trains (ordered
#: so that work and loss, their previous values, and the two losses are each one slice; the
#: natural logs of the two losses are kept so that observations need not take them again); the
#: row ends with a block of ``SLOT_FEATURES`` values in the observation's slot-column order
#: holding the task's constant features (0 in the other columns; see
#: :func:`mara_env.sim.observation.slot_matrix`).
TASK_FIELDS = (
    "progress",
    "work",
    "loss",
    "previous_work",
    "previous_loss",
    "phi",
    "log_loss",
    "log_previous_loss",
    "speed",
    "alpha",
    "target",
    "deadline",
    "arrival",
    "log_initial_loss",
    "log_gap",
    "family",
    "initial_loss",
    # hidden: the curve step at which the task first reports a loss <= its target (inf: never);
    # only the episode metrics read it (idle node-epochs while a feasible task waited)
    "target_step",
    # the time features of the observation at epoch 0 and their change per epoch (0 in an
    # empty slot's row, so its time features come out 0)
    "time_left_at_0",
    "time_fraction_at_0",
    "age_at_0",
    "time_left_per_epoch",
    "time_fraction_per_epoch",
    "age_per_epoch",
    # per-task outcome (meaningful in the task table only)
    "end_epoch",
    "final_status",
    *(f"feature_{column}" for column in range(SLOT_FEATURES)),
)
FIELD = {name: index for index, name in enumerate(TASK_FIELDS)}
PROGRESS, WORK, LOSS, PREVIOUS_WORK, PREVIOUS_LOSS, PHI, LOG_LOSS, LOG_PREVIOUS_LOSS = range(8)
#: The time features at epoch 0 and their changes per epoch (blocks in the order of the
#: observation's time columns).
TIME_AT_0 = slice(FIELD["time_left_at_0"], FIELD["age_at_0"] + 1)
TIME_PER_EPOCH = slice(FIELD["time_left_per_epoch"], FIELD["age_per_epoch"] + 1)
#: Where the block of constant slot features starts in a row.
FEATURES = FIELD["feature_0"]
#: The row an empty slot (and the sentinel task) holds.
EMPTY_ROW = np.zeros(len(TASK_FIELDS))
EMPTY_ROW[
    [FIELD[name] for name in ("loss", "previous_loss", "log_gap", "alpha", "initial_loss")]
] = 1.0
EMPTY_ROW[FIELD["end_epoch"]] = -1.0
EMPTY_ROW.setflags(write=False)
#: Indices of the other fields, for the compiled code (:mod:`mara_env.sim.dynamics`).
_NAMED = (
    "speed",
    "alpha",
    "target",
    "deadline",
    "arrival",
    "log_initial_loss",
    "log_gap",
    "family",
    "initial_loss",
    "target_step",
    "time_left_at_0",
    "time_fraction_at_0",
    "age_at_0",
    "time_left_per_epoch",
    "time_fraction_per_epoch",
    "age_per_epoch",
    "end_epoch",
    "final_status",
)
(
    SPEED,
    ALPHA,
    TARGET,
    DEADLINE,
    ARRIVAL,
    LOG_INITIAL_LOSS,
    LOG_GAP,
    FAMILY,
    INITIAL_LOSS,
    TARGET_STEP,
    TIME_LEFT_AT_0,
    TIME_FRACTION_AT_0,
    AGE_AT_0,
    TIME_LEFT_PER_EPOCH,
    TIME_FRACTION_PER_EPOCH,
    AGE_PER_EPOCH,
    END_EPOCH,
    FINAL_STATUS,
) = (FIELD[name] for name in _NAMED)
