"""Running voxanon in subprocesses that can import the test helpers (the toy anonymizers)."""

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
