"""The VoiceFilter d-vector against GE2E: speed on one thread, and OO verification EER on real recorded speech.

The data: the Debian packages' real clips (:func:`voxanon.data.debian_clips.find_clips`, 7 speakers, mostly
isolated words and digits, 0.15-7 s) resampled once to 16 kHz. Each speaker enrols with its first
``--enroll`` clips (sorted by utterance id; the model is the mean of their embeddings); every other clip is
tried against every speaker (one mixed-gender list, pooled EER as voxanon.metrics.eer computes it).

Encoders: GE2E (resemblyzer), the int8 ONNX d-vector, its float PyTorch port, and the ONNX model with the
log floor 1e-6 that its metadata names for the mask predictor instead of the wheel's d-vector floor 1e-10
(see :mod:`voxanon.models.speaker.dvector`). Speed: real-time factor (wall seconds / audio seconds, best of
``--repeat``) of each encoder over the ``--rtf-utts`` longest clips, on one thread (ONNX Runtime intra-op 1,
torch 1), batched as each encoder batches.

Usage: OMP_NUM_THREADS=1 python experiments/bench_dvector.py [--enroll 3] [--rtf-utts 12] [--repeat 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch

from voxanon.audio.io import load_audio, resample
from voxanon.data.debian_clips import find_clips
from voxanon.metrics.eer import compute_eer
from voxanon.models.speaker import load_encoder
from voxanon.models.speaker.dvector import OnnxDVector
from voxanon.models.speaker.dvector_net import DVectorNet, TorchDVector

SR = 16000


def load_clips() -> tuple[list[str], list[np.ndarray]]:
    """Speaker and 16 kHz waveform of every clip, in utterance order."""
    speakers, wavs = [], []
    for clip in find_clips():
        wav, sr = load_audio(clip.path)
        speakers.append(clip.speaker)
        wavs.append(resample(wav, sr, SR))
    return speakers, wavs


def oo_eer(emb: np.ndarray, speakers: list[str], n_enroll: int) -> tuple[float, int, int]:
    """Pooled EER % of every non-enrolment clip against every speaker's mean enrolment embedding."""
    names = sorted(set(speakers))
    rows = {s: [i for i, x in enumerate(speakers) if x == s] for s in names}
    models = np.stack([emb[rows[s][:n_enroll]].mean(axis=0) for s in names])
    models /= np.linalg.norm(models, axis=1, keepdims=True)
    tests = [i for s in names for i in rows[s][n_enroll:]]
    scores = models @ emb[tests].T
    target = np.array([[speakers[t] == s for t in tests] for s in names])
    return compute_eer(scores[target], scores[~target]).eer, int(target.sum()), int((~target).sum())


def rtf(encoder, wavs: list[np.ndarray], repeat: int) -> float:
    """Best wall time of embedding ``wavs`` over their duration."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        encoder.embed(wavs, SR)
        best = min(best, time.perf_counter() - start)
    return best / (sum(len(w) for w in wavs) / SR)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--enroll", type=int, default=3, help="enrolment clips per speaker")
    ap.add_argument("--rtf-utts", type=int, default=12, help="longest clips timed")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    speakers, wavs = load_clips()
    onnx = OnnxDVector(threads=1)
    floor = OnnxDVector(threads=1)
    floor.cfg = dataclasses.replace(floor.cfg, log_floor=1e-6)
    encoders = {"GE2E (resemblyzer)": load_encoder("ge2e"), "d-vector int8 ONNX": onnx,
                "d-vector float port": TorchDVector(DVectorNet.from_onnx(onnx.path), "port"),
                "d-vector ONNX, log floor 1e-6": floor}
    longest = sorted(wavs, key=len)[-args.rtf_utts:]
    print(f"{len(wavs)} clips of {len(set(speakers))} speakers ({sum(map(len, wavs)) / SR:.0f} s); RTF over the "
          f"{len(longest)} longest ({sum(map(len, longest)) / SR:.1f} s), one thread")
    print("| encoder | OO EER % | target / non-target trials | RTF |\n|---|---|---|---|")
    for label, enc in encoders.items():
        eer, n_target, n_non = oo_eer(enc.embed(wavs, SR), speakers, args.enroll)
        speed = "-" if enc is floor else f"{rtf(enc, longest, args.repeat):.4f}"
        print(f"| {label} | {eer:.1f} | {n_target} / {n_non} | {speed} |")


if __name__ == "__main__":
    main()
