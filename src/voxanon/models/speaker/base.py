"""The speaker-encoder interface; encoders are listed in :mod:`voxanon.models.speaker`."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from voxanon.audio.io import check_waveform, resample
from voxanon.digest import file_digest  # noqa: F401  (re-exported: encoders name themselves by it)
from voxanon.errors import ModelError


class EncoderError(ModelError):
    """A speaker encoder that cannot be built: bad spec, missing or corrupt checkpoint."""


class SpeakerEncoder(ABC):
    """Maps waveforms to fixed-size speaker embeddings.

    Attributes
    ----------
    name : str
        Stable id including a hash of the weights; embedding caches are keyed by it.
    sample_rate : int
        Rate the model works at; :meth:`embed` resamples other rates.
    dim : int
        Embedding size.
    """

    name: str
    sample_rate: int
    dim: int

    @abstractmethod
    def embed(self, wavs: list[np.ndarray], sr: int) -> np.ndarray:
        """Embed a batch of mono float waveforms at rate ``sr``; returns ``(N, dim)`` float32."""




class BatchedEncoder(SpeakerEncoder):
    """:meth:`embed` for encoders that run zero-padded batches of 16 kHz-like signals.

    Waveforms are checked, resampled to :attr:`sample_rate`, sorted by length and
    embedded in batches of at most ``max_batch_seconds`` of padded audio by
    :meth:`embed_padded`, which subclasses implement.
    """

    max_batch_seconds: float = 120.0

    def embed(self, wavs: list[np.ndarray], sr: int) -> np.ndarray:
        """Embed waveforms (any rate; resampled); returns ``(N, dim)`` float32."""
        sigs = []
        for i, w in enumerate(wavs):
            check_waveform(np.asarray(w), f"utterance {i} of the batch")
            sigs.append(resample(np.asarray(w, dtype=np.float32), sr, self.sample_rate))
        out = np.zeros((len(sigs), self.dim), dtype=np.float32)
        order = sorted(range(len(sigs)), key=lambda i: len(sigs[i]))
        budget = int(self.max_batch_seconds * self.sample_rate)
        start = 0
        while start < len(order):
            longest, end = len(sigs[order[start]]), start + 1
            while end < len(order) and len(sigs[order[end]]) * (end - start + 1) <= max(budget, longest):
                end += 1
            idx = order[start:end]
            out[idx] = self.embed_padded([sigs[i] for i in idx])
            start = end
        return out

    @abstractmethod
    def embed_padded(self, sigs: list[np.ndarray]) -> np.ndarray:
        """``(len(sigs), dim)`` embeddings of signals at :attr:`sample_rate`, run as one padded batch."""
