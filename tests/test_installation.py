"""Shadowed or shared import names are reported clearly, by the check and by mara-leaderboard."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import mara_env
from mara_env import InstallationError, check_installation, installation_problems

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def console_script() -> str:
    script = Path(sys.executable).parent / "mara-leaderboard"
    assert script.is_file(), f"{script} is missing: install the package (pip install -e .)"
    return str(script)


def fake_distribution(site: Path, name: str, top_level: str) -> None:
    """An installed distribution's metadata (no code) claiming the import name ``top_level``."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "top_level.txt").write_text(f"{top_level}\n")
    (info / "RECORD").write_text(f"{top_level}/__init__.py,,\n")


def test_a_clean_installation_has_no_problems(capsys: pytest.CaptureFixture[str]) -> None:
    assert installation_problems(ROOT) == []  # the source tree holds our own packages
    check_installation()
    said = capsys.readouterr().out
    assert "in worker processes too" in said and "shipped data files as listed" in said
    assert said.rstrip().endswith("The installation is fine.")
    check_installation(verbose=False)
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("shadow", ["mara_env/__init__.py", "mara_env.py"])
def test_a_local_folder_or_module_is_named_with_what_to_do(tmp_path: Path, shadow: str) -> None:
    (tmp_path / shadow).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / shadow).write_text("")
    name = shadow.split("/")[0].removesuffix(".py")
    (problem,) = installation_problems(tmp_path, distributions=False)
    folder = tmp_path / shadow.split("/")[0]
    assert problem.startswith(f"{folder} is imported as {name!r} instead of mara-env's {name!r}")
    assert "installs the import package mara_env" in problem
    assert "Rename" in problem and "run from another directory" in problem
    with pytest.raises(InstallationError, match=re.escape(str(folder))):
        check_installation(tmp_path, distributions=False)


def test_a_checkout_identical_to_the_installed_packages_is_ours(tmp_path: Path) -> None:
    """The quick start installs mara-env (not editable) and runs mara-leaderboard from the
    checkout: its folders are the installed code, with extra data, so nothing is reported. A
    module edited since the installation is reported, with the advice to reinstall."""
    import shutil

    for name in ("mara_env", "agents"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "mara_env" / "results.md").write_text("committed results, not installed\n")
    assert installation_problems(tmp_path, distributions=False) == []
    edited = tmp_path / "mara_env" / "edf_copy.py"
    edited.write_text("# a module the installation lacks\n")
    (problem,) = installation_problems(tmp_path, distributions=False)
    assert str(tmp_path / "mara_env") in problem and "reinstall it" in problem
    edited.unlink()
    (tmp_path / "mara_env" / "errors.py").write_text("# changed\n")
    (problem,) = installation_problems(tmp_path, distributions=False)
    assert str(tmp_path / "mara_env") in problem


def test_a_folder_without_init_does_not_shadow(tmp_path: Path) -> None:
    """A plain folder named mara_env/ (a namespace-package candidate) loses to a regular
    package."""
    (tmp_path / "mara_env").mkdir()
    assert installation_problems(tmp_path, distributions=False) == []


@pytest.mark.parametrize("name", ["agents", "predictors", "benchmarks"])
def test_folders_named_like_the_source_trees_sub_packages_are_no_one_s_concern(
    tmp_path: Path, name: str
) -> None:
    """mara-env's only top-level import name is mara_env: a package of the user's (or of
    another distribution, TorchRL's benchmarks) called agents, predictors or benchmarks is
    not ours and hides nothing."""
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("raise RuntimeError('imported')\n")
    assert installation_problems(tmp_path, distributions=False) == []


def test_a_shadowing_entry_on_sys_path_is_found_without_importing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mara_env").mkdir()
    (tmp_path / "mara_env" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (problem,) = installation_problems(tmp_path, distributions=False)
    assert problem.startswith(f"{tmp_path / 'mara_env'} is imported as 'mara_env'")


def test_a_worker_that_would_import_a_shadowing_folder_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``spawn`` worker starts with the parent's sys.path and imports afresh: a folder early
    on that path hides, in the worker, a package the parent imported before it was there."""
    assert mara_env.installation.worker_import_problems() == []
    (tmp_path / "mara_env").mkdir()
    (tmp_path / "mara_env" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    (problem,) = mara_env.installation.worker_import_problems()
    assert problem.startswith(f"Worker processes import 'mara_env' from {tmp_path / 'mara_env'}")
    assert "run from another directory" in problem


def test_running_a_tree_beside_another_installation_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mara_env.installation.imported_instead_of_installed() is None  # the editable install
    monkeypatch.setattr(mara_env.installation, "installed_root", lambda: tmp_path)
    note = mara_env.installation.imported_instead_of_installed()
    assert note is not None
    assert f"from {mara_env.installation.PACKAGES_ROOT}, not from the installed" in note
    assert str(tmp_path) in note


def test_distributions_with_a_top_level_agents_or_benchmarks_are_no_clash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The openai-agents SDK installs a top-level 'agents', TorchRL a 'benchmarks': neither is
    an import name of mara-env's."""
    fake_distribution(tmp_path, "openai-agents", "agents")
    fake_distribution(tmp_path, "torchrl", "benchmarks")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installation_problems() == []


def test_a_foreign_distribution_owning_mara_env_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_distribution(tmp_path, "mara-env-fork", "mara_env")
    monkeypatch.syspath_prepend(str(tmp_path))
    (problem,) = installation_problems()
    assert problem.startswith(
        "The installed distribution 'mara-env-fork' also provides a top-level 'mara_env' package"
    )
    assert "virtual environment of its own" in problem
    assert "pip uninstall mara-env-fork" in problem


def test_mara_leaderboard_imports_a_users_module_but_never_shadows_its_own_packages(
    tmp_path: Path,
) -> None:
    """Run from a folder that holds the user's scheduler beside folders named like our packages
    (a clone of the repository, say): the scheduler is found, our packages stay the installed
    ones, all from one place, in the worker processes too."""
    for name in ("mara_env", "agents", "predictors"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise RuntimeError('local {name}')\n")
    (tmp_path / "my_sched_q.py").write_text(
        "from mara_env.agents import EarliestDeadlineFirst\n\n\nclass Mine(EarliestDeadlineFirst):\n"
        "    name = 'mine'\n"
    )
    arguments = ["--config", "tiny", "--workloads", "rl", "--loads", "1", "--seeds", "2"]
    result = subprocess.run(
        [
            console_script(),
            *arguments,
            *("--agents", "my_sched_q:Mine", "--no-plots", "--no-progress", "--workers", "2"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "local " not in result.stderr
    assert "| mine |" in (tmp_path / "leaderboard_results" / "leaderboard.md").read_text()


def test_mara_leaderboard_stops_when_another_distribution_owns_mara_env(tmp_path: Path) -> None:
    site = tmp_path / "site"
    fake_distribution(site, "mara-env-fork", "mara_env")
    environment = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run(
        [console_script(), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
    )
    assert result.returncode == 2
    assert "mara-leaderboard: error: The installed distribution 'mara-env-fork'" in result.stderr
    assert "Traceback" not in result.stderr


def test_python_m_in_a_source_tree_without_its_editable_install_finds_its_sub_packages() -> None:
    """A clone's ``mara_env/`` imported from the working directory (``python -m`` beside a
    non-editable install) still finds ``mara_env.benchmarks`` in the tree's ``benchmarks/``."""
    code = (
        "import sys; sys.meta_path[:] = [f for f in sys.meta_path "
        "if 'editable' not in type(f).__module__.lower()]; "
        "import mara_env.benchmarks.leaderboard.cli as cli; print(cli.__file__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()) == ROOT / "benchmarks" / "leaderboard" / "cli.py"


def test_python_m_beside_a_local_folder_names_it(tmp_path: Path) -> None:
    """``python -m mara_env.benchmarks.leaderboard`` puts the folder first itself: the import says why."""
    (tmp_path / "mara_env").mkdir()
    (tmp_path / "mara_env" / "__init__.py").write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "mara_env.benchmarks.leaderboard", "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"InstallationError: {tmp_path / 'mara_env'} is imported as 'mara_env'" in result.stderr


def test_the_readme_names_the_import_package_and_the_check() -> None:
    install = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "`mara_env`" in install and "check_installation" in install
