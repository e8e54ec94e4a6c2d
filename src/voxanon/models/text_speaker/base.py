"""The text speaker-encoder interface; encoders are listed in :mod:`voxanon.models.text_speaker`."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from voxanon.errors import ModelError


class TextEncoderError(ModelError):
    """A text speaker encoder that cannot be built or trained: bad spec, missing or corrupt file, too little data."""


class TextSpeakerEncoder(ABC):
    """Maps transcripts to fixed-size speaker embeddings (who is talking, judged from what is said).

    Attributes
    ----------
    name : str
        Stable id including a digest of the model's parameters.
    dim : int
        Embedding size.
    """

    name: str
    dim: int

    @abstractmethod
    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch of transcripts; returns ``(N, dim)`` float32 (an empty text is a valid input)."""
