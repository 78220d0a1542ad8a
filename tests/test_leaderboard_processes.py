"""Nothing of a leaderboard run outlives its main process, even after ``kill -9``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="reads process groups from Linux's /proc"
)

ROOT = Path(__file__).resolve().parents[1]
#: How long the processes of a killed run may take to go.
GRACE_SECONDS = 5.0


def group_members(group: int) -> list[str]:
    """Command lines of the live (not zombie) processes in process group ``group``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # the process ended while being read
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(f"{entry.name}: {command[:120]}")
    return members


def wait_until_gone(group: int) -> list[str]:
    deadline = time.monotonic() + GRACE_SECONDS
    while (members := group_members(group)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return members


@contextmanager
def group_killed_at_exit(process: subprocess.Popen[bytes]) -> Iterator[None]:
    """Whatever the test's outcome, nothing of ``process``'s group outlives it."""
    try:
        yield
    finally:
        if process.poll() is None or group_members(process.pid):
            os.killpg(process.pid, signal.SIGKILL)


def kill_main(process: subprocess.Popen[bytes]) -> list[str]:
    """SIGKILL the main process only; what of its group is left after the grace time."""
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    return wait_until_gone(process.pid)


def console_script() -> str:
    script = Path(sys.executable).parent / "mara-leaderboard"
    assert script.is_file(), f"{script} is missing: install the package (pip install -e .)"
    return str(script)


def test_kill_9_of_the_main_process_leaves_no_worker_behind(tmp_path: Path) -> None:
    """SIGKILL of mara-leaderboard (only the main process): its workers and the resource
    tracker end too, within seconds, and the tracker frees the pool's semaphores without
    warning of a leak."""
    out = tmp_path / "out"
    command = [console_script(), "--config", "tiny", "--seeds", "200", "--agents", "edf"]
    command += ["--workloads", "rl", "--loads", "1", "--workers", "2", "--no-progress"]
    errors = tmp_path / "stderr.txt"
    process = subprocess.Popen(
        [*command, "--no-plots", "--output", str(out)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=errors.open("wb"),  # the workers' and the tracker's too
        start_new_session=True,  # its own process group, which must empty
    )
    journal = out / "episodes.jsonl"
    with group_killed_at_exit(process):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            if journal.exists() and journal.read_bytes().count(b'"kind":"episode"') > 2:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be killed"
        before = group_members(process.pid)
        assert len(before) >= 4, before  # main, resource tracker, two workers
        left = kill_main(process)
    assert left == [], f"still running {GRACE_SECONDS} s after kill -9: {left}"
    assert "leaked semaphore" not in errors.read_text()


def test_the_watcher_thread_alone_ends_an_orphan(tmp_path: Path) -> None:
    """Without the Linux parent-death signal, the watcher thread ends a worker whose parent
    died."""
    child = textwrap.dedent(
        """
        import os, time
        from mara_env.benchmarks.common import lifeline
        lifeline._set_parent_death_signal = lambda: None  # only the thread
        lifeline.end_with_parent(os.getppid())
        print("ready", flush=True)
        time.sleep(60)
        """
    )
    parent = textwrap.dedent(
        f"""
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", {child!r}])
        time.sleep(60)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", parent], cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE
    )
    with group_killed_at_exit(process):
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"ready"
        assert len(group_members(process.pid)) == 2
        left = kill_main(process)
    assert left == []
