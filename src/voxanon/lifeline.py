"""Worker processes that die with the process that started them.

A worker must not outlive its run: an orphan keeps writing after the run
ended (and after the output lock was released), and an idle orphan keeps its
memory until someone kills it by hand. :func:`hold_lifeline` asks Linux to
kill this process when its parent dies (``PR_SET_PDEATHSIG``) and starts a
watchdog thread that exits when the watched process is gone (the fallback
elsewhere, and for Ray actors, whose parent is not the run).
:func:`process_pool` is the one way voxanon starts a local process pool: its
spawned workers hold the lifeline from their first instruction on.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_PR_SET_PDEATHSIG = 1


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def hold_lifeline(watched_pid: int, *, parent: bool, interval: float = 0.5) -> None:
    """End this process when ``watched_pid`` ends.

    ``parent=True`` says ``watched_pid`` is this process's parent: then Linux
    delivers SIGKILL at the parent's death (``PR_SET_PDEATHSIG``). A daemon
    thread also polls every ``interval`` seconds and exits the process with
    status 1 once the watched process is gone (or, for a parent, once this
    process was re-parented).
    """
    if parent and sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still applies
    if parent and os.getppid() != watched_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while (os.getppid() == watched_pid) if parent else _pid_alive(watched_pid):
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="voxanon-lifeline", daemon=True).start()


def _start_tied(parent_pid: int, initializer: Callable[..., None] | None, initargs: tuple) -> None:
    hold_lifeline(parent_pid, parent=True)
    if initializer is not None:
        initializer(*initargs)


def process_pool(workers: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A pool of ``workers`` spawned processes that die with this one, then run ``initializer(*initargs)``.

    Spawned, not forked: fork is unsafe with threads (ONNX Runtime, torch) and
    a forked worker would inherit every open file of this process. As with any
    spawned pool, a script using it needs the ``if __name__ == "__main__":``
    guard.
    """
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_tied,
                               initargs=(os.getpid(), initializer, initargs))
