"""Straightforward per-frame McAdams transform, the way the VPC code computes it.

A loop over frames: Burg LPC of one frame, ``np.roots``, the pole-angle warp
pole by pole, ``np.poly``, ``scipy.signal.lfilter`` for the residual and the
re-synthesis, overlap-add. Same frame grid and conventions as
:mod:`voxanon.dsp.mcadams` (frames before the start and past the end, zeros
outside the signal), so the two must agree to rounding. Used by the tests and
by ``experiments/bench_mcadams.py``.
"""

from __future__ import annotations

import numpy as np
from scipy.signal import lfilter


def burg_reference(x: np.ndarray, order: int) -> np.ndarray:
    """Burg LPC of one frame (Marple's recursion, as ``librosa.lpc``)."""
    fwd = x[1:].astype(np.float64)
    bwd = x[:-1].astype(np.float64)
    den = np.dot(fwd, fwd) + np.dot(bwd, bwd)
    a = np.zeros(order + 1)
    a[0] = 1.0
    for i in range(order):
        k = -2.0 * np.dot(bwd, fwd) / (den + np.finfo(np.float64).tiny)
        prev = a.copy()
        for j in range(1, i + 2):
            a[j] = prev[j] + k * prev[i - j + 1]
        fwd, bwd = fwd + k * bwd, bwd + k * fwd
        den = (1.0 - k * k) * den - bwd[-1] ** 2 - fwd[0] ** 2
        fwd, bwd = fwd[1:], bwd[:-1]
    return a


def warp_poles_reference(poles: np.ndarray, alpha: float) -> np.ndarray:
    """Pole-by-pole angle warp: complex poles to angle ``+-min(|phi|^alpha, pi)``, magnitude kept."""
    new = np.empty(poles.shape, dtype=np.complex128)
    for i, pole in enumerate(poles):
        angle = np.angle(pole)
        if pole.imag != 0:
            angle = np.sign(angle) * min(abs(angle) ** alpha, np.pi)
        new[i] = np.abs(pole) * np.exp(1j * angle)
    return new


def mcadams_reference(
    wav: np.ndarray,
    sr: int,
    alpha: float,
    winlen: float = 0.02,
    shift: float = 0.01,
    lp_order: int = 20,
    vpc_frames: bool = False,
) -> np.ndarray:
    """Unnormalised McAdams transform, one frame at a time.

    ``vpc_frames=True`` keeps only the frames of VPC's ``anonym_v2`` (complete
    frames starting at 0, 1 hop, 2 hops...), leaving the rest of the output zero.
    """
    n = int(np.floor(round(winlen * sr, 6)))
    hop = int(np.floor(round(shift * sr, 6)))
    hann = np.hanning(n)
    window = np.sqrt(hann / (hann.sum() / hop))
    lead = ((n - 1) // hop) * hop
    padded = np.concatenate([np.zeros(lead), np.asarray(wav, dtype=np.float64), np.zeros(n)])
    out = np.zeros(padded.size)
    eps = float(np.finfo(np.float32).eps)
    starts = range(lead, lead + len(wav) - n + 1, hop) if vpc_frames else range(0, lead + len(wav), hop)
    for start in starts:
        frame = padded[start : start + n] * window
        a = burg_reference(frame + eps, lp_order)
        a_new = np.real(np.poly(warp_poles_reference(np.roots(a), alpha)))
        out[start : start + n] += lfilter([1.0], a_new, lfilter(a, [1.0], frame)) * window
    return out[lead : lead + len(wav)]
