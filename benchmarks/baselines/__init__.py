"""The baselines' settings and what they are worth: tuning on training seeds, the measured
effect of each departure from the papers, the static-bundle check, look-ahead calibration and a
MaskablePPO example.

Run ``python -m mara_env.benchmarks.baselines <command> [options]``; each command is also its own module:

* ``tune`` (:mod:`mara_env.benchmarks.baselines.tuning`): tune every baseline's documented settings on
  training seeds.
* ``deviations`` (:mod:`mara_env.benchmarks.baselines.deviations`): measure each way LARA and LaiRA
  depart from their papers.
* ``static-bundle`` (:mod:`mara_env.benchmarks.baselines.static_bundle.cli`): play the static bundles
  (all tasks at once) and check against their calibration.
* ``maskable-ppo`` (:mod:`mara_env.benchmarks.baselines.maskable_ppo`): train sb3-contrib's MaskablePPO
  and compare it with a random masked policy.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "tune": (
        "mara_env.benchmarks.baselines.tuning",
        "Tune every baseline's documented settings on training seeds.",
    ),
    "deviations": (
        "mara_env.benchmarks.baselines.deviations",
        "Measure each way LARA and LaiRA depart from their papers.",
    ),
    "static-bundle": (
        "mara_env.benchmarks.baselines.static_bundle.cli",
        "Play the static bundles (all tasks at once) and check against their calibration.",
    ),
    "maskable-ppo": (
        "mara_env.benchmarks.baselines.maskable_ppo",
        "Train sb3-contrib's MaskablePPO and compare it with a random masked policy.",
    ),
}
