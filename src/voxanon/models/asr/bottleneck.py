"""A recogniser with a vector-quantised bottleneck: the content codes of VPC 2024 B5/B6 learnt for recognition.

The VPC's B5 and B6 take their content from a bottleneck layer inside an ASR
acoustic model, quantised to 48 codewords. This is the offline form: frames
of a frozen content encoder, normalised per utterance as the acoustic model
reads them (:func:`~voxanon.models.acoustic.features.network_content`), are
projected to ``dim`` dimensions, replaced by the nearest of ``codebook_size``
codewords, and a head recognises from the codewords alone, by one of two
targets: the transcript's characters (``targets="chars"``: a CTC head,
:class:`~voxanon.models.asr.ctc.CtcNet`, with its own context), or each frame's
phone of a forced alignment (``targets="phones"``: one linear map of each code
to the :data:`~voxanon.models.asr.alignment.PHONES`, no context, so each code
has to stand for a phone by itself, as the VPC's frame-level acoustic model's
bottleneck does). Trained with that loss (the projection through a
straight-through estimator, the codewords by the VQ-VAE codebook and
commitment losses; :mod:`voxanon.training.bottleneck`), each code carries what
tells the characters or phones apart, where a k-means codebook of the same
frames keeps what is frequent.

The acoustic model of ``voxanon train asrbn --bottleneck`` takes the projection
and the codebook as its fixed quantiser
(:class:`~voxanon.models.acoustic.vq.VectorQuantizer` with ``in_dim``); the
head is only used to train and to measure the codes (greedy decoding).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from voxanon.models.asr.alignment import PHONES
from voxanon.models.asr.base import AsrError
from voxanon.models.asr.ctc import VOCAB, CtcConfig, CtcNet, greedy_decode, pad
from voxanon.models.checkpoint import build_from_config, load_format, load_state_checked

FORMAT = "voxanon-bottleneck/1"
#: what the head recognises: the transcript's characters (CTC) or each frame's phone (cross-entropy)
TARGETS = ("chars", "phones")


@dataclass(frozen=True)
class BottleneckConfig:
    """Sizes: content dimension in, bottleneck dimension, codewords, the targets (``chars`` or ``phones``) and
    the CTC head's sizes for ``chars`` (``subsample``: the head reads every code but emits one symbol score per
    ``subsample`` frames, for a shorter, faster recurrence)."""

    in_dim: int
    dim: int = 64
    codebook_size: int = 48
    hidden: int = 256
    layers: int = 2
    subsample: int = 2
    dropout: float = 0.2
    targets: str = "chars"

    def __post_init__(self) -> None:
        if self.targets not in TARGETS:
            raise AsrError(f"bottleneck targets {self.targets!r}: one of {', '.join(TARGETS)}")

    def symbols(self) -> tuple[str, ...]:
        """What the head's outputs stand for: CTC's alphabet or the phones."""
        return VOCAB if self.targets == "chars" else PHONES

    def head(self) -> CtcConfig:
        return CtcConfig(self.dim, self.hidden, self.layers, self.subsample, self.dropout)


class PhoneHead(nn.Module):
    """Each code on its own -> log-probabilities of the :data:`PHONES` (one output per input frame)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.out = nn.Linear(dim, len(PHONES))

    def forward(self, z: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.log_softmax(self.out(z), dim=-1), lengths


class BottleneckCtc(nn.Module):
    """``(B, T, in_dim)`` normalised content -> projection -> nearest codeword -> the head's log-probabilities
    (CTC over characters, or each frame's phone)."""

    def __init__(self, cfg: BottleneckConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.project = nn.Linear(cfg.in_dim, cfg.dim)
        self.codebook = nn.Parameter(torch.randn(cfg.codebook_size, cfg.dim) * 0.1)
        self.head = CtcNet(cfg.head()) if cfg.targets == "chars" else PhoneHead(cfg.dim)

    def codes(self, z: torch.Tensor) -> torch.Tensor:
        """Index of the nearest codeword of every projected frame ``(..., dim)``."""
        book = self.codebook.detach()
        return (book.square().sum(1) - 2 * z @ book.T).argmin(-1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor,
                quantise: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probabilities ``(B, T', V)`` (CTC symbols, or phones with ``T' = T``), output lengths, the codes
        ``(B, T)`` (-1 without quantising) and the VQ loss (codebook + 0.25 x commitment, over the valid frames;
        0 without quantising).

        ``quantise=False`` passes the projected frames on as they are (the warm-up before the codebook exists);
        with it, the head sees the codewords and the projection learns through a straight-through estimator.
        """
        z = self.project(x)
        valid = (torch.arange(x.shape[1], device=x.device)[None] < lengths[:, None])
        if not quantise:
            codes = torch.full(z.shape[:2], -1, dtype=torch.long, device=x.device)
            vq_loss = z.new_zeros(())
        else:
            codes = self.codes(z)
            q = self.codebook[codes]
            err = lambda a, b: ((a - b).square().sum(-1) * valid).sum() / valid.sum().clamp_min(1)  # noqa: E731
            vq_loss = err(q, z.detach()) + 0.25 * err(z, q.detach())
            z = z + (q - z).detach()
        log_probs, out_len = self.head(z, lengths)
        return log_probs, out_len, codes, vq_loss


@dataclass(frozen=True)
class Bottleneck:
    """A trained bottleneck as the acoustic model takes it: the content encoder, projection and codebook."""

    content: str
    weight: np.ndarray
    bias: np.ndarray
    codebook: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.codebook.shape[1])

    @property
    def size(self) -> int:
        return int(self.codebook.shape[0])


def model_file(net: BottleneckCtc, content: str, meta: dict) -> dict:
    """The saved form of a trained bottleneck recogniser (weights in fp16)."""
    return {"format": FORMAT, "vocab": list(net.cfg.symbols()), "content": content,
            "config": dataclasses.asdict(net.cfg),
            "state_dict": {k: v.detach().cpu().half().clone() for k, v in net.state_dict().items()}, "meta": meta}


def load_recogniser(path: str | os.PathLike) -> tuple[BottleneckCtc, str]:
    """The network of a model written by ``voxanon train bottleneck`` and its content encoder spec."""
    what, todo = "bottleneck model", "give a model.pt written by 'voxanon train bottleneck'"
    ckpt = load_format(path, what, AsrError, FORMAT, ("config", "vocab", "state_dict", "content"), todo=todo)
    cfg = build_from_config(lambda: BottleneckConfig(**ckpt["config"]), what, path, AsrError, todo=todo)
    if tuple(ckpt["vocab"]) != cfg.symbols():
        raise AsrError(f"{path}: its symbols {ckpt['vocab']} differ from this voxanon's {list(cfg.symbols())}")
    net = build_from_config(lambda: BottleneckCtc(cfg), what, path, AsrError, todo=todo)
    load_state_checked(net, ckpt["state_dict"], f"{what} {os.fspath(path)}", AsrError,
                       "the weights do not fit the file's own config; train again")
    return net.eval(), ckpt["content"]


def load_bottleneck(path: str | os.PathLike) -> Bottleneck:
    """The projection and codebook of a model written by ``voxanon train bottleneck``."""
    net, content = load_recogniser(path)
    return Bottleneck(content, net.project.weight.detach().numpy().copy(), net.project.bias.detach().numpy().copy(),
                      net.codebook.detach().numpy().copy())


@torch.inference_mode()
def transcribe_codes(path: str | os.PathLike, wavs: list[np.ndarray], sr: int) -> list[str]:
    """What the codes alone keep of the words: greedy transcripts of ``wavs`` decoded by the bottleneck's own
    recogniser (a model of ``voxanon train bottleneck``) from their codes, the content taken as the acoustic models take it
    (the encoder's frames at the HiFi-GAN's 22.05 kHz / 256 frame times, normalised per utterance)."""
    from voxanon.audio.io import resample
    from voxanon.models.acoustic.features import (
        content_frames,
        n_vocoder_frames,
        normalize_content,
    )
    from voxanon.models.content import load_content_encoder

    net, content = load_recogniser(path)
    if net.cfg.targets != "chars":
        raise AsrError(f"{path}: a bottleneck trained on {net.cfg.targets}, not characters: "
                       "it has no transcripts")
    encoder = load_content_encoder(content)
    out = []
    for wav in wavs:
        n = n_vocoder_frames(len(wav), sr, 22050, 256)
        frames = normalize_content(content_frames(resample(np.asarray(wav, np.float32), sr, 16000), 16000, encoder,
                                                  n, 22050 / 256))
        out.append(greedy_decode(net(*pad([frames]))[0][0]))
    return out
