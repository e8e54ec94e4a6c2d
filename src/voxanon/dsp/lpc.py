"""Linear prediction on many frames at once: Burg analysis, roots, FIR and all-pole filtering.

Every function takes a stack of frames (one per row) and treats the rows
independently, with numpy operations across the rows instead of a Python loop
over them; a row's result does not depend on the other rows in the stack.
Polynomials are LPC polynomials ``A(z) = a[0] + a[1] z^-1 + ... + a[p] z^-p``
with ``a[0] = 1``, stored as ``(frames, p + 1)`` arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.signal import lfilter

_TINY = np.finfo(np.float64).tiny
#: up to this many rows, :func:`allpole_filter` calls scipy's lfilter per row (same result, less overhead)
FEW_ROWS = 8


def burg(frames: np.ndarray, order: int) -> np.ndarray:
    """LPC coefficients of each row by Burg's method, ``(frames, order + 1)``.

    The recursion of ``librosa.lpc`` (Marple's formulation, denominator updated
    by recursion, ``tiny`` added to it), so an all-zero row gives ``[1, 0, ..., 0]``
    instead of dividing by zero.

    The forward and backward errors are held frames-last (``(samples, frames)``,
    contiguous along the frames), so every update is one elementwise pass over
    contiguous memory and the numerators are one ``einsum`` summing over the
    samples, in sample order, for each frame: a frame's arithmetic is the same
    wherever it sits in the stack and however many frames there are. (A single
    frame is run as two columns: with one column the samples axis would be the
    contiguous one and numpy would sum it in another order.)
    """
    x = np.asarray(frames, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] <= order:
        raise ValueError(f"burg needs a (frames, n) array with n > order={order}, got shape {x.shape}")
    if x.shape[0] == 1:
        return burg(np.repeat(x, 2, axis=0), order)[:1]
    n_frames, n = x.shape
    xt = x.T
    buffers = (xt[1:].copy(), np.empty((n - 1, n_frames)))  # they take turns holding the forward errors
    fwd = buffers[0]
    bwd = xt[:-1].copy()
    den = np.einsum("ti,ti->i", fwd, fwd) + np.einsum("ti,ti->i", bwd, bwd)
    a = np.zeros((n_frames, order + 1))
    a[:, 0] = 1.0
    for i in range(order):
        k = -2.0 * np.einsum("ti,ti->i", bwd, fwd) / (den + _TINY)
        a[:, 1 : i + 2] += k[:, None] * a[:, i::-1]
        new_fwd = np.multiply(bwd, k, out=buffers[(i + 1) % 2][: n - 1 - i])
        new_fwd += fwd
        fwd *= k
        bwd += fwd
        den = (1.0 - k * k) * den - bwd[-1] ** 2 - new_fwd[0] ** 2
        fwd = new_fwd[1:]
        bwd = bwd[:-1]
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


#: starting points of the Aberth iteration: radius 0.9 (Burg poles lie inside the unit circle), angles
#: evenly spaced and turned by 0.01 rad, so that no start is real or the conjugate of another, and
#: one start lies just off each end of the real axis (near 1, and near -1 for even degree), where the
#: real roots of speech LPC polynomials usually are (about 1.3 fewer iterations on speech than a turn
#: of 0.4 rad, which puts no start near the real axis)
_ABERTH_RADIUS = 0.9
_ABERTH_TURN = 0.01


def aberth_roots(a: np.ndarray, max_iter: int = 40, tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """Roots of each row's polynomial by the Aberth-Ehrlich iteration, vectorised across rows.

    All rows start from the same points (``p`` points on the circle of radius 0.9)
    and are stepped together; a row stops once every root's last Aberth step is
    at most ``tol`` in absolute value (convergence is cubic, so the roots are
    then exact to rounding), and leaves the active set. Every operation is
    elementwise along the rows, so a row's roots do not depend on the other rows.
    Returns ``(roots, converged)``: ``(frames, p)`` complex (NaN where not
    converged within ``max_iter`` steps or where the iterate stopped being finite)
    and a ``(frames,)`` bool mask.
    """
    n_frames, n_coef = a.shape
    p = n_coef - 1
    coef = np.ascontiguousarray((a / a[:, :1]).T)  # (p + 1, frames): monic, frames last
    start = _ABERTH_RADIUS * np.exp(1j * (2 * np.pi * np.arange(p) / p + _ABERTH_TURN))
    # at evenly spaced points on a circle the Aberth sum is known: sum_{j != i} 1 / (z_i - z_j) = (p - 1) / (2 z_i)
    first_sum = ((p - 1) / (2 * start))[:, None]
    z = np.repeat(start[:, None], n_frames, axis=1)  # (p, active frames)
    roots = np.full((p, n_frames), np.nan + 0j)
    converged = np.zeros(n_frames, dtype=bool)
    active = np.arange(n_frames)
    diagonal = np.arange(p) * (p + 1)
    for iteration in range(max_iter):
        if not active.size:
            break
        c = coef[:, active] if active.size < n_frames else coef
        # p(z) and p'(z) by Horner
        val = np.empty_like(z)
        val[...] = c[0]
        der = np.zeros_like(z)
        for j in range(1, p + 1):
            der *= z
            der += val
            val *= z
            val += c[j]
        newton = val / der
        # sum over j != i of 1 / (z_i - z_j), in real single precision (it only steers the step:
        # the fixed point is p(z) = 0, evaluated in double); axis 0 is j, axis 1 is i
        if iteration:
            re, im = z.real.astype(np.float32), z.imag.astype(np.float32)
            dre = re[None, :, :] - re[:, None, :]
            dim = im[None, :, :] - im[:, None, :]
            inv = dre * dre
            inv += dim * dim
            inv.reshape(p * p, -1)[diagonal] = np.inf
            np.divide(np.float32(1.0), inv, out=inv)
            dre *= inv
            dim *= inv
            pair_sum = dre.sum(axis=0) - 1j * dim.sum(axis=0)
        else:
            pair_sum = first_sum
        step = newton / (1.0 - newton * pair_sum)
        z -= step
        size = np.abs(step).max(axis=0)
        done = size <= tol
        lost = ~np.isfinite(size)
        if done.any():
            roots[:, active[done]] = z[:, done]
            converged[active[done]] = True
        if done.any() or lost.any():
            keep = ~(done | lost)
            active, z = active[keep], z[:, keep]
    return roots.T, converged


def _conjugate_symmetric(roots: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Snap each row's roots to a real polynomial's root set: ``|imag| <= tol * max(1, |z|)`` real,
    the rest as exact conjugate pairs. Returns ``(roots, ok)``, ``ok`` false where the counts of
    roots above and below the real axis differ."""
    p = roots.shape[1]
    order = np.argsort(-roots.imag, axis=1, kind="stable")
    z = np.take_along_axis(roots, order, axis=1)  # upper half first, reals, lower half last
    band = tol * np.maximum(1.0, np.abs(z))
    n_up = np.count_nonzero(z.imag > band, axis=1)
    n_down = np.count_nonzero(z.imag < -band, axis=1)
    idx = np.arange(p)
    lower = idx >= p - n_up[:, None]
    real = (idx >= n_up[:, None]) & ~lower
    mirrored = np.conj(z[:, ::-1])  # position p-1-k holds conj of position k
    out = np.where(lower, mirrored, z)
    out = np.where(real, out.real + 0j, out)
    return out, n_up == n_down


def poly_roots_fast(
    a: np.ndarray, max_iter: int = 40, tol: float = 1e-7, check: float = 1e-12
) -> tuple[np.ndarray, np.ndarray]:
    """Roots of each row's polynomial: Aberth iteration, eigenvalues for the rows it does not settle.

    A row's Aberth roots are kept only if (1) every root's last step was at most
    ``tol``, (2) after snapping near-real roots (``|imag| <= 1e-9 max(1, |z|)``)
    to the real axis the rest pair up as exact conjugates, and (3) the monic
    polynomial rebuilt from them matches the row's to ``check * prod(1 + |z_i|)``
    in every coefficient (the scale of the rounding error of the rebuild; eigenvalue
    roots reach about 1e-16 of it): a backward error at rounding level, so no root
    is missed, doubled or stopped short (a cluster of close roots converges only
    linearly and usually falls back). Any other row gets
    :func:`poly_roots` (companion eigenvalues). Returns ``(roots, fallback)``:
    ``(frames, p)`` complex, real roots with imaginary part exactly 0 and complex
    ones in exact conjugate pairs, and a bool mask of the rows that fell back.
    """
    roots, ok = aberth_roots(a, max_iter=max_iter, tol=tol)
    roots, paired = _conjugate_symmetric(np.where(ok[:, None], roots, 0j), 1e-9)
    monic = a / a[:, :1]
    error = np.abs(poly_from_roots(roots) - monic).max(axis=1)
    ok &= paired & (error <= check * np.prod(1.0 + np.abs(roots), axis=1))
    fallback = ~ok
    if fallback.any():
        roots[fallback] = poly_roots(a[fallback])
    return roots, fallback


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

    One ``einsum`` over sliding windows of the zero-padded rows: output sample
    ``t`` is the dot product of ``x[t - q .. t]`` with the reversed taps, summed
    in the same order for every row whatever the number of rows.
    """
    q = b.shape[1] - 1
    padded = np.zeros((x.shape[0], x.shape[1] + q))
    padded[:, q:] = x
    windows = sliding_window_view(padded, q + 1, axis=1)  # (rows, n, q + 1)
    return np.einsum("ftk,fk->ft", windows, b[:, ::-1])


def allpole_filter(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Filter each row of ``x`` by ``1 / A(z)`` of its row of ``a`` (``lfilter(1, a, row)``, zero state).

    Transposed direct form II with scipy's arithmetic (``s_i <- s_{i+1} - c_i y``,
    ``s_{p-1} <- (-c_{p-1}) y``, the same roundings): a Python loop over the samples
    of a row (at most a frame), each step elementwise across all rows, so a
    row's result never depends on the other rows. Two state buffers take turns
    (the shifted update is written straight into the other one, no copy) and
    every product goes into preallocated memory. Up to :data:`FEW_ROWS` rows (a live
    stream's few frames per chunk), the loop's per-sample overhead outweighs its work,
    so each row goes through ``lfilter`` itself: the same result, bit for bit.
    """
    n_frames, n = x.shape
    if n_frames <= FEW_ROWS:
        return np.stack([lfilter([1.0], row_a, row_x) for row_a, row_x in zip(a, x)]).reshape(n_frames, n)
    p = a.shape[1] - 1
    coef = np.ascontiguousarray((a[:, 1:] / a[:, :1]).T)
    head, last = coef[:-1], -coef[-1]
    drive = np.ascontiguousarray(x.T / a[:, 0])
    out = np.empty((n, n_frames))
    states = (np.zeros((p, n_frames)), np.zeros((p, n_frames)))
    term = np.empty((p - 1, n_frames))
    for t in range(n):
        state, new = states[t % 2], states[(t + 1) % 2]
        y = np.add(drive[t], state[0], out=out[t])
        np.multiply(head, y, out=term)
        np.subtract(state[1:], term, out=new[:-1])
        np.multiply(last, y, out=new[-1])
    return out.T
