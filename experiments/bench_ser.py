"""SER speed on CPU: real-time factor of batched vs unbatched inference, features, training.

Usage::

    python experiments/bench_ser.py [--n 64] [--threads 1] [--batch-size 16] [--repeats 3]

Utterances are speech-like signals of 2–8 s (IEMOCAP averages about 4.5 s);
weights are freshly initialised (speed does not depend on them). Training
speed is extrapolated to one IEMOCAP fold (about 4,400 training utterances of
the 4 classes, 15 epochs).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from voxanon.audio.synthetic import speech_like
from voxanon.models.ser import load_ser
from voxanon.models.ser.compact import CompactSER, CompactSERNet
from voxanon.models.ser.features import LogMel
from voxanon.training.ser import CompactSerSettings, train_ser

SR = 16000
IEMOCAP_TRAIN_UTTS, EPOCHS = 4400, 15


def timed(fn, repeats: int = 1) -> tuple[float, float]:
    """Best wall-clock and best process CPU seconds of ``fn()`` over ``repeats`` runs."""
    runs = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def wav2vec2_base_ser(folder: Path):
    """A randomly initialised wav2vec2-base audio classifier (SUPERB ER's architecture), loaded via load_ser."""
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForSequenceClassification,
    )

    labels = {0: "neu", 1: "hap", 2: "ang", 3: "sad"}
    config = Wav2Vec2Config(id2label=labels, label2id={v: k for k, v in labels.items()})
    Wav2Vec2ForSequenceClassification(config).save_pretrained(folder)
    Wav2Vec2FeatureExtractor(return_attention_mask=False).save_pretrained(folder)
    return load_ser(f"transformers:{folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="utterances")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="inference timings keep the best run")
    parser.add_argument("--w2v2-utts", type=int, default=4,
                        help="utterances for the wav2vec2-base reference (0: skip it)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    wavs = [speech_like(float(d), SR, f0=float(rng.uniform(90, 250)), seed=i)
            for i, d in enumerate(rng.uniform(2.0, 8.0, args.n))]
    audio_s = sum(len(w) for w in wavs) / SR
    torch.manual_seed(0)
    model = CompactSER(CompactSERNet())
    model.predict_proba(wavs[:2], SR)  # warm-up

    t_single = timed(lambda: [model.predict_proba([w], SR) for w in wavs], args.repeats)
    t_batch = timed(lambda: model.predict_proba(wavs, SR, batch_size=args.batch_size), args.repeats)
    logmel = LogMel(SR)
    feats = []
    t_feat = timed(lambda: feats.extend(logmel([w])[0][0].half() for w in wavs))
    data = [(f, i % 4) for i, f in enumerate(feats)]
    with tempfile.TemporaryDirectory() as tmp:
        # steady-state epoch time: (3 epochs - 1 epoch) / 2, after a warm-up run
        train_ser(data, Path(tmp) / "warm", CompactSerSettings(epochs=1), quiet=True)
        one = timed(lambda: train_ser(data, Path(tmp) / "a", CompactSerSettings(epochs=1), quiet=True))
        three = timed(lambda: train_ser(data, Path(tmp) / "b", CompactSerSettings(epochs=3), quiet=True))
        t_epoch = ((three[0] - one[0]) / 2, (three[1] - one[1]) / 2)
        if args.w2v2_utts:
            ref = wav2vec2_base_ser(Path(tmp) / "w2v2")
            sub = wavs[:args.w2v2_utts]
            sub_s = sum(len(w) for w in sub) / SR
            ref.predict_proba(sub[:1], SR)  # warm-up
            t_ref = timed(lambda: ref.predict_proba(sub, SR, batch_size=args.batch_size))

    def rtf(t: tuple[float, float]) -> str:
        return f"RTF {t[0] / audio_s:.5f} wall, {t[1] / audio_s:.5f} CPU"

    fold_min = [x / len(wavs) * IEMOCAP_TRAIN_UTTS * EPOCHS / 60 for x in t_epoch]
    print(f"{args.n} utterances, {audio_s:.0f} s of audio, {args.threads} thread(s), "
          f"{sum(p.numel() for p in model.net.parameters()) / 1e6:.2f} M parameters")
    print(f"inference unbatched (reference): {rtf(t_single)}")
    print(f"inference batched ({args.batch_size}):        {rtf(t_batch)}  "
          f"speed-up x{t_single[0] / t_batch[0]:.2f} wall, x{t_single[1] / t_batch[1]:.2f} CPU")
    if args.w2v2_utts:
        print(f"reference: wav2vec2-base SER (transformers loader, batched, {args.w2v2_utts} utts): "
              f"RTF {t_ref[0] / sub_s:.5f} wall, {t_ref[1] / sub_s:.5f} CPU  "
              f"(compact batched is x{t_ref[1] / sub_s / (t_batch[1] / audio_s):.0f} faster in CPU time)")
    print(f"log-mel features:                {rtf(t_feat)}")
    print(f"training: {t_epoch[1] / len(wavs) * 1000:.1f} ms CPU per utterance-epoch -> one IEMOCAP fold "
          f"({IEMOCAP_TRAIN_UTTS} utts x {EPOCHS} epochs) about {fold_min[1]:.0f} min CPU "
          f"({fold_min[0]:.0f} min wall in this run); 5 folds about {5 * fold_min[1]:.0f} min CPU")

if __name__ == "__main__":
    main()
