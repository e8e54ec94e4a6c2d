"""The phone alignments of training utterances, made in parallel and kept in a file a rerun reads.

``voxanon train bottleneck --targets phones`` learns its codes from each
frame's phone (:mod:`voxanon.models.asr.alignment`). The alignments of all its
training and validation utterances are made once, by ``jobs`` processes, and
written to ``alignments.json`` in the run's folder (per utterance: the
transcript aligned and the segments), so a resumed run aligns only what is new
or whose transcript changed. An utterance that cannot be aligned (a word
outside the dictionary, unreadable audio) is left out with its reason.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from voxanon.atomic import write_text
from voxanon.audio.io import load_audio
from voxanon.errors import VoxanonError
from voxanon.models.asr.alignment import PhoneAligner, Segment
from voxanon.progress import Progress

_ALIGNER: PhoneAligner | None = None


def _init_worker() -> None:
    global _ALIGNER
    _ALIGNER = PhoneAligner()


def _align_one(job: tuple[str, str, str]) -> tuple[str, list[Segment] | None, str]:
    """``(utt, segments, "")``, or ``(utt, None, reason)``."""
    utt, entry, text = job
    try:
        wav, sr = load_audio(entry, allow_silent=False)
        return utt, _ALIGNER.align(wav, sr, text), ""
    except (VoxanonError, ValueError, OSError) as exc:
        return utt, None, str(exc)


def align_utterances(todo: list[tuple[str, str, str]], texts: dict[str, str], cache: Path, *, jobs: int = 0,
                     quiet: bool = False) -> tuple[dict[str, list[Segment]], list[str]]:
    """Segments by utterance id of the ``(utt, speaker, entry)`` rows, and ``"utt: reason"`` lines of those left
    out; ``cache`` (a JSON file) is read first and rewritten with what was aligned. ``jobs`` processes (0: all
    cores)."""
    done = json.loads(cache.read_text()) if cache.exists() else {}
    out, left_out, jobs_todo = {}, [], []
    for utt, _, entry in todo:
        text = texts.get(utt, "")
        if utt in done and done[utt]["text"] == text:
            out[utt] = [tuple(s) for s in done[utt]["segments"]]
        else:
            jobs_todo.append((utt, entry, text))
    if jobs_todo:
        progress = Progress(len(jobs_todo), "phone alignment", quiet=quiet)
        with ProcessPoolExecutor(jobs or os.cpu_count() or 1, initializer=_init_worker) as pool:
            for utt, segments, reason in pool.map(_align_one, jobs_todo, chunksize=8):
                progress.update(failed=segments is None)
                if segments is None:
                    left_out.append(f"{utt}: {reason}")
                else:
                    out[utt] = segments
                    done[utt] = {"text": texts.get(utt, ""), "segments": segments}
        progress.close()
        write_text(cache, json.dumps(done) + "\n")
    return out, left_out
