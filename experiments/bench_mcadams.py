"""Speed and memory of the vectorised McAdams transform, against the per-frame loop of the VPC code.

Usage: python experiments/bench_mcadams.py [--seconds 30] [--repeats 3] [--hour]

Runs on one thread (OMP/OPENBLAS/MKL_NUM_THREADS=1, set before numpy loads).
The audio is the LibriVox test clips (recorded speech, 16 kHz) repeated to
``--seconds``. Times ``voxanon.dsp.mcadams.mcadams`` (best of ``--repeats``) and
the per-frame reference of tests/mcadams_reference.py (a loop over frames
calling a Burg LPC routine, ``np.roots``, ``np.poly`` and ``scipy.signal.lfilter``,
as VPC's code) on the same audio, checks that they agree, and prints both
real-time factors (CPU seconds per second of audio) and the speed ratio.
``--hour`` also anonymizes one hour at 16 kHz with the ``mcadams`` anonymizer
and reports the peak traced memory (tracemalloc) beyond the input array.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.mcadams_reference import mcadams_reference
from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.mcadams import McAdams
from voxanon.audio.io import load_audio
from voxanon.dsp.lpc import (
    allpole_filter,
    burg,
    fir_filter,
    poly_from_roots,
    poly_roots,
    poly_roots_fast,
)
from voxanon.dsp.mcadams import LPC_EPS, mcadams, mcadams_window, warp_poles

SR = 16000
ALPHA = 0.8


def speech(seconds: float) -> np.ndarray:
    """The LibriVox test clips, concatenated and repeated to ``seconds`` (float32, 16 kHz)."""
    librivox = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "librivox"
    clips = [load_audio(p)[0] for p in sorted(librivox.glob("*.flac"))]
    once = np.concatenate(clips)
    return np.resize(once, int(seconds * SR))


def cpu_time(function, *args):
    """(result, CPU seconds) of one call."""
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def stage_times(wav: np.ndarray, n_frames: int = 512) -> None:
    """Print the CPU time per frame of each step of ``mcadams_frames`` on one batch (best of 3)."""
    window = mcadams_window(320, 160)
    windowed = np.lib.stride_tricks.sliding_window_view(wav, 320)[::160][:n_frames] * window

    def best(function, *args):
        runs = [cpu_time(function, *args) for _ in range(3)]
        return runs[0][0], min(t for _, t in runs)

    a, t_burg = best(burg, windowed + LPC_EPS, 20)
    (roots, fallback), t_roots = best(poly_roots_fast, a)
    _, t_eig = best(poly_roots, a)
    a_new, t_poly = best(lambda r: poly_from_roots(warp_poles(r, ALPHA)), roots)
    residual, t_fir = best(fir_filter, a, windowed)
    _, t_allpole = best(allpole_filter, a_new, residual)
    steps = {"Burg LPC": t_burg, "roots (Aberth)": t_roots, "warp + poly": t_poly,
             "residual FIR": t_fir, "all-pole synthesis": t_allpole}
    print(f"  per-frame CPU by step ({len(windowed)} frames in one batch, best of 3):")
    for name, seconds in steps.items():
        print(f"    {name:20s} {seconds / len(windowed) * 1e6:6.1f} us")
    print(f"    {'sum':20s} {sum(steps.values()) / len(windowed) * 1e6:6.1f} us")
    print(f"  roots: {int(fallback.sum())} of {len(a)} frames fell back to eigvals; "
          f"eigvals on all frames would take {t_eig / len(windowed) * 1e6:.1f} us per frame")


def hour_memory() -> None:
    """Anonymize one hour; print its time and the peak traced memory beyond the input."""
    wav = speech(3600.0)
    anon = McAdams(alpha=ALPHA)
    tracemalloc.start()
    (out, _), seconds = cpu_time(anon.anonymize, wav, SR, utterance_rng(0, "hour"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mib = 1024.0**2
    print(f"1 h at 16 kHz: input {wav.nbytes / mib:.0f} MiB (float32, not counted), CPU {seconds:.1f} s "
          f"(RTF {seconds / 3600:.4f})")
    print(f"  peak traced memory {peak / mib:.0f} MiB = output {out.nbytes / mib:.0f} MiB "
          f"+ working memory {(peak - out.nbytes) / mib:.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--hour", action="store_true", help="also measure memory on one hour of audio")
    args = parser.parse_args()

    wav = speech(args.seconds).astype(np.float64)
    fast_runs = [cpu_time(mcadams, wav, SR, ALPHA) for _ in range(args.repeats)]
    fast, fast_s = fast_runs[0][0], min(t for _, t in fast_runs)
    ref, ref_s = cpu_time(mcadams_reference, wav, SR, ALPHA)
    diff = float(np.max(np.abs(fast - ref)) / np.max(np.abs(ref)))
    print(f"{args.seconds:g} s of speech at 16 kHz, alpha={ALPHA}, one thread, CPU time")
    print(f"  vectorised : {fast_s:7.3f} s  RTF {fast_s / args.seconds:.5f}  ({args.seconds / fast_s:.0f}x real time)")
    print(f"  per-frame  : {ref_s:7.3f} s  RTF {ref_s / args.seconds:.5f}  ({args.seconds / ref_s:.0f}x real time)")
    print(f"  speed-up {ref_s / fast_s:.1f}x; max |difference| / peak = {diff:.1e}")
    if diff > 1e-7:
        raise SystemExit("vectorised and per-frame outputs disagree")
    stage_times(wav)
    if args.hour:
        hour_memory()


if __name__ == "__main__":
    main()
