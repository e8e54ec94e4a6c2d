"""Splicing replacement audio into a span of a waveform, and the simple redaction signals.

:func:`splice` changes only the samples of ``[start, end)``; the replacement fades in over the first
``fade`` samples of the span and out over its last ones (raised cosine), so the cut makes no click.
"""

from __future__ import annotations

import numpy as np


def ramp(n: int) -> np.ndarray:
    """Raised-cosine rise from 0 to 1 over ``n`` samples (excluding both ends)."""
    return (0.5 - 0.5 * np.cos(np.pi * (np.arange(n) + 0.5) / n)).astype(np.float32) if n > 0 else np.zeros(0)


def splice(original: np.ndarray, replacement: np.ndarray, start: int, end: int, fade: int) -> np.ndarray:
    """``original`` with ``replacement`` (``end - start`` samples) in ``[start, end)``, cross-faded inside it."""
    start, end = max(0, start), min(len(original), end)
    replacement = np.asarray(replacement, dtype=np.float32)[: end - start]
    if len(replacement) != end - start:
        raise ValueError(f"replacement of {len(replacement)} samples for a span of {end - start}")
    fade = min(fade, (end - start) // 2)
    weight = np.ones(end - start, dtype=np.float32)
    weight[:fade], weight[end - start - fade:] = ramp(fade), ramp(fade)[::-1]
    out = np.array(original, dtype=np.float32, copy=True)
    out[start:end] = (1 - weight) * out[start:end] + weight * replacement
    return out


def rms(wav: np.ndarray) -> float:
    """Root mean square (0 for an empty array)."""
    return float(np.sqrt(np.mean(np.square(wav, dtype=np.float64)))) if len(wav) else 0.0


def tone(n: int, sr: int, hz: float, level: float) -> np.ndarray:
    """A sine of ``hz`` with RMS ``level``."""
    return (level * np.sqrt(2) * np.sin(2 * np.pi * hz * np.arange(n) / sr)).astype(np.float32)


def noise(n: int, level: float, rng: np.random.Generator) -> np.ndarray:
    """White Gaussian noise with RMS ``level``."""
    return (level * rng.standard_normal(n)).astype(np.float32)
