"""The speaker-encoder interface; encoders are listed in :mod:`voxanon.models.speaker`."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

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


