"""Are b5's mels over-smoothed, and does sharpening them keep more words?

Statistical speech synthesis tends to flatten the spectrum's movement over time (its "global variance"),
which hurts recognisers. For each utterance of a real-speech data directory (``bench_real_speech.py``'s
``OUT/data``) this converts the content with the shipped ``b5`` into one of its target voices (drawn with
``--seed``), measures each mel bin's standard deviation over time against the source's own (the 16 kHz
utterances only: narrowband sources have no upper bins), and vocodes the mels with their deviations from the
utterance mean scaled by each ``--alphas`` (1 = as ``b5`` speaks), scored by Whisper tiny.en and pocketsphinx.

    python experiments/bench_b5_mel_contrast.py runs/real/data --alphas 1 1.2 1.4 --out runs/b5_contrast
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from voxanon.anonymizers.registry import build
from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import WIDEBAND
from voxanon.data.kaldi import read_data_dir
from voxanon.metrics.wer import wer
from voxanon.models.asr import load_asr


def sharpened(mel: np.ndarray, alpha: float) -> np.ndarray:
    """``(T, n_mels)`` log-mels with each bin's deviation from its utterance mean scaled by ``alpha``."""
    mean = mel.mean(0, keepdims=True)
    return mean + alpha * (mel - mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="data directory with wav.scp, utt2spk and text")
    parser.add_argument("--alphas", type=float, nargs="+", default=[1.0, 1.2, 1.4])
    parser.add_argument("--seed", type=int, default=0, help="seed of the target voices' draw")
    parser.add_argument("--out", type=Path, required=True, help="folder for results.json")
    args = parser.parse_args()

    data = read_data_dir(args.data)
    anon = build("b5")
    model, pool = anon.acoustic(), anon.target_speakers()
    vocoder = model.vocoder()
    rng = np.random.default_rng(args.seed)
    utts = sorted(data.wav_scp)
    wide = [u for u in utts if data.utt2spk[u] in WIDEBAND]
    audio: dict[float, list[np.ndarray]] = {a: [] for a in args.alphas}
    ratios = []
    for utt in utts:
        wav, sr = load_audio(data.wav_scp[utt])
        mel = model.mel(model.features(wav, sr), pool[int(rng.integers(len(pool)))])
        if utt in wide:
            source = vocoder.analyze(wav, sr)
            n = min(len(mel), len(source))
            ratios.append(mel[:n].std(0) / np.maximum(source[:n].std(0), 1e-6))
        for alpha in args.alphas:
            audio[alpha].append(resample(vocoder.synthesize(sharpened(mel, alpha)), vocoder.sample_rate, 16000))
    ratio = np.mean(ratios, 0)
    thirds = np.array_split(ratio, 3)
    results = {"std_ratio_by_third_of_bins": [round(float(t.mean()), 3) for t in thirds], "wer": {}}
    print("b5 / source std over time, low / mid / high third of the mel bins:", results["std_ratio_by_third_of_bins"])
    refs = {u: data.text[u] for u in utts}
    for spec in ("whisper-tiny", "pocketsphinx"):
        asr = load_asr(spec)
        for alpha in args.alphas:
            hyps = dict(zip(utts, asr.transcribe(audio[alpha], 16000)))
            row = {"all": round(wer(refs, hyps).wer, 2),
                   "16k": round(wer({u: refs[u] for u in wide}, {u: hyps[u] for u in wide}).wer, 2)}
            results["wer"][f"{spec} alpha={alpha}"] = row
            print(spec, f"alpha={alpha}", json.dumps(row), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
