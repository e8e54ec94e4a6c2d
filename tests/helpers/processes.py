"""Running voxanon in subprocesses that can import the test helpers (the toy anonymizers), and watching them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: the repository root: on a subprocess's PYTHONPATH, ``tests.helpers.toys:ToyGain`` imports
REPO_ROOT = Path(__file__).parents[2]


def subprocess_env() -> dict[str, str]:
    """This process's environment now (Ray adds its cluster's token when it starts one) with the repository root
    first on ``PYTHONPATH``."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}


def run_cli_killed(args: list[str], out: Path, kill_after: int) -> None:
    """Start ``voxanon anonymize`` and SIGKILL its whole process group once ``kill_after`` wavs exist."""
    proc = subprocess.Popen([sys.executable, "-m", "voxanon", "anonymize", *args], env=subprocess_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while len(list(out.glob("wav/*.wav"))) < kill_after:
        assert proc.poll() is None, f"run ended before it could be killed: {proc.stderr.read().decode()}"
        assert time.monotonic() < deadline, "run made no progress"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()


def processes_with_files_under(folder: Path) -> dict[int, list[str]]:
    """Live processes holding a file under ``folder`` open (from ``/proc/<pid>/fd``), with those files.

    Once the processes of a run are gone, an empty answer says nothing can still be writing there: the check
    waits on that event instead of watching the folder for a quiet second.
    """
    root = str(folder.resolve()) + os.sep
    found: dict[int, list[str]] = {}
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            targets = [os.readlink(fd) for fd in fd_dir.iterdir()]
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue  # ended while listed, or not ours to read
        if held := [t for t in targets if t.startswith(root)]:
            found[int(fd_dir.parent.name)] = held
    return found


def wait_until_gone(pids: set[int], seconds: float, what: str) -> None:
    """Wait until none of ``pids`` is alive (zombies count as gone); fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while left := [pid for pid in pids if alive(pid)]:
        assert time.monotonic() < deadline, f"{what} alive {seconds:g} s after the kill: {left}"
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie or a missing process does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (FileNotFoundError, IndexError):
        return False
