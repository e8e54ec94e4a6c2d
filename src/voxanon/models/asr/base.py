"""The ASR interface every backend implements; backends are listed in :mod:`voxanon.models.asr`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from voxanon.audio.io import check_waveform, resample
from voxanon.errors import ModelError

#: the backend used when none is named
DEFAULT_ASR = "whisper-tiny"


class AsrError(ModelError):
    """An ASR backend that cannot be loaded or used; the message says why and what to do."""


@dataclass(frozen=True)
class WordTiming:
    """One recognised word with its start and end time in seconds."""

    word: str
    start: float
    end: float


class AsrBackend(ABC):
    """A speech recogniser.

    Attributes
    ----------
    name : stable id of the model and decoding settings (used as cache key)
    sample_rate : rate the model decodes at (inputs are resampled to it)
    """

    name: str
    sample_rate: int = 16000

    def transcribe(self, wavs: list[np.ndarray], sr: int) -> list[str]:
        """Transcribe a batch of mono float32 waveforms at rate ``sr``; one string each."""
        return self._transcribe(self._prepare(wavs, sr))

    def transcribe_with_timings(self, wavs: list[np.ndarray], sr: int) -> list[list[WordTiming]]:
        """Words with start/end times for each waveform (not every backend has them)."""
        return self._timings(self._prepare(wavs, sr))

    def _prepare(self, wavs: list[np.ndarray], sr: int) -> list[np.ndarray]:
        out = []
        for i, wav in enumerate(wavs):
            wav = np.asarray(wav, dtype=np.float32)
            check_waveform(wav, f"ASR input {i}")
            out.append(resample(wav, sr, self.sample_rate))
        return out

    @abstractmethod
    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        """Transcribe waveforms already at :attr:`sample_rate`."""

    def _timings(self, wavs: list[np.ndarray]) -> list[list[WordTiming]]:
        raise AsrError(f"ASR backend {self.name} gives no word timings")

