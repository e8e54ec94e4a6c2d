"""Peak limiter: keep a signal within full scale without touching what already is.

The gain needed at sample ``n`` is ``min(1, ceiling / |x[n]|)``. Its running
minimum over ``±w`` samples, smoothed by a centred moving average over ``w + 1``
samples, is never above the gain needed at any sample (each averaged value is
a minimum over a window that contains that sample), so no output sample
exceeds the ceiling; the gain ramps down and up over about ``w`` samples
(5 ms by default) instead of flattening the peaks (clipping). Samples farther
than ``1.5 w`` from every sample above the ceiling keep a gain of exactly 1.
"""

from __future__ import annotations

import numpy as np


def limit_peaks(wav: np.ndarray, sr: int, *, ceiling: float = 1.0, window_s: float = 0.005) -> np.ndarray:
    """``wav`` with its gain lowered smoothly around samples whose magnitude exceeds ``ceiling``.

    Returns ``wav`` itself when no sample exceeds the ceiling.
    """
    magnitude = np.abs(wav)
    if not np.any(magnitude > ceiling):
        return wav
    from scipy.ndimage import maximum_filter1d, minimum_filter1d, uniform_filter1d  # slow to import; rarely needed

    w = max(1, int(round(window_s * sr)))
    need = np.minimum(1.0, ceiling / np.maximum(magnitude.astype(np.float64), 1e-30))
    held = minimum_filter1d(need, size=2 * w + 1, mode="nearest")
    gain = uniform_filter1d(held, size=w + 1, mode="nearest")
    touched = maximum_filter1d((held < 1.0).astype(np.uint8), size=w + 1, mode="nearest").astype(bool)
    gain[~touched] = 1.0
    return (wav * gain).astype(wav.dtype, copy=False)
