"""The emotion-recognizer interface; recognizers are listed in :mod:`voxanon.models.ser`."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from voxanon.data.iemocap import EMOTIONS
from voxanon.errors import ModelError


class SERError(ModelError):
    """An SER model that cannot be loaded or used; the message says why."""


def length_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


class EmotionRecognizer(ABC):
    """Predicts one of its :attr:`labels` per utterance (SER classes, :data:`voxanon.data.iemocap.CLASSES`)."""

    name: str
    labels: tuple[str, ...] = EMOTIONS

    @abstractmethod
    def predict_proba(self, wavs: list[np.ndarray], sr: int, *, batch_size: int = 16) -> np.ndarray:
        """Class probabilities, shape ``(len(wavs), len(labels))``, columns in :attr:`labels` order."""

    def predict(self, wavs: list[np.ndarray], sr: int, *, batch_size: int = 16) -> list[str]:
        """The most probable class of each utterance."""
        if not wavs:
            return []
        proba = self.predict_proba(wavs, sr, batch_size=batch_size)
        return [self.labels[i] for i in proba.argmax(axis=1)]
