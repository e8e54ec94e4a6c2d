"""How faithful is LTF's mel bridge? HiFi-GAN log-mels mapped onto Whisper's, against Whisper's own.

Fits :class:`~voxanon.models.ltf.melmap.MelMap` on the ``--fit`` data
directories, then on the ``--test`` ones (real speech the fit did not see)
compares, per utterance (one window of its own length, as the LTF loss
encodes segments):

- the normalised log-mels: RMSE and correlation of mapped against native;
- the Whisper encoder's features at ``--layer`` (debiased): mean frame cosine
  of mapped against native, the number that bounds the content loss;
- the same with the ideal scale ``2 / ln 10`` and only the offsets fitted,
  to show what the per-band fit buys;
- for reference, the feature cosine of HiFi-GAN universal copy-synthesis
  (native features of the vocoded audio against the original's) on the first
  ``--copy`` test utterances: what the vocoder itself loses.

Usage::

    python experiments/bench_ltf_melmap.py --fit CORPUS/data/train --test REAL/data [--max-fit 300] [--layer 3]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch
import torch.nn.functional as F

from voxanon.audio.io import load_audio, resample
from voxanon.data.kaldi import read_data_dir
from voxanon.models.content import load_content_encoder
from voxanon.models.content.whisper import normalise
from voxanon.models.ltf.melmap import MelMap, MelPair

MAX_FRAMES = 3000


def load(dirs: list[str], limit: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Up to ``limit`` utterances drawn from ``dirs``, 16 kHz, at most 30 s each."""
    entries = [e for d in dirs for e in read_data_dir(d).wav_scp.values()]
    out = []
    for i in rng.permutation(len(entries))[:limit]:
        wav, sr = load_audio(entries[i])
        out.append(resample(wav, sr, 16000)[:MAX_FRAMES * 160])
    return out


def copy_cosine(wavs: list[np.ndarray], encoder) -> float:
    """Mean frame cosine of the encoder's features of HiFi-GAN universal copy-synthesis against the original's."""
    from voxanon.audio.io import fit_length
    from voxanon.models.content.whisper import LogMel
    from voxanon.models.vocoder import load_vocoder

    vocoder, logmel, cos = load_vocoder("hifigan-universal"), LogMel(), []
    with torch.no_grad():
        for wav in wavs:
            copy = resample(vocoder.synthesize(vocoder.analyze(wav, 16000)), vocoder.sample_rate, 16000)
            a, b = (encoder.encode_logmels(logmel(torch.from_numpy(fit_length(x, len(wav)))[None]))
                    for x in (wav, copy))
            cos.append(float(F.cosine_similarity(a, b, dim=-1).mean()))
    return round(float(np.mean(cos)), 4)


def compare(mapping: MelMap, pairs, encoder) -> dict[str, float]:
    """Mean log-mel RMSE / correlation and feature cosine of mapped against native, over ``pairs``."""
    rmse, corr, cos = [], [], []
    with torch.no_grad():
        for hifigan, whisper in pairs:
            native, mapped = normalise(whisper[None]), mapping(hifigan[None])
            rmse.append(float((native - mapped).pow(2).mean().sqrt()))
            corr.append(float(np.corrcoef(native.flatten(), mapped.flatten())[0, 1]))
            a, b = encoder.encode_logmels(native), encoder.encode_logmels(mapped)
            cos.append(float(F.cosine_similarity(a, b, dim=-1).mean()))
    return {"logmel_rmse": round(float(np.mean(rmse)), 4), "logmel_corr": round(float(np.mean(corr)), 4),
            "feature_cosine": round(float(np.mean(cos)), 4), "feature_cosine_min": round(float(np.min(cos)), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", required=True)
    ap.add_argument("--test", nargs="+", required=True)
    ap.add_argument("--max-fit", type=int, default=300)
    ap.add_argument("--layer", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--copy", type=int, default=20, help="test utterances for the copy-synthesis reference")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    pair = MelPair()
    fit_wavs, test_wavs = load(args.fit, args.max_fit, rng), load(args.test, 10 ** 9, rng)
    fit, test = [pair(w) for w in fit_wavs], [pair(w) for w in test_wavs]
    encoder = load_content_encoder(f"whisper-tiny:{args.layer}")
    fitted = MelMap.fit(fit)
    ideal_scale = torch.full((80,), 2 / np.log(10))
    ideal = MelMap(ideal_scale, fitted.offset.flatten() + (fitted.scale.flatten() - ideal_scale) * torch.stack(
        [h.mean(1) for h, _ in fit]).mean(0))
    report = {"fit_utterances": len(fit), "test_utterances": len(test), "layer": args.layer,
              "scale_mean": round(float(fitted.scale.mean()), 4), "scale_range": [round(float(fitted.scale.min()), 4),
                                                                                round(float(fitted.scale.max()), 4)],
              "fitted": compare(fitted, test, encoder), "ideal_scale": compare(ideal, test, encoder),
              "copy_synthesis_feature_cosine": copy_cosine(test_wavs[:args.copy], encoder)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
