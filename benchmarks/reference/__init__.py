"""Reference pages generated from the code and the results: the environment card, the
figures of the README and the docs, and the documentation site's build hook.

Run ``python -m mara_env.benchmarks.reference <command> [options]``; each command is also its own module:

* ``env-card`` (:mod:`mara_env.benchmarks.reference.env_card`): write ``docs/environment.md`` (spaces,
  observation columns, config fields, presets and workloads) from the code.
* ``figures`` (:mod:`mara_env.benchmarks.reference.figures`): copy the README's and the docs' measured
  figures (between ``<!-- generated:NAME -->`` markers) from the results files.
* ``shipped-files`` (:mod:`mara_env.benchmarks.reference.shipped_files`): write the manifest of the data
  files the packages ship, with their SHA-256, from the source tree.

The documentation site (``mkdocs build --strict``, ``mkdocs.yml``) runs
:mod:`mara_env.benchmarks.reference.docs_site` as its build hook, which adds the results pages and rewrites
links with :mod:`mara_env.benchmarks.reference.site_markdown`, and reads docstrings with the Griffe
extension of :mod:`mara_env.benchmarks.reference.site_docstrings`.
"""

from __future__ import annotations

#: The group's commands: name -> (module, summary), as
#: :func:`mara_env.benchmarks.common.subcommands.dispatch` reads them.
COMMANDS = {
    "env-card": (
        "mara_env.benchmarks.reference.env_card",
        "Write docs/environment.md from the code (or check it with --check).",
    ),
    "figures": (
        "mara_env.benchmarks.reference.figures",
        "Copy the README's and the docs' figures from the results files (or check them).",
    ),
    "shipped-files": (
        "mara_env.benchmarks.reference.shipped_files",
        "Write the manifest of the shipped data files from the source tree (or check it).",
    ),
}
