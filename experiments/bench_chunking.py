"""How close chunked ``world`` output is to one-piece output: envelope distance, F0 agreement, seam steps.

WORLD's excitation phase and noise restart in every chunk, so samples differ
from one-piece output; what must survive is the voice and the seams. Reference
in the same run: the distance between the one-piece outputs of two different
pseudo-speakers (the scale of a real voice change).

    python experiments/bench_chunking.py
"""

from __future__ import annotations

import numpy as np
from scipy.signal import stft

from voxanon.anonymizers.base import Chunking, utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.audio.synthetic import speech_like
from voxanon.dsp.world import estimate_f0

SR = 16000


def envelope_distance_db(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over frames of the RMS difference (dB) of log power spectra smoothed over 9 frames (~150 ms)."""
    def smoothed(x: np.ndarray) -> np.ndarray:
        power = 10 * np.log10(np.abs(stft(x, SR, nperseg=512)[2]) ** 2 + 1e-10)
        kernel = np.ones(9) / 9
        return np.apply_along_axis(lambda row: np.convolve(row, kernel, "same"), 1, power)

    return float(np.sqrt(np.mean((smoothed(a) - smoothed(b)) ** 2, axis=0)).mean())


def main() -> None:
    wav = np.concatenate([speech_like(3.0, SR, seed=i) for i in range(5)]).astype(np.float32)
    world = build("world")
    one, _ = world.anonymize(wav, SR, utterance_rng(0, "u"))
    other, _ = world.anonymize(wav, SR, utterance_rng(0, "v"))
    world.chunking = Chunking(seconds=4.0, overlap=1.0, fade=0.02)  # 15 s input: 3 seams
    chunked, _ = world.process(wav, SR, utterance_rng(0, "u"))
    cuts = world.chunking.bounds(wav, SR)
    f_one, f_chunked = estimate_f0(one, SR)[0], estimate_f0(chunked, SR)[0]
    voiced = (f_one > 0) & (f_chunked > 0)
    ratio = f_chunked[voiced] / f_one[voiced]
    seam_step = max(float(np.abs(np.diff(chunked[c - 400 : c + 400])).max()) for c in cuts[1:-1])
    print(f"seams: {len(cuts) - 2}")
    print(f"envelope distance chunked vs one piece: {envelope_distance_db(chunked, one):.2f} dB "
          f"(another pseudo-speaker vs one piece: {envelope_distance_db(other, one):.2f} dB)")
    print(f"voiced frames with F0 within 1 % of one piece: {np.mean(np.abs(ratio - 1) < 0.01):.3f}, "
          f"median ratio {np.median(ratio):.4f}")
    print(f"largest sample step within 25 ms of a seam: {seam_step:.3f} "
          f"(largest anywhere in one piece: {np.abs(np.diff(one)).max():.3f})")


if __name__ == "__main__":
    main()
