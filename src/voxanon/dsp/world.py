"""WORLD vocoder analysis and synthesis (pyworld), with the F0 estimator as a choice.

F0 defaults to DIO refined by StoneMask: on fully voiced
:func:`voxanon.audio.synthetic.speech_like` its error against the known contour
is far below what is audible, as is Harvest's, and it is much faster, which
keeps WORLD conversion fast. ``experiments/bench_world.py`` measures both
(numbers in docs/experiments/dsp.md, "WORLD and prosody").
Harvest stays available for noisy or creaky speech, where it is
the more robust tracker.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from voxanon.audio.io import fit_length, resample
from voxanon.errors import ConfigError

with warnings.catch_warnings():  # pyworld 0.3.x imports the deprecated pkg_resources
    warnings.simplefilter("ignore", UserWarning)
    import pyworld

F0_METHODS = ("dio", "harvest")
#: lowest rate WORLD runs at: below about 16 kHz its D4C aperiodicity reads past the
#: spectrum and is not reproducible (two runs differ in single frames), so such
#: input is upsampled to this rate for the vocoder and the output resampled back
MIN_WORLD_RATE = 16000


@dataclasses.dataclass(frozen=True, eq=False)
class WorldFeatures:
    """WORLD parameters of one utterance.

    Attributes
    ----------
    f0 : (frames,) F0 in Hz, 0 in unvoiced frames
    sp : (frames, bins) spectral envelope (power), ``bins = fft_size // 2 + 1``
    ap : (frames, bins) aperiodicity in [0, 1]
    sr : sample rate in Hz
    frame_period : frame hop in milliseconds
    n_samples : length of the analysed waveform (synthesis is cut or padded to it)
    reference_f0 : F0 track of the whole utterance when these features cover one
        chunk of it (utterance-level statistics, e.g. the source's F0 mean); None otherwise
    """

    f0: np.ndarray
    sp: np.ndarray
    ap: np.ndarray
    sr: int
    frame_period: float
    n_samples: int
    reference_f0: np.ndarray | None = None

    @property
    def utterance_f0(self) -> np.ndarray:
        """The F0 track that utterance-level statistics are taken from."""
        return self.f0 if self.reference_f0 is None else self.reference_f0

    def replace(self, **changes: np.ndarray) -> WorldFeatures:
        """A copy with some fields replaced (features are never modified in place)."""
        return dataclasses.replace(self, **changes)


def estimate_f0(
    wav: np.ndarray,
    sr: int,
    *,
    method: str = "dio",
    f0_floor: float = 60.0,
    f0_ceil: float = 600.0,
    frame_period: float = 5.0,
) -> tuple[np.ndarray, np.ndarray]:
    """F0 track (Hz, 0 = unvoiced) and frame times (s) by ``"dio"`` (+ StoneMask) or ``"harvest"``."""
    x = np.ascontiguousarray(wav, dtype=np.float64)
    if method == "dio":
        f0, times = pyworld.dio(x, sr, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=frame_period)
        return pyworld.stonemask(x, f0, times, sr), times
    if method == "harvest":
        return pyworld.harvest(x, sr, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=frame_period)
    raise ConfigError(f"unknown F0 method {method!r}; choose one of {', '.join(F0_METHODS)}")


def analyze(
    wav: np.ndarray,
    sr: int,
    *,
    f0_method: str = "dio",
    f0_floor: float = 60.0,
    f0_ceil: float = 600.0,
    frame_period: float = 5.0,
) -> WorldFeatures:
    """F0, CheapTrick spectral envelope and D4C aperiodicity of a mono waveform.

    Inputs shorter than one frame are analysed as a single frame.
    """
    x = np.ascontiguousarray(wav, dtype=np.float64)
    f0, times = estimate_f0(x, sr, method=f0_method, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=frame_period)
    sp = pyworld.cheaptrick(x, f0, times, sr, f0_floor=f0_floor)
    fft_size = 2 * (sp.shape[1] - 1)
    ap = pyworld.d4c(x, f0, times, sr, fft_size=fft_size)
    return WorldFeatures(f0=f0, sp=sp, ap=ap, sr=int(sr), frame_period=float(frame_period), n_samples=len(x))


def synthesize(features: WorldFeatures) -> np.ndarray:
    """Float32 waveform of exactly ``features.n_samples`` samples (WORLD output cut or zero-padded)."""
    y = pyworld.synthesize(
        np.ascontiguousarray(features.f0, dtype=np.float64),
        np.ascontiguousarray(features.sp, dtype=np.float64),
        np.ascontiguousarray(features.ap, dtype=np.float64),
        features.sr,
        features.frame_period,
    )
    out = np.zeros(features.n_samples, dtype=np.float32)
    n = min(len(y), features.n_samples)
    out[:n] = y[:n]
    return out


def transfer_f0(converted: np.ndarray, source: np.ndarray, sr: int, target_log_f0: float | None = None) -> np.ndarray:
    """``converted`` re-synthesised by WORLD with the source's F0 contour (both at ``sr``, run at >= 16 kHz).

    The voiced F0 is shifted (in log) to mean ``target_log_f0``; ``None`` keeps the source's own level.
    """
    n = min(len(converted), len(source))
    if sr < MIN_WORLD_RATE:
        up = transfer_f0(resample(converted[:n], sr, MIN_WORLD_RATE), resample(source[:n], sr, MIN_WORLD_RATE),
                         MIN_WORLD_RATE, target_log_f0)
        return fit_length(resample(up, MIN_WORLD_RATE, sr), n)
    feats = analyze(converted[:n], sr)
    f0, _ = estimate_f0(source[:n].astype(np.float64), sr)
    f0 = f0[: len(feats.f0)]
    f0 = np.pad(f0, (0, len(feats.f0) - len(f0)))
    voiced = f0 > 0
    if voiced.any() and target_log_f0 is not None:
        f0 = np.where(voiced, np.exp(np.log(np.where(voiced, f0, 1.0)) - np.log(f0[voiced]).mean() + target_log_f0),
                      0.0)
    return synthesize(feats.replace(f0=f0)).astype(np.float32)


def stretch(wav: np.ndarray, sr: int, n_samples: int) -> np.ndarray:
    """``wav`` played over ``n_samples`` samples at its own pitch (WORLD frames repeated or skipped; >= 16 kHz)."""
    if sr < MIN_WORLD_RATE:
        up = stretch(resample(wav, sr, MIN_WORLD_RATE), MIN_WORLD_RATE, round(n_samples * MIN_WORLD_RATE / sr))
        return fit_length(resample(up, MIN_WORLD_RATE, sr), n_samples)
    features = analyze(wav, sr)
    n_frames = max(1, int(round(n_samples / sr * 1000.0 / features.frame_period)) + 1)
    idx = np.minimum((np.arange(n_frames) * len(features.f0) / n_frames).astype(int), len(features.f0) - 1)
    return synthesize(features.replace(f0=features.f0[idx], sp=features.sp[idx], ap=features.ap[idx],
                                       n_samples=n_samples))
