"""What is installed is what was measured: the wheel holds every module and data file of the
tree, the manifest lists every data file, and an installation missing one says which and how to
restore it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mara_env.benchmarks.reference.shipped_files import (
    NOT_SHIPPED,
    main,
    manifest_text,
    tree_data_files,
)
from mara_env.installation import (
    MANIFEST,
    SOURCE_FOLDERS,
    data_path,
    file_sha256,
    installed_path,
    read_manifest,
    shipped_file_problems,
)

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = "agents/worlds/v3/tuned_settings.json"
CHECKPOINT = "agents/worlds/v3/mara.pt"


def tree_modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for folder in SOURCE_FOLDERS.values()
        for path in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in path.parts
        and not path.relative_to(ROOT).as_posix().startswith(NOT_SHIPPED)
    }


def test_the_manifest_lists_every_data_file_of_the_tree() -> None:
    tree = tree_data_files(ROOT)
    manifest = read_manifest(ROOT)
    differing = sorted(
        name for name in set(tree) | set(manifest) if tree.get(name) != manifest.get(name)
    )
    assert not differing, (
        f"{MANIFEST} is out of date for {differing}: run python -m "
        "mara_env.benchmarks.reference.shipped_files"
    )
    assert {SETTINGS, CHECKPOINT, "mara_env/data/traces.npz"} <= set(manifest)
    assert not any(name.startswith(NOT_SHIPPED) or name.endswith(".py") for name in manifest)
    assert main(["--check"]) == 0


def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    """Built from a copy of the tree without its results, as pip builds it."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignored = shutil.ignore_patterns("__pycache__", "results", "figures")
    for folder in SOURCE_FOLDERS.values():
        shutil.copytree(ROOT / folder, source / folder, ignore=ignored)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    tree = tree_modules() | set(read_manifest(ROOT)) | {MANIFEST}
    missing = sorted(label for label in tree if installed_path(label) not in shipped)
    assert not missing, f"the wheel lacks {missing}: widen the package data in pyproject.toml"


def copy_of_the_data(tmp_path: Path) -> Path:
    """A folder holding the manifest and every file it lists where a wheel installs them."""
    for relative in [MANIFEST, *read_manifest(ROOT)]:
        (tmp_path / installed_path(relative)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / installed_path(relative))
    (tmp_path / "mara_env" / "agents" / "__init__.py").touch()
    return tmp_path


def test_a_complete_installation_has_no_data_problems(tmp_path: Path) -> None:
    assert shipped_file_problems() == []
    assert shipped_file_problems(copy_of_the_data(tmp_path)) == []


def test_a_missing_settings_file_or_checkpoint_is_named_with_how_to_restore_it(
    tmp_path: Path,
) -> None:
    root = copy_of_the_data(tmp_path)
    data_path(SETTINGS, root).unlink()
    data_path(CHECKPOINT, root).unlink()
    problems = shipped_file_problems(root)
    assert len(problems) == 2
    for name, problem in zip((CHECKPOINT, SETTINGS), problems, strict=True):
        assert problem.startswith(f"The shipped data file {data_path(name, root)} is missing.")
        assert "pip install --force-reinstall --no-deps mara-env" in problem


def test_a_changed_file_and_a_checkpoint_unlike_its_card_are_named(tmp_path: Path) -> None:
    root = copy_of_the_data(tmp_path)
    with data_path(SETTINGS, root).open("a") as settings:
        settings.write("\n")
    card = data_path(CHECKPOINT, root).with_suffix(".json")
    document = json.loads(card.read_text())
    card.write_text(json.dumps({**document, "sha256": "0" * 64}))
    problems = shipped_file_problems(root)
    settings, checkpoint = data_path(SETTINGS, root), data_path(CHECKPOINT, root)
    assert any(f"{settings} differs from the one mara-env ships" in p for p in problems)
    assert any(f"The checkpoint {checkpoint} does not match its card" in p for p in problems)


def test_a_missing_or_broken_manifest_is_reported(tmp_path: Path) -> None:
    (problem,) = shipped_file_problems(tmp_path)
    assert f"{tmp_path / MANIFEST}, is missing" in problem and "Reinstall mara-env" in problem
    (tmp_path / MANIFEST).parent.mkdir(parents=True)
    (tmp_path / MANIFEST).write_text("[1, 2]")
    (problem,) = shipped_file_problems(tmp_path)
    assert "must hold" in problem


def test_the_manifest_refuses_a_checkpoint_unlike_its_card(tmp_path: Path) -> None:
    weights = tmp_path / "predictors" / "checkpoints" / "model.pt"
    weights.parent.mkdir(parents=True)
    weights.write_bytes(b"weights")
    weights.with_suffix(".json").write_text(json.dumps({"sha256": "0" * 64}))
    with pytest.raises(ValueError, match=f"The checkpoint {weights} does not match its card"):
        manifest_text(tmp_path)
    weights.with_suffix(".json").write_text(json.dumps({"sha256": file_sha256(weights)}))
    assert set(json.loads(manifest_text(tmp_path))["files"]) == {
        "predictors/checkpoints/model.pt",
        "predictors/checkpoints/model.json",
    }
