"""Recording conditions: what a telephone line, a noisy room or a reverberant room does to speech.

Pure signal functions (numpy/scipy; pyroomacoustics, imported when a room is
simulated), each mapping a mono float waveform in [-1, 1] to one of the same
length and rate:

* :func:`telephone`: a 300-3400 Hz band-pass, 8 kHz, a narrow-band codec and
  back to the input's rate. Codecs: ``mulaw`` (ITU-T G.711 mu-law, 64 kbit/s,
  the segmented 8-bit code of :func:`mulaw_encode` / :func:`mulaw_decode`,
  written here) and ``gsm`` (GSM 06.10 full rate, 13 kbit/s, libsndfile's
  codec through soundfile, in memory).
* :func:`add_noise`: pink (1/f) noise at a speech-active SNR: speech power is
  measured over the frames where speech is active (:func:`active_frames`), so
  pauses do not dilute it.
* :func:`reverberate`: convolution with a room impulse response simulated by
  the image-source method (:func:`room_impulse_response`) for a shoebox room
  whose wall absorption gives the asked RT60 by Sabine's formula.

:class:`Condition` names one of these with its settings (``telephone``,
``telephone-gsm``, ``noise10``, ``reverb600``; :func:`parse_condition`) and
applies it with a generator the caller derives per utterance, so the result is
fixed by (seed, utterance id).

Levels: no function clips. When a result would exceed full scale, the whole
utterance is scaled down to a peak of :data:`PEAK` (one gain per utterance, not a
limiter; the noise and the speech together, so the SNR holds); every function
returns that gain beside the signal (1.0: untouched). Empty input gives empty
output; silent input (no frame above :data:`SILENCE_DB`) stays silent under
noise, since a speech-relative SNR has no reference there; short inputs are
processed as they are.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from math import gcd

import numpy as np
from scipy import signal

from voxanon.errors import ConfigError

#: peak a result is scaled down to when it would exceed full scale
PEAK = 0.99
#: frames of :func:`active_frames` (seconds)
FRAME_SECONDS = 0.02
#: a frame is active when its power is within this many dB of the loudest frame's
ACTIVE_RANGE_DB = 40.0
#: below this frame power (dB full scale) a frame is silence whatever the loudest one
SILENCE_DB = -80.0

TELEPHONE_RATE = 8000
#: the telephone band (Hz), ITU-T G.712's nominal 300-3400 Hz
TELEPHONE_BAND = (300.0, 3400.0)
CODECS = ("mulaw", "gsm")

#: rooms simulated per RT60; each utterance draws one (:meth:`Condition.apply`)
ROOMS_PER_RT60 = 16
SPEED_OF_SOUND = 343.0


def fit_full_scale(y: np.ndarray) -> tuple[np.ndarray, float]:
    """``y`` scaled to a peak of :data:`PEAK` when it exceeds it, and the gain applied (1.0: untouched)."""
    y = np.asarray(y, dtype=np.float32)
    peak = float(np.max(np.abs(y))) if y.size else 0.0
    if peak <= PEAK:
        return y, 1.0
    gain = PEAK / peak
    return (y * gain).astype(np.float32), gain


# -- G.711 mu-law ------------------------------------------------------------------------------------
_BIAS, _CLIP = 0x84, 32635


def mulaw_encode(x: np.ndarray) -> np.ndarray:
    """G.711 mu-law codes (uint8) of ``x`` in [-1, 1] (full scale = 16-bit linear 32768).

    The segmented code of ITU-T G.711: the 14-bit magnitude plus a bias of 132
    falls in one of 8 segments (the position of its highest bit); a code holds
    the sign, the segment (3 bits) and 4 mantissa bits below the highest bit,
    all inverted. Magnitudes above 32635 saturate, as in the standard.
    """
    pcm = np.round(np.clip(np.asarray(x, dtype=np.float64), -1.0, 1.0) * 32768.0).astype(np.int64)
    sign = np.where(pcm < 0, 0x80, 0)
    mag = np.minimum(np.abs(pcm), _CLIP) + _BIAS  # in [132, 32767]
    segment = np.floor(np.log2(mag)).astype(np.int64) - 7  # highest bit 7..14 -> segment 0..7
    mantissa = (mag >> (segment + 3)) & 0x0F
    return (~(sign | (segment << 4) | mantissa) & 0xFF).astype(np.uint8)


def mulaw_decode(codes: np.ndarray) -> np.ndarray:
    """Linear samples (float32 in [-1, 1]) of G.711 mu-law ``codes``: each code's interval centre."""
    c = ~np.asarray(codes, dtype=np.int64) & 0xFF
    segment, mantissa = (c >> 4) & 0x07, c & 0x0F
    mag = (((mantissa << 3) + _BIAS) << segment) - _BIAS
    return (np.where(c & 0x80, -mag, mag) / 32768.0).astype(np.float32)


def _gsm_round_trip(x8: np.ndarray) -> np.ndarray:
    """GSM 06.10 full-rate encode and decode at 8 kHz (libsndfile's codec), same length."""
    import soundfile as sf

    buf = io.BytesIO()
    with sf.SoundFile(buf, "w", samplerate=TELEPHONE_RATE, channels=1, format="WAV", subtype="GSM610") as f:
        f.write(x8)
    buf.seek(0)
    decoded, _ = sf.read(buf, dtype="float32")
    out = np.zeros(len(x8), dtype=np.float32)
    out[: min(len(x8), len(decoded))] = decoded[: len(x8)]
    return out


def _resample(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    if sr_in == sr_out:
        return np.asarray(x, dtype=np.float32)
    g = gcd(sr_in, sr_out)
    up, down = sr_out // g, sr_in // g
    # a Kaiser-windowed low-pass at the filtering rate, 150 Hz under the lower Nyquist frequency, about 300 Hz
    # wide: images and aliases about 80 dB down (resample_poly's own short filter leaves -30 dB near 4 kHz)
    rate = sr_in * up
    cutoff = min(sr_in, sr_out) / 2 - 150
    h = signal.firwin((rate // 40) | 1, cutoff, window=("kaiser", 8.0), fs=rate)
    return signal.resample_poly(np.asarray(x, dtype=np.float64), up, down, window=h).astype(np.float32)


def band_limit(x: np.ndarray, sr: int, band: tuple[float, float] = TELEPHONE_BAND) -> np.ndarray:
    """A causal 8th-order Butterworth band-pass (a line's filter is causal too)."""
    if not 0 < band[0] < band[1] < sr / 2:
        raise ConfigError(f"band {band} Hz does not fit under the Nyquist frequency of {sr} Hz")
    sos = signal.butter(4, band, btype="bandpass", fs=sr, output="sos")
    return signal.sosfilt(sos, np.asarray(x, dtype=np.float64)).astype(np.float32)


def telephone(x: np.ndarray, sr: int, codec: str = "mulaw") -> tuple[np.ndarray, float]:
    """``x`` through a narrow-band telephone channel, back at ``sr``: (signal, full-scale gain).

    Band-pass 300-3400 Hz at ``sr``, resampled to 8 kHz, scaled down when it
    would exceed the codec's full scale (the gain), ``codec`` (``mulaw``: G.711;
    ``gsm``: GSM 06.10 full rate) encoded and decoded, resampled back to ``sr``
    (nothing above 4 kHz survives) and cut or zero-padded to the input's length.
    """
    if codec not in CODECS:
        raise ConfigError(f"telephone codec {codec!r} is not one of {', '.join(CODECS)}")
    if sr < TELEPHONE_RATE:
        raise ConfigError(f"telephone needs input at {TELEPHONE_RATE} Hz or more, got {sr} Hz")
    x = np.asarray(x, dtype=np.float32)
    if x.size == 0:
        return x.copy(), 1.0
    x8, gain = fit_full_scale(_resample(band_limit(x, sr), sr, TELEPHONE_RATE))
    y8 = mulaw_decode(mulaw_encode(x8)) if codec == "mulaw" else _gsm_round_trip(x8)
    y = _resample(y8, TELEPHONE_RATE, sr)
    out = np.zeros(len(x), dtype=np.float32)
    out[: min(len(x), len(y))] = y[: len(x)]
    y, gain2 = fit_full_scale(out)  # resampling can overshoot a peak slightly
    return y, gain * gain2


# -- noise ---------------------------------------------------------------------------------------------
def active_frames(x: np.ndarray, sr: int) -> tuple[np.ndarray, int]:
    """Which frames of ``x`` hold active speech, and the frame length in samples.

    Frames of :data:`FRAME_SECONDS` (the last one may be shorter); a frame is active
    when its mean power is within :data:`ACTIVE_RANGE_DB` of the loudest frame's and
    above :data:`SILENCE_DB` (dB re full scale). A simple active-level meter in the
    spirit of ITU-T P.56, without its hangover.
    """
    frame = max(1, round(FRAME_SECONDS * sr))
    x = np.asarray(x, dtype=np.float64)
    n = -(-len(x) // frame)
    padded = np.zeros(n * frame)
    padded[: len(x)] = np.square(x)
    counts = np.full(n, frame, dtype=np.float64)
    if n and len(x) % frame:
        counts[-1] = len(x) % frame
    power = padded.reshape(n, frame).sum(axis=1) / np.maximum(counts, 1)
    if not n or power.max() <= 10 ** (SILENCE_DB / 10):
        return np.zeros(n, dtype=bool), frame
    floor = max(power.max() * 10 ** (-ACTIVE_RANGE_DB / 10), 10 ** (SILENCE_DB / 10))
    return power > floor, frame


def active_mask(x: np.ndarray, sr: int) -> np.ndarray:
    """Per sample: whether it lies in an active frame (:func:`active_frames`)."""
    frames, frame = active_frames(x, sr)
    return np.repeat(frames, frame)[: len(x)]


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of pink (1/f power) Gaussian noise of unit mean power."""
    if n == 0:
        return np.zeros(0, dtype=np.float32)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spectrum), dtype=np.float64)
    spectrum[1:] /= np.sqrt(f[1:])
    spectrum[0] = 0.0
    noise = np.fft.irfft(spectrum, n)
    power = np.mean(np.square(noise))
    if power <= 0:  # one sample (or two): no spectrum to shape, white noise instead
        noise = rng.standard_normal(n)
        power = np.mean(np.square(noise))
    return (noise / np.sqrt(power)).astype(np.float32)


def add_noise(x: np.ndarray, sr: int, snr_db: float, rng: np.random.Generator,
              noise: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """``x`` plus noise at a speech-active SNR of ``snr_db``: (signal, full-scale gain).

    The noise (``noise``, as long as ``x``, or pink noise drawn from ``rng``) is
    scaled so that its power over the active samples of ``x``
    (:func:`active_mask`) is the speech's power there less ``snr_db``. Silent
    input (no active frame) is returned unchanged: the SNR has no reference.
    """
    x = np.asarray(x, dtype=np.float32)
    mask = active_mask(x, sr)
    if not mask.any():
        return x.copy(), 1.0
    if noise is None:
        noise = pink_noise(len(x), rng)
    elif len(noise) != len(x):
        raise ConfigError(f"noise has {len(noise)} samples for a signal of {len(x)}")
    noise = np.asarray(noise, dtype=np.float64)
    noise_power = np.mean(np.square(noise[mask]))
    if noise_power <= 0:
        raise ConfigError("the noise is silent where the speech is active")
    speech_power = np.mean(np.square(x[mask].astype(np.float64)))
    scale = np.sqrt(speech_power / noise_power / 10 ** (snr_db / 10))
    return fit_full_scale(x + scale * noise)


def speech_active_snr(clean: np.ndarray, noisy: np.ndarray, sr: int) -> float:
    """The SNR (dB) of ``noisy`` against ``clean`` over the active samples of ``clean`` (a measure)."""
    mask = active_mask(clean, sr)
    if not mask.any():
        raise ConfigError("the clean signal has no active speech: its SNR is undefined")
    clean64, noisy64 = np.asarray(clean, np.float64)[mask], np.asarray(noisy, np.float64)[mask]
    gain = np.dot(noisy64, clean64) / np.dot(clean64, clean64)  # undo a full-scale gain
    residual = noisy64 - gain * clean64
    return float(10 * np.log10(np.mean(np.square(gain * clean64)) / np.mean(np.square(residual))))


# -- reverberation -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Room:
    """A shoebox room (metres), where the talker and the microphone stand, and the RT60 (s) it is built for."""

    size: tuple[float, float, float]
    source: tuple[float, float, float]
    mic: tuple[float, float, float]
    rt60: float


def draw_room(rt60: float, rng: np.random.Generator) -> Room:
    """A room of 3-8 x 3-6 x 2.5-3.5 m with the talker and the microphone 1-3 m apart, 0.5 m or more from walls."""
    if not 0.05 <= rt60 <= 3.0:
        raise ConfigError(f"RT60 must be within 0.05-3.0 s, got {rt60}")
    size = (float(rng.uniform(3, 8)), float(rng.uniform(3, 6)), float(rng.uniform(2.5, 3.5)))
    while True:
        source = tuple(float(rng.uniform(0.5, d - 0.5)) for d in size[:2]) + (float(rng.uniform(1.2, 1.8)),)
        mic = tuple(float(rng.uniform(0.5, d - 0.5)) for d in size[:2]) + (float(rng.uniform(0.8, 1.6)),)
        if 1.0 <= float(np.linalg.norm(np.subtract(source, mic))) <= 3.0:
            return Room(size, source, mic, rt60)


def room_impulse_response(room: Room, sr: int) -> np.ndarray:
    """The room's impulse response at ``sr`` by the image-source method (pyroomacoustics).

    Wall absorption and reflection order come from Sabine's formula for the
    room's RT60 (``pyroomacoustics.inverse_sabine``); with image sources only, the
    measured decay runs somewhat longer than the target (:func:`measured_rt60`).
    """
    try:
        import pyroomacoustics as pra
    except ImportError:
        raise ConfigError("reverberation needs pyroomacoustics: pip install 'voxanon[conditions]' "
                          "(tools/setup.sh installs it)") from None
    absorption, order = pra.inverse_sabine(room.rt60, list(room.size))
    sim = pra.ShoeBox(list(room.size), fs=sr, materials=pra.Material(absorption), max_order=order)
    sim.add_source(list(room.source))
    sim.add_microphone(list(room.mic))
    sim.compute_rir()
    return np.asarray(sim.rir[0][0], dtype=np.float32)


def measured_rt60(rir: np.ndarray, sr: int) -> float:
    """RT60 (s) of an impulse response by Schroeder integration, extrapolated from the -5 to -25 dB decay."""
    energy = np.cumsum(np.square(np.asarray(rir, np.float64))[::-1])[::-1]
    edc = 10 * np.log10(energy / energy[0] + 1e-30)
    t5, t25 = int(np.argmax(edc <= -5)), int(np.argmax(edc <= -25))
    return 3.0 * (t25 - t5) / sr


def pooled_room(rt60: float, index: int) -> Room:
    """Room ``index`` of the fixed set of :data:`ROOMS_PER_RT60` rooms built for ``rt60`` (seeded by sha256)."""
    digest = hashlib.sha256(f"voxanon-room/{rt60:.3f}/{index}".encode("utf-8")).digest()
    return draw_room(rt60, np.random.default_rng(np.frombuffer(digest, dtype=np.uint64)))


@lru_cache(maxsize=64)
def _pooled_rir(rt60: float, index: int, sr: int) -> np.ndarray:
    rir = room_impulse_response(pooled_room(rt60, index), sr)
    rir.setflags(write=False)  # shared between utterances
    return rir


def reverberate(x: np.ndarray, sr: int, rir: np.ndarray) -> tuple[np.ndarray, float]:
    """``x`` convolved with ``rir``, cut to its length, at its active level: (signal, full-scale gain).

    The reverberant signal is scaled to the input's active-speech power (the room
    changes the sound, not the loudness; the direct sound arrives after the
    talker-microphone distance's few milliseconds, as in a room) and the tail past
    the input's end is cut. Silent or empty input stays as it is.
    """
    x = np.asarray(x, dtype=np.float32)
    mask = active_mask(x, sr)
    if not mask.any():
        return x.copy(), 1.0
    y = signal.fftconvolve(x.astype(np.float64), np.asarray(rir, np.float64))[: len(x)]
    power_y = np.mean(np.square(y[mask]))
    if power_y > 0:
        y *= np.sqrt(np.mean(np.square(x[mask].astype(np.float64))) / power_y)
    return fit_full_scale(y)


# -- named conditions ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Condition:
    """One recording condition by name, with its settings: ``kind`` is ``telephone``, ``noise`` or ``reverb``."""

    name: str
    kind: str
    codec: str | None = None
    snr_db: float | None = None
    rt60: float | None = None

    def describe(self) -> str:
        """One line for tables and the report."""
        if self.kind == "telephone":
            codec = {"mulaw": "G.711 mu-law", "gsm": "GSM 06.10 full rate"}[self.codec or "mulaw"]
            return f"telephone: 300-3400 Hz, 8 kHz, {codec}"
        if self.kind == "noise":
            return f"pink noise at {self.snr_db:g} dB speech-active SNR"
        return f"simulated room, RT60 {self.rt60:g} s (one of {ROOMS_PER_RT60} shoebox rooms per utterance)"

    def settings(self) -> dict:
        """JSON-serialisable settings (name, kind and the parameters that apply)."""
        return {k: v for k, v in (("name", self.name), ("kind", self.kind), ("codec", self.codec),
                                  ("snr_db", self.snr_db), ("rt60", self.rt60)) if v is not None}

    def check(self) -> None:
        """Raise ConfigError when what this condition needs is not installed (before any work starts)."""
        import importlib.util

        if self.kind == "reverb" and importlib.util.find_spec("pyroomacoustics") is None:
            raise ConfigError(f"{self.name} needs pyroomacoustics: pip install 'voxanon[conditions]' "
                              "(tools/setup.sh installs it)")

    def apply(self, x: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, float, dict]:
        """``x`` under this condition: (signal, full-scale gain, what was drawn: the room, JSON-serialisable).

        ``rng`` is the utterance's generator (the caller derives it from the seed and
        the utterance id); the reverb condition draws its room from it.
        """
        if self.kind == "telephone":
            return (*telephone(x, sr, self.codec or "mulaw"), {})
        if self.kind == "noise":
            return (*add_noise(x, sr, float(self.snr_db), rng), {})
        index = int(rng.integers(ROOMS_PER_RT60))
        return (*reverberate(x, sr, _pooled_rir(float(self.rt60), index, sr)), {"room": index})


#: conditions by name, as ``--conditions`` takes them (``noise<dB>`` and ``reverb<ms>`` take other values too)
PRESETS = ("telephone", "telephone-gsm", "noise20", "noise10", "noise5", "reverb300", "reverb600", "reverb900")
_PATTERN = re.compile(r"^(?:(telephone)(?:-(gsm|mulaw))?|noise(-?\d+(?:\.\d+)?)|(reverb)(\d+)?)$")


def parse_condition(name: str) -> Condition:
    """The condition named ``name``: ``telephone`` (G.711 mu-law), ``telephone-gsm``, ``noise<SNR dB>``
    (``noise10``), ``reverb<RT60 ms>`` (``reverb600``; ``reverb`` alone is ``reverb600``)."""
    m = _PATTERN.match(name.strip())
    if not m:
        raise ConfigError(f"unknown recording condition {name!r}: use telephone, telephone-gsm, noise<SNR dB> "
                          f"(e.g. noise10) or reverb<RT60 ms> (e.g. reverb600); presets: {', '.join(PRESETS)}")
    if m.group(1):
        codec = m.group(2) or "mulaw"
        return Condition("telephone" if codec == "mulaw" else "telephone-gsm", "telephone", codec=codec)
    if m.group(3) is not None:
        snr = float(m.group(3))
        if not -20 <= snr <= 60:
            raise ConfigError(f"{name}: the SNR must be within -20 to 60 dB")
        return Condition(f"noise{snr:g}", "noise", snr_db=snr)
    ms = int(m.group(5) or 600)
    if not 50 <= ms <= 3000:
        raise ConfigError(f"{name}: the RT60 must be within 50-3000 ms")
    return Condition(f"reverb{ms}", "reverb", rt60=ms / 1000)
