"""The Markdown of the documentation site: links into the site or the repository, results pages.

The site (``mkdocs build --strict``, ``mkdocs.yml``) holds the pages of ``docs/`` and, read at
build time, the results pages that the scripts write under ``benchmarks/results/`` with the
plots and text files they link to. These functions decide which repository files the site holds
and where (:func:`linked_sources`, :func:`site_path_of`), rewrite a page's relative links for
the site (:func:`rewrite_links`), head a results page with its file and the command that wrote
it (:func:`results_header`, :func:`made_by`) and end it with the plots of its folder it does not
show (:func:`figures_section`). They know nothing of MkDocs: the build hook
:mod:`mara_env.benchmarks.reference.docs_site` calls them.

Example:
    >>> page = PurePosixPath("docs/agents.md")
    >>> text = "[the table](../benchmarks/results/tuning/README.md#top) and [code](../agents/lara.py)"
    >>> site = SiteSources(
    ...     docs_dir=PurePosixPath("docs"),
    ...     pages={PurePosixPath("benchmarks/results/tuning/README.md"): PurePosixPath("results/tuning/README.md")},
    ...     exists=lambda path: True,
    ...     source_url="https://example.org/blob/main/",
    ... )
    >>> print(rewrite_links(text, page, PurePosixPath("agents.md"), site)[0])
    [the table](results/tuning/README.md#top) and [code](https://example.org/blob/main/agents/lara.py)
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

#: Where the scripts write their results, relative to the repository root.
RESULTS_DIR = PurePosixPath("benchmarks/results")
#: Where the site holds them.
RESULTS_URI = PurePosixPath("results")
#: Where the site holds images shown from elsewhere in the repository.
REPOSITORY_URI = PurePosixPath("repository")
#: Files shown as images (added to the site wherever they are in the repository).
IMAGE_SUFFIXES = frozenset({".png", ".svg", ".jpg", ".jpeg", ".gif"})
#: Files of ``benchmarks/results/`` that become part of the site when linked (other results
#: files, such as CSV stores and checkpoints, are linked in the repository).
RESULTS_SUFFIXES = IMAGE_SUFFIXES | {".md", ".txt"}
#: A Markdown link or image: ``[text](target "title")`` (the text may hold one level of
#: brackets and may span lines).
LINK = re.compile(
    r"(?P<image>!?)\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\((?P<target>[^()\s]+)(?P<title>\s+\"[^\"]*\")?\)"
)
#: A fenced code block (its links are code, not links).
FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.M | re.S)
#: How a results page names the command that wrote it.
MADE_BY = re.compile(r"(?:Made|Written|Generated|Produced) by `([^`]+)`|Regenerate: `([^`]+)`")
#: A link that leaves the site by design: a URL scheme, or an absolute path.
EXTERNAL = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|/)")


@dataclass(frozen=True)
class Link:
    """One Markdown link of a page.

    Attributes:
        start: Offset of its first character in the page.
        end: Offset just past its last character.
        image: Whether it shows an image (``![alt](...)``).
        text: Its text (an image's alt text).
        target: What it points to, as written.
        title: Its title part, with the space before it, or "".
    """

    start: int
    end: int
    image: bool
    text: str
    target: str
    title: str

    def with_target(self, target: str) -> str:
        """The link's Markdown pointing at ``target`` instead."""
        return f"{'!' if self.image else ''}[{self.text}]({target}{self.title})"


def find_links(markdown: str) -> list[Link]:
    """The links and images of ``markdown`` outside fenced code blocks, in order.

    Example:
        >>> [link.target for link in find_links("[a](x.md)\\n```\\n[b](y.md)\\n```\\n![c](z.png)")]
        ['x.md', 'z.png']
    """
    fences = [match.span() for match in FENCE.finditer(markdown)]
    return [
        Link(
            match.start(),
            match.end(),
            bool(match["image"]),
            match["text"],
            match["target"],
            match["title"] or "",
        )
        for match in LINK.finditer(markdown)
        if not any(start <= match.start() < end for start, end in fences)
    ]


def made_by(markdown: str) -> str | None:
    """The command that a results page says wrote it, if it says so.

    Example:
        >>> made_by("# Tuning\\n\\nMade by `python -m mara_env.benchmarks.baselines.tuning` (budget 24).")
        'python -m mara_env.benchmarks.baselines.tuning'
        >>> made_by("# Notes\\n\\nNo command here.") is None
        True
    """
    match = MADE_BY.search(markdown)
    return None if match is None else match[1] or match[2]


def repository_path(page: PurePosixPath, target: str) -> tuple[PurePosixPath | None, str]:
    """The repository path a relative link of ``page`` (itself a repository path) points to,
    and the link's ``#fragment`` ("" if none); None for a link that leaves the repository."""
    path, hash_sign, fragment = target.partition("#")
    if not path:
        return page, hash_sign + fragment
    joined = posixpath.normpath(posixpath.join(str(page.parent), path))
    if joined == ".." or joined.startswith("../"):
        return None, hash_sign + fragment
    return PurePosixPath(joined), hash_sign + fragment


@dataclass
class SiteSources:
    """Which repository files the site holds, and where.

    Attributes:
        docs_dir: The documentation folder, relative to the repository root; its files are the
            site's own, at their path inside it.
        pages: Repository files from outside ``docs_dir`` that the site holds: repository path
            -> path in the site.
        exists: Whether a repository path is a file or folder of the repository.
        source_url: The URL a repository path is appended to for a link to a file the site does
            not hold; None to write such a link as its text.
        is_dir: Whether a repository path is a folder (a link to a folder of ``pages`` leads to
            its ``README.md``).
        figures: The plots a results page carries at its end (see :func:`page_figures`),
            whether or not it shows them itself.
    """

    docs_dir: PurePosixPath
    pages: dict[PurePosixPath, PurePosixPath]
    exists: Callable[[PurePosixPath], bool]
    source_url: str | None = None
    is_dir: Callable[[PurePosixPath], bool] = field(default=lambda path: False)
    figures: Callable[[PurePosixPath], list[PurePosixPath]] = field(default=lambda path: [])

    def site_path(self, path: PurePosixPath) -> PurePosixPath | None:
        """Where the site holds the repository file ``path``, or None if it does not."""
        if path.is_relative_to(self.docs_dir):
            return path.relative_to(self.docs_dir)
        if path in self.pages:
            return self.pages[path]
        readme = path / "README.md"
        return self.pages.get(readme) if self.is_dir(path) else None

    def repository_link(self, path: PurePosixPath) -> str | None:
        """The URL of a repository file that the site does not hold (None without a
        ``source_url``)."""
        if self.source_url is None:
            return None
        suffix = "/" if self.is_dir(path) else ""
        return f"{self.source_url.rstrip('/')}/{path}{suffix}"


def rewrite_links(
    markdown: str, page: PurePosixPath, page_uri: PurePosixPath, site: SiteSources
) -> tuple[str, list[str]]:
    """``markdown`` (the page at repository path ``page``, site path ``page_uri``) with its
    relative links pointing into the site or, for files the site does not hold, into the
    repository; and the problems found (links to what the repository does not have, which
    become their text).

    Links with a URL scheme, absolute links and links inside code blocks stay as they are.
    """
    problems = []
    pieces = []
    last = 0
    for link in find_links(markdown):
        if EXTERNAL.match(link.target) or link.target.startswith("#"):
            continue
        path, fragment = repository_path(page, link.target)
        in_site = None if path is None else site.site_path(path)
        if path is None or not site.exists(path):
            problems.append(f"links to '{link.target}', which is not a file of the repository")
            replacement = link.text
        elif in_site is not None:
            relative = posixpath.relpath(str(in_site), str(page_uri.parent))
            replacement = link.with_target(relative + fragment)
        elif (url := site.repository_link(path)) is not None:
            replacement = link.with_target(url + fragment)
        else:
            replacement = link.text
        pieces += [markdown[last : link.start], replacement]
        last = link.end
    pieces.append(markdown[last:])
    return "".join(pieces), problems


def results_header(markdown: str, source: PurePosixPath, site: SiteSources) -> str:
    """``markdown``, the results page at repository path ``source``, with a line under its
    title naming its file and the command that wrote it (when the page says which).

    Example:
        >>> site = SiteSources(PurePosixPath("docs"), {}, lambda path: True)
        >>> print(results_header("# Tuning\\n\\nMade by `tune`.\\n", PurePosixPath("r/t.md"), site))
        # Tuning
        <BLANKLINE>
        > Results file `r/t.md`, made by `tune`.
        <BLANKLINE>
        Made by `tune`.
        <BLANKLINE>
    """
    url = site.repository_link(source)
    name = f"[`{source}`]({url})" if url else f"`{source}`"
    command = made_by(markdown)
    line = f"> Results file {name}" + (f", made by `{command}`." if command else ".")
    title = re.search(r"^# .*$", markdown, re.M)
    at = title.end() if title else 0
    separator = "\n\n" if title else ""
    rest = markdown[at:].lstrip("\n")
    return f"{markdown[:at]}{separator}{line}\n\n{rest}"


def figures_section(markdown: str, page: PurePosixPath, figures: Iterable[PurePosixPath]) -> str:
    """``markdown`` (the page at repository path ``page``) followed by the ``figures`` it does
    not show itself, each under its file name.

    Example:
        >>> page = PurePosixPath("r/README.md")
        >>> figures = [PurePosixPath("r/a.png"), PurePosixPath("r/b.png")]
        >>> print(figures_section("# R\\n\\n![A](a.png)\\n", page, figures))
        # R
        <BLANKLINE>
        ![A](a.png)
        <BLANKLINE>
        ## Plots
        <BLANKLINE>
        The plots in `r/` that the text above does not show.
        <BLANKLINE>
        **`b.png`**
        <BLANKLINE>
        ![b.png](b.png)
        <BLANKLINE>
    """
    shown = {
        repository_path(page, link.target)[0]
        for link in find_links(markdown)
        if link.image and not EXTERNAL.match(link.target)
    }
    unshown = [figure for figure in figures if figure not in shown]
    if not unshown:
        return markdown
    lines = [f"## Plots\n\nThe plots in `{page.parent}/` that the text above does not show.\n"]
    for figure in unshown:
        relative = posixpath.relpath(str(figure), str(page.parent))
        lines.append(f"**`{relative}`**\n\n![{figure.name}]({relative})\n")
    return markdown.rstrip("\n") + "\n\n" + "\n".join(lines)


def page_figures(page: Path) -> list[Path]:
    """The plots the results page ``page`` carries: the images of its folder (not of its
    subfolders), sorted by name, if it is the folder's ``README.md`` or its only Markdown
    page; else none."""
    folder = page.parent
    if page.name != "README.md" and [path.name for path in folder.glob("*.md")] != [page.name]:
        return []
    return sorted(path for path in folder.iterdir() if path.suffix.lower() in IMAGE_SUFFIXES)


def linked_sources(
    pages: Iterable[PurePosixPath], read: Callable[[PurePosixPath], str], site: SiteSources
) -> dict[PurePosixPath, PurePosixPath]:
    """The files from outside ``docs_dir`` that the site must hold, found from ``pages``
    (repository paths: the documentation pages and the results pages the nav names) and the
    results pages they link to, in turn: repository path -> path in the site."""
    held: dict[PurePosixPath, PurePosixPath] = {}
    queue = list(pages)
    for page in queue:
        if not page.is_relative_to(site.docs_dir):
            held[page] = site_path_of(page)
            held |= {figure: site_path_of(figure) for figure in site.figures(page)}
        for link in find_links(read(page)):
            if EXTERNAL.match(link.target):
                continue
            path, _ = repository_path(page, link.target)
            if path is None or path.is_relative_to(site.docs_dir) or not site.exists(path):
                continue
            if site.is_dir(path) and path.is_relative_to(RESULTS_DIR):
                path = path / "README.md"
            if path in held or not site.exists(path) or not is_held(path):
                continue
            held[path] = site_path_of(path)
            if path.suffix == ".md":
                queue.append(path)
    return held


def is_held(path: PurePosixPath) -> bool:
    """Whether the site holds the repository file ``path`` when a page links to it."""
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return True
    return path.is_relative_to(RESULTS_DIR) and path.suffix.lower() in RESULTS_SUFFIXES


def site_path_of(path: PurePosixPath) -> PurePosixPath:
    """Where the site holds a repository file from outside ``docs_dir``."""
    if path.is_relative_to(RESULTS_DIR):
        return RESULTS_URI / path.relative_to(RESULTS_DIR)
    return REPOSITORY_URI / path


def nav_paths(nav: Any) -> Iterator[str]:
    """Every page path that a MkDocs ``nav`` setting names."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, Mapping):
        for value in nav.values():
            yield from nav_paths(value)
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_paths(item)
