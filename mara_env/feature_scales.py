"""Scales of the observation's features (one home, read by the core and the observation).

Every observation and state value lies in ``[-FEATURE_BOUND, FEATURE_BOUND]`` (values are
clipped); times are in units of ``TIME_SCALE`` epochs, speeds of ``SPEED_SCALE`` curve steps per
node-epoch, progress of ``STEP_SCALE`` curve steps, arrival serials of ``SERIAL_SCALE`` tasks.
"""

from __future__ import annotations

FEATURE_BOUND = 100.0
TIME_SCALE = 50.0
SPEED_SCALE = 10.0
STEP_SCALE = 100.0
SERIAL_SCALE = 1000.0
