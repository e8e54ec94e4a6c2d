"""Speed and memory of the ``f3va`` anonymizer on one thread, against ``embedding`` (f3va generator, conv model).

Runs each system on the first ``--seconds`` of a real clip (warm-up call, then ``--repeats`` timed calls) and
prints the median real-time factor, its ratio to the ``embedding`` reference measured in the same run, and the
process's peak resident memory after each system (``ru_maxrss``; systems run in order, f3va first, so a later
peak includes the earlier ones' models).

Usage: ``python benchmarks/bench_f3va.py --model DIR/model.pt [--seconds 6] [--repeats 3] [--steps 16 4]``
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

import numpy as np

CLIP = Path(__file__).resolve().parents[1] / "tests" / "data" / "librivox" / "sense_and_sensibility_01_austen_64kb-0880.flac"


def rtf(anon, wav: np.ndarray, sr: int, repeats: int) -> float:
    """Median wall seconds per audio second of ``anon.process`` over ``repeats`` calls after one warm-up."""
    from voxanon.anonymizers.base import utterance_rng

    anon.process(wav, sr, utterance_rng(0, "warm-up"))
    times = []
    for i in range(repeats):
        start = time.perf_counter()
        anon.process(wav, sr, utterance_rng(0, f"u{i}"))
        times.append(time.perf_counter() - start)
    return statistics.median(times) / (len(wav) / sr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="model.pt of voxanon train f3va")
    ap.add_argument("--clip", default=str(CLIP))
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, nargs="+", default=[16, 4], help="mel ODE steps to time")
    args = ap.parse_args()

    import torch

    from voxanon.anonymizers.registry import build
    from voxanon.audio.io import load_audio

    torch.set_num_threads(1)
    wav, sr = load_audio(args.clip)
    wav = wav[: int(args.seconds * sr)]
    systems = [(f"f3va mel_steps={s}", build("f3va", {"model": args.model, "mel_steps": s, "threads": 1}))
               for s in args.steps]
    systems += [("embedding generator=f3va (conv, reference)", build("embedding", {"generator": "f3va", "threads": 1}))]
    print(f"{len(wav) / sr:.1f} s of {Path(args.clip).name}, 1 thread, median of {args.repeats}")
    print("| system | RTF | ratio to reference | peak RSS after (MB) |\n|---|---|---|---|")
    rows = []
    for label, anon in systems:
        rows.append((label, rtf(anon, wav, sr, args.repeats), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    for label, value, peak in rows:
        print(f"| {label} | {value:.2f} | {value / rows[-1][1]:.2f} | {peak:.0f} |")


if __name__ == "__main__":
    main()
