"""Multilingual Whisper base against English Whisper tiny.en on real speech, and base on French, Spanish and Italian.

Usage: python experiments/bench_multilingual_asr.py [--out results.json] [--prompts N] [--threads 1]

English: pocketsphinx-testdata's 5 LibriVox and 5 card clips (16 kHz) and Asterisk's English sentence prompts
(8 kHz telephone speech), decoded by ``whisper-tiny`` and by ``whisper-base:en``, scored with the ``spoken``
normalisation (numbers spelt as said). French, Spanish and Italian: Asterisk's sentence prompts of that language
(one speaker each: fr-CA, es-MX, it-IT), decoded by ``whisper-base:<language>`` and scored with the ``basic``
normalisation; each clip's language is also detected by Whisper base without being given, and the share
detected right is printed. ``--prompts`` keeps the first N prompts of each language (default: all).

Per set and model: WER % with its bootstrap 95 % interval over utterances, and the process CPU seconds per
audio second of decoding (model load aside), with its ratio to tiny.en's on the English set. CPU time, not wall
time, so the ratio holds on a loaded machine. Needs ``tools/setup.sh`` (Whisper base, the Asterisk packages).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import WIDEBAND, find_clips, prompt_clips
from voxanon.metrics import wer
from voxanon.metrics.bootstrap import wer_ci
from voxanon.metrics.text import default_normalization, error_unit
from voxanon.models.asr import load_asr


def clip_set(language: str, prompts: int | None) -> tuple[list[np.ndarray], list[str]]:
    """Waveforms at 16 kHz and transcripts of one language's real speech."""
    clips = prompt_clips(language=language)[:prompts]
    if language == "en":
        clips = [c for c in find_clips() if c.speaker in WIDEBAND] + clips
    if not clips:
        raise SystemExit(f"no {language} clips: run tools/setup.sh (it installs the Asterisk prompt packages)")
    return [resample(*load_audio(c.path), 16000) for c in clips], [c.text for c in clips]


def decode(spec: str, wavs: list[np.ndarray], threads: int) -> tuple[list[str], float]:
    """Transcripts and process CPU seconds of decoding them."""
    asr = load_asr(spec, threads=threads)
    start = time.process_time()
    hyps = asr.transcribe(wavs, 16000)
    return hyps, time.process_time() - start


def detected_share(wavs: list[np.ndarray], language: str, threads: int) -> float:
    """Share of clips whose language Whisper base detects as ``language`` (from each clip's first 30 s)."""
    model = load_asr("whisper-base", threads=threads).model
    return float(np.mean([model.detect_language(audio=w)[0] == language for w in wavs]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write the rows as JSON here")
    ap.add_argument("--prompts", type=int, help="first N prompts of each language (default: all)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    rows = []
    tiny_rtf = None
    for language in ("en", "fr", "es", "it"):
        wavs, refs = clip_set(language, args.prompts)
        seconds = sum(len(w) for w in wavs) / 16000
        specs = ["whisper-tiny", "whisper-base:en"] if language == "en" else [f"whisper-base:{language}"]
        for spec in specs:
            hyps, cpu = decode(spec, wavs, args.threads)
            result = wer(refs, hyps, default_normalization(language), unit=error_unit(language))
            ci = wer_ci(result)
            rtf = cpu / seconds
            tiny_rtf = tiny_rtf or rtf
            rows.append({"language": language, "asr": spec, "utterances": len(wavs), "seconds": round(seconds, 1),
                         "reference_units": result.n_reference_words, "measure": result.error_rate_name,
                         "error_rate": round(result.wer, 2), "ci95": [round(ci.low, 2), round(ci.high, 2)],
                         "cpu_rtf": round(rtf, 4), "cpu_vs_tiny_en": round(rtf / tiny_rtf, 2)})
        rows[-1]["language_detected_share"] = round(detected_share(wavs, language, args.threads), 3)

    print(f"{'language':<9}{'asr':<18}{'utts':>5}{'audio s':>9}{'units':>7}{'rate %':>8}{'95 % CI':>16}"
          f"{'CPU RTF':>9}{'x tiny.en':>10}{'LID':>7}")
    for r in rows:
        lid = r.get("language_detected_share")
        print(f"{r['language']:<9}{r['asr']:<18}{r['utterances']:>5}{r['seconds']:>9}{r['reference_units']:>7}"
              f"{r['error_rate']:>8.2f}{str(r['ci95']):>16}{r['cpu_rtf']:>9.3f}{r['cpu_vs_tiny_en']:>10.2f}"
              f"{'' if lid is None else f'{lid:.2f}':>7}")
    if args.out:
        args.out.write_text(json.dumps({"threads": args.threads, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
