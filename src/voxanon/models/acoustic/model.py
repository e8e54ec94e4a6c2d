"""The acoustic network: content frames + normalised pitch + a speaker embedding -> vocoder log-mels.

A stack of residual dilated 1-D convolution blocks, each FiLM-conditioned
(per-channel scale and shift) on the speaker embedding, between an input
projection (content + pitch) and an output projection to the mel bins.
Options (VPC B5/B6, ``voxanon train asrbn``): the content is vector-quantised
with a fixed codebook first (``codebook_size``), and the speaker is an index into
a learned table of the training speakers (``n_speakers``) instead of an embedding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import torch
from torch import nn

from voxanon.errors import ConfigError
from voxanon.models.acoustic.vq import VectorQuantizer


class NetConfig:
    """Base of the network configs: reading one back from its saved dict."""

    @classmethod
    def from_dict(cls, d: Mapping):
        """The config saved by :func:`dataclasses.asdict` (lists back to tuples; unknown keys rejected)."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - fields)
        if unknown:
            raise ConfigError(f"unknown {cls.__name__} key(s): {', '.join(unknown)}")
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})


@dataclasses.dataclass(frozen=True)
class AcousticConfig(NetConfig):
    """Sizes of :class:`AcousticNet` and how its inputs are prepared.

    Attributes
    ----------
    content_dim, speaker_dim, n_mels : input and output sizes
    channels : width of the residual stack
    kernel : convolution kernel (frames)
    dilations : one residual block per entry
    content_norm : normalise content features per utterance (zero mean, unit variance per dimension over
        time) before the network; removes the utterance's constant (speaker/channel) offset
    codebook_size : > 0: quantise the (normalised) content to the nearest of this many codewords
    bottleneck_dim : > 0 (with ``codebook_size``): the codewords live in a space of this many dimensions that the
        content is projected to first (a bottleneck learnt inside a recogniser, ``voxanon train bottleneck``);
        0: they are content frames (a k-means codebook)
    n_speakers : > 0: the speaker input is an index into a learned table of this many ``speaker_dim`` rows
    """

    content_dim: int = 384
    speaker_dim: int = 256
    n_mels: int = 80
    channels: int = 192
    kernel: int = 5
    dilations: tuple[int, ...] = (1, 2, 4, 8, 1, 2, 4, 8)
    content_norm: bool = True
    codebook_size: int = 0
    bottleneck_dim: int = 0
    n_speakers: int = 0

    def __post_init__(self) -> None:
        if self.bottleneck_dim and not self.codebook_size:
            raise ConfigError("bottleneck_dim needs a codebook (codebook_size > 0): it is the codewords' space")


class FilmBlock(nn.Module):
    """Dilated conv -> LayerNorm -> speaker FiLM -> GELU -> 1x1 conv, added to the input."""

    def __init__(self, channels: int, kernel: int, dilation: int, speaker_dim: int) -> None:
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2)
        self.norm = nn.LayerNorm(channels)
        self.film = nn.Linear(speaker_dim, 2 * channels)
        self.out = nn.Conv1d(channels, channels, 1)
        nn.init.zeros_(self.film.weight)
        nn.init.zeros_(self.film.bias)

    def forward(self, x: torch.Tensor, speaker: torch.Tensor) -> torch.Tensor:
        """``x`` (B, C, T), ``speaker`` (B, S) -> (B, C, T)."""
        h = self.norm(self.conv(x).transpose(1, 2))
        scale, shift = self.film(speaker).unsqueeze(1).chunk(2, dim=-1)
        h = nn.functional.gelu(h * (1 + scale) + shift).transpose(1, 2)
        return x + self.out(h)


class AcousticNet(nn.Module):
    """``(content (B, T, D), pitch (B, T, 2), speaker) -> (B, T, n_mels)`` log-mels.

    ``speaker`` is an embedding ``(B, S)``, or with ``cfg.n_speakers`` an int64 ``(B,)`` index into the table.
    """

    #: architecture name in model files (see :mod:`voxanon.models.acoustic.networks`)
    kind = "conv"
    #: name of the training loss (``train_l1`` in the training log)
    loss_name = "l1"

    def __init__(self, cfg: AcousticConfig) -> None:
        super().__init__()
        self.cfg = cfg
        code_dim = cfg.bottleneck_dim or cfg.content_dim
        self.vq = VectorQuantizer(cfg.codebook_size, code_dim, cfg.content_dim if cfg.bottleneck_dim else 0) \
            if cfg.codebook_size else None
        self.speakers = nn.Embedding(cfg.n_speakers, cfg.speaker_dim) if cfg.n_speakers else None
        self.content_in = nn.Linear(code_dim, cfg.channels)
        self.pitch_in = nn.Linear(2, cfg.channels)
        self.blocks = nn.ModuleList(FilmBlock(cfg.channels, cfg.kernel, d, cfg.speaker_dim) for d in cfg.dilations)
        self.norm = nn.LayerNorm(cfg.channels)
        self.mel_out = nn.Linear(cfg.channels, cfg.n_mels)

    def forward(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor) -> torch.Tensor:
        if self.vq is not None:
            content = self.vq(content)[0]
        if self.speakers is not None:
            speaker = self.speakers(speaker)
        x = (self.content_in(content) + self.pitch_in(pitch)).transpose(1, 2)
        for block in self.blocks:
            x = block(x, speaker)
        return self.mel_out(self.norm(x.transpose(1, 2)))

    def loss(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor,
             mel: torch.Tensor) -> torch.Tensor:
        """Training loss: mean L1 between the predicted and the target log-mels ``(B, T, n_mels)``."""
        return (self(content, pitch, speaker) - mel).abs().mean()

    def generate(self, content: torch.Tensor, pitch: torch.Tensor, speaker: torch.Tensor,
                 sampling=None) -> torch.Tensor:
        """The log-mels of the inputs; the network is deterministic, so ``sampling`` must be None."""
        if sampling is not None:
            raise ConfigError("the conv acoustic model is deterministic: it takes no sampling options "
                             "(steps, solver, guidance, seed belong to the dit backbone)")
        return self(content, pitch, speaker)
