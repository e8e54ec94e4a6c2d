"""Linear prediction on many frames at once: Burg analysis, roots, FIR and all-pole filtering.

Every function takes a stack of frames (one per row) and treats the rows
independently, with numpy operations across the rows instead of a Python loop
over them; a row's result does not depend on the other rows in the stack.
Polynomials are LPC polynomials ``A(z) = a[0] + a[1] z^-1 + ... + a[p] z^-p``
with ``a[0] = 1``, stored as ``(frames, p + 1)`` arrays.
"""

from __future__ import annotations

import numpy as np

_TINY = np.finfo(np.float64).tiny


def burg(frames: np.ndarray, order: int) -> np.ndarray:
    """LPC coefficients of each row by Burg's method, ``(frames, order + 1)``.

    The recursion of ``librosa.lpc`` (Marple's formulation, denominator updated
    by recursion, ``tiny`` added to it), so an all-zero row gives ``[1, 0, ..., 0]``
    instead of dividing by zero.
    """
    x = np.asarray(frames, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] <= order:
        raise ValueError(f"burg needs a (frames, n) array with n > order={order}, got shape {x.shape}")
    fwd = x[:, 1:].copy()
    bwd = x[:, :-1].copy()
    den = np.einsum("ij,ij->i", fwd, fwd) + np.einsum("ij,ij->i", bwd, bwd)
    a = np.zeros((x.shape[0], order + 1))
    a[:, 0] = 1.0
    for i in range(order):
        k = -2.0 * np.einsum("ij,ij->i", bwd, fwd) / (den + _TINY)
        kc = k[:, None]
        a[:, 1 : i + 2] += kc * a[:, i::-1]
        new_fwd = bwd * kc
        new_fwd += fwd
        fwd *= kc
        bwd += fwd
        den = (1.0 - k * k) * den - bwd[:, -1] ** 2 - new_fwd[:, 0] ** 2
        fwd = new_fwd[:, 1:]
        bwd = bwd[:, :-1]
    return a


def poly_roots(a: np.ndarray) -> np.ndarray:
    """Roots of each row's polynomial, ``(frames, p)`` complex.

    Eigenvalues of the companion matrices, built exactly as ``np.roots`` builds
    them (first row ``-a[1:] / a[0]``, ones below the diagonal), so a row gives
    the same roots, in the same order, as ``np.roots`` on a polynomial without
    leading or trailing zeros.
    """
    n_frames, n_coef = a.shape
    p = n_coef - 1
    companion = np.zeros((n_frames, p, p))
    companion[:, 0, :] = -a[:, 1:] / a[:, :1]
    companion[:, np.arange(1, p), np.arange(p - 1)] = 1.0
    return np.linalg.eigvals(companion).astype(np.complex128, copy=False)


def poly_from_roots(roots: np.ndarray) -> np.ndarray:
    """Real polynomial of each row's roots (``np.real(np.poly(row))``), ``(frames, p + 1)``."""
    n_frames, p = roots.shape
    c = np.zeros((n_frames, p + 1), dtype=np.complex128)
    c[:, 0] = 1.0
    for j in range(p):
        c[:, 1 : j + 2] -= roots[:, j : j + 1] * c[:, : j + 1]
    return c.real.copy()


def fir_filter(b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Filter each row of ``x`` with its row of ``b`` (``lfilter(b, 1, row)``, zero initial state).

    Taps are accumulated from the last to the first, the order of scipy's
    transposed direct form, with elementwise operations only.
    """
    q = b.shape[1] - 1
    out = np.zeros(x.shape)
    for k in range(q, 0, -1):
        out[:, k:] += b[:, k : k + 1] * x[:, :-k]
    out += b[:, :1] * x
    return out


def allpole_filter(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Filter each row of ``x`` by ``1 / A(z)`` of its row of ``a`` (``lfilter(1, a, row)``, zero state).

    Transposed direct form II, as scipy: a Python loop over the samples of a
    row (at most a frame), each step elementwise across all rows, so a row's
    result never depends on the other rows.
    """
    n_frames, n = x.shape
    p = a.shape[1] - 1
    coef = np.ascontiguousarray((a[:, 1:] / a[:, :1]).T)
    drive = np.ascontiguousarray(x.T / a[:, 0])
    out = np.empty((n, n_frames))
    state = np.zeros((p, n_frames))
    for t in range(n):
        y = drive[t] + state[0]
        out[t] = y
        state[:-1] = state[1:] - coef[:-1] * y
        state[-1] = -coef[-1] * y
    return out.T
