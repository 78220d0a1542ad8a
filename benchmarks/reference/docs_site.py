"""The documentation site's build hook: results pages from ``benchmarks/results/``, and links.

``mkdocs build --strict`` (``mkdocs.yml`` at the repository root names this file under
``hooks:``) builds ``docs/`` into a site. MkDocs reads only its ``docs_dir``, while the results
pages live where the scripts write them, beside their data. At build time this hook:

* lays out the packages as installed, under ``build/import-tree``, for Griffe;
* adds every results page that the nav names (``results/<path>`` for
  ``benchmarks/results/<path>``) or that a page of the site links to, with the images and text
  files those pages link to, read from the repository as they are now (nothing is copied into
  ``docs/``);
* adds images that a page shows from elsewhere in the repository, under ``repository/<path>``;
* rewrites each page's relative links: one to a file the site holds leads to its page, one to
  any other repository file leads to that file in the repository (``extra.source_url`` in
  ``mkdocs.yml``, a URL the file's path is appended to; without it the link becomes its text),
  and one to a file the repository does not have is reported, which fails the strict build;
* heads each results page with a line naming its file and, when the page says which command
  wrote it ("Made by `...`", "Written by `...`", "Regenerate: `...`"), that command;
* ends a results page that is its folder's ``README.md`` (or the folder's only page) with the
  plots of its folder that it does not show itself (the scripts write them beside it, and the
  page often names them only in the text).

The Markdown work is done by :mod:`mara_env.benchmarks.reference.site_markdown`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from mara_env.benchmarks.reference.import_tree import SITE_TREE, import_path_tree
from mara_env.benchmarks.reference.site_markdown import (
    RESULTS_DIR,
    RESULTS_URI,
    SiteSources,
    figures_section,
    linked_sources,
    nav_paths,
    page_figures,
    results_header,
    rewrite_links,
)

log = get_plugin_logger("docs_site")


@dataclass
class _Build:
    """What one build knows: the repository, the sources of the pages it added."""

    root: Path
    site: SiteSources
    sources: dict[str, PurePosixPath]  # site path -> repository path of the added pages


_build: _Build | None = None


def _sources(config: MkDocsConfig) -> tuple[Path, SiteSources]:
    root = Path(config.config_file_path).resolve().parent
    docs_dir = Path(config.docs_dir).resolve()
    if not docs_dir.is_relative_to(root):
        raise PluginError(f"docs_dir {docs_dir} must be inside the repository {root}")
    source_url = config.extra.get("source_url")
    site = SiteSources(
        docs_dir=PurePosixPath(docs_dir.relative_to(root).as_posix()),
        pages={},
        exists=lambda path: (root / path).exists(),
        source_url=str(source_url) if source_url else None,
        is_dir=lambda path: (root / path).is_dir(),
        figures=lambda path: [
            PurePosixPath(figure.relative_to(root).as_posix())
            for figure in page_figures(root / path)
        ],
    )
    return root, site


@event_priority(100)  # before mkdocstrings reads its paths
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Lay out the packages as installed for Griffe, which reads them from folders
    (``paths`` in ``mkdocs.yml``; :mod:`mara_env.benchmarks.reference.import_tree`)."""
    import_path_tree(Path(config.config_file_path).parent / SITE_TREE)
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the results pages and the images they and the documentation pages show."""
    global _build
    root, site = _sources(config)
    nav_results = []
    for name in nav_paths(config.nav or []):
        if PurePosixPath(name).is_relative_to(RESULTS_URI):
            path = RESULTS_DIR / PurePosixPath(name).relative_to(RESULTS_URI)
            if (root / path).is_file():
                nav_results.append(path)
            else:
                log.warning(f"the nav names {name}, but {path} does not exist: run its command")
    docs = [site.docs_dir / page.src_uri for page in files.documentation_pages()]
    site.pages = linked_sources(
        [*docs, *nav_results], lambda path: (root / path).read_text(encoding="utf-8"), site
    )
    for source, uri in site.pages.items():
        if files.get_file_from_path(str(uri)) is not None:
            log.warning(f"{site.docs_dir / uri} hides {source}: rename one of them")
            continue
        files.append(File.generated(config, str(uri), abs_src_path=str(root / source)))
    _build = _Build(root, site, {str(uri): source for source, uri in site.pages.items()})
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Rewrite the page's links; head a results page with its file and command."""
    if _build is None:
        raise RuntimeError("the docs_site hook's on_files did not run before on_page_markdown")
    uri = page.file.src_uri
    source = _build.sources.get(uri, _build.site.docs_dir / uri)
    markdown, problems = rewrite_links(markdown, source, PurePosixPath(uri), _build.site)
    for problem in problems:
        log.warning(f"{source} {problem}")
    if source.is_relative_to(RESULTS_DIR) and source.suffix == ".md":
        markdown = results_header(markdown, source, _build.site)
        markdown = figures_section(markdown, source, _build.site.figures(source))
    return markdown
