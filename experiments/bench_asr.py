"""Real-time factors and WER of the offline ASR backends on the same recorded speech.

Usage: python experiments/bench_asr.py [--threads 1] [--repeats 2] [--cascade]

Audio: the five LibriVox clips of Debian's pocketsphinx-testdata
(/usr/share/pocketsphinx/test/data/librivox, 24.7 s in all) when installed,
else the three clips shipped in tests/fixtures/librivox. For each backend it loads
the model (timed separately), decodes every clip (best of ``--repeats`` runs)
and prints the WER under VPC normalisation, the real-time factor (wall
seconds per second of audio) and the ratio to whisper-tiny. Whisper runs
with its CPU default (one clip per batch) and with batches of 8 clips.
``--cascade`` also times the ``cascade`` anonymizer (ASR + Piper voice with
duration matching) on the same clips.
"""

import argparse
import time
from pathlib import Path

import numpy as np

from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio
from voxanon.metrics import wer
from voxanon.models.asr import load_asr
from voxanon.models.asr.whisper import WhisperBackend

INSTALLED = Path("/usr/share/pocketsphinx/test/data/librivox")
SHIPPED = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "librivox"


def clips() -> tuple[list[np.ndarray], list[str], str]:
    """Waveforms, references and the folder they came from."""
    if (INSTALLED / "transcription").is_file():
        refs = {}
        for line in (INSTALLED / "transcription").read_text().splitlines():
            words, utt = line.rsplit("(", 1)
            refs[utt.rstrip(")").strip()] = words.replace("<s>", "").replace("</s>", "").strip()
        return [load_audio(INSTALLED / f"{u}.wav")[0] for u in refs], list(refs.values()), str(INSTALLED)
    refs = dict(line.split(maxsplit=1) for line in (SHIPPED / "text").read_text().splitlines())
    return [load_audio(SHIPPED / f"{u}.flac")[0] for u in refs], list(refs.values()), str(SHIPPED)


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cascade", action="store_true")
    args = parser.parse_args()
    wavs, refs, source = clips()
    seconds = sum(len(w) for w in wavs) / 16000
    print(f"audio: {len(wavs)} clips, {seconds:.1f} s, from {source}; threads {args.threads}")

    rows = []
    t = time.perf_counter()
    whisper = load_asr("whisper-tiny", threads=args.threads)
    load_s = time.perf_counter() - t
    rows.append(("whisper-tiny", load_s, *best_time(lambda: whisper.transcribe(wavs, 16000), args.repeats)))
    batched = WhisperBackend(threads=args.threads, batch_size=8)
    rows.append(("whisper-tiny batch 8", 0.0, *best_time(lambda: batched.transcribe(wavs, 16000), args.repeats)))
    t = time.perf_counter()
    sphinx = load_asr("pocketsphinx")
    load_s = time.perf_counter() - t
    rows.append(("pocketsphinx", load_s, *best_time(lambda: sphinx.transcribe(wavs, 16000), args.repeats)))

    reference = rows[0][2]
    print(f"{'backend':<26}{'load s':>8}{'WER %':>8}{'RTF':>8}{'time / whisper':>16}")
    for name, load_s, elapsed, hyps in rows:
        print(f"{name:<26}{load_s:>8.2f}{wer(refs, hyps).wer:>8.1f}{elapsed / seconds:>8.3f}"
              f"{elapsed / reference:>16.2f}")

    if args.cascade:
        anon = build("cascade", {"threads": args.threads})
        anon.models()
        elapsed, outs = best_time(lambda: [anon.anonymize(w, 16000, None)[0] for w in wavs], args.repeats)
        hyps = whisper.transcribe(outs, 16000)
        print(f"cascade (whisper-tiny -> piper, match_duration): RTF {elapsed / seconds:.3f}, "
              f"WER of its output {wer(refs, hyps).wer:.1f} %")


if __name__ == "__main__":
    main()
