"""Source features of the acoustic model at the vocoder's frame times: content frames and F3-VA pitch."""

from __future__ import annotations

import dataclasses

import numpy as np

from voxanon.audio.io import resample
from voxanon.dsp.frames import interpolate_frames, relative_pitch
from voxanon.dsp.world import estimate_f0

#: WORLD F0 frame period (ms) of the pitch features
F0_PERIOD_MS = 5.0


@dataclasses.dataclass(frozen=True, eq=False)
class SourceFeatures:
    """What the acoustic model reads of one utterance: ``content`` (T, D) and ``pitch`` (T, 2), float32."""

    content: np.ndarray
    pitch: np.ndarray

    @property
    def n_frames(self) -> int:
        """Number of output (vocoder) frames."""
        return len(self.content)


def n_vocoder_frames(n_samples: int, sr: int, rate: int, hop: int) -> int:
    """Frames the vocoder's front-end gives for ``n_samples`` at ``sr`` once resampled to ``rate``."""
    return max(int(round(n_samples * rate / sr)), hop) // hop


def content_frames(wav: np.ndarray, sr: int, encoder, n_frames: int, frame_rate: float) -> np.ndarray:
    """``(n_frames, D)`` content-encoder features interpolated onto frames of ``frame_rate`` Hz."""
    feats = encoder.encode(np.asarray(wav, dtype=np.float32), sr)
    return interpolate_frames(feats, encoder.frame_rate, n_frames, frame_rate).astype(np.float32)


def pitch_frames(wav: np.ndarray, sr: int, n_frames: int, frame_rate: float) -> np.ndarray:
    """``(n_frames, 2)`` F3-VA pitch (DIO + StoneMask F0) on frames of ``frame_rate`` Hz."""
    f0, _ = estimate_f0(np.asarray(wav, dtype=np.float64), sr, frame_period=F0_PERIOD_MS)
    return relative_pitch(f0, 1000.0 / F0_PERIOD_MS, n_frames, frame_rate)


def source_features(wav: np.ndarray, sr: int, encoder, *, rate: int = 22050, hop: int = 256) -> SourceFeatures:
    """Content (``encoder``) and pitch of ``wav`` at the frame times of a vocoder of ``rate``/``hop``."""
    wav = np.asarray(wav, dtype=np.float32)
    n = n_vocoder_frames(len(wav), sr, rate, hop)
    wav16 = resample(wav, sr, 16000)
    return SourceFeatures(content_frames(wav16, 16000, encoder, n, rate / hop), pitch_frames(wav16, 16000, n, rate / hop))


def normalize_content(content: np.ndarray) -> np.ndarray:
    """Per-utterance mean/variance normalisation of ``(T, D)`` content over time."""
    content = np.asarray(content, dtype=np.float32)
    return (content - content.mean(0)) / (content.std(0) + 1e-5)
