"""The LTF generator: content frames -> transposed-conv upsampler -> FVQ -> bi-GRU -> HiFi-GAN -> waveform.

"Listen to the Features" (VPC 2026): a frozen speech encoder's frames are
upsampled to the vocoder's 10 ms frame rate by a trainable 1-D transposed
convolution, squeezed through a one-codebook factorized VQ, contextualised by a
bidirectional GRU and vocoded by a HiFi-GAN generator, all trained so that the
encoder's features of the output match those of the input (:mod:`.loss`). The
GRU output is projected to the generator's 80 input channels, so the generator
can start from the universal HiFi-GAN (retimed to 16 kHz / 160-sample hop) or
from scratch.

With ``output="mel"`` the network stops at the projection: it emits HiFi-GAN
log-mels at 100 frames/s, trained through :class:`~.melmap.MelMap` and vocoded
at inference by the frozen universal HiFi-GAN (no waveform in the training loop).
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from voxanon.errors import ConfigError
from voxanon.models.ltf.fvq import FactorizedVQ
from voxanon.models.vocoder.hifigan import (
    PRESETS,
    Generator,
    HifiganConfig,
    retime_state,
)

VOCODER = "v1-16k"


@dataclasses.dataclass(frozen=True)
class LtfConfig:
    """Sizes of the generator. ``upsample`` = vocoder frames per content frame (2 for 20 ms content frames)."""

    content: str = "whisper-tiny:3"
    content_dim: int = 384
    upsample: int = 2
    codebook_size: int = 2048
    code_dim: int = 8
    gru_dim: int = 256
    vocoder: str = VOCODER
    #: ``waveform`` (the paper's: HiFi-GAN inside the network) or ``mel`` (log-mels for a frozen vocoder)
    output: str = "waveform"

    @classmethod
    def from_dict(cls, d: dict) -> LtfConfig:
        """Config from :func:`dataclasses.asdict` output."""
        return cls(**d)


OUTPUTS = ("waveform", "mel")


class LtfNet(nn.Module):
    """``(B, T, content_dim)`` content frames -> ``(B, T * upsample * hop)`` waveform (or ``(B, 80, T * upsample)``
    log-mels), codes, VQ loss, FVQ output."""

    def __init__(self, cfg: LtfConfig) -> None:
        super().__init__()
        self.cfg = cfg
        u, d = cfg.upsample, cfg.content_dim
        if u < 1:
            raise ConfigError(f"LTF: upsample must be >= 1, got {u}")
        if cfg.output not in OUTPUTS:
            raise ConfigError(f"LTF: output must be one of {', '.join(OUTPUTS)}, got {cfg.output!r}")
        # even u: kernel 2u, padding u/2 -> exactly T * u frames; odd u: kernel u without overlap
        self.upsampler = nn.ConvTranspose1d(d, d, 2 * u if u % 2 == 0 else u, u, padding=u // 2 if u % 2 == 0 else 0)
        self.fvq = FactorizedVQ(d, cfg.codebook_size, cfg.code_dim)
        self.gru = nn.GRU(d, cfg.gru_dim, batch_first=True, bidirectional=True)
        self.vocoder_cfg: HifiganConfig = PRESETS[cfg.vocoder]
        self.proj = nn.Linear(2 * cfg.gru_dim, self.vocoder_cfg.num_mels)
        self.vocoder = Generator(self.vocoder_cfg) if cfg.output == "waveform" else None

    @property
    def sample_rate(self) -> int:
        return self.vocoder_cfg.sampling_rate

    @property
    def samples_per_frame(self) -> int:
        """Output samples per content frame."""
        return self.cfg.upsample * self.vocoder_cfg.hop_size

    def forward(self, content: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        x = self.upsampler(content.transpose(1, 2)).transpose(1, 2)
        q, codes, vq_loss = self.fvq(x)
        h, _ = self.gru(q)
        mel = self.proj(h).transpose(1, 2)
        return (mel if self.vocoder is None else self.vocoder(mel)[:, 0]), codes, vq_loss, q

    def init_vocoder(self, checkpoint: str) -> None:
        """Load the generator from a reference HiFi-GAN V1 checkpoint (e.g. the universal one), retimed."""
        from voxanon.models.vocoder.hifigan import load_generator_state, read_generator_state

        state = retime_state(read_generator_state(checkpoint), PRESETS["v1"], self.vocoder_cfg)
        load_generator_state(self.vocoder, state, f"HiFi-GAN checkpoint {checkpoint}")


def n_params(module: nn.Module) -> int:
    """Number of parameters."""
    return sum(p.numel() for p in module.parameters())
