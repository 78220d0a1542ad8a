"""The measured figures of the README and the docs, copied from the results files that hold them.

Each figure a page shows sits between two markers, ``<!-- generated:NAME -->`` and
``<!-- /generated:NAME -->``, and :data:`SECTIONS` says which page, which results file and
which part of it. ``python -m mara_env.benchmarks.reference.figures`` rewrites every marked section from
its file; ``--check`` exits 1 (naming the sections) if a page says something else, which is
what the tests run, so a regenerated result cannot leave a stale copy behind. The parts of a
file a section can show are the extractors of :mod:`mara_env.benchmarks.reference.extractors`.

Example:
    >>> text = "intro\\n<!-- generated:x -->\\nold\\n<!-- /generated:x -->\\nend\\n"
    >>> print(replace_section(text, "x", "new"), end="")
    intro
    <!-- generated:x -->
    new
    <!-- /generated:x -->
    end
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mara_env.atomic_files import write_atomically
from mara_env.benchmarks.common.provenance import SOURCE_ROOT
from mara_env.benchmarks.reference.extractors import (
    FiguresError,
    after_title,
    block_from,
    card_facts,
    first_table,
    lines_containing,
    table_after,
    text_block,
)

#: The README, relative to the repository root.
README = Path("README.md")
#: The page of MARA's results on Cluster-v3.
MARA_V3 = "benchmarks/results/v3/mara/README.md"


@dataclass(frozen=True)
class Section:
    """One generated section of a page.

    Attributes:
        name: The marker's name (unique over all pages).
        source: The results file it is copied from (relative to the repository root).
        extract: The part of the source's text the page shows.
        page: The page holding the markers (relative to the repository root).
    """

    name: str
    source: Path
    extract: Callable[[str], str]
    page: Path = README

    def text(self, root: Path = SOURCE_ROOT) -> str:
        """The section's text as the source file gives it now."""
        path = root / self.source
        if not path.is_file():
            raise FiguresError(f"{self.source} is missing: regenerate it first.")
        return self.extract(path.read_text())


#: The measuring scripts' results pages (``--output``) shown by docs/measurements.md, by
#: section name.
PERF_PAGES = (
    "env_throughput",
    "episode_memory",
    "wrapper_throughput",
    "decision_time",
    "mara_timing",
    "rollout_throughput",
    "maskable_ppo",
)

#: The generated sections, by page.
SECTIONS: tuple[Section, ...] = (
    Section("leaderboard", Path("benchmarks/results/v3/leaderboard/leaderboard.md"), first_table),
    Section(
        "leaderboard-run",
        Path("benchmarks/results/v3/leaderboard/leaderboard.md"),
        lines_containing("- Python ", "- platform: ", " episodes run in "),
        Path("docs/leaderboard.md"),
    ),
    *(
        Section(
            "perf-" + name.replace("_", "-"),
            Path(f"benchmarks/results/perf/{name}.md"),
            after_title,
            Path("docs/measurements.md"),
        )
        for name in PERF_PAGES
    ),
    *(
        Section(
            f"perf-ppo-speed-{name.replace('_', '-')}",
            Path(f"benchmarks/results/perf/ppo_speed_{name}.json"),
            card_facts("cluster_epochs_per_second", "wall_minutes", "rollout_workers", "machine"),
            Path("docs/measurements.md"),
        )
        for name in ("before", "workers1", "workers2", "lag1_workers1")
    ),
    Section(
        "mara-v2-evaluation",
        Path("benchmarks/results/v2/mara/evaluation.md"),
        table_after("| mara minus"),
        Path("benchmarks/results/v2/mara/README.md"),
    ),
    *(
        Section(
            f"mara-v2-{name}",
            Path(f"benchmarks/results/v2/mara/{source}"),
            text_block,
            Path("benchmarks/results/v2/mara/README.md"),
        )
        for name, source in (
            ("trust-region", "trust_region_comparison.txt"),
            ("budget", "budget_comparison.txt"),
            ("ship-choice", "ship_choice.txt"),
        )
    ),
    Section(
        "mara-v3-evaluation",
        Path("benchmarks/results/v3/mara/evaluation.md"),
        table_after("| mara minus"),
        Path(MARA_V3),
    ),
    Section(
        "mara-v3-teachers",
        Path("benchmarks/results/v3/mara/teachers.md"),
        table_after("| mara minus | training seeds"),
        Path(MARA_V3),
    ),
    Section(
        "mara-v3-minus-edf",
        Path("benchmarks/results/v3/mara/evaluation.md"),
        table_after("| agent | load | paired episodes | difference from edf"),
        Path(MARA_V3),
    ),
    *(
        Section(
            name,
            Path(source),
            table_after(marker),
            Path("docs/predictors.md"),
        )
        for name, source, marker in (
            ("reach-v3-scores", "benchmarks/results/v3/reach/README.md", "## Which tasks can"),
            (
                "reach-v3-minus-edf",
                "benchmarks/results/v3/mara/evaluation.md",
                "| agent | load | paired episodes | difference from edf",
            ),
            ("reach-v3-work-split", "benchmarks/results/v3/reach/work_split.md", "# Where"),
        )
    ),
    *(
        Section(
            f"prediction-pays-{name}",
            Path("benchmarks/results/prediction_pays/README.md"),
            table_after(marker),
            Path("docs/predictors.md"),
        )
        for name, marker in (
            ("ladder", "| world | observation alone"),
            ("worth", "| world | MARA - EDF"),
        )
    ),
    *(
        Section(
            name, Path(f"benchmarks/results/v3/{source}"), lines_containing("times EDF's"), page
        )
        for name, source, page in (
            ("reach-v3-never-ratio", "reach/work_split.md", Path("docs/predictors.md")),
            ("mara-v3-value-never-ratio", "mara/work_split.md", Path(MARA_V3)),
        )
    ),
    *(
        Section(
            name,
            Path("benchmarks/results/v3/mara/ablations.md"),
            table_after("| mara minus | training seeds"),
            Path(page),
        )
        for name, page in (
            ("mara-v3-ablations", MARA_V3),
            ("predictors-v3-ablations", "docs/predictors.md"),
        )
    ),
    *(
        Section(
            f"{prefix}-{name}",
            Path("benchmarks/results/v3/mara/value_of_prediction.md"),
            table_after(marker),
            Path(page),
        )
        for name, marker in (("value", "## What each"), ("value-baselines", "## The rows"))
        for prefix, page in (("mara-v3", MARA_V3), ("predictors-v3", "docs/predictors.md"))
    ),
    *(
        Section(
            f"mara-v3-{name}",
            Path(f"benchmarks/results/v3/mara/{source}"),
            text_block,
            Path(MARA_V3),
        )
        for name, source in (
            ("ship-choice", "ship_choice.txt"),
            ("trust-region", "trust_region_logs.txt"),
        )
    ),
    Section(
        "mara-v2-joint-move",
        Path("benchmarks/results/v2/mara/trust_region_logs.txt"),
        block_from("benchmarks/results/v2/mara/mara_ppo_per_node_training.csv"),
        Path("benchmarks/results/v2/mara/README.md"),
    ),
    Section(
        "prediction-summary",
        Path("benchmarks/results/predictors/results.md"),
        table_after("## Acceptance summary"),
        Path("docs/predictors.md"),
    ),
    Section(
        "verdicts",
        Path("benchmarks/results/verdicts/verdicts.md"),
        table_after("In short"),
        Path("docs/predictors.md"),
    ),
    Section(
        "ladder-verdicts",
        Path("benchmarks/results/ladder/README.md"),
        lines_containing("headroom: "),
        Path("docs/predictors.md"),
    ),
    Section(
        "ladder-v3",
        Path("benchmarks/results/ladder/README.md"),
        table_after("## `v3`"),
        Path("docs/predictors.md"),
    ),
    Section(
        "feature-swaps",
        Path("benchmarks/results/ladder/feature_swaps.md"),
        first_table,
        Path("docs/predictors.md"),
    ),
    *(
        Section(
            name,
            Path("benchmarks/results/v2/mara/prediction_value/value_of_prediction.md"),
            table_after(marker),
            Path("benchmarks/results/v2/mara/prediction_value/README.md"),
        )
        for name, marker in (
            ("prediction-value", "## What each predictor's features are worth"),
            ("prediction-value-ablations", "## The recipe's ablations"),
            ("prediction-value-budget", "The budget check:"),
        )
    ),
    *(
        Section(
            f"reliability-{name}",
            Path(f"benchmarks/results/reliability/{name}.md"),
            after_title,
            Path("docs/reliability.md"),
        )
        for name in ("fuzz", "kills")
    ),
    Section(
        "rankings",
        Path("benchmarks/results/rankings.md"),
        first_table,
        Path("docs/curves.md"),
    ),
    *(
        Section(
            f"load-calibration-v{world}",
            Path(f"benchmarks/results/load_calibration/v{world}.md"),
            after_title,
            Path("docs/world.md"),
        )
        for world in (3, 1)
    ),
    *(
        Section(
            f"mara-v1-{name}",
            Path(f"benchmarks/results/v1/mara/{source}"),
            table_after(marker),
            Path("benchmarks/results/v1/mara/README.md"),
        )
        for name, source, marker in (
            ("ppo-means", "mara_ppo_evaluation.md", "| agent | load | mean over workloads"),
            ("ppo-paired", "mara_ppo_evaluation.md", "| agent | load | paired episodes"),
            ("evaluation-means", "evaluation.md", "| agent | load | mean over workloads"),
            ("evaluation-paired", "evaluation.md", "| agent | load | paired episodes"),
            ("evaluation-gap", "evaluation.md", "| agent | load | share of"),
            ("ablations-means", "ablations.md", "| agent | load | mean over workloads"),
            ("ablations-paired", "ablations.md", "| agent | load | paired episodes"),
        )
    ),
    *(
        Section(
            f"mara-v1-{name}-card",
            Path(f"benchmarks/results/v1/mara/{card}.json"),
            card_facts("confirmation", "ppo", "wall_minutes"),
            Path("benchmarks/results/v1/mara/README.md"),
        )
        for name, card in (
            ("ppo", "mara_ppo"),
            ("first-recipe", "mara_ppo_first_recipe"),
            ("second-recipe", "mara_ppo_second_recipe"),
        )
    ),
)


def replace_section(text: str, name: str, body: str) -> str:
    """``text`` with the lines between the markers of ``name`` replaced by ``body``.

    Raises:
        FiguresError: If the markers are missing, repeated or out of order.
    """
    start, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise FiguresError(f"the page must hold one {start} followed by one {end}.")
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{body.strip()}\n{end}{tail}"


def render(page: Path, text: str, root: Path = SOURCE_ROOT) -> str:
    """``text`` (of ``page``) with each of its sections as their sources give them."""
    for section in SECTIONS:
        if section.page == page:
            try:
                text = replace_section(text, section.name, section.text(root))
            except FiguresError as error:
                raise FiguresError(f"{page}, section {section.name!r}: {error}") from None
    return text


def stale_sections(root: Path = SOURCE_ROOT) -> list[str]:
    """The names of the sections whose page (under ``root``) does not say what their source
    gives."""
    stale = []
    for page in dict.fromkeys(section.page for section in SECTIONS):
        text = (root / page).read_text()
        stale += [
            section.name
            for section in SECTIONS
            if section.page == page
            and replace_section(text, section.name, section.text(root)) != text
        ]
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the pages' generated sections, or with ``--check`` compare them; returns 1 if
    one differs, 2 if a page or source is malformed."""
    parser = argparse.ArgumentParser(
        prog="python -m mara_env.benchmarks.reference.figures",
        description="Copy the README's and the docs' measured figures from the results files "
        "(or check them).",
    )
    parser.add_argument("--check", action="store_true", help="Only compare; exit 1 if it differs.")
    args = parser.parse_args(argv)
    pages = list(dict.fromkeys(section.page for section in SECTIONS))
    try:
        if args.check:
            stale = stale_sections()
            if stale:
                print(
                    f"The generated sections {stale} differ from their results files: run "
                    "python -m mara_env.benchmarks.reference.figures."
                )
                return 1
            print(f"Every generated section of {[str(p) for p in pages]} matches its results file.")
            return 0
        for page in pages:
            path = SOURCE_ROOT / page
            write_atomically(path, render(page, path.read_text()))
    except FiguresError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"Wrote the generated sections of {[str(p) for p in pages]}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
