"""``voxanon stream``: anonymize a file played in real time, or raw PCM from stdin, chunk by chunk.

The output goes to a 16-bit WAV file or as raw PCM to stdout, each chunk as soon as it is
final. The report gives the method's algorithmic latency, the compute time per chunk, the
real-time factor and, for a live source, the end-to-end delay: for every output write, the
time since its first sample was captured. A file played in real time is captured at one
sample per sample period from the start; raw PCM on stdin is taken as captured in real time
up to the moment each chunk has been read (so pipe a live source, e.g. ``arecord``, not a file).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import soundfile as sf

from voxanon.audio.io import to_pcm16
from voxanon.errors import DataError
from voxanon.jobs.live import pcm
from voxanon.jobs.live.session import TimedSession, percentiles

#: a chunk of input and the time (perf_counter) its last sample was captured
Chunk = tuple[np.ndarray, float]


def file_chunks(wav: np.ndarray, sample_rate: int, chunk: int, realtime: bool) -> Iterator[Chunk]:
    """A recording in chunks; in real time, each chunk when its last sample would be spoken."""
    start = time.perf_counter()
    for pos in range(0, wav.size, chunk):
        piece = wav[pos : pos + chunk]
        if realtime:
            time.sleep(max(0.0, start + (pos + piece.size) / sample_rate - time.perf_counter()))
        yield piece, time.perf_counter()


def pcm_chunks(source: BinaryIO, fmt: str, chunk: int) -> Iterator[Chunk]:
    """Raw mono PCM from ``source`` in chunks of ``chunk`` samples (the last may be shorter)."""
    size = chunk * pcm.FORMATS[fmt].itemsize
    while data := source.read(size):
        yield pcm.decode(data, fmt), time.perf_counter()


class WavSink:
    """Output chunks appended to a 16-bit WAV file as they come."""

    def __init__(self, path: Path, sample_rate: int) -> None:
        try:
            self._file = sf.SoundFile(path, "w", sample_rate, 1, subtype="PCM_16", format="WAV")
        except (OSError, sf.LibsndfileError) as exc:
            raise DataError(f"{path}: cannot write the output WAV ({exc}); "
                            "check that its folder exists and is writable") from None

    def __call__(self, samples: np.ndarray) -> None:
        self._file.write(to_pcm16(samples))

    def close(self) -> None:
        self._file.close()


class PcmSink:
    """Output chunks written as raw PCM to a binary stream (stdout), flushed at once."""

    def __init__(self, target: BinaryIO, fmt: str) -> None:
        self.target, self.fmt = target, fmt

    def __call__(self, samples: np.ndarray) -> None:
        self.target.write(pcm.encode(samples, self.fmt))
        self.target.flush()

    def close(self) -> None:
        self.target.flush()


@dataclass
class StreamReport:
    """What a stream achieved: the session summary, chunking, real-time factor and end-to-end delays."""

    session: dict
    chunk_ms: float
    audio_seconds: float
    rtf: float
    end_to_end_ms: dict[str, float] | None  # None when the source was not live

    def lines(self) -> list[str]:
        """The report as lines for the terminal."""
        s, compute = self.session, self.session["compute_ms"]
        found = [f"{s['method']}: {self.audio_seconds:.2f} s of audio in {self.chunk_ms:g} ms chunks at "
                 f"{s['sample_rate']} Hz, {s['samples_out']} samples out",
                 f"algorithmic latency {s['latency_ms']:.1f} ms (look-ahead), plus up to one chunk of buffering",
                 f"compute per chunk p50 {compute['p50']:.2f} ms, p95 {compute['p95']:.2f} ms, "
                 f"p99 {compute['p99']:.2f} ms; real-time factor {self.rtf:.3f}"]
        if self.end_to_end_ms is not None:
            e2e = self.end_to_end_ms
            found.append(f"end to end (capture to output) p50 {e2e['p50']:.1f} ms, p95 {e2e['p95']:.1f} ms, "
                         f"p99 {e2e['p99']:.1f} ms, max {e2e['max']:.1f} ms")
        return found


def run_stream(session: TimedSession, chunks: Iterator[Chunk], write: Callable[[np.ndarray], None], *,
               live: bool) -> StreamReport:
    """Feed ``chunks`` through ``session``, ``write`` each output as it comes; the report.

    ``live``: the chunks come in real time, so the delay from each output write back to the capture
    of its first sample is measured (``end_to_end_ms``).
    """
    sr = session.sample_rate
    captured: deque[tuple[int, float]] = deque()  # (end sample, capture time of its last sample) per chunk
    delays, chunk_sizes = [], []
    for piece, arrived in chunks:
        captured.append((session.samples_in + piece.size, arrived))
        chunk_sizes.append(piece.size)
        first = session.samples_out
        out = session.process(piece)
        if out.size:
            write(out)
            if live:
                while captured[0][0] <= first:
                    captured.popleft()
                end, at = captured[0]
                delays.append(1000.0 * (time.perf_counter() - (at - (end - 1 - first) / sr)))
    write(session.flush())
    summary = session.summary()
    compute_seconds = session.compute_total_ms / 1000.0
    audio_seconds = session.samples_in / sr
    e2e = {**percentiles(delays), "max": max(delays, default=float("nan"))} if live else None
    return StreamReport(summary, 1000.0 * max(chunk_sizes, default=0) / sr, audio_seconds,
                        compute_seconds / audio_seconds if audio_seconds else float("nan"),
                        {k: round(v, 3) for k, v in e2e.items()} if e2e else None)

