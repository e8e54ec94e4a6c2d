"""Anonymize a corpus: a Kaldi data directory or a plain folder of audio files.

Layout
    A data directory ``X`` gives ``<output>/wav/<utt>.wav`` plus the data-directory
    files: ``wav.scp`` rewritten with absolute paths, ``utt2dur`` measured on the
    outputs, the other files copied. Only utterances with an output are listed,
    so the output is always a valid data directory. A plain folder is mirrored
    as ``<output>/<relative path without extension>.wav``. Relative paths in
    ``wav.scp`` are taken from the current directory, as in Kaldi.
Randomness
    Each utterance gets ``utterance_rng(seed, utt)``; at ``level="speaker"`` the
    key is its speaker (from ``utt2spk``), so all of a speaker's utterances get
    the same generator. Outputs do not depend on worker count or resumption.
Crash safety
    Wavs are written atomically (temporary file + rename), so an output wav that
    exists is finished: a rerun skips it and retries everything else, including
    earlier failures. The data-directory files and ``failures.tsv`` are rewritten
    atomically at the end of every run. A run killed at any moment leaves no
    partial output under a final name; leftover temporaries are deleted by the
    next run. The settings live in ``voxanon_run.json`` (see
    :mod:`voxanon.pipelines.runstate`).
Parallelism
    ``jobs > 1`` uses a pool of spawned processes, each building its own
    anonymizer once from ``(type(anonymizer), anonymizer.config)`` (so the class
    must be importable); work goes out in chunks with a bounded number in flight,
    and only small result records come back, so memory does not grow with the
    corpus. ``jobs=1`` runs in this process with the given instance. As with any
    spawned pool, a script that calls this with ``jobs > 1`` needs the
    ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

import numpy as np
import soundfile as sf

from voxanon import __version__
from voxanon.anonymizers.base import Anonymizer, utterance_rng
from voxanon.audio.io import load_audio, resample, write_wav
from voxanon.data.folder import mirrored_path, scan_audio_folder
from voxanon.data.kaldi import DataDir, read_data_dir, write_data_dir
from voxanon.pipelines.runstate import (
    RunError,
    check_paths,
    check_sources,
    output_lock,
    prepare_output,
    write_failures,
)
from voxanon.progress import Progress

LEVELS = ("utterance", "speaker")


class Job(NamedTuple):
    """One utterance to anonymize: id, source (path or pipe), output file, RNG key."""

    utt: str
    source: str
    out: Path
    key: str


class Result(NamedTuple):
    """Outcome of one job: seconds of input and output audio, or the reason it failed."""

    job: Job
    in_seconds: float
    out_seconds: float
    error: str | None


class Backend(Protocol):
    """Another executor of the jobs, e.g. :class:`voxanon.pipelines.ray_backend.RayBackend`."""

    def run(self, todo: list[Job], anonymizer: Anonymizer, seed: int | str, *,
            jobs: int | None, quiet: bool) -> Iterator[Result]:
        """Results of ``todo`` (written by the backend's workers with ``write_wav``), in any order."""
        ...


@dataclass(frozen=True)
class RunSummary:
    """What a run did; ``rtf`` is wall seconds per second of audio processed (None if none)."""

    done: int
    skipped: int
    failed: int
    audio_seconds: float
    wall_seconds: float
    rtf: float | None
    output: Path


def output_dir_for(input_path: str | os.PathLike, output: str | os.PathLike, suffix: str | None) -> Path:
    """The output folder: ``output`` itself, or ``output/<input name><suffix>`` when a suffix is given."""
    output = Path(output)
    return output / f"{Path(input_path).resolve().name}{suffix}" if suffix else output


def _plan(input_path: Path, output_path: Path, level: str) -> tuple[list[Job], DataDir | None]:
    """Every job of the corpus (data directory or folder), and the data directory if any."""
    if (input_path / "wav.scp").is_file():
        if (input_path / "segments").exists():
            raise RunError(f"{input_path}/segments: segmented recordings are not supported; "
                           "extract the segments into files first")
        data = read_data_dir(input_path)
        if level == "speaker" and not data.utt2spk:
            raise RunError(f"{input_path}: --level speaker needs utt2spk")
        for utt in data.wav_scp:
            if "/" in utt:
                line = data.lines.get("wav.scp", {}).get(utt, "?")
                raise RunError(f"{input_path}/wav.scp:{line}: utterance id {utt!r} contains '/', "
                               "which cannot be an output file name")
        wav_dir = output_path / "wav"
        jobs = [Job(utt, source, wav_dir / f"{utt}.wav", data.utt2spk[utt] if level == "speaker" else utt)
                for utt, source in data.wav_scp.items()]
        return jobs, data
    if level == "speaker":
        raise RunError(f"{input_path}: --level speaker needs a data directory with utt2spk, not a plain folder")
    files = scan_audio_folder(input_path)
    return [Job(utt, str(path), mirrored_path(output_path, utt), utt) for utt, path in files.items()], None


def _anonymize_one(anonymizer: Anonymizer, job: Job, seed: int | str) -> Result:
    """Load, resample if needed, anonymize and write one utterance; errors become a failed Result."""
    try:
        wav, sr = load_audio(job.source)
        in_seconds = len(wav) / sr
        if anonymizer.sample_rate and sr != anonymizer.sample_rate:
            wav, sr = resample(wav, sr, anonymizer.sample_rate), anonymizer.sample_rate
        out, out_sr = anonymizer.process(wav, sr, utterance_rng(seed, job.key))
        out = np.asarray(out)
        write_wav(job.out, out, int(out_sr))
        return Result(job, in_seconds, len(out) / int(out_sr), None)
    except Exception as exc:  # one bad utterance must not stop the corpus
        return Result(job, 0.0, 0.0, f"{type(exc).__name__}: {exc}")


_worker_anonymizer: Anonymizer | None = None


def _init_worker(cls: type[Anonymizer], config: object) -> None:
    """Pool initializer: build this worker's anonymizer once; one intra-op thread per worker."""
    global _worker_anonymizer
    _worker_anonymizer = cls(config)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def _run_chunk(jobs: list[Job], seed: int | str) -> list[Result]:
    assert _worker_anonymizer is not None, "worker used without _init_worker"
    return [_anonymize_one(_worker_anonymizer, job, seed) for job in jobs]


def _run_pool(todo: list[Job], anonymizer: Anonymizer, seed: int | str, workers: int) -> Iterator[Result]:
    """Results of ``todo`` from a process pool, in completion order, with a bounded number of chunks in flight."""
    try:
        pickle.dumps((type(anonymizer), anonymizer.config))
    except Exception as exc:
        raise RunError(f"anonymizer {anonymizer.name!r} cannot be sent to worker processes ({exc}); "
                       "define its class at module level or use jobs=1") from None
    size = max(1, min(32, len(todo) // (workers * 8)))
    chunks = iter([todo[i:i + size] for i in range(0, len(todo), size)])
    context = multiprocessing.get_context("spawn")  # fork is unsafe with threads, CUDA and torch
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                             initargs=(type(anonymizer), anonymizer.config)) as pool:
        in_flight: dict[Future, list[Job]] = {}
        while True:
            for chunk in chunks:
                try:
                    in_flight[pool.submit(_run_chunk, chunk, seed)] = chunk
                except BrokenProcessPool as exc:
                    yield from _lost(chunk, exc)
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
                    yield from _lost(chunk, exc)


def _lost(chunk: Iterable[Job], exc: BaseException) -> Iterator[Result]:
    """Failed results for jobs whose worker process died."""
    for job in chunk:
        yield Result(job, 0.0, 0.0, "worker process died (out of memory, a crash in native code, or a script "
                     f"calling anonymize_corpus without an `if __name__ == '__main__':` guard?): {exc}")


def _write_data_dir(data: DataDir, jobs: list[Job], out_seconds: dict[str, float], output_path: Path) -> None:
    """Data-directory files for the utterances that have an output (durations read from the wavs if not known)."""
    done = [job for job in jobs if job.out.is_file()]
    out = data.subset([job.utt for job in done])
    out.wav_scp = {job.utt: str(job.out.resolve()) for job in done}
    out.utt2dur = {job.utt: f"{out_seconds.get(job.utt) or sf.info(str(job.out)).duration:.4f}" for job in done}
    write_data_dir(out, output_path)


def anonymize_corpus(
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    anonymizer: Anonymizer,
    *,
    seed: int | str = 0,
    level: str = "utterance",
    jobs: int | None = None,
    force: bool = False,
    quiet: bool = False,
    backend: Backend | None = None,
) -> RunSummary:
    """Anonymize every utterance of ``input_path`` into ``output_path`` (see the module notes).

    Parameters
    ----------
    input_path : data directory (has ``wav.scp``) or folder of audio files
    output_path : the output folder itself
    anonymizer : the method, already configured
    seed : global seed of the per-utterance RNGs
    level : ``"utterance"`` or ``"speaker"`` (RNG keyed by speaker; needs ``utt2spk``)
    jobs : worker processes (default: all usable cores; 1 runs in this process)
    force : replace an output folder made with other settings
    quiet : no progress output
    backend : run the jobs there instead of in local processes (``jobs`` is then its worker count)

    Returns
    -------
    RunSummary
        ``failed > 0`` means ``failures.tsv`` in the output folder lists them.

    Raises
    ------
    RunError, DataError
        Before anything is written: unsafe paths, bad input, mismatched output.
    """
    start = time.monotonic()
    input_path, output_path = Path(input_path), Path(output_path)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if not input_path.exists():
        raise RunError(f"input {input_path} does not exist")
    check_paths(input_path, output_path)
    all_jobs, data = _plan(input_path, output_path, level)
    if data is not None:
        check_sources(list(data.wav_scp.values()), output_path)
    settings = {**anonymizer.settings(), "class": f"{type(anonymizer).__module__}:{type(anonymizer).__qualname__}",
                "seed": seed, "level": level, "input": str(input_path.resolve()), "voxanon": __version__}
    with output_lock(output_path):
        prepare_output(output_path, settings, force=force)
        todo = [job for job in all_jobs if not job.out.is_file()]
        skipped = len(all_jobs) - len(todo)
        workers = min(jobs or len(os.sched_getaffinity(0)), max(len(todo), 1))
        if skipped and not quiet:
            print(f"{skipped} of {len(all_jobs)} utterances already done in {output_path}; skipping them",
                  file=sys.stderr)
        progress = Progress(len(todo), f"anonymize {anonymizer.name}", quiet=quiet)
        if backend is not None:
            results: Iterable[Result] = backend.run(todo, anonymizer, seed, jobs=jobs, quiet=quiet)
        elif workers == 1:
            results = (_anonymize_one(anonymizer, job, seed) for job in todo)
        else:
            results = _run_pool(todo, anonymizer, seed, workers)
        failures: list[tuple[str, str, str]] = []
        out_seconds: dict[str, float] = {}
        for result in results:
            if result.error is None:
                out_seconds[result.job.utt] = result.out_seconds
            else:
                failures.append((result.job.utt, result.job.source, result.error))
            progress.update(audio_seconds=result.in_seconds, failed=result.error is not None)
        progress.close()
        if data is not None:
            _write_data_dir(data, all_jobs, out_seconds, output_path)
        write_failures(output_path, failures)
    wall = time.monotonic() - start
    audio = progress.audio_seconds
    return RunSummary(done=len(todo) - len(failures), skipped=skipped, failed=len(failures), audio_seconds=audio,
                      wall_seconds=wall, rtf=wall / audio if audio > 0 else None, output=output_path)


def summary_line(summary: RunSummary) -> str:
    """One human-readable line describing a run."""
    rtf = f"RTF {summary.rtf:.4f}" if summary.rtf is not None else "RTF n/a"
    return (f"done {summary.done}, skipped {summary.skipped}, failed {summary.failed}; "
            f"{summary.audio_seconds:.1f} s of audio in {summary.wall_seconds:.1f} s ({rtf}); output {summary.output}")
