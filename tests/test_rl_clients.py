"""The environments driven by the RL libraries researchers train with, each its own documented
way: TorchRL (``GymEnv``, ``GymWrapper`` of the vector env, ``PettingZooWrapper``), RLlib
(its environment checks, PPO) and PufferLib (``PettingZooPufferEnv`` in its ``Serial`` and
``Multiprocessing`` vector envs), and the recipes of docs/usage.md run as written.

None of them is in the ``dev`` extra (TorchRL's wheels install a top-level ``benchmarks``
folder that hides mara-env's own package; RLlib pins ``gymnasium==1.2.2``; PufferLib is one more
trainer's stack), so these tests skip where they are missing; ``.ci/run``'s RL-clients leg installs
them (``.ci/rl-clients.txt``) and runs this file.
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
from mara_env.envs.infos import INFO_FIELDS

USAGE = (Path(__file__).resolve().parents[1] / "docs" / "usage.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", USAGE, flags=re.DOTALL)
SKIP_REASON = (
    "{} is not installed: it is kept out of the dev extra (see docs/usage.md); .ci/run's RL-clients "
    "leg installs .ci/rl-clients.txt and runs this file"
)


def client_blocks(module: str) -> list[Any]:
    """The usage recipes that import ``module``, as pytest parameters named by their order."""
    pattern = re.compile(rf"^(?:from|import) {module}\b", flags=re.MULTILINE)
    blocks = [block for block in BLOCKS if pattern.search(block)]
    return [pytest.param(block, id=f"recipe {index}") for index, block in enumerate(blocks)]


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


@pytest.mark.parametrize("block", client_blocks("torchrl"))
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


@pytest.mark.parametrize("block", client_blocks("ray"))
def test_rllib_recipes_train_ppo_as_written(rllib: Any, block: str) -> None:
    """One PPO ``train()`` of each recipe: multi-agent with the action-masking module, and the
    Gymnasium form by its ``mara_env:`` id in a remote env runner."""
    run_block(block)


# ------------------------------------------------------------------------------ PufferLib
PUFFER_KWARGS = {"config": "tiny", "load": 4.0}


@pytest.fixture
def pufferlib() -> Any:
    pytest.importorskip("pufferlib.emulation", reason=SKIP_REASON.format("PufferLib"))
    import pufferlib.vector

    return pufferlib


def puffer_envs(pufferlib: Any, backend: str, num_envs: int, **kwargs: Any) -> Any:
    """The Parallel form in PufferLib's vector env ``backend``, as docs/usage.md builds it."""
    return pufferlib.vector.make(
        pufferlib.emulation.PettingZooPufferEnv,
        env_kwargs={"env_creator": mara_env.parallel_env, "env_kwargs": PUFFER_KWARGS},
        backend=getattr(pufferlib.vector, backend),
        num_envs=num_envs,
        **kwargs,
    )


def legal_actions(observations: np.ndarray, layout: np.dtype, rng: np.random.Generator) -> Any:
    """A random legal action per row, read from the mask inside PufferLib's flat bytes."""
    masks = observations.view(layout)[:, 0]["action_mask"]
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def test_pufferlib_serial_plays_the_parallel_forms_episodes(pufferlib: Any) -> None:
    """Cluster ``i`` of ``reset(seed=s)`` plays, step for step, ``parallel_env`` reset with
    ``seed=s + i`` and then with ``reset()`` after each end: the same observations and masks in
    the flat bytes, rewards, ends, and no illegal action; the step after an end restarts."""
    import torch
    from pufferlib.pytorch import nativize_dtype, nativize_tensor

    n_envs, seed = 3, 7
    envs = puffer_envs(pufferlib, "Serial", n_envs)
    references = [mara_env.parallel_env(**PUFFER_KWARGS) for _ in range(n_envs)]
    nodes = references[0].possible_agents
    layout = envs.driver_env.obs_dtype
    assert envs.single_observation_space.dtype == np.uint8 and envs.num_agents == n_envs * 2

    def check(observations: np.ndarray, expected: list[dict[str, Any]]) -> None:
        fields = observations.view(layout)[:, 0]
        tensors = nativize_tensor(torch.from_numpy(observations), nativize_dtype(envs.emulated))
        for row, (cluster, node) in enumerate(np.ndindex(n_envs, len(nodes))):
            for key in ("action_mask", "observation"):
                mine = expected[cluster][nodes[node]][key]
                np.testing.assert_array_equal(fields[key][row], mine)
                np.testing.assert_array_equal(tensors[key][row].numpy(), mine)

    observations, _ = envs.reset(seed=seed)
    expected = [env.reset(seed=seed + i)[0] for i, env in enumerate(references)]
    check(observations, expected)
    rng = np.random.default_rng(0)
    ends, restarting = [0] * n_envs, [False] * n_envs
    try:
        for _ in range(400):
            actions = legal_actions(observations, layout, rng)
            observations, rewards, terminals, truncations, infos = envs.step(actions)
            for cluster, env in enumerate(references):
                rows = slice(cluster * len(nodes), (cluster + 1) * len(nodes))
                if restarting[cluster]:  # PufferLib resets it and ignores its actions
                    expected[cluster], _ = env.reset()
                    assert not terminals[rows].any() and not rewards[rows].any()
                    restarting[cluster] = False
                    continue
                joint = dict(zip(nodes, actions[rows].tolist(), strict=True))
                expected[cluster], reward, ended, cut, info = env.step(joint)
                np.testing.assert_allclose(rewards[rows], [reward[node] for node in nodes])
                assert terminals[rows].tolist() == [ended[node] for node in nodes]
                assert truncations[rows].tolist() == [cut[node] for node in nodes]
                assert infos[cluster] == info
                assert info["node_0"]["illegal_actions"] == 0
                if not env.agents:
                    ends[cluster] += 1
                    restarting[cluster] = True
            check(observations, expected)
            if min(ends) >= 2:
                break
    finally:
        envs.close()
    assert min(ends) >= 2, "every cluster ended twice"


def rollout(envs: Any, seed: int, steps: int = 150) -> tuple[np.ndarray, np.ndarray]:
    """Every observation and reward of ``steps`` legal random steps from ``reset(seed=seed)``."""
    layout = envs.driver_env.obs_dtype
    rng = np.random.default_rng(0)
    try:
        observations, _ = envs.reset(seed=seed)
        seen, rewards = [observations.copy()], []
        for _ in range(steps):
            observations, reward, *_ = envs.step(legal_actions(observations, layout, rng))
            seen.append(observations.copy())  # PufferLib rewrites its buffers in place
            rewards.append(reward.copy())
    finally:
        envs.close()
    return np.stack(seen), np.stack(rewards)


def test_pufferlib_same_seed_same_episodes_in_either_backend(pufferlib: Any) -> None:
    """Same seed, same episodes (through restarts); another seed, others; ``Multiprocessing``
    with one cluster per worker plays ``Serial``'s."""
    first = rollout(puffer_envs(pufferlib, "Serial", 2), seed=5)
    assert first[1].any(), "some task completed"
    # overwork: PufferLib refuses more workers than physical cores, which CI machines may lack
    parallel = {"num_workers": 2, "overwork": True}
    for backend, kwargs in (("Serial", {}), ("Multiprocessing", parallel)):
        again = rollout(puffer_envs(pufferlib, backend, 2, **kwargs), seed=5)
        for mine, theirs in zip(first, again, strict=True):
            np.testing.assert_array_equal(mine, theirs)
    other = rollout(puffer_envs(pufferlib, "Serial", 2), seed=6)
    assert not np.array_equal(first[0], other[0])


@pytest.mark.parametrize("block", client_blocks("pufferlib"))
def test_pufferlib_recipes_run_as_written(pufferlib: Any, block: str) -> None:
    run_block(block)
