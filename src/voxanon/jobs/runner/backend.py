"""Executors of the corpus runner's tasks: the :class:`Backend` protocol and the local backend.

A backend takes the tasks still to do and yields one :class:`Result` per task,
in any order; its workers build the anonymizer from ``(type(anonymizer),
anonymizer.config)`` and write the outputs themselves
(:class:`voxanon.jobs.runner.worker.Worker`). ``jobs`` is always the number of
worker processes. The local backend is here; the Ray backend is
:class:`voxanon.jobs.runner.ray_backend.RayBackend`.

Local backend
    ``jobs=1`` runs in this process with the given anonymizer instance. More
    jobs use a pool of spawned processes
    (:func:`voxanon.lifeline.process_pool`); work goes out in chunks with a bounded number in flight and only
    small results come back, so memory does not grow with the corpus. As with
    any spawned pool, a script calling this with ``jobs > 1`` needs the
    ``if __name__ == "__main__":`` guard. Each worker holds a copy of the
    output lock's file descriptor and dies with this process (see
    :mod:`voxanon.lifeline`), so the lock is held until
    the last worker is gone and no worker writes after the run ended.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.reduction import DupFd
from typing import Any, Protocol

from voxanon.anonymizers.base import Anonymizer
from voxanon.errors import RunError
from voxanon.jobs.runner.worker import Result, Task, Worker, anonymize_task
from voxanon.lifeline import process_pool


class Backend(Protocol):
    """Runs tasks on worker processes; see the module notes."""

    def run(self, tasks: list[Task], anonymizer: Anonymizer, seed: int | str, *, jobs: int | None,
            quiet: bool, limiter: bool = True, lock_fd: int | None = None) -> Iterator[Result]:
        """Results of ``tasks`` in any order.

        ``jobs`` is the number of worker processes (None: the backend's default);
        ``limiter`` is the workers' peak limiter setting; ``lock_fd``, the output
        lock, is held by workers on this machine so that it outlives them.
        """
        ...


def lost(tasks: Iterable[Task], reason: str) -> Iterator[Result]:
    """Failed results for tasks whose worker was lost."""
    for task in tasks:
        yield Result(task, 0.0, 0.0, reason)


def check_picklable(anonymizer: Anonymizer) -> None:
    """Raise RunError when the anonymizer's class or config cannot be sent to another process."""
    try:
        pickle.dumps((type(anonymizer), anonymizer.config))
    except Exception as exc:
        raise RunError(f"anonymizer {anonymizer.name!r} cannot be sent to worker processes ({exc}); "
                       "define its class at module level or use jobs=1") from None


class InheritedFd:
    """A file descriptor that a spawned child inherits (pickled as the child's copy of it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return _detach, (DupFd(self.fd),)  # valid only while a child is being spawned


def _detach(dup: Any) -> int:
    return dup.detach()


_worker: Worker | None = None
_lock_fd: int | None = None


def start_worker(cls: type[Anonymizer], config: object, limiter: bool, lock_fd: int | None, threads: int) -> None:
    """Process-pool initializer: keep the lock, build the worker with its share of the cores."""
    global _worker, _lock_fd
    _lock_fd = lock_fd  # the inherited lock stays open for the life of this process
    _worker = Worker(cls, config, limiter=limiter, threads=threads)


def run_batch(tasks: list[Task], seed: int | str) -> list[Result]:
    """Run ``tasks`` on this process's worker (see :func:`start_worker`)."""
    if _worker is None:
        raise RuntimeError("run_batch called in a process not started by start_worker")
    return _worker.run(tasks, seed)


@dataclass
class LocalBackend:
    """Worker processes on this machine (the default backend)."""

    def run(self, tasks: list[Task], anonymizer: Anonymizer, seed: int | str, *, jobs: int | None = None,
            quiet: bool = False, limiter: bool = True, lock_fd: int | None = None) -> Iterator[Result]:
        """Results of ``tasks``; ``jobs`` defaults to the usable cores (never more than the tasks)."""
        cores = len(os.sched_getaffinity(0))
        workers = min(jobs or cores, max(len(tasks), 1))
        if workers == 1:
            for task in tasks:
                yield anonymize_task(anonymizer, task, seed, limiter=limiter)
            return
        check_picklable(anonymizer)
        size = max(1, min(32, len(tasks) // (workers * 8)))
        chunks = iter([tasks[i:i + size] for i in range(0, len(tasks), size)])
        lock = InheritedFd(lock_fd) if lock_fd is not None else None
        threads = max(1, cores // workers)
        pool = process_pool(workers, start_worker, (type(anonymizer), anonymizer.config, limiter, lock, threads))
        try:
            in_flight: dict[Future, list[Task]] = {}
            while True:
                for chunk in chunks:
                    try:
                        in_flight[pool.submit(run_batch, chunk, seed)] = chunk
                    except BrokenProcessPool as exc:
                        yield from lost(chunk, _died(exc))
                    if len(in_flight) >= 2 * workers:
                        break
                if not in_flight:
                    return
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    chunk = in_flight.pop(future)
                    try:
                        yield from future.result()
                    except BrokenProcessPool as exc:
                        yield from lost(chunk, _died(exc))
        finally:  # also when the caller stops early (disk full): drop queued work, wait for the running
            pool.shutdown(wait=True, cancel_futures=True)


def _died(exc: BaseException) -> str:
    return ("worker process died (out of memory, a crash in native code, or a script calling "
            f"anonymize_corpus without an `if __name__ == '__main__':` guard?): {exc}")
