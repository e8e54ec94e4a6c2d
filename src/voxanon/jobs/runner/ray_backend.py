"""Ray backend of the corpus runner: batches of utterances on a pool of Ray actors.

Each actor is one worker process that builds its anonymizer once from
``(type(anonymizer), anonymizer.config)`` (a model loads once per worker), then
takes batches of jobs, writes the output wavs itself with the runner's atomic
``write_wav`` and sends back only the small result records. Outputs therefore
go to a filesystem path every node can reach (a shared filesystem on a
multi-node cluster). Randomness is per utterance, so outputs are byte-identical
to the local backend's whatever the worker count or batch size.

Fault tolerance
    An actor whose process dies is restarted (``max_restarts``) and its pending
    batches are retried (``max_task_retries``); re-running a batch rewrites
    identical bytes through an atomic rename, so a retry never corrupts an
    output. A batch still lost after that becomes failed results (listed in
    ``failures.tsv``; rerunning the command retries them) and its actor leaves
    the pool.
Lifetime
    Actors are owned by the driver (the run), so Ray ends them when it ends;
    an actor on the driver's machine also watches the driver's pid
    (:func:`voxanon.lifeline.hold_lifeline`) and exits within half a
    second of its death, so no actor keeps writing after the run was killed.
    An actor cannot hold the output lock (it is not the driver's child).
Resources
    Each actor reserves one CPU. When the method ``needs_model`` and the cluster
    has GPUs, each actor also reserves ``num_gpus`` (default 1; a fraction such
    as 0.25 packs four workers on one GPU), so Ray sets ``CUDA_VISIBLE_DEVICES``
    for it; whether the method then runs on the GPU is its own setting. The pool
    is capped to what the cluster has now: more actors would wait forever.

Ray is imported only when a run starts, so the local backend never needs it.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from voxanon.anonymizers.base import Anonymizer
from voxanon.errors import ConfigError, RunError
from voxanon.jobs.runner.backend import check_picklable, lost
from voxanon.jobs.runner.worker import Result, Task, Worker
from voxanon.lifeline import hold_lifeline

#: batches queued on each actor at a time: one running, one waiting (hides the round trip)
IN_FLIGHT_PER_WORKER = 2


def import_ray() -> Any:
    """The ``ray`` module, or a RunError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RunError('the Ray backend needs Ray: pip install "voxanon[ray]"') from None
    return ray


@dataclass
class WorkerStats:
    """What one worker process did: batches of utterances, audio seconds, seconds spent working."""

    worker: str
    utterances: int = 0
    failed: int = 0
    audio_seconds: float = 0.0
    busy_seconds: float = 0.0

    @property
    def rtf(self) -> float | None:
        """Busy seconds per second of audio (None before any audio)."""
        return self.busy_seconds / self.audio_seconds if self.audio_seconds > 0 else None


class BatchWorker:
    """Body of a Ray actor: a :class:`Worker` that ends with the run's driver when it shares its machine."""

    def __init__(self, cls: type[Anonymizer], config: object, limiter: bool, driver: tuple[str, int]) -> None:
        self.name = f"{socket.gethostname()}:{os.getpid()}"
        if driver[0] == socket.gethostname():
            hold_lifeline(driver[1], parent=False)
        self.worker = Worker(cls, config, limiter=limiter)

    def pid(self) -> int:
        """Process id of this worker (tests kill it to check recovery)."""
        return os.getpid()

    def run(self, tasks: list[Task], seed: int | str) -> tuple[str, float, list[Result]]:
        """Anonymize ``tasks``; return (worker name, busy seconds, results)."""
        start = time.monotonic()
        results = self.worker.run(tasks, seed)
        return self.name, time.monotonic() - start, results


@dataclass
class RayBackend:
    """Run the corpus on a Ray cluster; pass as ``anonymize_corpus(..., backend=RayBackend(...))``.

    Parameters
    ----------
    address : cluster to join: None starts a local Ray instance (unless one is
        already initialised in this process), ``"auto"`` joins the cluster
        started with ``ray start`` on this node, ``"ray://host:10001"`` uses Ray Client
    batch_size : utterances per task (default: about four batches per worker, at most 64)
    num_gpus : GPUs reserved per worker for methods that need a model (default 1 when the
        cluster has GPUs, else 0)
    max_retries : actor restarts and task retries after a worker process dies

    After a run, ``stats`` holds one :class:`WorkerStats` per worker process;
    during a run, ``actors`` holds the actor handles.
    """

    address: str | None = None
    batch_size: int | None = None
    num_gpus: float | None = None
    max_retries: int = 3
    stats: list[WorkerStats] = field(default_factory=list, init=False)
    actors: list[Any] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {self.batch_size}")
        if self.num_gpus is not None and self.num_gpus < 0:
            raise ConfigError(f"num_gpus must not be negative, got {self.num_gpus}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must not be negative, got {self.max_retries}")

    def run(self, tasks: list[Task], anonymizer: Anonymizer, seed: int | str, *, jobs: int | None = None,
            quiet: bool = False, limiter: bool = True, lock_fd: int | None = None) -> Iterator[Result]:
        """Results of ``tasks`` in completion order, from ``jobs`` actors (default: the cluster's CPUs).

        ``lock_fd`` is not used: actors are not the driver's children (see the module notes).
        """
        self.stats = []
        if not tasks:
            return
        ray = import_ray()
        check_picklable(anonymizer)
        started = _connect(ray, self.address)
        self.actors = []
        try:
            num_gpus = self._gpus(ray, anonymizer)
            workers = _pool_size(ray, jobs, num_gpus, len(tasks), quiet)
            remote = ray.remote(BatchWorker).options(
                num_cpus=1, num_gpus=num_gpus, max_restarts=self.max_retries, max_task_retries=self.max_retries)
            driver = (socket.gethostname(), os.getpid())
            self.actors = [remote.remote(type(anonymizer), anonymizer.config, limiter, driver)
                           for _ in range(workers)]
            try:
                ray.get([actor.pid.remote() for actor in self.actors])
            except ray.exceptions.RayError as exc:
                raise RunError(f"Ray workers could not build anonymizer {anonymizer.name!r}: {exc}") from None
            size = self.batch_size or max(1, min(64, math.ceil(len(tasks) / (4 * workers))))
            batches = deque(tasks[i:i + size] for i in range(0, len(tasks), size))
            yield from self._schedule(ray, self.actors, batches, seed)
        finally:
            for actor in self.actors:
                ray.kill(actor)
            self.actors = []
            if started:
                ray.shutdown()

    def _gpus(self, ray: Any, anonymizer: Anonymizer) -> float:
        """GPUs per actor: none for signal processing or a cluster without GPUs."""
        if not anonymizer.needs_model or ray.cluster_resources().get("GPU", 0) <= 0:
            return 0
        return 1 if self.num_gpus is None else self.num_gpus

    def _schedule(self, ray: Any, actors: list[Any], batches: deque[list[Task]], seed: int | str) -> Iterator[Result]:
        """Keep every live actor fed with batches; yield each batch's results as it finishes."""
        load = [0] * len(actors)
        alive = set(range(len(actors)))
        in_flight: dict[Any, tuple[int, list[Task]]] = {}
        stats: dict[str, WorkerStats] = {}
        while True:
            for i in sorted(alive):
                while batches and load[i] < IN_FLIGHT_PER_WORKER:
                    batch = batches.popleft()
                    in_flight[actors[i].run.remote(batch, seed)] = (i, batch)
                    load[i] += 1
            if not in_flight:
                break
            [ref], _ = ray.wait(list(in_flight), num_returns=1)
            i, batch = in_flight.pop(ref)
            load[i] -= 1
            try:
                worker, busy, results = ray.get(ref)
            except ray.exceptions.RayError as exc:
                reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
                if isinstance(exc, ray.exceptions.RayActorError):  # restarts used up: the worker leaves the pool
                    alive.discard(i)
                    reason = f"Ray worker lost after {self.max_retries} restarts: {reason}"
                yield from lost(batch, reason)
                continue
            entry = stats.setdefault(worker, WorkerStats(worker))
            entry.utterances += len(results)
            entry.failed += sum(r.error is not None for r in results)
            entry.audio_seconds += sum(r.in_seconds for r in results)
            entry.busy_seconds += busy
            self.stats = sorted(stats.values(), key=lambda s: s.worker)
            yield from results
        for batch in batches:  # every actor is gone
            yield from lost(batch, "no Ray worker left: all were lost (see the failures above)")


def _connect(ray: Any, address: str | None) -> bool:
    """Initialise Ray unless it already is; True when this call did it (and must shut it down)."""
    if ray.is_initialized():
        return False
    try:
        ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
    except ConnectionError as exc:
        raise RunError(f"cannot reach a Ray cluster at {address!r} ({exc}); "
                       "start one with `ray start --head` or omit --address for a local instance") from None
    return True


def _pool_size(ray: Any, jobs: int | None, num_gpus: float, n_jobs: int, quiet: bool) -> int:
    """Actors to start: ``jobs`` (default all CPUs), capped by the cluster's resources and the work."""
    resources = ray.cluster_resources()
    capacity = int(resources.get("CPU", 1))
    if num_gpus > 0:
        capacity = min(capacity, int(resources.get("GPU", 0) / num_gpus))
    if jobs is not None and jobs > capacity and not quiet:
        print(f"Ray cluster has room for {capacity} workers ({resources.get('CPU', 0):g} CPUs, "
              f"{resources.get('GPU', 0):g} GPUs); using {capacity}, not {jobs}", file=sys.stderr)
    return max(1, min(jobs or capacity, capacity, n_jobs))


def worker_table(stats: list[WorkerStats], wall_seconds: float) -> str:
    """Per-worker throughput lines and a total: utterances, hours of audio, RTF, x real time."""
    from voxanon.table import format_table

    rows = [[s.worker, s.utterances, s.failed, f"{s.audio_seconds / 3600:.3f}",
             f"{s.rtf:.4f}" if s.rtf is not None else "n/a",
             f"{s.audio_seconds / s.busy_seconds if s.busy_seconds > 0 else 0.0:.1f}"] for s in stats]
    audio = sum(s.audio_seconds for s in stats)
    rows.append(["all (wall clock)", sum(s.utterances for s in stats), sum(s.failed for s in stats),
                 f"{audio / 3600:.3f}", f"{wall_seconds / audio:.4f}" if audio > 0 else "n/a",
                 f"{audio / wall_seconds if wall_seconds > 0 else 0.0:.1f}"])
    return format_table(["worker", "utts", "failed", "audio h", "RTF", "x real time"], rows)
