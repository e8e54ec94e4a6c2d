"""Speech level and silence trimming by frame energy."""

from __future__ import annotations

import numpy as np

#: silence kept before and after the speech, seconds
MARGIN_S = 0.15
#: seconds per energy frame
FRAME_S = 0.01
#: frames quieter than this (dB below the loudest frame) count as silence
_SILENCE_DB = 40.0
#: frames within this many dB of the loudest one define the speech level
_ACTIVE_DB = 30.0


def frame_db(wav: np.ndarray, sr: int) -> np.ndarray:
    """Energy (dB) of consecutive 10-ms frames."""
    n = max(1, int(FRAME_S * sr))
    frames = wav[: len(wav) // n * n].reshape(-1, n) if len(wav) >= n else wav[None, :]
    return 10 * np.log10(np.mean(frames.astype(np.float64) ** 2, axis=1) + 1e-12)


def speech_frames(wav: np.ndarray, sr: int) -> np.ndarray:
    """Which 10-ms frames are speech: above a quarter of the way from the noise floor (10th percentile) to the
    loudest frame, and at most 40 dB below it."""
    db = frame_db(wav, sr)
    peak, floor = db.max(), np.percentile(db, 10)
    return db > max(peak - _SILENCE_DB, floor + 0.25 * (peak - floor))


def speech_edges(frames: np.ndarray, sr: int, lo: float, hi: float) -> tuple[float, float] | None:
    """Start and end (s) of the speech ``frames`` (:func:`speech_frames` at ``sr``) between ``lo`` and ``hi`` s.

    None when none of those frames is speech.
    """
    step = max(1, int(FRAME_S * sr)) / sr
    a = max(0, int(lo / step))
    idx = np.flatnonzero(frames[a: int(np.ceil(hi / step))])
    return None if not len(idx) else ((a + idx[0]) * step, (a + idx[-1] + 1) * step)


def trim(wav: np.ndarray, sr: int, margin_s: float = MARGIN_S) -> np.ndarray:
    """Cut leading and trailing silence, keeping ``margin_s`` seconds on each side."""
    db = frame_db(wav, sr)
    loud = np.flatnonzero(db > db.max() - _SILENCE_DB)
    n = max(1, int(FRAME_S * sr))
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
