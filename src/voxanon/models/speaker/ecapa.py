"""ECAPA-TDNN speaker embedding network (Desplanques et al., 2020) and its encoder wrapper.

Module and parameter names follow speechbrain's ``ECAPA_TDNN`` so its
checkpoints load as they are (see :mod:`voxanon.models.speaker.speechbrain_ecapa`).
Every layer takes per-utterance frame counts: "same" padding is applied at
each utterance's own end (zeros, or a reflection as speechbrain does), the SE
means and the attentive statistics pooling ignore padded frames, so an
utterance's embedding does not depend on what else is in its batch.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from voxanon.errors import ConfigError
from voxanon.models.checkpoint import check_state_keys, load_checkpoint, save_atomic
from voxanon.models.fbank import Fbank, FbankConfig
from voxanon.models.model_files import model_file_error, require_keys
from voxanon.models.speaker.base import BatchedEncoder, EncoderError, file_digest


@dataclass(frozen=True)
class EcapaConfig:
    """Architecture; the defaults are the small attacker model.

    :meth:`vpc` is the VPC 2024 semi-informed attacker (512/1536 channels),
    :meth:`full` speechbrain's VoxCeleb model (1024/3072 channels).
    """

    n_mels: int = 80
    channels: tuple[int, ...] = (128, 128, 128, 128, 384)
    kernel_sizes: tuple[int, ...] = (5, 3, 3, 3, 1)
    dilations: tuple[int, ...] = (1, 2, 3, 4, 1)
    attention_channels: int = 64
    res2net_scale: int = 8
    se_channels: int = 64
    embedding_dim: int = 192
    global_context: bool = True
    padding_mode: str = "zeros"

    def __post_init__(self) -> None:
        if not len(self.channels) == len(self.kernel_sizes) == len(self.dilations) >= 3:
            raise ConfigError("channels, kernel_sizes and dilations need the same length (at least 3)")
        if any(c % self.res2net_scale for c in self.channels[1:-1]):
            raise ConfigError(f"SE-Res2Net channels must be divisible by res2net_scale={self.res2net_scale}")
        if self.padding_mode not in ("zeros", "reflect"):
            raise ConfigError(f"padding_mode must be 'zeros' or 'reflect', not {self.padding_mode!r}")

    @classmethod
    def vpc(cls, **overrides) -> "EcapaConfig":
        """The VPC 2024 attacker (``train_ecapa_tdnn_small.yaml``): 512 channels, 1536 before pooling,
        attention 128, SE 128, 192-d, reflect padding (speechbrain's ``ECAPA_TDNN`` default)."""
        base = dict(channels=(512, 512, 512, 512, 1536), attention_channels=128, se_channels=128,
                    padding_mode="reflect")
        return cls(**{**base, **overrides})

    @classmethod
    def full(cls, **overrides) -> "EcapaConfig":
        """speechbrain's ``spkrec-ecapa-voxceleb`` architecture (1024 channels, 192-d, reflect padding)."""
        base = dict(channels=(1024, 1024, 1024, 1024, 3072), attention_channels=128, se_channels=128,
                    padding_mode="reflect")
        return cls(**{**base, **overrides})


def frame_mask(lengths: torch.Tensor, t: int) -> torch.Tensor:
    """``(B, 1, t)`` float mask of valid frames."""
    return (torch.arange(t, device=lengths.device)[None, :] < lengths[:, None]).unsqueeze(1).float()


def pad_same(x: torch.Tensor, lengths: torch.Tensor, pad: int, mode: str) -> torch.Tensor:
    """Pad ``(B, C, T)`` by ``pad`` frames on each side, at every utterance's own end."""
    if mode == "zeros":
        return F.pad(x * frame_mask(lengths, x.shape[-1]), (pad, pad))
    t = x.shape[-1]
    src = torch.arange(-pad, t + pad, device=x.device)[None, :].expand(x.shape[0], -1).abs()
    last = (lengths - 1)[:, None]
    src = torch.where(src > last, 2 * last - src, src).clamp(0, t - 1)
    return torch.gather(x, 2, src[:, None, :].expand(-1, x.shape[1], -1))


class Conv1d(nn.Module):
    """1-D convolution with length-aware "same" padding (``conv`` holds the weights)."""

    def __init__(self, cin: int, cout: int, kernel_size: int = 1, dilation: int = 1, padding_mode: str = "zeros"):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, kernel_size, dilation=dilation)
        self.pad = dilation * (kernel_size - 1) // 2
        self.padding_mode = padding_mode

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if self.pad:
            x = pad_same(x, lengths, self.pad, self.padding_mode)
        return self.conv(x)


class BatchNorm1d(nn.Module):
    """Batch normalisation over channels (``norm`` holds the statistics)."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


class TDNNBlock(nn.Module):
    """Conv → ReLU → BatchNorm."""

    def __init__(self, cin: int, cout: int, kernel_size: int, dilation: int, padding_mode: str):
        super().__init__()
        self.conv = Conv1d(cin, cout, kernel_size, dilation, padding_mode)
        self.norm = BatchNorm1d(cout)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.relu(self.conv(x, lengths)))


class Res2NetBlock(nn.Module):
    """Hierarchical residual-like convolutions over ``scale`` channel groups."""

    def __init__(self, channels: int, scale: int, kernel_size: int, dilation: int, padding_mode: str):
        super().__init__()
        self.scale = scale
        width = channels // scale
        self.blocks = nn.ModuleList(
            [TDNNBlock(width, width, kernel_size, dilation, padding_mode) for _ in range(scale - 1)])

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        chunks = torch.chunk(x, self.scale, dim=1)
        out, y = [chunks[0]], None
        for block, chunk in zip(self.blocks, chunks[1:]):
            y = block(chunk if y is None else chunk + y, lengths)
            out.append(y)
        return torch.cat(out, dim=1)


class SEBlock(nn.Module):
    """Squeeze-and-excitation over the valid frames."""

    def __init__(self, channels: int, se_channels: int):
        super().__init__()
        self.conv1 = Conv1d(channels, se_channels)
        self.conv2 = Conv1d(se_channels, channels)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = frame_mask(lengths, x.shape[-1])
        s = (x * mask).sum(dim=2, keepdim=True) / mask.sum(dim=2, keepdim=True)
        s = torch.sigmoid(self.conv2(torch.relu(self.conv1(s, lengths)), lengths))
        return s * x


class SERes2NetBlock(nn.Module):
    """TDNN → Res2Net → TDNN → SE, with a residual connection."""

    def __init__(self, cin: int, cout: int, cfg: EcapaConfig, kernel_size: int, dilation: int):
        super().__init__()
        self.tdnn1 = TDNNBlock(cin, cout, 1, 1, cfg.padding_mode)
        self.res2net_block = Res2NetBlock(cout, cfg.res2net_scale, kernel_size, dilation, cfg.padding_mode)
        self.tdnn2 = TDNNBlock(cout, cout, 1, 1, cfg.padding_mode)
        self.se_block = SEBlock(cout, cfg.se_channels)
        self.shortcut = Conv1d(cin, cout) if cin != cout else None

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        residual = x if self.shortcut is None else self.shortcut(x, lengths)
        x = self.tdnn2(self.res2net_block(self.tdnn1(x, lengths), lengths), lengths)
        return self.se_block(x, lengths) + residual


def _masked_stats(x: torch.Tensor, weights: torch.Tensor, eps: float = 1e-12) -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted mean and standard deviation over time (weights sum to 1 per channel)."""
    mean = (weights * x).sum(dim=2)
    std = torch.sqrt((weights * (x - mean.unsqueeze(2)).pow(2)).sum(dim=2).clamp(min=eps))
    return mean, std


class AttentiveStatisticsPooling(nn.Module):
    """Channel- and context-dependent attentive mean and standard deviation over valid frames."""

    def __init__(self, channels: int, attention_channels: int, global_context: bool):
        super().__init__()
        self.global_context = global_context
        self.tdnn = TDNNBlock(channels * (3 if global_context else 1), attention_channels, 1, 1, "zeros")
        self.conv = Conv1d(attention_channels, channels)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        t = x.shape[-1]
        mask = frame_mask(lengths, t)
        attn = x
        if self.global_context:
            mean, std = _masked_stats(x, mask / mask.sum(dim=2, keepdim=True))
            attn = torch.cat([x, mean.unsqueeze(2).expand(-1, -1, t), std.unsqueeze(2).expand(-1, -1, t)], dim=1)
        attn = self.conv(torch.tanh(self.tdnn(attn, lengths)), lengths)
        attn = F.softmax(attn.masked_fill(mask == 0, float("-inf")), dim=2)
        mean, std = _masked_stats(x, attn)
        return torch.cat([mean, std], dim=1).unsqueeze(2)


class EcapaTdnn(nn.Module):
    """ECAPA-TDNN: ``(B, T, n_mels)`` features + frame counts → ``(B, embedding_dim)``."""

    def __init__(self, cfg: EcapaConfig = EcapaConfig()):
        super().__init__()
        self.cfg = cfg
        ch, ks, dl = cfg.channels, cfg.kernel_sizes, cfg.dilations
        self.blocks = nn.ModuleList([TDNNBlock(cfg.n_mels, ch[0], ks[0], dl[0], cfg.padding_mode)])
        for i in range(1, len(ch) - 1):
            self.blocks.append(SERes2NetBlock(ch[i - 1], ch[i], cfg, ks[i], dl[i]))
        self.mfa = TDNNBlock(sum(ch[1:-1]), ch[-1], ks[-1], dl[-1], cfg.padding_mode)
        self.asp = AttentiveStatisticsPooling(ch[-1], cfg.attention_channels, cfg.global_context)
        self.asp_bn = BatchNorm1d(ch[-1] * 2)
        self.fc = Conv1d(ch[-1] * 2, cfg.embedding_dim)

    def forward(self, feats: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if lengths is None:
            lengths = torch.full((feats.shape[0],), feats.shape[1], dtype=torch.long, device=feats.device)
        return self.head(torch.cat(self.block_outputs(feats.transpose(1, 2), lengths)[1:], dim=1), lengths)

    def block_outputs(self, x: torch.Tensor, lengths: torch.Tensor) -> list[torch.Tensor]:
        """Output of every block (TDNN, then each SE-Res2Net) for ``(B, n_mels, T)`` input."""
        outs = []
        for block in self.blocks:
            x = block(x, lengths)
            outs.append(x)
        return outs

    def head(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Multi-layer feature aggregation, attentive statistics pooling and the embedding layer."""
        x = self.asp_bn(self.asp(self.mfa(x, lengths), lengths))
        return self.fc(x, lengths).squeeze(2)


class EcapaEncoder(BatchedEncoder):
    """:class:`SpeakerEncoder` over an :class:`EcapaTdnn` with its :class:`Fbank` front end.

    Utterances are sorted by length and embedded in batches of at most
    ``max_batch_seconds`` of padded audio (:class:`BatchedEncoder`).
    """

    def __init__(self, model: EcapaTdnn, name: str, fbank: FbankConfig = FbankConfig(), device: str = "cpu",
                 max_batch_seconds: float = 120.0) -> None:
        self.model = model.to(device).eval()
        self.fbank = Fbank(fbank).to(device)
        self.name, self.device = name, device
        self.sample_rate, self.dim = fbank.sample_rate, model.cfg.embedding_dim
        self.max_batch_seconds = max_batch_seconds

    @torch.inference_mode()
    def embed_padded(self, sigs: list[np.ndarray]) -> np.ndarray:
        """One forward pass over a zero-padded batch of 16 kHz signals."""
        feats, frames = self.fbank(*padded_batch(sigs, self.device))
        return self.model(feats, frames).cpu().numpy()


def padded_batch(sigs: list[np.ndarray], device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(B, N)`` zero-padded float tensor of 1-D signals and their sample counts, on ``device``."""
    lengths = torch.tensor([len(s) for s in sigs], device=device)
    batch = torch.zeros(len(sigs), int(lengths.max()), device=device)
    for i, s in enumerate(sigs):
        batch[i, : len(s)] = torch.from_numpy(s)
    return batch, lengths


def save_ecapa(path: str | os.PathLike, model: EcapaTdnn, **extra) -> None:
    """Write ``{"config", "model", **extra}`` atomically (temporary file, then rename)."""
    save_atomic({"config": asdict(model.cfg), "model": model.state_dict(), **extra}, path)


def load_ecapa_checkpoint(path: str | os.PathLike, device: str = "cpu") -> EcapaEncoder:
    """Encoder from a checkpoint written by ``voxanon train attacker`` (or :func:`save_ecapa`)."""
    what, expected = "ECAPA checkpoint", "voxanon's {'config', 'model'} (best.pt of 'voxanon train attacker')"
    todo = "point ecapa: to such a file (speechbrain's embedding_model.ckpt is read by speechbrain:)"
    ckpt = require_keys(load_checkpoint(path, what, EncoderError, expected=expected, todo=todo), ("config", "model"),
                        what, path, EncoderError, expected=expected, todo=todo)
    try:
        cfg = EcapaConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in dict(ckpt["config"]).items()})
    except (TypeError, ValueError) as exc:
        raise model_file_error(EncoderError, what, path, f"has a config no ECAPA-TDNN takes ({exc})",
                               expected=expected, todo=todo) from exc
    model = EcapaTdnn(cfg)
    check_state_keys(ckpt["model"], {k: tuple(v.shape) for k, v in model.state_dict().items()}, f"{what} {path}",
                     EncoderError, "the weights do not fit the checkpoint's own config; write it again")
    model.load_state_dict(ckpt["model"])
    return EcapaEncoder(model, name=f"ecapa-{file_digest(path)}", device=device)
