"""Frequency and time dropout of waveform batches: the augmentation of the VPC kits' speaker training.

The kits' speaker recipes (e.g. the 2026 ``train_ecapa_ssl_tdnn_small.yaml``) pass every training
batch through speechbrain's ``DropFreq`` (1 to 3 notches, each at a uniformly drawn frequency
between 0 and Nyquist, width 0.05 of Nyquist, one filter for the whole batch) and then ``DropChunk``
(per waveform, 1 to 5 stretches of 1000 to 2000 samples set to zero). The same draws are made here
from a numpy generator; the notch is a textbook Blackman-windowed band-stop of 101 taps, not
speechbrain's own filter design.
"""

from __future__ import annotations

import numpy as np

#: the taps of each notch filter and of their combination (as the kits' speechbrain filters)
TAPS = 101


def lowpass(cutoff: float, taps: int = TAPS) -> np.ndarray:
    """Blackman-windowed sinc low-pass with ``cutoff`` a fraction of Nyquist (1: all-pass; 0: nothing)."""
    n = np.arange(taps) - (taps - 1) / 2
    return cutoff * np.sinc(cutoff * n) * np.blackman(taps)


def notch(freq: float, width: float, taps: int = TAPS) -> np.ndarray:
    """Band-stop filter removing ``freq`` ± ``width`` (fractions of Nyquist; the band is clipped to [0, 1])."""
    h = lowpass(max(freq - width, 0.0), taps) - lowpass(min(freq + width, 1.0), taps)
    h[(taps - 1) // 2] += 1.0
    return h


def drop_frequencies(wavs: np.ndarray, rng: np.random.Generator, count: tuple[int, int] = (1, 3),
                     width: float = 0.05) -> np.ndarray:
    """``(B, N)`` waveforms through one filter of ``count[0]``..``count[1]`` random notches (same length out)."""
    h = np.zeros(TAPS)
    h[TAPS // 2] = 1.0
    for freq in rng.uniform(0.0, 1.0, int(rng.integers(count[0], count[1] + 1))):
        h = np.convolve(h, notch(float(freq), width), mode="same")
    return np.stack([np.convolve(w, h, mode="same") for w in wavs]).astype(wavs.dtype, copy=False)


def drop_chunks(wavs: np.ndarray, rng: np.random.Generator, count: tuple[int, int] = (1, 5),
                length: tuple[int, int] = (1000, 2000)) -> np.ndarray:
    """A copy of ``(B, N)`` waveforms with, per row, ``count`` random stretches of ``length`` samples zeroed."""
    out = wavs.copy()
    for row in out:
        lengths = np.minimum(rng.integers(length[0], length[1] + 1, int(rng.integers(count[0], count[1] + 1))),
                             len(row))
        for n, start in zip(lengths, rng.integers(0, len(row) - lengths.max() + 1, len(lengths))):
            row[start:start + n] = 0.0
    return out
