"""The environments driven by the RL libraries researchers train with, each its own documented
way: TorchRL (``GymEnv``, ``GymWrapper`` of the vector env, ``PettingZooWrapper``) and RLlib
(its environment checks, PPO), and the recipes of docs/usage.md run as written.

Neither library is in the ``dev`` extra (TorchRL's wheels install a top-level ``benchmarks``
folder that hides mara-env's own package; RLlib pins ``gymnasium==1.2.2``), so these tests skip
where they are missing; ``.ci/run``'s third leg installs them (``.ci/rl-clients.txt``) and runs
this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import mara_env
from mara_env.infos import INFO_FIELDS

USAGE = (Path(__file__).resolve().parents[1] / "docs" / "usage.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", USAGE, flags=re.DOTALL)
SKIP_REASON = (
    "{} is not installed: it is kept out of the dev extra (see docs/usage.md); .ci/run's third "
    "leg installs .ci/rl-clients.txt and runs this file"
)


def client_blocks(module: str) -> list[str]:
    """The usage recipes that import ``module``."""
    pattern = re.compile(rf"^(?:from|import) {module}\b", flags=re.MULTILINE)
    return [block for block in BLOCKS if pattern.search(block)]


def run_block(block: str) -> None:
    exec(compile(block, "<docs/usage.md>", "exec"), {})


# ------------------------------------------------------------------------------ TorchRL
@pytest.fixture
def torchrl() -> Any:
    module = pytest.importorskip("torchrl", reason=SKIP_REASON.format("TorchRL"))
    import torch

    torch.manual_seed(0)
    return module


def test_torchrl_gym_env_reads_infos_and_masks(torchrl: Any) -> None:
    """``GymEnv`` (which passes ``frameskip``): specs check, every info key is an entry, and
    ``ActionMask`` keeps random actions legal."""
    from torchrl.envs import GymEnv, TransformedEnv
    from torchrl.envs.transforms import ActionMask
    from torchrl.envs.utils import check_env_specs

    base = GymEnv(mara_env.ENV_ID, config="tiny", load=4.0)
    base.auto_register_info_dict()
    env = TransformedEnv(base, ActionMask())
    check_env_specs(env)
    env.set_seed(0)
    rollout = env.rollout(60)
    following = rollout["next"]
    assert set(INFO_FIELDS) | {"action_mask"} <= set(following.keys())
    assert following["illegal_actions"].sum() == 0
    assert following["completed"].sum() == following["reward"].sum() > 0
    assert rollout["epoch"][0] == -1 and following["epoch"][:3].flatten().tolist() == [0, 1, 2]


@pytest.mark.parametrize("mode", ["SameStep", "Disabled"])
def test_torchrl_gym_wrapper_steps_the_vector_env(torchrl: Any, mode: str) -> None:
    """``GymWrapper(gym.make_vec(...))`` in the autoreset modes TorchRL takes: sub-envs end and
    restart, the infos flow."""
    from torchrl.envs import GymWrapper
    from torchrl.envs.utils import check_env_specs

    vector = gym.make_vec(
        mara_env.ENV_ID,
        num_envs=3,
        vectorization_mode="vector_entry_point",
        config="tiny",
        load=4.0,
        autoreset_mode=mode,
    )
    env = GymWrapper(vector)
    if mode == "Disabled":
        env.auto_register_info_dict()
    check_env_specs(env)
    env.set_seed(0)
    rollout = env.rollout(120, break_when_any_done=False)
    following = rollout["next"]
    assert rollout.shape == (3, 120) and following["done"].sum() >= 3
    assert following["completed"].sum() == following["reward"].sum() > 0
    assert rollout["action_mask"].shape == (3, 120, 2, 4)
    assert (rollout["epoch"] == -1).sum() >= 3, "every sub-env restarted at least once"


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "aec"])
def test_torchrl_pettingzoo_wrapper_reads_masks_and_infos(torchrl: Any, parallel: bool) -> None:
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    form = mara_env.parallel_env if parallel else mara_env.env
    env = PettingZooWrapper(form(config="tiny", load=4.0), use_mask=True, seed=0)
    check_env_specs(env)
    group = "node" if parallel else "node_0"  # the AEC form gives each agent its own group
    assert set(env.observation_spec[group, "info"].keys()) == set(INFO_FIELDS)
    rollout = env.rollout(40)
    info = rollout["next", group, "info"]
    assert (info["epoch"][:, 0].diff() >= 0).all() and info["completed"].sum() > 0


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(block, id=f"recipe {index}")
        for index, block in enumerate(client_blocks("torchrl"))
    ],
)
def test_torchrl_recipes_run_as_written(torchrl: Any, block: str) -> None:
    run_block(block)


# ------------------------------------------------------------------------------ RLlib
@pytest.fixture(scope="module")
def rllib() -> Iterator[Any]:
    pytest.importorskip("ray.rllib", reason=SKIP_REASON.format("RLlib"))
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_rllib_checks_both_pettingzoo_forms(rllib: Any) -> None:
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv, PettingZooEnv
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    for env in (
        ParallelPettingZooEnv(mara_env.parallel_env("tiny", observation_key="observations")),
        PettingZooEnv(mara_env.env("tiny", observation_key="observations")),
    ):
        check_multiagent_environments(env)
        observations, _ = env.reset(seed=0)
        first = next(iter(observations.values()))
        assert set(first) == {"observations", "action_mask"}
        assert np.asarray(first["action_mask"]).dtype == np.int8


@pytest.mark.parametrize(
    "block",
    [pytest.param(block, id=f"recipe {index}") for index, block in enumerate(client_blocks("ray"))],
)
def test_rllib_recipes_train_ppo_as_written(rllib: Any, block: str) -> None:
    """One PPO ``train()`` of each recipe: multi-agent with the action-masking module, and the
    Gymnasium form by its ``mara_env:`` id in a remote env runner."""
    run_block(block)
