"""Speaker encoders behind one interface, and ``load_encoder(spec)``.

Specs
-----
``ge2e``
    The GE2E LSTM whose weights ship inside the ``resemblyzer`` wheel (offline).
``ecapa:<checkpoint.pt>``
    An ECAPA-TDNN trained with ``voxanon attacker train``.
``speechbrain:<embedding_model.ckpt>``
    speechbrain's ``spkrec-ecapa-voxceleb`` embedding model, without speechbrain.
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod

import numpy as np


class EncoderError(Exception):
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


def file_digest(path: str | os.PathLike, n_hex: int = 12) -> str:
    """First ``n_hex`` hex digits of the SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:n_hex]


def load_encoder(spec: str, device: str = "cpu") -> SpeakerEncoder:
    """Build the encoder named by ``spec`` (see the module docstring) on ``device``."""
    kind, _, arg = spec.partition(":")
    if kind == "ge2e" and not arg:
        from voxanon.models.ge2e import GE2EEncoder

        return GE2EEncoder(device=device)
    if kind in ("ecapa", "speechbrain") and arg:
        if not os.path.isfile(arg):
            raise EncoderError(f"{kind} checkpoint not found: {arg}")
        if kind == "ecapa":
            from voxanon.models.ecapa import load_ecapa_checkpoint

            return load_ecapa_checkpoint(arg, device=device)
        from voxanon.models.speechbrain_ecapa import load_speechbrain_ecapa

        return load_speechbrain_ecapa(arg, device=device)
    raise EncoderError(
        f"unknown speaker encoder spec {spec!r}: use 'ge2e', 'ecapa:<checkpoint.pt>' "
        "or 'speechbrain:<embedding_model.ckpt>'"
    )
