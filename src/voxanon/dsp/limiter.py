"""Peak limiter: keep a signal within full scale without touching what already is.

The gain needed at sample ``n`` is ``min(1, ceiling / |x[n]|)``. Its running
minimum over ``±w`` samples, smoothed by a centred moving average over ``w + 1``
samples, is never above the gain needed at any sample (each averaged value is
a minimum over a window that contains that sample), so no output sample
exceeds the ceiling; the gain ramps down and up over about ``w`` samples
(5 ms by default) instead of flattening the peaks (clipping). Samples farther
than ``1.5 w`` from every sample above the ceiling keep a gain of exactly 1.

The gain is computed in blocks of :data:`BLOCK` samples, each with ``2 w + 2``
samples of its neighbours (more than the filters reach), and blocks with no
sample above the ceiling are skipped: working memory does not grow with the
signal's length (a whole hour's float64 gain took 3 GB).
"""

from __future__ import annotations

import numpy as np

#: samples per block of the gain computation (about 65 s at 16 kHz)
BLOCK = 1 << 20


def limit_peaks(wav: np.ndarray, sr: int, *, ceiling: float = 1.0, window_s: float = 0.005) -> np.ndarray:
    """``wav`` with its gain lowered smoothly around samples whose magnitude exceeds ``ceiling``.

    Returns ``wav`` itself when no sample exceeds the ceiling.
    """
    w = max(1, int(round(window_s * sr)))
    margin, out = 2 * w + 2, None
    for start in range(0, len(wav), BLOCK):
        stop = min(len(wav), start + BLOCK)
        lo, hi = max(0, start - margin), min(len(wav), stop + margin)
        if np.max(np.abs(wav[lo:hi])) <= ceiling:
            continue  # no gain change reaches this block
        if out is None:
            out = wav.copy()
        out[start:stop] = _limit(wav[lo:hi], w, ceiling)[start - lo : stop - lo]
    return wav if out is None else out


def _limit(wav: np.ndarray, w: int, ceiling: float) -> np.ndarray:
    """:func:`limit_peaks` of one piece with window ``w`` samples (its edges held at their nearest value)."""
    from scipy.ndimage import (  # slow to import; rarely needed
        maximum_filter1d,
        minimum_filter1d,
        uniform_filter1d,
    )

    need = np.minimum(1.0, ceiling / np.maximum(np.abs(wav).astype(np.float64), 1e-30))
    held = minimum_filter1d(need, size=2 * w + 1, mode="nearest")
    gain = uniform_filter1d(held, size=w + 1, mode="nearest")
    touched = maximum_filter1d((held < 1.0).astype(np.uint8), size=w + 1, mode="nearest").astype(bool)
    gain[~touched] = 1.0
    return (wav * gain).astype(wav.dtype, copy=False)
