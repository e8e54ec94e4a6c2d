"""The worker side of the corpus runner, shared by every backend: one task in, one output wav and a result out.

A worker builds its anonymizer once (:class:`Worker`), then for each
:class:`Task` loads the audio, resamples it to the method's rate, anonymizes
it, limits peaks above full scale (see below) and writes the 16-bit wav
atomically. Only a small :class:`Result` goes back.

No silent damage
    A method's output above full scale would be clipped when quantised to 16
    bits. By default a peak limiter (:func:`voxanon.dsp.limiter.limit_peaks`)
    lowers the gain smoothly around those peaks only; an output that does not
    exceed full scale is written unchanged. Either way the result carries a
    warning with the count and the peak, and so does a truncated WAV input.
Disk full
    An output write that fails because the disk is full, over quota or
    read-only makes a *fatal* result: the runner stops, since every further
    write would fail too.
Lifeline
    Worker processes must not outlive the run that started them (an orphan
    would keep writing after the output lock is released): see
    :mod:`voxanon.lifeline`.
"""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from voxanon.anonymizers.base import Anonymizer, utterance_rng
from voxanon.atomic import write_text
from voxanon.audio.io import load_audio, resample, write_wav
from voxanon.audio.wavcheck import wav_truncation
from voxanon.dsp.limiter import limit_peaks
from voxanon.errors import ModelError
from voxanon.heap import release_free_memory

#: errors of an output write after which no other write can succeed
FATAL_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def report_path(out: Path) -> Path:
    """Where the report of a method (:meth:`Anonymizer.report`) on an output wav goes: ``<utt>.json`` beside it."""
    return out.with_suffix(".json")


@runtime_checkable
class RecordingMethod(Protocol):
    """A method that reads each recording itself (its channels, its speaker turns): conversation mode
    (:class:`voxanon.jobs.conversations.method.ConversationMethod`)."""

    def process_recording(self, source: str, recording: str, seed: int | str) -> tuple[np.ndarray, int, float]:
        """``(output, rate, input seconds)`` of the recording at ``source`` with id ``recording``."""

    def sidecars(self) -> dict[str, str]:
        """Texts to write beside the last output, by file suffix (e.g. ``.rttm``)."""


class Task(NamedTuple):
    """One utterance to anonymize: id, source (path or pipe), output file, RNG key."""

    utt: str
    source: str
    out: Path
    key: str


class Result(NamedTuple):
    """Outcome of one task.

    ``error`` is the reason it failed (None on success); ``fatal`` marks a failure
    that stops the run: a failed output write (disk full) or, with ``bad_model``, a
    model file the method cannot use (every utterance would fail the same way);
    ``warnings`` are notes on a written output (clipping, truncated input).
    """

    task: Task
    in_seconds: float
    out_seconds: float
    error: str | None
    fatal: bool = False
    bad_model: bool = False
    warnings: tuple[str, ...] = ()


def _clipping_warning(out: np.ndarray, limited: bool) -> str | None:
    """Count and peak of samples above full scale, or None when there are none."""
    peak = max(float(np.max(out)), -float(np.min(out)))  # no full-length temporaries (an hour is 230 MB)
    if peak <= 1.0:
        return None
    count = np.count_nonzero(out > 1.0) + np.count_nonzero(out < -1.0)
    action = "peak limiter applied" if limited else "clipped (limiter off)"
    return (f"clipping: {int(count)} samples above full scale, "
            f"peak {peak:.3f} ({20 * np.log10(peak):+.1f} dBFS); {action}")


def anonymize_task(anonymizer: Anonymizer, task: Task, seed: int | str, *, limiter: bool = True) -> Result:
    """Load, resample if needed, anonymize, limit and write one utterance; errors become a failed Result.

    Afterwards the heap's free memory goes back to the system, so that utterances of many lengths do not
    grow the worker (see :mod:`voxanon.heap`).
    """
    try:
        return _anonymize_task(anonymizer, task, seed, limiter)
    finally:
        release_free_memory()


def _anonymize_task(anonymizer: Anonymizer, task: Task, seed: int | str, limiter: bool) -> Result:
    warnings: list[str] = []
    try:
        sidecars: dict[str, str] = {}
        if isinstance(anonymizer, RecordingMethod):
            out, out_sr, in_seconds = anonymizer.process_recording(task.source, task.utt, seed)
            sidecars = anonymizer.sidecars()
        else:
            wav, sr = load_audio(task.source)
            in_seconds = len(wav) / sr
            if anonymizer.sample_rate and sr != anonymizer.sample_rate:
                wav, sr = resample(wav, sr, anonymizer.sample_rate), anonymizer.sample_rate
            out, out_sr = anonymizer.process(wav, sr, utterance_rng(seed, task.key))
        truncated = wav_truncation(task.source)
        if truncated:
            warnings.append(truncated)
        out, out_sr = np.asarray(out), int(out_sr)
        report = anonymizer.report()
        clipping = _clipping_warning(out, limiter) if out.ndim == 1 else None
        if clipping:
            warnings.append(clipping)
            if limiter:
                out = limit_peaks(out, out_sr)
    except ModelError as exc:  # a missing or damaged model file: no utterance can be done
        return Result(task, 0.0, 0.0, str(exc), fatal=True, bad_model=True)
    except Exception as exc:  # one bad utterance must not stop the corpus
        return Result(task, 0.0, 0.0, f"{type(exc).__name__}: {exc}")
    try:
        if report is not None:  # before the wav: an output that exists has its report
            write_text(report_path(task.out), json.dumps(report, indent=1) + "\n")
        for suffix, text in sidecars.items():
            write_text(task.out.with_suffix(suffix), text)
        write_wav(task.out, out, out_sr)
    except OSError as exc:
        return Result(task, 0.0, 0.0, f"cannot write {task.out}: {exc.strerror or exc}",
                      fatal=exc.errno in FATAL_WRITE_ERRNOS)
    except Exception as exc:
        return Result(task, 0.0, 0.0, f"{type(exc).__name__}: {exc}")
    return Result(task, in_seconds, len(out) / out_sr, None, warnings=tuple(warnings))


def limit_threads(threads: int) -> None:
    """Give this process ``threads`` intra-op threads in torch, ONNX Runtime's vocoder and CTranslate2.

    ``OMP_NUM_THREADS`` is what torch and CTranslate2 read when they load (and
    :class:`~voxanon.models.vocoder.onnx_engine.OnnxGenerator` when not told
    otherwise); a torch already loaded is set directly. Workers that each took
    every core would fight over them (docs/experiments/performance.md, "Threads
    per worker").
    """
    os.environ.update(dict.fromkeys(("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"), str(threads)))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


class Worker:
    """One anonymizer, built once from its class and config, run over batches of tasks.

    ``threads`` is its process's share of the cores (:func:`limit_threads`), set before the anonymizer loads.
    """

    def __init__(self, cls: type[Anonymizer], config: object, *, limiter: bool = True, threads: int = 1) -> None:
        limit_threads(threads)
        self.anonymizer = cls(config)
        self.limiter = limiter

    def run(self, tasks: list[Task], seed: int | str) -> list[Result]:
        """Results of ``tasks``, in order."""
        return [anonymize_task(self.anonymizer, task, seed, limiter=self.limiter) for task in tasks]
