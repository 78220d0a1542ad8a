"""The suite's docstrings as the documentation site's API pages read them.

The site's API pages (mkdocstrings with Griffe, see ``mkdocs.yml``) parse docstrings in the
Google style and render their text as Markdown. Two habits of mara-env's docstrings need a
translation, which :class:`SiteDocstrings`, a Griffe extension named in ``mkdocs.yml``, applies
to every docstring of a package once Griffe has loaded it:

* Sphinx cross-reference roles (``:func:`make_agent```, ``:class:`mara_env.agents.base.Scheduler```,
  ``:mod:`mara_env.predictors.wls```) would show as literal text. :func:`markdown_roles` turns each into
  a link to the object's entry on the site, or into plain code where the site has no entry for
  it (the link is optional, so a name the API pages do not show never fails the strict build).
* A section headed ``Example:`` (Google's own spelling) is, for Griffe, an admonition of
  Markdown text, in which a doctest's ``>>>`` reads as nested quotes; :func:`examples_sections`
  heads it ``Examples:``, which Griffe parses into code blocks.

Example:
    >>> known = {"make_agent": "mara_env.agents.registry.make_agent"}
    >>> print(markdown_roles("Build one with :func:`make_agent`.", known.get))
    Build one with <autoref identifier="mara_env.agents.registry.make_agent" optional><code>make_agent</code></autoref>.
    >>> print(markdown_roles("See :mod:`somewhere.else`.", known.get))
    See `somewhere.else`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from typing import Any

import griffe

#: The packages whose names are complete paths wherever they appear.
PACKAGES = ("mara_env",)
#: ``:role:`target``` with Sphinx's roles of the Python domain (``~`` and ``!`` prefixes too).
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`([~!]?)([\w.]+)`")
#: A section header ``Example:`` alone on its line.
EXAMPLE_HEADER = re.compile(r"^([ \t]*)Example:[ \t]*$", re.M)


def markdown_roles(text: str, resolve: Callable[[str], str | None]) -> str:
    """``text`` with each Sphinx role replaced by an optional site link or by plain code.

    Args:
        text: A docstring.
        resolve: Maps a role's target, as written, to the full dotted path of the object it
            names, or to None when it names nothing known.

    Returns:
        The docstring in Markdown: ``<autoref>`` links where ``resolve`` found the object,
        ```target``` code otherwise. With a ``~`` prefix only the last part of the name shows.
    """

    def replace(match: re.Match[str]) -> str:
        prefix, target = match.groups()
        shown = target.rsplit(".", 1)[-1] if prefix == "~" else target
        identifier = resolve(target)
        if identifier is None:
            return f"`{shown}`"
        return (
            f'<autoref identifier="{html.escape(identifier)}" optional>'
            f"<code>{html.escape(shown)}</code></autoref>"
        )

    return ROLE.sub(replace, text)


def examples_sections(text: str) -> str:
    """``text`` with each ``Example:`` section header spelled ``Examples:``.

    Example:
        >>> print(examples_sections("Summary.\\n\\nExample:\\n    run()\\n"), end="")
        Summary.
        <BLANKLINE>
        Examples:
            run()
    """
    return EXAMPLE_HEADER.sub(r"\1Examples:", text)


def scope_resolver(obj: griffe.Object) -> Callable[[str], str | None]:
    """Resolve role targets as Python would from inside ``obj``: names of mara-env's packages
    as they are, others through the scope of ``obj`` (its members, its module's imports), the
    first part of a dotted name first."""

    def resolve(target: str) -> str | None:
        if target.split(".")[0] in PACKAGES:
            return target
        head, _, rest = target.partition(".")
        try:
            found = obj.resolve(head)
        except (griffe.NameResolutionError, KeyError, ValueError):
            return None
        return f"{found}.{rest}" if rest else found

    return resolve


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and every object defined under it (aliases skipped: they are documented where
    they point)."""
    yield obj
    for member in obj.members.values():
        if isinstance(member, griffe.Object):
            yield from _objects(member)


class SiteDocstrings(griffe.Extension):
    """Translate every docstring of each package Griffe loads: roles into links, ``Example:``
    sections into ``Examples:``."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        """Rewrite the docstrings of ``pkg`` once it is loaded (every name it can resolve is
        known by then)."""
        for obj in _objects(pkg):
            if obj.docstring is not None:
                text = examples_sections(obj.docstring.value)
                obj.docstring.value = markdown_roles(text, scope_resolver(obj))
