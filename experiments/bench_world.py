"""WORLD conversion and prosody transforms: F0 accuracy of dio vs harvest, and real-time factors.

Pinned to one CPU core and one thread. Prints the F0 error of each estimator
against the known contour of :func:`voxanon.audio.synthetic.speech_like`, then
the RTF (seconds of compute per second of audio, best of ``--repeat``) of each
method with its ratio to plain WORLD analysis + synthesis (dio, no transform)
measured in the same run, and the RTF of the WORLD-domain transform alone (on
features analysed once).

    python experiments/bench_world.py [--seconds 10] [--repeat 3]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from voxanon.anonymizers.base import utterance_rng  # noqa: E402
from voxanon.anonymizers.registry import build  # noqa: E402
from voxanon.audio.synthetic import speech_like  # noqa: E402
from voxanon.dsp.world import analyze, estimate_f0, synthesize  # noqa: E402

SR = 16000
PROSODY = ["f0_mean_reversion", "f0_noise", "f0_scale", "segment_scaling"]


def true_f0(seconds: float, f0: float, seed: int, frame_period: float = 5.0) -> np.ndarray:
    """speech_like's F0 contour at the WORLD frame times (its first rng draw is the contour's phase)."""
    phase = np.random.default_rng(seed).uniform(0, 2 * np.pi)
    t = np.arange(int(seconds * 1000 / frame_period) + 1) * frame_period / 1000
    return f0 * (1 + 0.2 * np.sin(2 * np.pi * 0.7 * t + phase))


def best_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def f0_accuracy(seconds: float, repeat: int) -> None:
    print("F0 on fully voiced speech_like (error vs the known contour):")
    print(f"{'f0':>5} {'method':8} {'median cents':>12} {'p95 cents':>9} {'>20% err':>8} {'unvoiced':>8} {'RTF':>7}")
    for f0 in (100.0, 120.0, 220.0):
        wav = speech_like(seconds, SR, f0=f0, voiced_fraction=1.0, seed=0)
        truth = true_f0(seconds, f0, seed=0)
        for method in ("dio", "harvest"):
            est, _ = estimate_f0(wav, SR, method=method)
            n = min(len(est), len(truth))
            est, ref = est[:n], truth[:n]
            v = est > 0
            cents = np.abs(1200 * np.log2(est[v] / ref[v]))
            rtf = best_time(lambda: estimate_f0(wav, SR, method=method), repeat) / seconds
            print(
                f"{f0:5.0f} {method:8} {np.median(cents):12.1f} {np.percentile(cents, 95):9.1f} "
                f"{np.mean(cents > 1200 * np.log2(1.2)):8.3f} {1 - v.mean():8.3f} {rtf:7.4f}"
            )


def speed(seconds: float, repeat: int) -> None:
    wav = speech_like(seconds, SR, f0=120.0, seed=0)
    rng = utterance_rng(0, "bench")
    ref = best_time(lambda: synthesize(analyze(wav, SR)), repeat) / seconds
    rows = []
    cases = [("world (dio)", "world", {}), ("world (harvest)", "world", {"f0_method": "harvest"})]
    cases += [(name, name, {}) for name in PROSODY]
    all_prosody = [{"method": name, "params": {}} for name in PROSODY]
    cases.append(("world + 4 prosody transforms (one fused pass)", "world", {"prosody": all_prosody}))
    unfused = {"steps": [{"method": "world"}, *all_prosody], "fuse": False}
    cases.append(("chain world + 4 transforms, unfused", "chain", unfused))
    features = analyze(wav, SR)
    for label, name, params in cases:
        anonymizer = build(name, params)
        rtf = best_time(lambda a=anonymizer: a.anonymize(wav, SR, rng), repeat) / seconds
        own = getattr(anonymizer, "transform", None)
        own_rtf = best_time(lambda: own(features, rng), repeat) / seconds if own else float("nan")
        rows.append((label, rtf, own_rtf))
    print(f"\nRTF at {SR} Hz on {seconds:.0f} s of speech_like (one core, best of {repeat}):")
    print(f"{'method':48} {'RTF':>6} {'vs ref':>6} {'x real time':>11} {'transform RTF':>13}")
    print(f"{'pyworld analysis + synthesis (dio, reference)':48} {ref:6.3f} {1.0:6.2f} {1 / ref:11.1f}")
    for label, rtf, own_rtf in rows:
        print(f"{label:48} {rtf:6.3f} {rtf / ref:6.2f} {1 / rtf:11.1f} {own_rtf:13.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    f0_accuracy(args.seconds, args.repeat)
    speed(args.seconds, args.repeat)


if __name__ == "__main__":
    main()
