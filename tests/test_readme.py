"""The README's and the docs pages' code runs as written, and their links lead somewhere."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from page_blocks import page_blocks

from mara_env.benchmarks.reference import figures

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
#: The README and the documentation pages under docs/.
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON_BLOCKS = [
    block
    for page in PAGES
    for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
]
#: The files of docs/your_scheduler.md, between its ``page:`` markers: test_your_scheduler_page.py
#: saves and runs them as that page says.
PAGE_FILES = [
    code
    for page in PAGES
    for language, code in page_blocks(page.read_text()).values()
    if language == "python"
]
#: The recipes for RL libraries kept out of the dev extra (TorchRL, RLlib, PufferLib):
#: test_rl_clients.py runs them where those are installed.
CLIENT_BLOCK = re.compile(r"^(?:from|import) (?:torchrl|ray|pufferlib)\b", flags=re.MULTILINE)
USAGE_BLOCKS = [
    block for block in PYTHON_BLOCKS if block not in PAGE_FILES and not CLIENT_BLOCK.search(block)
]
AEC_BLOCK = next(block for block in USAGE_BLOCKS if "env.agent_iter()" in block)
PREDICTOR_BLOCK = next(block for block in USAGE_BLOCKS if "TaskHistory(" in block)


def run_block(block: str, capsys: pytest.CaptureFixture[str]) -> str:
    exec(compile(block, "<documentation example>", "exec"), {})
    return capsys.readouterr().out


@pytest.mark.parametrize("block", USAGE_BLOCKS, ids=lambda block: block.splitlines()[0][:40])
def test_usage_examples_run(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every usage example executes as pasted (in an empty folder: some write files)."""
    monkeypatch.chdir(tmp_path)
    run_block(block, capsys)


def test_the_aec_example_prints_the_same_every_run(capsys: pytest.CaptureFixture[str]) -> None:
    first = run_block(AEC_BLOCK, capsys)
    assert 0.0 < float(first) < 1.0
    assert run_block(AEC_BLOCK, capsys) == first


def test_the_predictor_example_predicts_something_not_yet_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its target lies beyond the history: remaining work > 0, success neither sure nor hopeless."""
    quantiles, probability = run_block(PREDICTOR_BLOCK, capsys).splitlines()
    low, median, _ = (float(value) for value in quantiles.strip("[]").split())
    assert 0.0 < low < median < 200.0
    assert 0.0 < float(probability.strip("[]")) < 1.0


def test_the_readme_ranks_the_scheduler_of_the_page_with_the_page_s_command() -> None:
    """The README's command is the page's (test_your_scheduler_page.py runs it)."""
    page = (ROOT / "docs" / "your_scheduler.md").read_text()
    (command,) = re.findall(r"^mara-leaderboard .*my_sched:\S+$", README, re.M)
    assert page_blocks(page)["command-scheduler"] == ("bash", f"{command}\n")


def test_readme_has_exactly_one_test_command_for_ci() -> None:
    """.ci/run finds the test command between its markers."""
    section = re.search(
        r"<!-- ci:test-command -->\n```bash\n(.*?)\n```\n<!-- /ci:test-command -->", README, re.S
    )
    assert section is not None
    assert section.group(1).count("\n") == 0


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_leads_to_a_file(page: Path) -> None:
    """Links to files of the repository (and anchors of the same page) resolve."""
    text = page.read_text()
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^(https?:|mailto:)", target):
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if f'id="{anchor}"' not in text and not _heading_anchor(text, anchor):
                broken.append(target)
            continue
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.name}: links to nothing: {broken}"


def _heading_anchor(text: str, anchor: str) -> bool:
    """Whether a Markdown heading of ``text`` gets the GitHub anchor ``anchor``."""
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        slug = re.sub(r"[^a-z0-9 _-]", "", heading.lower()).replace(" ", "-")
        if slug == anchor:
            return True
    return False


def test_the_version_is_written_only_in_pyproject() -> None:
    """``mara_env.__version__`` reads the installed metadata; no page repeats the number."""
    import mara_env

    assert (
        mara_env.__version__
        == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    )
    assert not re.search(r"version = \{", README)
    for path in (ROOT / "mara_env").rglob("*.py"):
        if path.name != "moved.py":  # it names the releases that moved modules, not this one
            assert f'"{mara_env.__version__}"' not in path.read_text(), path


def test_the_pages_figures_are_those_of_the_results_files(tmp_path: Path) -> None:
    """Every generated section of the README and the docs is what its results file says, and a
    changed result is caught."""
    assert figures.stale_sections() == []
    for section in figures.SECTIONS:
        for path in (section.source, section.page):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text((ROOT / path).read_text())
    source = figures.SECTIONS[0].source
    edited = (ROOT / source).read_text().replace("| 1 |", "| 1 (edited) |", 1)
    (tmp_path / source).write_text(edited)
    assert figures.stale_sections(root=tmp_path) == [figures.SECTIONS[0].name]
    with pytest.raises(figures.FiguresError, match="must hold one"):
        figures.replace_section("no markers", "leaderboard", "x")
