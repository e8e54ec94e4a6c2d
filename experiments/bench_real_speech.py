"""Anonymizers on real read speech that no model here was trained on: WER by two recognisers, voice, RTF.

The set: pocketsphinx-testdata's LibriVox and card clips (16 kHz, two
speakers) and ``--prompts`` of Asterisk's sentence prompts (8 kHz telephone
speech of a third speaker, drawn with a fixed seed); see
``voxanon.data.debian_clips``. Each method runs through the whole CLI
(``voxanon anonymize --method M --jobs J``) as a user runs it; ``--twice``
runs it again into a second folder, so a method that builds a cache on first
use shows both its first and its cached RTF (wall time of the command over
the seconds of audio). ``--seeds`` runs each method once per seed (``voxanon
anonymize --seed``) and adds a row of their mean: on speech the original
transcribes almost perfectly, one draw of a random method's targets can move
its WER ratio by 0.2-0.4 (docs/experiments/knnvc.md), so its ratio interval is then
taken over the mean errors of each utterance across seeds.

Reported per method: WER % of Whisper tiny.en and of pocketsphinx (spoken
normalisation: numbers spelt out) on all utterances and on the 16 kHz part alone (pocketsphinx's
models are wideband: on the telephone prompts it fails on the original
too), each WER's ratio to the original's with a paired-bootstrap 95 %
interval over utterances (``ratio_*`` in results.json), and the GE2E cosine
of each output to its speaker's mean original embedding over the speaker's
*other* utterances (the original's row is the
same leave-one-out cosine: how much a speaker's own utterances agree).

``--language es|fr|it`` takes that language's Asterisk prompts instead (8 kHz telephone speech of one speaker)
and scores them with multilingual Whisper base told the language: what an anonymizer built on English models
(an English content encoder, ASR or TTS) costs on other languages. ``--data DIR`` takes ``--prompts`` utterances
of a data directory instead (drawn with the same fixed seed), in the language ``--language`` names: no recorded
Chinese or Japanese speech is offline, so for those languages it is a corpus's synthetic speech
(``voxanon data synth --language zh``; its ``data/test_trials_f``), scored in characters (CER).

Usage::

    VOXANON_CACHE=... python experiments/bench_real_speech.py OUT --methods knnvc b5 b6 embedding [--twice]
        [--param knnvc:k=4] [--prompts 60] [--jobs 1] [--seeds 0 1 2] [--language fr]
    python experiments/bench_real_speech.py OUT --methods cascade --language zh --data CORPUS/data/test_trials_f
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from voxanon.audio.io import load_audio
from voxanon.data.debian_clips import (
    PROMPT_SPEAKERS,
    WIDEBAND,
    build_real_subset,
    find_clips,
    prompt_clips,
)
from voxanon.data.kaldi import read_data_dir, write_data_dir
from voxanon.data.layout import CORPUS_LANGUAGES


def build_set(out: Path, prompts: int, seed: int = 0, language: str = "en", source: Path | None = None) -> Path:
    """The evaluation data directory ``out/data`` (converted once, then reused): in English the wideband clips
    and ``prompts`` of Asterisk's prompts, in another language ``prompts`` of that language's prompts; with a
    ``source`` data directory, ``prompts`` of its utterances."""
    data_dir = out / "data"
    if (data_dir / "wav.scp").is_file():
        return data_dir
    if source is not None:
        data = read_data_dir(source)
        utts = sorted(data.wav_scp)
        pick = np.random.default_rng(seed).choice(len(utts), size=min(prompts, len(utts)), replace=False)
        write_data_dir(data.subset([utts[i] for i in sorted(pick)]), data_dir)
        return data_dir
    clips = [c for c in find_clips() if c.speaker in WIDEBAND] if language == "en" else []
    pool = prompt_clips(language=language)
    if not pool:
        raise SystemExit(f"no Asterisk prompts in {language!r}: run tools/setup.sh (it installs their packages)")
    pick = np.random.default_rng(seed).choice(len(pool), size=min(prompts, len(pool)), replace=False)
    data, _ = build_real_subset(out, clips + [pool[i] for i in sorted(pick)])
    write_data_dir(data, data_dir)
    return data_dir


def recognisers(language: str) -> list[str]:
    """The ASR specs a language is scored with: Whisper tiny.en and pocketsphinx in English, else multilingual
    Whisper base told the language."""
    return ["whisper-tiny", "pocketsphinx"] if language == "en" else [f"whisper-base:{language}"]


def anonymize(method: str, params: list[str], data_dir: Path, out: Path, jobs: int, seed: int = 0) -> float:
    """Wall seconds of one whole-CLI run into a fresh ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "voxanon", "anonymize", "--method", method, "--jobs", str(jobs), "--quiet",
           "--seed", str(seed)]
    for p in params:
        cmd += ["--param", p]
    start = time.monotonic()
    subprocess.run(cmd + [str(data_dir), str(out)], check=True)
    return time.monotonic() - start


def leave_one_out_cosine(emb: np.ndarray, ref: np.ndarray, speakers: list[str]) -> np.ndarray:
    """Cosine of each row of ``emb`` to the mean of ``ref``'s other rows of the same speaker (NaN for a speaker's
    only row)."""
    unit = lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True)  # noqa: E731
    emb, ref = unit(emb), unit(ref)
    spk = np.array(speakers)
    out = []
    for i, s in enumerate(spk):
        others = (spk == s) & (np.arange(len(spk)) != i)
        out.append(float(emb[i] @ unit(ref[others].mean(0))) if others.any() else np.nan)
    return np.array(out)


def score(data_dir: Path, wav_dir: Path | None, asrs: dict, ge2e, ref_emb: np.ndarray,
          original: dict | None = None, language: str = "en") -> tuple[dict, dict]:
    """WERs (all, 16 kHz part), GE2E leave-one-out cosine of the utterances in ``wav_dir`` (None: originals),
    and each recogniser's WER result; with the ``original``'s results, each WER's ratio to the original's with
    its paired-bootstrap 95 % interval (over utterances). Outside English the error rate is the language's
    (:func:`voxanon.metrics.text.error_unit`) under the ``basic`` normalisation."""
    from voxanon.metrics import wer_ratio_ci
    from voxanon.metrics.text import default_normalization, error_unit
    from voxanon.metrics.wer import wer

    normalization, unit = default_normalization(language), error_unit(language)

    data = read_data_dir(data_dir)
    utts = sorted(data.wav_scp)
    wavs = [load_audio(data.wav_scp[u] if wav_dir is None else wav_dir / "wav" / f"{u}.wav")[0] for u in utts]
    refs = [data.text[u] for u in utts]
    wide = [i for i, u in enumerate(utts) if data.utt2spk[u] in WIDEBAND]
    row, results = {}, {}
    for name, asr in asrs.items():
        hyps = asr.transcribe(wavs, 16000)
        results[name] = wer(dict(zip(utts, refs)), dict(zip(utts, hyps)), normalization, unit)
        row[f"wer_{name}"] = round(results[name].wer, 2)
        if original is not None:
            ci = wer_ratio_ci(results[name], original[name])
            row[f"ratio_{name}"] = [round(v, 2) for v in (ci.estimate, ci.low, ci.high)]
        if wide:
            wide_wer = wer([refs[i] for i in wide], [hyps[i] for i in wide], normalization, unit)
            row[f"wer16k_{name}"] = round(wide_wer.wer, 2)
    emb = ge2e.embed(wavs, 16000)
    cosines = leave_one_out_cosine(emb, ref_emb, [data.utt2spk[u] for u in utts])
    row["cosine_to_source"] = round(float(np.nanmean(cosines)), 3) if np.isfinite(cosines).any() else None
    return row, results


def folder_name(tag: str) -> str:
    """``tag`` as one folder name: characters other than letters, digits and ``.=,-`` become ``_`` (a model path
    in a parameter makes no subfolders), and a name over 80 characters (a long target list) is cut to 60 and a
    hash of the whole."""
    safe = re.sub(r"[^\w.=,-]+", "_", tag)
    return safe if len(safe) <= 80 else f"{safe[:60]}-{hashlib.sha1(tag.encode()).hexdigest()[:8]}-"


def seed_mean(rows: list[dict], results: list[dict], original: dict) -> dict:
    """One method's row over several seeds: mean WERs and cosine, and each recogniser's ratio to the
    original over the utterances' mean errors across the seeds."""
    from voxanon.metrics import wer_ratio_ci

    row = {key: round(float(np.mean([r[key] for r in rows])), 3 if key == "cosine_to_source" else 2)
           for key in rows[0] if key.startswith(("wer", "cosine")) and rows[0][key] is not None}
    for name in original:
        ci = wer_ratio_ci([r[name] for r in results], original[name])
        row[f"ratio_{name}"] = [round(v, 2) for v in (ci.estimate, ci.low, ci.high)]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--methods", nargs="+", required=True)
    ap.add_argument("--param", action="append", default=[], help="METHOD:key=value (repeatable)")
    ap.add_argument("--prompts", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--twice", action="store_true", help="run each method twice (first run, then cached)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="anonymization seeds (more than one: "
                                                                       "a row per seed and a row of their mean)")
    ap.add_argument("--language", default="en", choices=sorted(CORPUS_LANGUAGES),
                    help="en: the wideband clips and English prompts, scored by Whisper tiny.en and pocketsphinx; "
                         "es, fr, it: that language's Asterisk prompts, scored by multilingual Whisper base; "
                         "zh, ja: with --data only")
    ap.add_argument("--data", type=Path, help="a data directory in --language to draw the utterances from, "
                                              "instead of the recorded prompts")
    args = ap.parse_args()
    if args.data is None and args.language not in PROMPT_SPEAKERS:
        ap.error(f"no recorded {args.language!r} speech is offline: give --data (e.g. a corpus's test_trials_f)")

    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    data_dir = build_set(args.out, args.prompts, language=args.language, source=args.data)
    data = read_data_dir(data_dir)
    seconds = sum(len(load_audio(p)[0]) / 16000 for p in data.wav_scp.values())
    words = sum(len(t.split()) for t in data.text.values())
    print(f"{len(data.wav_scp)} utterances, {seconds:.0f} s, {words} words, speakers "
          f"{', '.join(sorted(set(data.utt2spk.values())))}", flush=True)
    asrs = {name: load_asr(name) for name in recognisers(args.language)}
    ge2e = load_encoder("ge2e")
    rows = {}
    ref_emb = ge2e.embed([load_audio(data.wav_scp[u])[0] for u in sorted(data.wav_scp)], 16000)
    rows["original"], original = score(data_dir, None, asrs, ge2e, ref_emb, language=args.language)
    print("original", json.dumps(rows["original"]), flush=True)
    for method in args.methods:
        params = [p.split(":", 1)[1] for p in args.param if p.split(":", 1)[0] == method]
        label = method + "".join(f" {p}" for p in params)
        seed_rows, seed_results = [], []
        for seed in args.seeds:
            name = label if len(args.seeds) == 1 else f"{label} seed={seed}"
            tag = f"{label}-" + ("" if seed == 0 else f"seed{seed}-")
            twice = args.twice and seed == args.seeds[0]
            outs = [args.out / "anon" / f"{folder_name(tag)}{i}" for i in range(2 if twice else 1)]
            runs = [anonymize(method, params, data_dir, out, args.jobs, seed) for out in outs]
            rows[name], result = score(data_dir, outs[-1], asrs, ge2e, ref_emb, original, args.language)
            rows[name]["rtf"] = [round(r / seconds, 3) for r in runs]
            seed_rows.append(rows[name])
            seed_results.append(result)
            print(name, json.dumps(rows[name]), flush=True)
        if len(args.seeds) > 1:
            name = f"{label}, mean of {len(args.seeds)} seeds"
            rows[name] = seed_mean(seed_rows, seed_results, original)
            print(name, json.dumps(rows[name]), flush=True)
    (args.out / "results.json").write_text(json.dumps({"utterances": len(data.wav_scp), "seconds": round(seconds, 1),
                                                       "words": words, "language": args.language, "rows": rows},
                                                      indent=1))
    print(markdown_table(rows, list(asrs), next(iter(original.values())).error_rate_name))


def markdown_table(rows: dict[str, dict], asrs: list[str], rate: str = "WER") -> str:
    """The rows as a markdown table: each recogniser's error rate ``rate`` (16 kHz part, where there is one), the
    first one's ratio to the original's, the GE2E cosine and the RTF."""
    part = " (16 kHz part)" if any(key.startswith("wer16k_") for r in rows.values() for key in r) else ""
    header = ["method"] + [f"{a} {rate} %{part}" for a in asrs[:1]] + ["x original [95 % CI]"] + [
        f"{a} {rate} %{part}" for a in asrs[1:]] + ["GE2E cosine to source", "RTF"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, r in rows.items():
        rates = {a: f"{r[f'wer_{a}']}" + (f" ({r[f'wer16k_{a}']})" if f"wer16k_{a}" in r else "") for a in asrs}
        ratio = "{} [{}, {}]".format(*r[f"ratio_{asrs[0]}"]) if f"ratio_{asrs[0]}" in r else "-"
        cosine = "-" if r.get("cosine_to_source") is None else str(r["cosine_to_source"])
        cells = [label, rates[asrs[0]], ratio, *(rates[a] for a in asrs[1:]), cosine,
                 " / ".join(map(str, r.get("rtf", ["-"])))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
