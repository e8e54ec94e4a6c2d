"""Speech-like test signals: a glottal pulse train with a moving F0, through formant resonators.

Used by tests and ``voxanon perf`` where recorded speech is not needed: the
signal has voiced and unvoiced stretches, a known F0 contour and known
formants, so pitch and spectral-envelope changes can be measured on it.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter

#: formant frequencies (Hz) and bandwidths of a neutral adult vowel
DEFAULT_FORMANTS = ((500.0, 80.0), (1500.0, 100.0), (2500.0, 120.0), (3500.0, 150.0))


def resonator(freq: float, bandwidth: float, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Second-order all-pole resonator coefficients (b, a), unit gain at DC."""
    r = np.exp(-np.pi * bandwidth / sr)
    a = np.array([1.0, -2.0 * r * np.cos(2.0 * np.pi * freq / sr), r * r])
    return np.array([a.sum()]), a


def speech_like(
    duration: float,
    sr: int = 16000,
    *,
    f0: float = 120.0,
    formants: tuple[tuple[float, float], ...] = DEFAULT_FORMANTS,
    voiced_fraction: float = 0.8,
    seed: int = 0,
) -> np.ndarray:
    """A speech-like float32 waveform of ``duration`` seconds, peak 0.5.

    F0 follows a slow sinusoidal contour of ±20 % around ``f0``; syllable-sized
    stretches (about 200 ms) are voiced with probability ``voiced_fraction``,
    the rest are noise (fricative-like) at lower level.
    """
    rng = np.random.default_rng(seed)
    n = int(round(duration * sr))
    t = np.arange(n) / sr
    f0_track = f0 * (1.0 + 0.2 * np.sin(2.0 * np.pi * 0.7 * t + rng.uniform(0, 2 * np.pi)))
    phase = np.cumsum(f0_track / sr)
    pulses = np.diff(np.floor(phase), prepend=0.0)
    seg = max(1, int(0.2 * sr))
    voiced = np.repeat(rng.random(n // seg + 1) < voiced_fraction, seg)[:n]
    source = np.where(voiced, pulses, 0.05 * rng.standard_normal(n))
    out = source
    for freq, bw in formants:
        if freq < sr / 2:
            b, a = resonator(freq, bw, sr)
            out = lfilter(b, a, out)
    out = out - out.mean() if n else out
    peak = np.max(np.abs(out)) if n else 0.0
    return (0.5 * out / peak if peak > 0 else out).astype(np.float32)
