"""The documentation site builds in strict mode, holds every page of its nav, and renders.

The site is built once, with the command docs/development.md gives (``mkdocs build --strict``),
into a temporary folder. Every page the nav names must be there, every relative link and image
of every page must lead to a file of the site, and the results pages must say which file and
command they come from. Where Chromium is installed (``/usr/bin/chromium``; Debian's package
``chromium``), each page is also opened headless and its rendered DOM checked: a title and
text in the body, and every image a file of the site. A small site built from a temporary
folder checks that the hook turns repository links into links and that a link to a missing
file fails the strict build.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("material", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed")

from mkdocs.config import load_config
from mkdocs.structure.files import File

from mara_env.benchmarks.reference import site_markdown

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "benchmarks" / "reference" / "docs_site.py"
CHROMIUM = Path("/usr/bin/chromium")
#: Material's end-of-life notice, printed on every build, is not a warning of this site.
QUIET = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
#: Results pages and the command each must be headed with (the page itself names it).
COMMANDS = {
    "results/tuning/v3.md": "python -m mara_env.benchmarks.baselines.tuning",
    "results/v3/leaderboard/leaderboard.md": "mara-leaderboard",
    "results/predictors/results.md": "python -m mara_env.benchmarks.prediction.benchmark",
}


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``, from the config's folder."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=300,
        env=QUIET,
    )


@pytest.fixture(scope="module")
def site() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        result = build(ROOT / "mkdocs.yml", Path(folder) / "site")
        assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
        yield Path(folder) / "site"


def nav_pages() -> list[str]:
    config = load_config(str(ROOT / "mkdocs.yml"))
    return list(site_markdown.nav_paths(config.nav))


def built(site: Path, page: str) -> Path:
    """Where the site holds the nav page ``page``."""
    return Path(File(page, str(ROOT / "docs"), str(site), use_directory_urls=True).abs_dest_path)


class PageParser(HTMLParser):
    """The images, relative links and text of an HTML page's ``<body>``."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.headings = 0
        self.text: list[str] = []
        self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "body":
            self._in_body = True
        elif tag == "img" and values.get("src"):
            self.images.append(values["src"] or "")
        elif tag == "a" and values.get("href"):
            self.links.append(values["href"] or "")
        elif tag == "h1":
            self.headings += 1

    def handle_data(self, data: str) -> None:
        if self._in_body and data.strip():
            self.text.append(data.strip())


def parse(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    return parser


def missing_targets(page: Path, site: Path, targets: list[str]) -> list[str]:
    """The relative ``targets`` of ``page`` (URLs as written in it) that are not files of
    ``site``."""
    missing = []
    for target in targets:
        path = target.split("#")[0].split("?")[0]
        if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", path):
            continue
        resolved = (page.parent / path).resolve()
        if resolved.is_dir():
            resolved = resolved / "index.html"
        if not resolved.is_file() or not resolved.is_relative_to(site.resolve()):
            missing.append(target)
    return missing


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    pages = nav_pages()
    assert len(pages) >= 25
    assert {"index.md", "environment.md", "results/v3/leaderboard/leaderboard.md"} <= set(pages)
    missing = [page for page in pages if not built(site, page).is_file()]
    assert not missing, f"nav pages the build did not write: {missing}"


def test_links_and_images_of_every_page_lead_to_files_of_the_site(site: Path) -> None:
    """Relative links and images of every page (the 404 page's are absolute by design)."""
    broken = {}
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        parsed = parse(page.read_text(encoding="utf-8"))
        missing = missing_targets(page, site, [*parsed.images, *parsed.links])
        if missing:
            broken[str(page.relative_to(site))] = missing
    assert not broken, f"links and images that lead nowhere: {broken}"


def test_results_pages_name_their_file_and_command(site: Path) -> None:
    def text(page: str) -> str:
        return re.sub(r"<[^>]+>", "", built(site, page).read_text(encoding="utf-8"))

    for page, command in COMMANDS.items():
        assert f"Results file benchmarks/{page}, made by {command}" in text(page), page
    v2 = "results/v2/mara/README.md"
    assert f"Results file benchmarks/{v2}." in text(v2)  # the page names no single command
    # a plot the page names only in its text
    assert "mara_ppo_joint_training.png" in parse(built(site, v2).read_text()).images


def test_the_api_pages_document_the_public_objects(site: Path) -> None:
    for page, names in {
        "api/mara_env.md": [
            "mara_env.worlds.config.ClusterConfig",
            "mara_env.envs.gym_env.ClusterGymEnv",
        ],
        "api/agents.md": ["mara_env.agents.registry.make_agent", "mara_env.agents.base.Scheduler"],
        "api/predictors.md": [
            "mara_env.predictors.registry.make_predictor",
            "mara_env.predictors.base.Predictor",
        ],
    }.items():
        html = built(site, page).read_text(encoding="utf-8")
        for name in names:
            assert f'id="{name}"' in html, f"{page} does not document {name}"
        assert ":func:`" not in html and ":class:`" not in html, f"{page} shows Sphinx roles"
        # doctests of "Example:" sections are code, not Markdown quotes
        assert 'class="gp">&gt;&gt;&gt;' in html and "<blockquote>" not in html, page


@pytest.fixture
def small_repository(tmp_path: Path) -> Path:
    """A repository with one documentation page, one results page and one other file."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(
        "# Home\n\n[the code](../tool.py), [the results](../benchmarks/results/x/README.md)\n"
    )
    (tmp_path / "tool.py").write_text("")
    results = tmp_path / "benchmarks" / "results" / "x"
    results.mkdir(parents=True)
    (results / "README.md").write_text("# X\n\nWritten by `python -m tool`.\n\n![plot](p.png)\n")
    shutil.copy(ROOT / "benchmarks" / "results" / "verdicts" / "verdicts.png", results / "p.png")
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: small\n"
        "extra:\n  source_url: https://example.org/blob/main/\n"
        f"hooks:\n  - {HOOK}\n"
        "validation:\n  omitted_files: warn\n  unrecognized_links: warn\n"
        "nav:\n  - index.md\n  - results/x/README.md\n"
    )
    return tmp_path


def test_the_hook_links_repository_files_and_adds_results_pages(small_repository: Path) -> None:
    result = build(small_repository / "mkdocs.yml", small_repository / "site")
    assert result.returncode == 0, result.stderr
    home = (small_repository / "site" / "index.html").read_text()
    assert 'href="https://example.org/blob/main/tool.py"' in home
    assert 'href="results/x/"' in home
    page = (small_repository / "site" / "results" / "x" / "index.html").read_text()
    assert "made by <code>python -m tool</code>" in page
    assert (small_repository / "site" / "results" / "x" / "p.png").is_file()


@pytest.mark.parametrize(
    "link", ["../missing.py", "missing.md", "../benchmarks/results/x/missing.png"]
)
def test_a_link_to_a_missing_file_fails_the_strict_build(small_repository: Path, link: str) -> None:
    index = small_repository / "docs" / "index.md"
    index.write_text(index.read_text() + f"\n[broken]({link})\n")
    result = build(small_repository / "mkdocs.yml", small_repository / "site")
    assert result.returncode != 0
    assert f"links to '{link}'" in result.stderr


def dump_dom(page: Path, *options: str) -> str:
    """The DOM of ``page`` once Chromium has loaded and rendered it headless (with ``options``,
    e.g. a window size)."""
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [
                str(CHROMIUM),
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                f"--user-data-dir={profile}",
                *options,
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, f"chromium failed on {page}: {result.stderr[-2000:]}"
    return result.stdout


def test_every_page_renders_in_chromium(site: Path) -> None:
    """Each nav page opened headless: a title, text, and every image a file of the site."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install chromium)")
    pages = [built(site, page) for page in nav_pages()]
    with ThreadPoolExecutor(max_workers=4) as pool:
        doms = list(pool.map(dump_dom, pages))
    problems = {}
    for page, dom in zip(pages, doms, strict=True):
        parsed = parse(dom)
        found = []
        if parsed.headings < 1 or len(" ".join(parsed.text)) < 100:
            found.append("no title or text in the body")
        found += [f"missing image {src}" for src in missing_targets(page, site, parsed.images)]
        if found:
            problems[str(page.relative_to(site))] = found
    assert not problems, f"pages that do not render: {problems}"


#: Set on the page's body by :func:`wrapped_cells`'s script: how many right-aligned (number)
#: cells of the tables take more than one line, and how many there are.
LAYOUT_SCRIPT = """<script>
window.addEventListener("load", () => {
  const cells = [...document.querySelectorAll('td[style*="text-align: right"]')];
  const wrapped = cells.filter((cell) => {
    const line = parseFloat(getComputedStyle(cell).lineHeight) || 20;
    const range = document.createRange();
    range.selectNodeContents(cell);
    return range.getBoundingClientRect().height > 1.5 * line;
  });
  document.body.dataset.cells = String(cells.length);
  document.body.dataset.wrapped = String(wrapped.length);
});
</script>"""


def wrapped_cells(page: Path, width: int) -> tuple[int, int]:
    """(wrapped, all) number cells of ``page`` laid out by headless Chromium ``width`` px wide."""
    measured = page.with_name("measured.html")
    measured.write_text(page.read_text().replace("</body>", f"{LAYOUT_SCRIPT}</body>"))
    dom = dump_dom(measured, f"--window-size={width},900", "--virtual-time-budget=5000")
    found = re.search(r'data-cells="(\d+)" data-wrapped="(\d+)"', dom)
    assert found, "the layout script did not run"
    return int(found.group(2)), int(found.group(1))


@pytest.mark.parametrize("width", [1280, 1920])
def test_the_leaderboard_s_numbers_stay_on_one_line(site: Path, width: int) -> None:
    """At 1280 and 1920 px no interval of the leaderboard's tables breaks over lines."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is not installed (Debian: apt-get install chromium)")
    page = built(site, "results/v3/leaderboard/leaderboard.md")
    wrapped, cells = wrapped_cells(page, width)
    assert cells > 100 and wrapped == 0, f"{wrapped} of {cells} number cells wrap at {width} px"
