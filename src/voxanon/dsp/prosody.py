"""Pure functions on F0 tracks (Hz, 0 = unvoiced) and per-frame gain tracks.

Every function returns a new array and keeps unvoiced frames unvoiced (0).
"""

from __future__ import annotations

import numpy as np

from voxanon.errors import ConfigError

#: voiced frames never go below this F0 (Hz) after a random transform
MIN_F0 = 20.0


def voiced(f0: np.ndarray) -> np.ndarray:
    """Boolean mask of voiced frames."""
    return np.asarray(f0) > 0


def log_f0_stats(f0: np.ndarray) -> tuple[float, float]:
    """Mean and standard deviation of natural-log F0 over voiced frames (nan, nan when none)."""
    v = voiced(f0)
    if not v.any():
        return float("nan"), float("nan")
    log_f0 = np.log(f0[v])
    return float(log_f0.mean()), float(log_f0.std())


def map_log_f0(f0: np.ndarray, mean: float, std: float, reference: np.ndarray | None = None) -> np.ndarray:
    """Z-score voiced log-F0, then give it ``mean`` and ``std`` (the contour's shape is kept).

    The z-scores use the statistics of ``reference`` (default: ``f0`` itself),
    e.g. the whole utterance's F0 when ``f0`` is one chunk of it.
    A flat contour (zero spread) maps to ``exp(mean)`` everywhere.
    """
    out = np.zeros_like(f0, dtype=np.float64)
    v = voiced(f0)
    if not v.any():
        return out
    src_mean, src_std = log_f0_stats(f0 if reference is None or not voiced(reference).any() else reference)
    z = (np.log(f0[v]) - src_mean) / src_std if src_std > 0 else np.zeros(int(v.sum()))
    out[v] = np.exp(mean + std * z)
    return out


def moving_average(f0: np.ndarray, window: int) -> np.ndarray:
    """Centred moving average of F0 over the voiced frames of a ``window``-frame span (0 where none)."""
    if window < 1:
        raise ConfigError(f"window must be at least 1 frame, got {window}")
    v = voiced(f0)
    n, start = len(v), (window - 1) // 2
    kernel = np.ones(window)
    total = np.convolve(np.where(v, f0, 0.0), kernel)[start : start + n]
    count = np.convolve(v.astype(np.float64), kernel)[start : start + n]
    return np.divide(total, count, out=np.zeros_like(total), where=count > 0.5)


def mean_reversion(f0: np.ndarray, window: int, strength: float) -> np.ndarray:
    """Pull each voiced frame towards its moving average: ``avg + (f0 - avg) * (1 - strength)``."""
    avg = moving_average(f0, window)
    return np.where(voiced(f0), avg + (f0 - avg) * (1.0 - strength), 0.0)


def add_noise(f0: np.ndarray, std_hz: float, rng: np.random.Generator) -> np.ndarray:
    """Add white Gaussian noise of ``std_hz`` to voiced frames (floored at :data:`MIN_F0`)."""
    noise = rng.normal(0.0, std_hz, size=np.shape(f0))
    return np.where(voiced(f0), np.maximum(f0 + noise, MIN_F0), 0.0)


def runs(mask: np.ndarray) -> np.ndarray:
    """``(k, 2)`` start/stop frame indices of the runs of equal values in a boolean mask."""
    mask = np.asarray(mask, dtype=bool)
    if mask.size == 0:
        return np.zeros((0, 2), dtype=np.intp)
    edges = np.flatnonzero(mask[1:] != mask[:-1]) + 1
    starts = np.concatenate([[0], edges])
    stops = np.concatenate([edges, [mask.size]])
    return np.stack([starts, stops], axis=1)


def fixed_spans(n_frames: int, span: int) -> np.ndarray:
    """``(k, 2)`` start/stop indices cutting ``n_frames`` into spans of ``span`` frames (last may be shorter)."""
    if span < 1:
        raise ConfigError(f"span must be at least 1 frame, got {span}")
    starts = np.arange(0, n_frames, span)
    return np.stack([starts, np.minimum(starts + span, n_frames)], axis=1)


def segment_track(bounds: np.ndarray, values: np.ndarray, n_frames: int) -> np.ndarray:
    """Per-frame track holding ``values[i]`` on segment ``bounds[i]`` (1 outside all segments)."""
    track = np.ones(n_frames)
    for (start, stop), value in zip(bounds, values):
        track[start:stop] = value
    return track
