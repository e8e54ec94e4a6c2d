"""Speech level and silence trimming by frame energy."""

from __future__ import annotations

import numpy as np

#: silence kept before and after the speech, seconds
MARGIN_S = 0.15
_FRAME_S = 0.01
#: frames quieter than this (dB below the loudest frame) count as silence
_SILENCE_DB = 40.0
#: frames within this many dB of the loudest one define the speech level
_ACTIVE_DB = 30.0


def frame_db(wav: np.ndarray, sr: int) -> np.ndarray:
    """Energy (dB) of consecutive 10-ms frames."""
    n = max(1, int(_FRAME_S * sr))
    frames = wav[: len(wav) // n * n].reshape(-1, n) if len(wav) >= n else wav[None, :]
    return 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)


def trim(wav: np.ndarray, sr: int, margin_s: float = MARGIN_S) -> np.ndarray:
    """Cut leading and trailing silence, keeping ``margin_s`` seconds on each side."""
    db = frame_db(wav, sr)
    loud = np.flatnonzero(db > db.max() - _SILENCE_DB)
    n = max(1, int(_FRAME_S * sr))
    start = max(0, loud[0] * n - int(margin_s * sr))
    end = min(len(wav), (loud[-1] + 1) * n + int(margin_s * sr))
    return wav[start:end]


def set_level(wav: np.ndarray, sr: int, rms: float) -> np.ndarray:
    """Scale so that the active-speech RMS is ``rms``; scaled down further if a peak would clip."""
    db = frame_db(wav, sr)
    active = db[db > db.max() - _ACTIVE_DB]
    current = np.sqrt(np.mean(10 ** (active / 10)))
    out = wav * (rms / current)
    peak = np.max(np.abs(out))
    return (out * (0.98 / peak) if peak > 0.98 else out).astype(np.float32)
