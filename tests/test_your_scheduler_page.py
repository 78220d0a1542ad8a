"""docs/your_scheduler.md runs as written: its files, saved as the page says, and its commands,
run from the folder that holds them, rank each agent on a board.

The budgets are smaller than the page's (one workload, one load, one seed; a few hundred PPO
timesteps): they do not change how an agent is found, built, keyed or played.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from page_blocks import page_blocks

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "your_scheduler.md").read_text()
#: The grid every command of the page is run on here.
SMALL = ["--workloads", "rl", "--loads", "1", "--seeds", "1", "--workers", "1", "--no-progress"]


def block(name: str) -> str:
    """The code of the page's block ``name`` (between its ``page:`` markers)."""
    blocks = page_blocks(PAGE)
    assert name in blocks, f"docs/your_scheduler.md has no block {name!r}"
    return blocks[name][1]


def run(line: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """One command of the page, its program taken from this interpreter's environment."""
    program, *arguments = shlex.split(line)
    executable = (
        [sys.executable] if program == "python" else [str(Path(sys.executable).parent / program)]
    )
    small = SMALL if program == "mara-leaderboard" else []
    return subprocess.run(
        [*executable, *arguments, *small], cwd=folder, capture_output=True, text=True, timeout=600
    )


def ranked(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_scheduler_the_policy_and_the_torch_network_are_ranked(tmp_path: Path) -> None:
    (tmp_path / "my_sched.py").write_text(block("my_sched.py"))
    training = block("train_ppo.py")
    assert "total_timesteps=60_000" in training and 'device="cpu")' in training
    small_training = training.replace("total_timesteps=60_000", "total_timesteps=256").replace(
        'device="cpu")', 'device="cpu", n_steps=64, batch_size=64)'
    )
    (tmp_path / "train_ppo.py").write_text(small_training)
    (tmp_path / "my_policy.py").write_text(block("my_policy.py"))

    (scheduler_command,) = block("command-scheduler").splitlines()
    assert "most_progress" in ranked(run(scheduler_command, tmp_path))

    ranked(run("python train_ppo.py", tmp_path))
    assert (tmp_path / "my_ppo.zip").is_file()
    (policy_command,) = block("command-policy").splitlines()
    board = ranked(run(policy_command, tmp_path))
    assert "my_ppo" in board and "most_progress" in board and "mara" in board

    make_weights, torch_command = block("command-torch").splitlines()
    ranked(run(make_weights, tmp_path))
    assert "my_net" in ranked(run(torch_command, tmp_path))


def test_a_model_of_another_size_or_no_model_is_refused_with_what_it_expects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    from mara_env.agents import make_agent
    from mara_env.agents.evaluation import evaluate
    from mara_env.benchmarks.leaderboard.cli import main as leaderboard
    from mara_env.errors import CheckpointError

    env = make_vec_env("mara_env/Cluster-v3", n_envs=1, seed=0, env_kwargs={"config": "tiny"})
    MaskablePPO("MlpPolicy", env, seed=0, device="cpu", n_steps=32, batch_size=32).save(
        tmp_path / "tiny.zip"
    )
    agent = make_agent(f"sb3:{tmp_path / 'tiny.zip'}")
    with pytest.raises(ValueError, match=r"trained on states of shape \(72,\).*\(344,\)"):
        evaluate(agent, "training", seeds=[0])
    with pytest.raises(CheckpointError, match="no model file"):
        make_agent(f"sb3:{tmp_path / 'missing.zip'}")
    (tmp_path / "junk.zip").write_bytes(b"not a model")
    with pytest.raises(CheckpointError, match="is not a MaskablePPO model"):
        make_agent(f"sb3:{tmp_path / 'junk.zip'}")
    out = tmp_path / "board"
    junk = f"sb3:{tmp_path / 'junk.zip'}"
    with pytest.raises(SystemExit) as refused:  # a usage error, before any episode
        leaderboard(["--quick", "--agents", "edf", junk, "--output", str(out)])
    assert refused.value.code == 2 and not out.exists()
    assert "junk.zip is not a MaskablePPO model" in capsys.readouterr().err
