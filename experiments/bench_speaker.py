"""Speaker-verification speed: embedding extraction RTF and trial scoring throughput.

Embedding: real-time factor (wall seconds / audio seconds) on CPU of the small
ECAPA-TDNN (attacker default), the full 1024-channel one (speechbrain size,
random weights) and GE2E, each batched, and the small ECAPA one utterance at a
time as the reference for batching. Scoring: all trials at once (vectorised
cosine) against a per-trial Python loop, in the same run.

Usage: python experiments/bench_speaker.py [--threads 2] [--utts 12] [--trials 100000] [--scoring-only]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from voxanon.audio.synthetic import speech_like
from voxanon.evaluation.privacy import cosine_scores
from voxanon.models.speaker.ecapa import EcapaConfig, EcapaEncoder, EcapaTdnn
from voxanon.models.speaker.ge2e import GE2EEncoder


def timed(fn, repeat: int = 1) -> float:
    """Best wall time of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--utts", type=int, default=12, help="utterances of 3-11 s")
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--scoring-only", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    if not args.scoring_only:
        bench_embeddings(rng, args.utts)
    bench_scoring(rng, args.trials)


def bench_embeddings(rng: np.random.Generator, n_utts: int) -> None:
    """RTF of each encoder on the same synthetic utterances."""
    wavs = [speech_like(float(d), f0=float(rng.uniform(90, 230)), seed=i)
            for i, d in enumerate(rng.uniform(3, 11, n_utts))]
    audio = sum(len(w) for w in wavs) / 16000
    print(f"embedding extraction: {len(wavs)} utterances, {audio:.1f} s of audio, {torch.get_num_threads()} threads")
    small = EcapaEncoder(EcapaTdnn(EcapaConfig()), name="small")
    encoders = {
        "ECAPA small (128 ch), batched": lambda: small.embed(wavs, 16000),
        "ECAPA small, one utterance at a time": lambda: [small.embed([w], 16000) for w in wavs],
        "ECAPA full (1024 ch), batched": (lambda e: lambda: e.embed(wavs, 16000))(
            EcapaEncoder(EcapaTdnn(EcapaConfig.full()), name="full")),
        "GE2E (resemblyzer), batched": (lambda e: lambda: e.embed(wavs, 16000))(GE2EEncoder()),
    }
    for name, fn in encoders.items():
        fn()  # warm-up
        t = timed(fn, repeat=2)
        print(f"  {name:<40} {t:7.2f} s   RTF {t / audio:.4f}")


def bench_scoring(rng: np.random.Generator, n_trials: int) -> None:
    """All-at-once cosine scoring against a per-trial loop on a VPC-like speaker x utterance grid."""
    n_spk, n_utt, dim = 40, max(1, n_trials // 40), 192
    models, tests = rng.normal(size=(n_spk, dim)), rng.normal(size=(n_utt, dim))
    mi, ti = np.repeat(np.arange(n_spk), n_utt), np.tile(np.arange(n_utt), n_spk)

    def loop():
        return [float(models[a] @ tests[b] / (np.linalg.norm(models[a]) * np.linalg.norm(tests[b])))
                for a, b in zip(mi, ti)]

    t_vec = timed(lambda: cosine_scores(models, mi, tests, ti), repeat=3)
    t_loop = timed(loop)
    np.testing.assert_allclose(cosine_scores(models, mi, tests, ti), loop(), rtol=1e-9)
    print(f"trial scoring: {len(mi)} trials, {dim}-d")
    print(f"  vectorised   {t_vec * 1e3:8.1f} ms   {len(mi) / t_vec:12.0f} trials/s")
    print(f"  per-trial    {t_loop * 1e3:8.1f} ms   {len(mi) / t_loop:12.0f} trials/s   "
          f"(vectorised {t_loop / t_vec:.0f}x faster)")


if __name__ == "__main__":
    main()
