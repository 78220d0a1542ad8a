"""The page of :mod:`~mara_env.benchmarks.prediction.prediction_pays`: each world's ladder beside
what predictions are worth to the schedulers there, every figure computed from the results files.

Example:
    >>> rows = [
    ...     {"world": "v3", "variant": v, "workload": "rl", "load": 1.4, "seed": s,
    ...      "completion_rate": 0.5 + 0.1 * (v == "mara") + 0.01 * s}
    ...     for v in ("mara", "edf") for s in range(3)
    ... ]
    >>> f"{paired(rows, 'v3', 'mara', 'edf').mean:+.3f}"
    '+0.100'
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mara_env.agents.statistics import Summary, mean_ci
from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.figures import PlotsUnavailable, pyplot, save_png
from mara_env.benchmarks.common.protocol import EVALUATION_WORKLOADS
from mara_env.benchmarks.prediction.audit_worlds import WORLDS
from mara_env.benchmarks.prediction.prediction_pays import VARIANTS
from mara_env.worlds.world import WORLD_VERSIONS

#: A value with its 95% interval: (value, low, high).
Triple = tuple[float, float, float]
#: The ladder's band the page reads, and its rungs: (row name in ladder.csv, column title).
BAND = "30-50%"
RUNGS = (
    ("+ loss history (posterior)", "+ loss history (observation only)"),
    ("+ denoised oracle", "+ denoised oracle (privileged)"),
    ("+ exact remaining work", "+ exact remaining work (privileged)"),
)
#: The differences the page reports: (title, variant, minus variant).
DIFFERENCES = (
    ("MARA - EDF", "mara", "edf"),
    ("MARA - LARA", "mara", "lara"),
    ("MARA's own predictions - none", "mara", "mara + no predictions"),
    ("MARA + oracle - none", "mara + oracle", "mara + no predictions"),
    ("LARA + oracle - LARA", "lara_oracle", "lara"),
    ("reach planner - EDF", "reach_planner", "edf"),
    ("clairvoyant - EDF", "clairvoyant", "edf"),
)


def _episodes(rows: Sequence[Mapping[str, Any]], world: str, variant: str) -> dict[Any, float]:
    return {
        (row["workload"], row["load"], row["seed"]): float(row["completion_rate"])
        for row in rows
        if row["world"] == world and row["variant"] == variant
    }


def paired(rows: Sequence[Mapping[str, Any]], world: str, variant: str, minus: str) -> Summary:
    """``variant`` minus ``minus`` on ``world``'s episodes, paired, with a 95% bootstrap interval."""
    first, second = _episodes(rows, world, variant), _episodes(rows, world, minus)
    keys = sorted(first)
    if not keys or sorted(second) != keys:
        raise ValueError(
            f"{variant!r} and {minus!r} did not play the same episodes of {world!r}: rerun "
            "python -m mara_env.benchmarks.prediction.prediction_pays."
        )
    return mean_ci([first[key] - second[key] for key in keys])


def _interval(value: Summary, form: str = "+.3f") -> str:
    return f"{value.mean:{form}} [{value.low:{form}}, {value.high:{form}}]"


def read_ladder(path: Path) -> dict[tuple[str, str, str], Triple]:
    """The ladder's AUC rows at :data:`BAND`: (world, rung, statistic) -> (value, low, high)."""
    with path.open(newline="") as handle:
        return {
            (row["world"], row["rung"], row["statistic"]): (
                float(row["value"]),
                float(row["low"]),
                float(row["high"]),
            )
            for row in csv.DictReader(handle)
            if row["band"] == BAND and row["statistic"] in ("AUC", "AUC gain")
        }


def ladder_table(ladder: Mapping[Any, Triple], worlds: Sequence[str]) -> list[str]:
    """What could be known: the observation's AUC and each rung's paired gain over it."""
    lines = [
        "| world | observation alone | " + " | ".join(title for _, title in RUNGS) + " |",
        "|---|---:|" + "---:|" * len(RUNGS),
    ]
    for world in worlds:
        cells = [_triple(ladder.get((world, "observation", "AUC")), ".3f")]
        cells += [_triple(ladder.get((world, rung, "AUC gain")), "+.3f") for rung, _ in RUNGS]
        lines.append(f"| `{world}` | " + " | ".join(cells) + " |")
    return lines


def _triple(value: Triple | None, form: str) -> str:
    if value is None:
        return "not in the ladder's file"
    return f"{value[0]:{form}} [{value[1]:{form}}, {value[2]:{form}}]"


def worth_table(rows: Sequence[Mapping[str, Any]], worlds: Sequence[str]) -> list[str]:
    """What it is worth: every difference of :data:`DIFFERENCES`, world by world."""
    lines = ["| world | " + " | ".join(title for title, _, _ in DIFFERENCES) + " |"]
    lines.append("|---|" + "---:|" * len(DIFFERENCES))
    for world in worlds:
        cells = [_interval(paired(rows, world, a, b)) for _, a, b in DIFFERENCES]
        lines.append(f"| `{world}` | " + " | ".join(cells) + " |")
    return lines


def completion_table(rows: Sequence[Mapping[str, Any]], worlds: Sequence[str]) -> list[str]:
    """Each variant's mean completion rate on each world."""
    lines = ["| variant | " + " | ".join(f"`{world}`" for world in worlds) + " |"]
    lines.append("|---|" + "---:|" * len(worlds))
    for variant in VARIANTS:
        cells = [
            _interval(mean_ci(list(_episodes(rows, world, variant).values())), ".3f")
            for world in worlds
        ]
        lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return lines


def zero_shot_note(worlds: Sequence[str]) -> str:
    """Which worlds play another world's shipped models, in words ("" if none)."""
    borrowed = [world for world in worlds if world not in {f"v{v}" for v in WORLD_VERSIONS}]
    if not borrowed:
        return ""
    return " " + " ".join(
        f"`{world}` has no models of its own: LARA's tuned settings, the reach model and MARA "
        f"are Cluster-v{WORLDS[world].version}'s, played zero-shot."
        for world in borrowed
    )


def figure(
    rows: Sequence[Mapping[str, Any]],
    ladder: Mapping[Any, Triple],
    worlds: Sequence[str],
    path: Path,
) -> None:
    """Two panels, one group of bars per world: the ladder's gains at :data:`BAND`, and the
    differences of :data:`DIFFERENCES`, each with its 95% interval."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    gains = [(label, [ladder.get((w, rung, "AUC gain")) for w in worlds]) for rung, label in RUNGS]
    _bars(
        left, gains, worlds, f"AUC gain over the observation alone, tasks {BAND} into their window"
    )
    differences = [
        (label, [_as_triple(paired(rows, w, a, b)) for w in worlds]) for label, a, b in DIFFERENCES
    ]
    _bars(right, differences, worlds, "completion rate difference, paired episodes")
    fig.tight_layout()
    save_png(fig, path, dpi=110)


def _bars(
    axis: Any,
    series: Sequence[tuple[str, Sequence[Triple | None]]],
    worlds: Sequence[str],
    title: str,
) -> None:
    """One bar per (series, world) with its interval; a missing value draws nothing."""
    width = 0.8 / len(series)
    x = np.arange(len(worlds))
    for index, (label, values) in enumerate(series):
        triples = [v if v is not None else (np.nan, np.nan, np.nan) for v in values]
        means = np.array([t[0] for t in triples])
        errors = np.array([[t[0] - t[1] for t in triples], [t[2] - t[0] for t in triples]])
        offset = (index - (len(series) - 1) / 2) * width
        axis.bar(x + offset, means, width, yerr=errors, label=label, capsize=2)
    axis.axhline(0.0, color="black", linewidth=0.8)
    axis.set_xticks(x, worlds)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7)


def _as_triple(value: Summary) -> Triple:
    return (value.mean, value.low, value.high)


def write_page(
    output: Path,
    rows: Sequence[Mapping[str, Any]],
    ladder_path: Path,
    seeds: Sequence[int],
    loads: Sequence[float],
    note: str,
) -> str:
    """Write ``README.md`` (and ``prediction_pays.png`` where matplotlib is installed) to
    ``output``; return the page."""
    worlds = list(dict.fromkeys(row["world"] for row in rows))
    ladder = read_ladder(ladder_path)
    episodes = len(_episodes(rows, worlds[0], VARIANTS[0]))
    plot = ""
    try:
        figure(rows, ladder, worlds, output / "prediction_pays.png")
        plot = "![the ladder's gains and the paired differences, world by world](prediction_pays.png)\n"
    except PlotsUnavailable as error:
        print(error)
    text = "\n".join(
        [
            "# When does loss prediction pay?",
            "",
            "Written by `python -m mara_env.benchmarks.prediction.prediction_pays` (its docstring "
            "says what each variant is). Worlds: "
            + "; ".join(f"`{world}`, {WORLDS[world].description}" for world in worlds)
            + f". Every variant plays the same {episodes} episodes of each world: the "
            "`evaluation` preset (held-out curves), workloads "
            f"{', '.join(EVALUATION_WORKLOADS)}, loads {', '.join(f'{x:g}' for x in loads)}, "
            f"seeds {seeds[0]}-{seeds[-1]}; differences are paired on them, with 95% bootstrap "
            "intervals over episodes. The swapped MARA rows change the policy's prediction "
            "features at test time, without retraining: a lower bound on what those features "
            "are worth to a policy trained on them (MARA trained without predictions is measured on "
            f"[MARA's ablations](../v3/mara/ablations.md)).{zero_shot_note(worlds)} {note}",
            "",
            "## What could be known",
            "",
            f"The information ladder (`benchmarks/results/ladder`) at {BAND} of each task's "
            'deadline window: the AUC of a probe on the observation alone for "can still reach '
            'its target by its deadline", and what each rung adds to it (paired).',
            "",
            *ladder_table(ladder, worlds),
            "",
            "## What it is worth",
            "",
            *worth_table(rows, worlds),
            "",
            plot,
            "## Completion rates",
            "",
            *completion_table(rows, worlds),
            "",
        ]
    )
    write_atomically(output / "README.md", text)
    return text
