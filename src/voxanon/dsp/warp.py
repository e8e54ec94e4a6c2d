"""Frequency warps and spectral tilt of spectral envelopes (frames x bins, power).

Convention: a warp of factor ``alpha`` moves envelope content from frequency
``f`` to ``g(f)`` with ``g'(0) = alpha``; ``alpha > 1`` moves formants up (a
shorter vocal tract), ``alpha < 1`` moves them down, ``alpha = 1`` is the
identity. Both warps map 0 to 0 and Nyquist to Nyquist.

- ``"bilinear"``: first-order all-pass warp
  ``g(w) = w + 2 atan(a sin w / (1 - a cos w))`` with ``a = (alpha - 1) / (alpha + 1)``;
  its inverse is the same warp with ``-a``.
- ``"vtln"``: piecewise-linear VTLN, ``g(f) = alpha f`` up to a break frequency
  (``break_fraction`` of Nyquist, lowered by ``alpha`` when ``alpha > 1``), then a
  straight line to Nyquist.
"""

from __future__ import annotations

import numpy as np

from voxanon.errors import ConfigError

WARPS = ("bilinear", "vtln")

_TINY = 1e-300


def _bilinear(omega: np.ndarray, a: float) -> np.ndarray:
    return omega + 2.0 * np.arctan2(a * np.sin(omega), 1.0 - a * np.cos(omega))


def source_positions(n_bins: int, alpha: float, kind: str = "bilinear", break_fraction: float = 0.85) -> np.ndarray:
    """For each output bin, the (fractional) input bin whose content lands there: ``g^-1`` on the bin grid."""
    if alpha <= 0:
        raise ConfigError(f"warp factor must be positive, got {alpha}")
    if n_bins < 2:
        raise ConfigError(f"need at least 2 frequency bins, got {n_bins}")
    if not 0.0 < break_fraction < 1.0:
        raise ConfigError(f"break_fraction must lie in (0, 1), got {break_fraction}")
    last = n_bins - 1
    if kind == "bilinear":
        a = (alpha - 1.0) / (alpha + 1.0)
        omega = np.linspace(0.0, np.pi, n_bins)
        return _bilinear(omega, -a) * last / np.pi
    if kind == "vtln":
        out = np.arange(n_bins, dtype=np.float64)
        f_break = break_fraction * last * min(1.0, 1.0 / alpha)
        g_break = alpha * f_break
        upper = f_break + (out - g_break) * (last - f_break) / (last - g_break)
        return np.where(out <= g_break, out / alpha, upper)
    raise ConfigError(f"unknown warp {kind!r}; choose one of {', '.join(WARPS)}")


def warp_envelope(sp: np.ndarray, alpha: float, kind: str = "bilinear", break_fraction: float = 0.85) -> np.ndarray:
    """Warp each frame of a power envelope along frequency (linear interpolation of log power)."""
    n_bins = sp.shape[-1]
    pos = np.clip(source_positions(n_bins, alpha, kind, break_fraction), 0.0, n_bins - 1)
    lo = np.minimum(np.floor(pos).astype(np.intp), n_bins - 2)
    hi = lo + 1
    w = pos - lo
    log_sp = np.log(np.maximum(sp, _TINY))
    return np.exp(log_sp[..., lo] * (1.0 - w) + log_sp[..., hi] * w)


def tilt_gain(n_bins: int, sr: int, db_per_octave: float, ref_hz: float = 1000.0, floor_hz: float = 50.0) -> np.ndarray:
    """Power gain per bin for a tilt of ``db_per_octave`` around ``ref_hz`` (flat below ``floor_hz``)."""
    freqs = np.maximum(np.linspace(0.0, sr / 2.0, n_bins), floor_hz)
    return 10.0 ** (db_per_octave * np.log2(freqs / ref_hz) / 10.0)


def apply_tilt(sp: np.ndarray, sr: int, db_per_octave: float, ref_hz: float = 1000.0) -> np.ndarray:
    """Power envelope with a spectral tilt (positive: brighter, negative: darker)."""
    return sp * tilt_gain(sp.shape[-1], sr, db_per_octave, ref_hz)
