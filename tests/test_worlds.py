"""Each world is one declared entry, and a result's key holds the files of the world it played."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import gymnasium
import pytest

import mara_env
from mara_env import ConfigError, get_config, world
from mara_env.benchmarks.baselines.trial_keys import trial_manifest
from mara_env.benchmarks.common import source_closure
from mara_env.benchmarks.common.arguments import add_world_version
from mara_env.benchmarks.common.keys import build_agent
from mara_env.worlds.world import WORLDS, world_of_file


def test_every_world_is_registered_and_chosen_from_its_entry() -> None:
    for entry in WORLDS:
        assert entry.env_id in gymnasium.registry
        assert get_config("tiny", world_version=entry.version).world is entry
        assert entry.folder.is_dir(), f"{entry.shipped} (its shipped files) is missing"
    assert tuple(entry.version for entry in WORLDS) == mara_env.WORLD_VERSIONS


def test_an_unknown_world_is_refused_with_the_ones_there_are() -> None:
    versions = re.escape(str(mara_env.WORLD_VERSIONS))
    with pytest.raises(ConfigError, match=rf"no world version 9: the worlds are {versions}"):
        world(9)
    with pytest.raises(ConfigError, match="world_version"):
        get_config("tiny", world_version=9)


def test_each_world_ships_its_own_files_in_its_own_folder() -> None:
    for entry in WORLDS:
        names = {path.name for path in entry.folder.iterdir()}
        assert {"tuned_settings.json", "mara.pt", "mara.json"} <= names
        assert world_of_file(f"{entry.shipped}/mara.pt") == entry.version
    assert world_of_file("predictors/checkpoints/flow_matching.pt") is None


@pytest.mark.parametrize("changed", [1, 3])
def test_a_change_to_one_worlds_file_re_keys_only_that_worlds_results(
    changed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appending a byte to one world's checkpoint and settings changes the keys of results
    played in that world (MARA's, a tuned baseline's, the tuning trials') and no other's."""

    def keys() -> dict[tuple[str, int], str]:
        found = {}
        for entry in WORLDS:
            found["mara", entry.version] = build_agent("mara", entry.version).manifest.digest
            found["lara", entry.version] = build_agent("lara", entry.version).manifest.digest
            found["trials", entry.version] = trial_manifest(entry.version).digest
        return found

    before = keys()
    edited = world(changed).folder
    copy = tmp_path / "world"
    shutil.copytree(edited, copy)
    for name in ("mara.pt", "tuned_settings.json"):
        with (copy / name).open("ab") as file:
            file.write(b" ")
    real_read = source_closure.read_source

    def read_source(path: Path) -> bytes:
        if path.parent == edited and path.name in ("mara.pt", "tuned_settings.json"):
            return real_read(copy / path.name)
        return real_read(path)

    monkeypatch.setattr(source_closure, "read_source", read_source)  # as the keys read files
    after = keys()
    changed_keys = {key for key in before if before[key] != after[key]}
    assert changed_keys == {("mara", changed), ("lara", changed), ("trials", changed)}


def test_the_command_line_offers_every_world() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    add_world_version(parser)
    (action,) = [a for a in parser._actions if a.dest == "world_version"]
    assert tuple(action.choices) == tuple(entry.version for entry in WORLDS)
