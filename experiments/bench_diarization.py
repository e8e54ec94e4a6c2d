"""The diarizer on two-person conversations of real recorded voices: speaker count, frame error, speed.

    python3 experiments/bench_diarization.py [--n 10] [--encoder ge2e] [--thresholds 0.35,0.45,0.55]

Runs on one core (torch and ONNX Runtime limited to one thread). For each
clustering threshold: how many conversations got exactly two speakers and the
mean frame error (a DER without collar: missed, confused and false-alarm
speech over reference speech); then the real-time factor of ``diarize`` at the
default settings (wall seconds per second of audio).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

os.environ["OMP_NUM_THREADS"] = "1"

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from conversation_clips import SR, conversations, frame_error  # noqa: E402

from voxanon.evaluation.diarization import DiarizerSettings, diarize  # noqa: E402
from voxanon.models.speaker import load_encoder  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="conversations (default 10)")
    parser.add_argument("--encoder", default="ge2e", help="speaker encoder spec (default ge2e)")
    parser.add_argument("--thresholds", default="0.3,0.4,0.45,0.5,0.6", help="clustering thresholds to compare")
    args = parser.parse_args()
    torch.set_num_threads(1)
    encoder = load_encoder(args.encoder)
    convs = conversations(args.n)
    audio = sum(len(w) for _, w, _, _ in convs) / SR
    print(f"{len(convs)} conversations, {audio:.0f} s, encoder {encoder.name}")
    for threshold in [float(x) for x in args.thresholds.split(",")]:
        settings = dataclasses.replace(DiarizerSettings(), threshold=threshold)
        counts, errors = [], []
        for name, wav, ref, _ in convs:
            hyp = diarize(wav, SR, recording=name, encoder=encoder, settings=settings)
            counts.append(len({t.speaker for t in hyp}))
            errors.append(frame_error(ref, hyp, len(wav) / SR))
        print(f"threshold {threshold:.2f}: 2 speakers found in {counts.count(2)}/{len(counts)} "
              f"(counts {counts}), frame error {100 * np.mean(errors):.1f} %")
    start = time.perf_counter()
    for name, wav, _, _ in convs:
        diarize(wav, SR, recording=name, encoder=encoder)
    wall = time.perf_counter() - start
    print(f"default settings: RTF {wall / audio:.3f} on one core ({wall:.1f} s for {audio:.0f} s)")


if __name__ == "__main__":
    main()
