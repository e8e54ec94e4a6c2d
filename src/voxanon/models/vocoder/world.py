"""WORLD as the non-neural vocoder back-end (features: :class:`voxanon.dsp.world.WorldFeatures`)."""

from __future__ import annotations

import numpy as np

from voxanon.audio.io import resample
from voxanon.dsp.world import WorldFeatures, analyze, synthesize
from voxanon.models.vocoder.base import Vocoder


class WorldVocoder(Vocoder):
    """WORLD analysis (DIO + StoneMask, CheapTrick, D4C) and synthesis at a fixed rate."""

    def __init__(self, sample_rate: int = 16000, frame_period: float = 5.0, f0_method: str = "dio") -> None:
        self.sample_rate = sample_rate
        self.frame_period = frame_period
        self.f0_method = f0_method
        self.hop_length = int(round(sample_rate * frame_period / 1000))
        self.name = f"world-{sample_rate}-{frame_period:g}ms-{f0_method}"

    def analyze(self, wav: np.ndarray, sr: int) -> WorldFeatures:
        wav = resample(np.asarray(wav, dtype=np.float32), sr, self.sample_rate)
        return analyze(wav, self.sample_rate, f0_method=self.f0_method, frame_period=self.frame_period)

    def synthesize(self, features: WorldFeatures) -> np.ndarray:
        return synthesize(features).astype(np.float32)
