"""Cached episodes are keyed by the code that played them: changed code plays again, unchanged
code is reused, and the command says how many episodes were invalidated and why."""

from __future__ import annotations

import json
import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest

from mara_env.benchmarks.common import source_closure as closure
from mara_env.benchmarks.common.keys import build_agent
from mara_env.benchmarks.common.source_closure import import_closure, source_hash
from mara_env.benchmarks.leaderboard import main
from mara_env.benchmarks.leaderboard.fingerprints import shared_manifest
from mara_env.benchmarks.leaderboard.journal import read_journal

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "2"]
QUIET = ["--no-progress", "--no-plots", "--workers", "1"]

SCHEDULER = """
    import numpy as np
    from mara_env.agents import EpochScheduler
    from {helpers} import choose


    class MostProgress(EpochScheduler):
        name = "{name}"

        def plan(self, view, mask):
            if not view.occupied.any():
                return np.full(self.config.n_nodes, self.config.idle_action)
            return np.full(self.config.n_nodes, choose(view))
"""
HELPERS = """
    import numpy as np


    def choose(view):
        return int(np.{pick}(np.where(view.occupied, view.progress, {fill})))
"""


def write(path: Path, source: str) -> None:
    path.write_text(textwrap.dedent(source))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder with a scheduler module and a helper module it imports."""
    name = f"sched_{tmp_path.name.replace('-', '_')}"
    helpers = f"helpers_{tmp_path.name.replace('-', '_')}"
    write(tmp_path / f"{name}.py", SCHEDULER.format(helpers=helpers, name="most_progress"))
    write(tmp_path / f"{helpers}.py", HELPERS.format(pick="argmax", fill="-1.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in (name, helpers):
        monkeypatch.delitem(sys.modules, module, raising=False)
    return tmp_path


def forget(*modules: str) -> None:
    """Make the next import read the edited files (as a new command would)."""
    for module in modules:
        sys.modules.pop(module, None)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def edit_shipped_module(module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the fingerprints read a copy of one of our modules with a statement added (the tree
    stays as is)."""
    edited = tmp_path / f"{module}.py"
    source = closure.module_file(module)
    assert source is not None
    edited.write_text(source.read_text() + "\nEDITED = 1\n")
    original = closure.module_file
    monkeypatch.setattr(
        closure, "module_file", lambda name: edited if name == module else original(name)
    )


def test_changing_a_scheduler_replays_its_cells_only_and_says_why(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sched,) = [p.stem for p in project.glob("sched_*.py")]
    (helpers,) = [p.stem for p in project.glob("helpers_*.py")]
    out = project / "results"
    argv = [*TINY, *QUIET, "--agents", "edf", f"{sched}:MostProgress", "--output", str(out)]
    assert "4 episodes run" in run(argv, capsys)
    printed = run(argv, capsys)
    assert "0 episodes run" in printed and "4 reused" in printed  # unchanged code: reused
    assert "invalidated" not in printed

    # argmax -> argmin in the helper module the scheduler imports: its cells play again.
    write(project / f"{helpers}.py", HELPERS.format(pick="argmin", fill="2.0"))
    forget(sched, helpers)
    printed = run(argv, capsys)
    assert "2 episodes run" in printed and "2 reused" in printed
    assert "2 finished episodes were invalidated and play again:" in printed
    assert f"most_progress: 2 (its code changed ({helpers} changed))" in printed
    rows = [row for row in read_journal(out / "episodes.jsonl").rows if row["agent"] != "edf"]
    assert len(rows) == 4 and len({row["agent_code"] for row in rows}) == 2

    # The scheduler module itself: a comment and a blank line change nothing; a statement does.
    scheduler = textwrap.dedent(SCHEDULER.format(helpers=helpers, name="most_progress"))
    write(project / f"{sched}.py", scheduler + "\n# a comment\n\n")
    forget(sched, helpers)
    assert "0 episodes run" in run(argv, capsys)
    write(project / f"{sched}.py", scheduler + "\nEDITED = 1\n")
    forget(sched, helpers)
    assert f"most_progress: 2 (its code changed ({sched} changed))" in run(argv, capsys)


@pytest.mark.parametrize(
    ("module", "agents", "replayed", "reasons", "untouched"),
    [
        # LARA's own module: LARA plays again, EDF does not.
        (
            "mara_env.agents.lara",
            ["edf", "lara"],
            2,
            ["lara: 2 (its code changed (mara_env.agents.lara changed))"],
            "edf:",
        ),
        # The simulator: part of every agent's code and of the shared code, so all play again.
        (
            "mara_env.sim.simulator",
            ["edf", "random"],
            4,
            [
                "4 finished episodes were invalidated and play again:",
                "edf: 2 (its code changed (mara_env.sim.simulator changed); the code, data or version",
            ],
            None,
        ),
    ],
    ids=["one agent", "shared"],
)
def test_a_change_in_a_shipped_module_replays_the_agents_that_run_it(
    module: str,
    agents: list[str],
    replayed: int,
    reasons: list[str],
    untouched: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A module edited (the fingerprints read an edited copy): only the agents running it play
    again, each with the reason."""
    argv = [*TINY, *QUIET, "--agents", *agents, "--output", str(tmp_path / "results")]
    run(argv, capsys)
    edit_shipped_module(module, tmp_path, monkeypatch)
    printed = run(argv, capsys)
    assert f"{replayed} episodes run" in printed
    for reason in reasons:
        assert reason in printed
    assert untouched is None or untouched not in printed


def test_closure_follows_reexports_and_local_imports_but_not_the_rest(tmp_path: Path) -> None:
    package = tmp_path / "pkg_closure_q"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg_closure_q.impl import thing\nVALUE = 1\n")
    (package / "impl.py").write_text("thing = 1\n")
    (package / "late.py").write_text("x = 2\n")
    (package / "unused.py").write_text("y = 3\n")
    (package / "main.py").write_text(
        "from pkg_closure_q import thing\n\ndef f():\n    from . import late\n    return late\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        found = import_closure(["pkg_closure_q.main"], lambda n: n.startswith("pkg_closure_q"))
        assert sorted(found) == ["pkg_closure_q.impl", "pkg_closure_q.late", "pkg_closure_q.main"]
        (package / "main.py").write_text("from pkg_closure_q import VALUE\n")  # defined in __init__
        found = import_closure(["pkg_closure_q.main"], lambda n: n.startswith("pkg_closure_q"))
        assert sorted(found) == ["pkg_closure_q", "pkg_closure_q.impl", "pkg_closure_q.main"]
    finally:
        sys.path.remove(str(tmp_path))
    assert source_hash(b"a\r\nb\r\n") == source_hash(b"a\nb\n") != source_hash(b"a\nc\n")


def test_agent_manifests_hold_their_own_modules_and_checkpoints() -> None:
    edf, lara = build_agent("edf").manifest, build_agent("lara").manifest
    assert "mara_env.agents.priority" in edf.items and "mara_env.agents.lara" not in edf.items
    assert "mara_env.agents.lara" in lara.items and "mara_env.predictors.wls" in lara.items
    assert "mara_env.agents.registry" not in lara.items and "registry:lara" in lara.items
    shared = shared_manifest().items
    assert "mara_env.sim.simulator" in shared and "mara_env.agents.evaluation" in shared
    assert "mara_env.agents.lara" not in shared and "trace data" in shared
    mara = build_agent("mara").manifest.items
    for card in (
        "agents/worlds/v3/mara.json",
        "predictors/checkpoints/flow_matching_without_target.json",
    ):
        sha = json.loads((ROOT / card).read_text())["sha256"]
        assert mara[f"checkpoint:{card.replace('.json', '.pt')}"] == sha[:16]
        assert f"file:{card.replace('.json', '.pt')}" in mara  # named in the source, too


def test_a_fingerprint_attribute_joins_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scheduler reading weights of its own names them in ``fingerprint``."""
    module = "weighted_sched_q"
    write(
        tmp_path / f"{module}.py",
        """
        from mara_env.agents import EarliestDeadlineFirst

        class Weighted(EarliestDeadlineFirst):
            name = "weighted"

            def __init__(self):
                super().__init__()
                self.fingerprint = open(__file__.replace(".py", ".weights")).read()
        """,
    )
    (tmp_path / f"{module}.weights").write_text("v1")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    first = build_agent(f"{module}:Weighted").manifest
    (tmp_path / f"{module}.weights").write_text("v2")
    second = build_agent(f"{module}:Weighted").manifest
    assert first.digest != second.digest
    assert second.changes_since(first.items) == ["fingerprint attribute changed"]


def test_a_custom_agent_named_like_a_shipped_one_keeps_its_import_path(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (sched,) = [p.stem for p in project.glob("sched_*.py")]
    (helpers,) = [p.stem for p in project.glob("helpers_*.py")]
    write(project / f"{sched}.py", SCHEDULER.format(helpers=helpers, name="edf"))
    argv = [*TINY, *QUIET, "--agents", "edf", f"{sched}:MostProgress"]
    assert main([*argv, "--output", str(project / "o")]) == 0
    captured = capsys.readouterr()
    assert f"Note: {sched}:MostProgress is named 'edf', like the shipped agent edf" in captured.err
    assert f"{sched}:MostProgress" in captured.out


def test_a_factory_reading_tuned_settings_is_keyed_by_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry entry ``partial(build, Class, name)`` whose ``build`` reads settings from a
    JSON file through another module: that module and the file join the agent's manifest."""
    package = tmp_path / "tunedpkg_q"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(
        package / "tuned.py",
        """
        import json
        from pathlib import Path

        PATH = Path(__file__).with_name("settings.json")

        def settings(name):
            return json.loads(PATH.read_text())[name]
        """,
    )
    write(
        package / "factories.py",
        """
        from tunedpkg_q.tuned import settings

        def build(factory, name):
            return factory(**settings(name))
        """,
    )
    (package / "settings.json").write_text('{"uniform": {"quantum": 2.0}}')
    monkeypatch.syspath_prepend(str(tmp_path))
    from mara_env.agents import UniformShare, registry
    from mara_env.benchmarks.common import keys as fingerprints

    factories = __import__("tunedpkg_q.factories", fromlist=["build"])
    entries = {
        **registry.AGENTS,
        "tuned_uniform": partial(factories.build, UniformShare, "uniform"),
    }
    monkeypatch.setattr(registry, "AGENTS", entries)
    monkeypatch.setattr(
        fingerprints, "_own_packages", lambda name: name.split(".")[0] in ("mara_env", "tunedpkg_q")
    )
    first = build_agent("tuned_uniform")
    assert first.scheduler.quantum == 2.0
    assert {"tunedpkg_q.factories", "tunedpkg_q.tuned", "mara_env.agents.uniform"} <= set(
        first.manifest.items
    )
    assert "file:tunedpkg_q/settings.json" in first.manifest.items
    (package / "settings.json").write_text('{"uniform": {"quantum": 3.0}}')
    second = build_agent("tuned_uniform").manifest
    assert second.changes_since(first.manifest.items) == ["file:tunedpkg_q/settings.json changed"]


def test_a_factorys_docstring_changes_no_agent_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A registry entry's factory function counts by its behaviour, as modules do."""
    from mara_env.benchmarks.common import keys

    monkeypatch.syspath_prepend(str(tmp_path))
    entries = []
    for name, body in [
        ("factory_doc_a_q", '"""Build it."""\n    return 1'),
        ("factory_doc_b_q", '"""Build it, said otherwise."""  # and a comment\n\n    return 1'),
        ("factory_doc_c_q", '"""Build it."""\n    return 2'),
    ]:
        (tmp_path / f"{name}.py").write_text(f"def build():\n    {body}\n")
        module = __import__(name)
        entries.append(keys._function_entry(module.build, lambda _: False)[0])
    assert entries[0] == entries[1] != entries[2]
