"""Frame-rate conversion and time warps of feature sequences, and frame-level pitch features (pure numpy)."""

from __future__ import annotations

import numpy as np

#: reference of the semitone scale (Hz)
A4_HZ = 440.0


def frames_at(feats: np.ndarray, rate: float, times: np.ndarray) -> np.ndarray:
    """``(T, D)`` frames at ``rate`` Hz linearly interpolated at ``times`` (s); clamped at both ends.

    Frame ``i`` is centred at ``(i + 0.5) / rate`` seconds.
    """
    pos = np.clip(np.asarray(times, dtype=np.float64) * rate - 0.5, 0, len(feats) - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, len(feats) - 1)
    w = (pos - lo)[:, None].astype(np.float32)
    return feats[lo] * (1 - w) + feats[hi] * w


def interpolate_frames(feats: np.ndarray, src_rate: float, n_out: int, out_rate: float) -> np.ndarray:
    """Linear interpolation of ``(T, D)`` frames at ``src_rate`` Hz onto ``n_out`` frames at ``out_rate`` Hz.

    Frame ``i`` of either sequence is centred at ``(i + 0.5) / rate`` seconds.
    """
    return frames_at(feats, src_rate, (np.arange(n_out) + 0.5) / out_rate)


def monotone_anchors(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The anchor pairs ``(src[k], dst[k])``, in order of ``src``, each kept only if after the last kept in both.

    What remains is a strictly increasing map, as :func:`time_warp` needs; an anchor that would fold time back
    (a word matched out of order) is dropped.
    """
    order = np.argsort(np.asarray(src, dtype=np.float64), kind="stable")
    keep_src, keep_dst = [], []
    for s, d in zip(np.asarray(src, dtype=np.float64)[order], np.asarray(dst, dtype=np.float64)[order]):
        if not keep_src or (s > keep_src[-1] and d > keep_dst[-1]):
            keep_src.append(s)
            keep_dst.append(d)
    return np.array(keep_src), np.array(keep_dst)


def time_warp(src: np.ndarray, dst: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``times`` mapped piecewise-linearly through anchors ``src[k] -> dst[k]`` (kept by :func:`monotone_anchors`).

    Between two anchors time is stretched uniformly; outside the first and last anchor it is clamped to them.
    """
    src, dst = monotone_anchors(src, dst)
    return np.interp(np.asarray(times, dtype=np.float64), src, dst)


def relative_pitch(f0: np.ndarray, f0_rate: float, n_out: int, out_rate: float) -> np.ndarray:
    """F3-VA's normalised pitch at ``n_out`` frames of ``out_rate`` Hz: ``(n_out, 2)`` float32.

    Column 0: semitones re 440 Hz minus the utterance median over voiced frames (0 when unvoiced);
    column 1: the voicing flag. ``f0`` is in Hz (0 = unvoiced) with frame ``i`` at ``i / f0_rate`` s
    (WORLD's convention); a frame is voiced when the nearest F0 frame is.
    """
    f0 = np.asarray(f0, dtype=np.float64)
    voiced = f0 > 0
    semi = np.zeros(len(f0))
    if voiced.any():
        semi[voiced] = 12.0 * np.log2(f0[voiced] / A4_HZ)
        semi[voiced] -= np.median(semi[voiced])
    idx = np.clip(np.round((np.arange(n_out) + 0.5) * f0_rate / out_rate).astype(int), 0, max(len(f0) - 1, 0))
    if not len(f0):
        return np.zeros((n_out, 2), dtype=np.float32)
    return np.stack([semi[idx], voiced[idx].astype(np.float64)], axis=1).astype(np.float32)
