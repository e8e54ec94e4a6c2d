"""A benchmark's evaluations on worker processes, one thread each.

The evaluations of one system that share work form a :class:`Unit` and run in
order in one worker (:attr:`~voxanon.evaluation.evaluator.Evaluator.group`:
an attacker rung's training on dev and its attacks on each split; the
pretrained attacker's scenarios of one split, which share embeddings).
:func:`run_units` runs ``jobs`` units at a time on spawned processes
(:func:`voxanon.lifeline.process_pool`), each with one intra-op
thread (torch, OpenMP, CTranslate2): for these small models, processes use
the cores better than threads do, and a trained attacker does not depend on
how many jobs ran. A worker loads each model once (its own
:class:`~voxanon.evaluation.evaluator.Env`) and shares the run's caches,
whose writes are atomic. An evaluation that raises fails alone. When a worker
dies (out of memory, a crash in native code), a new pool takes the rest, and
the units that were running then run again one at a time, so that only the
one that kills its worker fails. ``jobs=1`` runs every unit in this process,
with one torch thread as well.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path

from voxanon.evaluation.evaluator import Env, Evaluator, SystemData
from voxanon.jobs.perf import SINGLE_THREAD_ENV
from voxanon.lifeline import process_pool

#: what one evaluation gave: its result as :func:`~voxanon.evaluation.results.to_dict` writes it, or the error
Outcome = tuple[dict | None, str | None]
_DIED = "worker process died (out of memory or a crash in native code)"


@dataclass(frozen=True)
class Unit:
    """Evaluations of one system that run in order in one worker."""

    data: SystemData
    evaluators: tuple[Evaluator, ...]


def units(todo: Iterable[tuple[Evaluator, SystemData]]) -> list[Unit]:
    """``todo`` grouped into units by (system, evaluator group), in order of each unit's first evaluation."""
    grouped: dict[tuple[str, str], tuple[SystemData, list[Evaluator]]] = {}
    for ev, data in todo:
        grouped.setdefault((data.label, ev.group), (data, []))[1].append(ev)
    return [Unit(data, tuple(evs)) for data, evs in grouped.values()]


def run_unit(unit: Unit, env: Env) -> list[Outcome]:
    """Each evaluation of ``unit`` in order; one that raises gives its error and the next ones still run."""
    from voxanon.evaluation.results import to_dict

    out: list[Outcome] = []
    for ev in unit.evaluators:
        try:
            out.append((to_dict(ev.run(unit.data, env)), None))
        except Exception as exc:
            out.append((None, f"{type(exc).__name__}: {exc}"))
    return out


_env: Env | None = None


def start_worker(cache_dir: Path, quiet: bool, device: str) -> None:
    """Process-pool initializer: one intra-op thread, a fresh :class:`Env`."""
    global _env
    os.environ.update(SINGLE_THREAD_ENV)  # before the numeric libraries start their thread pools
    import torch

    torch.set_num_threads(1)
    _env = Env(cache_dir, quiet=quiet, device=device)


def _run_in_worker(unit: Unit) -> list[Outcome]:
    if _env is None:
        raise RuntimeError("_run_in_worker called in a process not started by start_worker")
    return run_unit(unit, _env)


def run_units(todo: list[Unit], env: Env, jobs: int) -> Iterator[tuple[Unit, list[Outcome]]]:
    """Every unit with its outcomes, as each finishes (in order when ``jobs`` is 1).

    The units that were running when a worker died are run again afterwards, one at a time: alone, a unit
    that kills its worker is the one at fault, and only it fails.
    """
    workers = min(jobs, len(todo))
    if workers <= 1:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as a worker: what is trained does not depend on the jobs
        try:
            for unit in todo:
                yield unit, run_unit(unit, env)
        finally:
            torch.set_num_threads(threads)
        return
    suspects = []
    for unit, outcomes in _on_pool(todo, workers, env):
        if outcomes is None:
            suspects.append(unit)
        else:
            yield unit, outcomes
    for unit, outcomes in _on_pool(suspects, 1, env):
        yield unit, outcomes or [(None, _DIED)] * len(unit.evaluators)


def _on_pool(todo: list[Unit], workers: int, env: Env) -> Iterator[tuple[Unit, list[Outcome] | None]]:
    """Units run on ``workers`` processes, as each finishes; None for those running when a worker died
    (the pool is gone then: a new one takes the rest)."""
    if not todo:
        return
    pending, in_flight = list(reversed(todo)), {}
    pool = process_pool(workers, start_worker, (env.cache_dir, env.quiet, env.device))
    try:
        while pending or in_flight:
            try:
                while pending and len(in_flight) < workers:  # no queue: a broken pool loses only the units running
                    in_flight[pool.submit(_run_in_worker, pending[-1])] = pending[-1]
                    pending.pop()
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    outcomes = future.result()
                    yield in_flight.pop(future), outcomes
            except BrokenProcessPool:
                for unit in in_flight.values():
                    yield unit, None
                in_flight.clear()
                pool.shutdown(wait=True, cancel_futures=True)
                pool = process_pool(workers, start_worker, (env.cache_dir, env.quiet, env.device))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
