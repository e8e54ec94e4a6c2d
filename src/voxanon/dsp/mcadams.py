"""McAdams-coefficient voice transformation (VoicePrivacy 2024 baseline B2), vectorised and streamable.

The algorithm of the VPC 2024 ``anonym_v2``: frames of ``winlen`` (20 ms) every
``shift`` (10 ms), each multiplied by ``sqrt(hann / K)`` with ``K = sum(hann) / shift``
(``np.hanning``, the symmetric Hann window, as VPC); Burg LPC of order 20 on the
windowed frame plus float32 eps (as VPC, via ``librosa.lpc``); every complex pole
``r e^{+-j phi}`` moves to ``r e^{+-j min(phi^alpha, pi)}``, real poles stay; the
residual of the original inverse filter goes through the new all-pole filter,
is windowed again and overlap-added.

``phi -> phi^alpha`` with ``alpha < 1`` pulls every pole angle towards 1 rad
(2546 Hz at 16 kHz): resonances below it move up, those above it move down.

Deliberate differences from ``anonym_v2`` (documented, tested):

- Every sample is processed: frames lie on the same grid (starts at multiples
  of ``shift``) but also start before 0 and run past the end, with zeros
  outside the signal, so the first and last samples get full overlap-add
  coverage and the output has the input's length. VPC drops the trailing
  partial frame (its output ends in zeros) and the head gets one window only.
- VPC adds float32 eps to the whole signal (a DC offset) before framing; here
  eps is only added to the LPC analysis input (as VPC also does), so an
  all-zero input comes out all-zero instead of as normalised noise.

The core transform here is unnormalised. VPC then peak-normalises each
utterance (``y / max|y| * 32766`` in int16); :func:`normalization_gain` gives
that gain and the ``mcadams`` anonymizer applies it. A stream cannot know the
global peak in advance, so :class:`McAdamsStream` yields the unnormalised
core output; it equals :func:`mcadams` sample for sample for any chunking.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from voxanon.dsp.lpc import (
    allpole_filter,
    burg,
    fir_filter,
    poly_from_roots,
    poly_roots_fast,
)
from voxanon.errors import ConfigError, DataError

#: added to each windowed frame before LPC analysis, as VPC does
LPC_EPS = float(np.finfo(np.float32).eps)
#: output peak after VPC normalisation, as a float that 16-bit PCM writes as 32766
VPC_PEAK = 32766.0 / 32767.0


def frame_sizes(sr: int, winlen: float, shift: float) -> tuple[int, int]:
    """Window and hop in samples: ``floor(seconds * sr)`` as VPC."""
    n = int(np.floor(round(winlen * sr, 6)))
    hop = int(np.floor(round(shift * sr, 6)))
    if hop < 1 or n < hop:
        raise ConfigError(f"need 1 <= shift <= winlen in samples, got winlen={n}, shift={hop} at {sr} Hz")
    return n, hop


def mcadams_window(n: int, hop: int) -> np.ndarray:
    """Analysis and synthesis window ``sqrt(hann / K)``, ``K = sum(hann) / hop`` (symmetric Hann)."""
    hann = np.hanning(n)
    return np.sqrt(hann / (hann.sum() / hop))


def warp_poles(poles: np.ndarray, alpha: float) -> np.ndarray:
    """Complex poles ``r e^{+-j phi}`` to ``r e^{+-j min(phi^alpha, pi)}``; real poles unchanged."""
    angle = np.angle(poles)
    warped = np.minimum(np.abs(angle) ** alpha, np.pi)
    new_angle = np.where(poles.imag != 0, np.copysign(warped, angle), angle)
    return np.abs(poles) * np.exp(1j * new_angle)


def stabilize_poles(poles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poles outside the unit circle reflected inside (``r e^{j phi}`` to ``e^{j phi} / r``).

    Returns ``(poles, rows)``: the stable poles and a bool mask of the rows that had one outside.
    Burg's recursion can return an unstable polynomial on a frame that is a
    constant offset (e.g. -2 LSB of DC padding around a TTS utterance: a pole
    at radius 40), and the all-pole re-synthesis of such a frame overflows to
    inf/NaN. The VPC kit (``librosa.lpc`` + ``lfilter``) has the same
    recursion and overflows there.
    """
    outside = np.abs(poles) > 1.0
    return np.where(outside, 1.0 / np.conj(np.where(outside, poles, 1.0)), poles), outside.any(axis=1)


def mcadams_frames(frames: np.ndarray, window: np.ndarray, alpha: float, order: int) -> np.ndarray:
    """Transform raw frames ``(F, n)``: window, LPC, pole warp, re-synthesis, window again.

    A frame whose LPC polynomial is unstable is analysed and re-synthesised with
    its stable equivalent (:func:`stabilize_poles`: the same magnitude response up
    to a gain that cancels between the two filters). A frame whose signal is so far
    below the float32 eps added for the analysis (around 1e-20: a sound card's
    uninitialised capture buffer) that Burg's recursion overflows to NaN passes
    through unchanged (the VPC kit returns NaN there). Every other frame is
    exactly the VPC kit's.
    """
    windowed = frames * window
    with np.errstate(over="ignore", invalid="ignore"):
        a = burg(windowed + LPC_EPS, order)
    lost = ~np.isfinite(a).all(axis=1)
    if lost.any():  # a frame of float32 eps plus a far smaller signal: pass it through unchanged
        a[lost] = np.eye(1, order + 1)
    poles, unstable = stabilize_poles(poly_roots_fast(a)[0])
    if unstable.any():
        a[unstable] = poly_from_roots(poles[unstable])
    a_new = poly_from_roots(warp_poles(poles, alpha))
    return allpole_filter(a_new, fir_filter(a, windowed)) * window


class McAdamsStream:
    """Chunk-in, chunk-out McAdams transform (unnormalised).

    ``process(chunk)`` returns every output sample that no later input can
    change; ``flush()`` returns the rest. The concatenated output has the
    input's length and equals :func:`mcadams` exactly, whatever the chunking.
    Latency is about one window. At most ``max_frames`` frames are analysed at
    once, so memory stays bounded for any input length.

    Parameters
    ----------
    alpha : McAdams coefficient (1 leaves the spectral envelope unchanged)
    sr : sample rate in Hz
    winlen, shift : window length and hop in seconds
    lp_order : LPC order
    max_frames : frames analysed per batch
    """

    def __init__(
        self,
        alpha: float,
        sr: int,
        *,
        winlen: float = 0.02,
        shift: float = 0.01,
        lp_order: int = 20,
        max_frames: int = 512,
    ) -> None:
        if not alpha > 0:
            raise ConfigError(f"alpha must be > 0, got {alpha}")
        self.alpha = float(alpha)
        self.n, self.hop = frame_sizes(sr, winlen, shift)
        if not 1 <= lp_order < self.n:
            raise ConfigError(f"lp_order must be in [1, {self.n - 1}] for a {self.n}-sample window, got {lp_order}")
        self.lp_order = lp_order
        self.max_frames = max(1, int(max_frames))
        self.window = mcadams_window(self.n, self.hop)
        first = -((self.n - 1) // self.hop) * self.hop  # earliest frame start that overlaps sample 0
        self._base = first  # global index of _buf[0] and _acc[0]
        self._next = first  # start of the next frame to analyse
        self._buf = np.zeros(-first)  # input from _base on (zeros before sample 0)
        self._acc = np.zeros(0)  # overlap-add sums from _base on
        self._received = 0
        self._finished = False

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Feed samples; return the output samples that are now final (float64)."""
        if self._finished:
            raise RuntimeError("McAdamsStream: process() after flush(); start a new stream")
        chunk = np.asarray(chunk, dtype=np.float64)
        if chunk.ndim != 1:
            raise DataError(f"McAdamsStream: expected a 1-D chunk of mono samples, got shape {chunk.shape}")
        self._buf = np.concatenate([self._buf, chunk])
        self._received += chunk.size
        ready = self._received - self.n - self._next
        self._analyse(ready // self.hop + 1 if ready >= 0 else 0)
        return self._emit(self._next)

    def flush(self) -> np.ndarray:
        """Analyse the frames that reach past the end (zero-padded); return the remaining output."""
        if self._finished:
            raise RuntimeError("McAdamsStream: flush() called twice")
        self._finished = True
        left = self._received - self._next
        self._analyse((left - 1) // self.hop + 1 if left > 0 else 0)
        return self._emit(self._received)

    def _analyse(self, count: int) -> None:
        """Analyse ``count`` frames from ``_next`` on, ``max_frames`` at a time, and overlap-add them."""
        n, hop = self.n, self.hop
        phases = range(0, n, hop)
        for done in range(0, count, self.max_frames):
            batch = min(self.max_frames, count - done)
            offset = self._next - self._base
            span = (batch - 1) * hop + n
            data = self._buf[offset : offset + span]
            if data.size < span:  # flush: frames past the end see zeros
                data = np.concatenate([data, np.zeros(span - data.size)])
            synth = mcadams_frames(sliding_window_view(data, n)[::hop], self.window, self.alpha, self.lp_order)
            needed = offset + (len(phases) - 1 + batch) * hop
            if self._acc.size < needed:
                self._acc = np.concatenate([self._acc, np.zeros(needed - self._acc.size)])
            for phase in phases:
                part = synth[:, phase : phase + hop]
                lo = offset + phase
                self._acc[lo : lo + batch * hop].reshape(batch, hop)[:, : part.shape[1]] += part
            self._next += batch * hop

    def _emit(self, end: int) -> np.ndarray:
        """Return output samples ``[max(0, _base), end)`` and drop what lies before ``_next``."""
        out = self._acc[max(0, self._base) - self._base : end - self._base].copy()
        keep = self._next - self._base
        self._acc = self._acc[keep:]
        self._buf = self._buf[keep:]
        self._base = self._next
        return out


def mcadams(
    wav: np.ndarray,
    sr: int,
    alpha: float,
    *,
    winlen: float = 0.02,
    shift: float = 0.01,
    lp_order: int = 20,
    dtype: type = np.float64,
) -> np.ndarray:
    """McAdams transform of a whole signal (unnormalised), same length as ``wav``.

    Runs :class:`McAdamsStream` over blocks of the input, so working memory is
    bounded by the block, not the signal; only the output array is whole.
    """
    wav = np.asarray(wav)
    stream = McAdamsStream(alpha, sr, winlen=winlen, shift=shift, lp_order=lp_order)
    out = np.empty(wav.size, dtype=dtype)
    block = stream.max_frames * stream.hop
    pos = 0
    for start in range(0, wav.size, block):
        y = stream.process(wav[start : start + block])
        out[pos : pos + y.size] = y
        pos += y.size
    out[pos:] = stream.flush()
    return out


def normalization_gain(wav: np.ndarray, peak: float = VPC_PEAK) -> float:
    """Gain that scales ``wav``'s peak to ``peak`` (VPC's per-utterance normalisation); 1 for silence."""
    top = max(float(wav.max()), -float(wav.min())) if wav.size else 0.0  # no |wav| copy of a long signal
    return peak / top if top > 0 else 1.0
