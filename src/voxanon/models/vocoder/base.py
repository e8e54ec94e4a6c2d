"""The vocoder interface: ``analyze(wav, sr) -> features`` and ``synthesize(features) -> wav``.

A vocoder's features are what its synthesizer consumes (log-mels for HiFi-GAN,
F0 + envelope + aperiodicity for WORLD); anonymizers transform them in between.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from voxanon.errors import ModelError


class VocoderError(ModelError):
    """A vocoder checkpoint that is missing, of the wrong layout or unusable; names the key at fault."""


class Vocoder(ABC):
    """A waveform synthesizer with its own analysis front-end.

    Attributes
    ----------
    name : identifies the weights and settings (used in cache keys and results)
    sample_rate : rate of the waveforms it analyses and synthesizes
    hop_length : samples per feature frame
    """

    name: str
    sample_rate: int
    hop_length: int

    @abstractmethod
    def analyze(self, wav: np.ndarray, sr: int) -> Any:
        """Features of a mono float waveform (resampled to :attr:`sample_rate` first when needed)."""

    @abstractmethod
    def synthesize(self, features: Any) -> np.ndarray:
        """Mono float32 waveform at :attr:`sample_rate` from features."""
