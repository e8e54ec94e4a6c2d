""""Listen to the Features" (VPC 2026): regenerate speech from a frozen encoder's content features.

A generator trained by ``voxanon train ltf`` (no speaker input, no reconstruction
loss: only the encoder's features of its output must match the input's) turns
the content frames back into a waveform; the information bottleneck (FVQ) and
the absence of any speaker input are what anonymize. Deterministic: the rng is
not used. Long inputs run in 20-s chunks with 1 s of context on each side, so
memory stays bounded at any duration. The shipped default (``resources/ltf/default.pt``,
trained here in the mel domain: docs/ltf.md) runs without ``model=``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from voxanon.anonymizers.base import Anonymizer, Chunking, param
from voxanon.audio.io import check_waveform
from voxanon.errors import ConfigError
from voxanon.ranges import Range

#: the shipped generator (``voxanon train ltf --output mel``; command, seed and log in docs/ltf.md)
DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "resources" / "ltf" / "default.pt"


class Ltf(Anonymizer):
    """LTF content-embedding anonymizer: encoder features -> upsampler, FVQ, bi-GRU, HiFi-GAN -> speech."""

    name = "ltf"
    sample_rate = 16000
    needs_model = True
    chunking = Chunking(seconds=20.0, overlap=1.0, fade=0.05)

    @dataclasses.dataclass(frozen=True)
    class Config:
        model: str = param("", "model.pt written by 'voxanon train ltf' (empty: the shipped default)")
        threads: int = param(0, "torch threads (0 = torch's default)", range=Range(0))

    def __init__(self, config=None, **params) -> None:
        super().__init__(config, **params)
        self._model = None

    def model_files(self) -> dict[str, Path]:
        return {"model": Path(self.config.model) if self.config.model else DEFAULT_MODEL}

    def model(self):
        """The :class:`~voxanon.models.ltf.inference.LtfModel` (loaded on first use)."""
        if self._model is None:
            path = self.config.model or DEFAULT_MODEL
            if not self.config.model and not DEFAULT_MODEL.is_file():
                raise ConfigError(f"ltf: the shipped model {DEFAULT_MODEL} is missing (a damaged install?); "
                                  "reinstall voxanon or give --param model=OUT/model.pt of 'voxanon train ltf'")
            import torch

            from voxanon.models.ltf.inference import LtfModel

            if self.config.threads > 0:
                torch.set_num_threads(self.config.threads)
            self._model = LtfModel.from_file(path)
        return self._model

    def anonymize(self, wav: np.ndarray, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
        check_waveform(wav)
        if not np.any(wav):
            return np.zeros(len(wav), dtype=np.float32), sr
        return self.model().convert(wav, sr).astype(np.float32), sr
