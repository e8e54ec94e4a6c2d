"""Cost of the runner's reliability steps, as ratios to the work they guard, in one run.

Usage: python experiments/bench_runner_overhead.py [--seconds 60] [--files 20000] [--repeats 5]

- wav writing: ``write_wav`` (encode in memory, then one write; no cffi callback
  can swallow a disk-full error) against libsndfile writing to the open file
  directly (the previous way), for ``--seconds`` of 16 kHz audio;
- peak limiter: ``limit_peaks`` on that audio driven 6 dB above full scale,
  against one McAdams anonymization of the same audio (the cheapest method);
- heap release: ``release_free_memory`` (glibc ``malloc_trim``), run after every
  chunk and utterance, right after a McAdams run (its heap then holds freed blocks);
- resume planning: stamping ``--files`` inputs (one ``stat`` each) and reading
  their output record back, per file.

Best of ``--repeats`` timings; prints seconds and ratios.
"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.atomic import atomic_open
from voxanon.audio.io import to_pcm16, write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.dsp.limiter import limit_peaks
from voxanon.heap import release_free_memory
from voxanon.jobs.runner.runstate import (
    DONE_FILE,
    input_stamp,
    read_records,
    record_line,
)


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def direct_write(path: Path, wav: np.ndarray, sr: int) -> None:
    """The previous write_wav: libsndfile writes through Python callbacks into the open temporary."""
    with atomic_open(path) as fh:
        sf.write(fh, to_pcm16(wav), sr, subtype="PCM_16", format="WAV")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sr = 16000
    wav = speech_like(args.seconds, sr, seed=0).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        new = best(lambda: write_wav(root / "new.wav", wav, sr), args.repeats)
        old = best(lambda: direct_write(root / "old.wav", wav, sr), args.repeats)
        assert (root / "new.wav").read_bytes() == (root / "old.wav").read_bytes()
        print(f"write {args.seconds:g} s wav: in memory then write {new * 1e3:.1f} ms, "
              f"libsndfile into the file {old * 1e3:.1f} ms (ratio {new / old:.2f}); same bytes")

        loud = wav * (2.0 / np.abs(wav).max())
        limiter = best(lambda: limit_peaks(loud, sr), args.repeats)
        mcadams = build("mcadams")
        method = best(lambda: mcadams.anonymize(wav, sr, utterance_rng(0, "u")), max(1, args.repeats // 2))
        print(f"peak limiter on {args.seconds:g} s above full scale: {limiter * 1e3:.1f} ms "
              f"({limiter / method:.3f} x one McAdams run of {method * 1e3:.0f} ms)")

        def anonymize_then_release() -> float:
            mcadams.anonymize(wav, sr, utterance_rng(0, "u"))
            start = time.perf_counter()
            release_free_memory()
            return time.perf_counter() - start

        trim = min(anonymize_then_release() for _ in range(args.repeats))
        print(f"heap release after a McAdams run: {trim * 1e3:.2f} ms ({trim / method:.4f} x the run)")

        inputs = root / "in"
        inputs.mkdir()
        for i in range(args.files):
            (inputs / f"{i}.wav").write_bytes(b"x")
        sources = [str(inputs / f"{i}.wav") for i in range(args.files)]
        stamps = {}
        stamp = best(lambda: stamps.update((s, input_stamp(s)) for s in sources), args.repeats)
        done = "".join(record_line(str(i), s, stamps[s], 1.0, ()) for i, s in enumerate(sources))
        (root / DONE_FILE).write_text(done)
        read = best(lambda: read_records(root), args.repeats)
        print(f"resume planning for {args.files} inputs: stamps {stamp / args.files * 1e6:.1f} us/file, "
              f"record read {read / args.files * 1e6:.1f} us/file")


if __name__ == "__main__":
    main()
