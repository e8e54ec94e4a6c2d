"""Character CTC recognisers trained here: a BiLSTM on frozen encoder features or on log-mels.

Used to measure learnability (:mod:`voxanon.evaluation.learnability`): how
well an ASR *trained* on a system's anonymized speech recognises original
speech. Two recipes (:data:`voxanon.training.ctc.RECIPES`):

``whisper``
    a CTC head (a convolution and a 2-layer BiLSTM) on frozen features of
    Whisper tiny.en's last encoder layer (:mod:`voxanon.models.content`; the
    encoder never saw anonymized speech, only the head is trained);
``scratch``
    the same network, 3 BiLSTM layers, trained from nothing on 80 log-mels
    (Whisper's front-end on the :mod:`voxanon.dsp.mel` filters), subsampled
    to 50 Hz by a strided convolution.

The output alphabet is that of the VPC's upper-case LibriSpeech transcripts
(:data:`VOCAB`: blank, space, apostrophe, A-Z); transcripts are put into that
form with :func:`~voxanon.metrics.text.normalize_vpc` and other characters
(digits, accents) are dropped. Decoding is greedy (best path, repeats merged,
blanks removed). Inputs are normalised per feature with the training set's
mean and standard deviation (stored with the weights).

:func:`voxanon.training.ctc.train_ctc` trains them (the recipes live there);
the model file it writes is an ASR backend (:class:`CtcAsr`,
``load_asr("ctc:<model.pt>")``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import string
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.metrics.text import normalize_vpc
from voxanon.models.asr.base import AsrBackend, AsrError
from voxanon.models.checkpoint import build_from_config, load_format, load_state_checked

#: output symbols; index 0 is the CTC blank
VOCAB = ("<blank>", " ", "'", *string.ascii_uppercase)
BLANK = 0
_INDEX = {c: i for i, c in enumerate(VOCAB) if i != BLANK}
CHECKPOINT_FORMAT = "voxanon-ctc/1"
#: the log-mel front-end's spec (any other spec names a content encoder, see :mod:`voxanon.models.content`)
LOGMEL = "logmel"


def text_to_ids(text: str) -> list[int]:
    """Symbol indices of a transcript in VPC form (characters outside :data:`VOCAB` are dropped)."""
    return [_INDEX[c] for c in " ".join("".join(c for c in normalize_vpc(text) if c in _INDEX).split())]


def frames_needed(ids: list[int]) -> int:
    """Output frames CTC needs for the symbol sequence ``ids``: one per symbol, plus a blank between repeats."""
    return len(ids) + sum(a == b for a, b in zip(ids, ids[1:]))


def greedy_decode(log_probs: np.ndarray | torch.Tensor) -> str:
    """Best-path transcript of ``(T, len(VOCAB))`` scores: argmax per frame, repeats merged, blanks removed."""
    best = np.asarray(torch.as_tensor(log_probs).argmax(dim=-1))
    keep = best[(best != BLANK) & np.concatenate([[True], best[1:] != best[:-1]])]
    return " ".join("".join(VOCAB[i] for i in keep).split())


# -- front-ends -------------------------------------------------------------------------------------
class Frontend(ABC):
    """Frame features of 16 kHz speech at ``frame_rate`` Hz; ``name`` identifies the front-end and its weights."""

    sample_rate = 16000
    name: str
    dim: int
    frame_rate: float

    #: what :meth:`__call__` does to the audio first (a feature cache names it)
    preprocessing = "peak"

    @abstractmethod
    def features(self, wav: np.ndarray) -> np.ndarray:
        """``(T, dim)`` float32 features of one 16 kHz waveform."""

    def __call__(self, wav: np.ndarray) -> np.ndarray:
        """:meth:`features` of the waveform scaled to peak 1 (level-independent; silence is left as it is)."""
        wav = np.asarray(wav, dtype=np.float32)
        peak = float(np.abs(wav).max()) if wav.size else 0.0
        return self.features(wav / peak if peak > 0 else wav)


class LogMelFrontend(Frontend):
    """Whisper's 80 log-mels (25 ms Hann, hop 10 ms, slaney filters), nothing trained."""

    name, dim, frame_rate = LOGMEL, 80, 100.0

    def __init__(self) -> None:
        from voxanon.models.content.whisper import LogMel

        self.logmel = LogMel(self.dim)

    @torch.inference_mode()
    def features(self, wav: np.ndarray) -> np.ndarray:
        mel = self.logmel(torch.from_numpy(np.asarray(wav, dtype=np.float32))[None])[0]
        return mel[:, : len(wav) // 160].T.contiguous().numpy()


class EncoderFrontend(Frontend):
    """One layer of a frozen content encoder (e.g. ``whisper-tiny:4``)."""

    def __init__(self, spec: str) -> None:
        from voxanon.models.content import load_content_encoder

        self.encoder = load_content_encoder(spec)
        self.name, self.dim, self.frame_rate = self.encoder.name, self.encoder.dim, self.encoder.frame_rate

    def features(self, wav: np.ndarray) -> np.ndarray:
        return self.encoder.encode_batch([np.asarray(wav, dtype=np.float32)])[0]


@functools.lru_cache(maxsize=4)
def load_frontend(spec: str) -> Frontend:
    """``logmel`` or a content encoder spec, loaded once per process."""
    return LogMelFrontend() if spec == LOGMEL else EncoderFrontend(spec)


# -- network ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CtcConfig:
    """Network sizes: input dimension, BiLSTM width (both directions) and depth, input subsampling."""

    in_dim: int
    hidden: int = 256
    layers: int = 2
    subsample: int = 1
    dropout: float = 0.2


class CtcNet(nn.Module):
    """Normalised features → strided convolution → BiLSTM → per-frame log-probabilities over :data:`VOCAB`."""

    def __init__(self, cfg: CtcConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.register_buffer("mean", torch.zeros(cfg.in_dim))
        self.register_buffer("std", torch.ones(cfg.in_dim))
        k = 2 * cfg.subsample + 1
        self.conv = nn.Sequential(nn.Conv1d(cfg.in_dim, cfg.hidden, k, stride=cfg.subsample, padding=k // 2),
                                  nn.GELU(), nn.Dropout(cfg.dropout))
        self.lstm = nn.LSTM(cfg.hidden, cfg.hidden // 2, num_layers=cfg.layers, bidirectional=True,
                            batch_first=True, dropout=cfg.dropout if cfg.layers > 1 else 0.0)
        self.out = nn.Sequential(nn.Dropout(cfg.dropout), nn.Linear(cfg.hidden, len(VOCAB)))

    def out_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        """Output frames for ``lengths`` input frames."""
        return torch.div(lengths - 1, self.cfg.subsample, rounding_mode="floor") + 1

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B, T', V)`` log-probabilities and output lengths of ``(B, T, in_dim)`` features."""
        h = self.conv(((x - self.mean) / self.std).transpose(1, 2)).transpose(1, 2)
        out_len = self.out_lengths(lengths)
        packed = nn.utils.rnn.pack_padded_sequence(h, out_len.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = nn.utils.rnn.pad_packed_sequence(self.lstm(packed)[0], batch_first=True, total_length=h.shape[1])
        return torch.log_softmax(self.out(h), dim=-1), out_len


def pad(feats: list[np.ndarray], device: str | torch.device = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """``(B, T_max, D)`` float32 batch (zeros past each end) and the lengths."""
    lengths = torch.tensor([len(f) for f in feats])
    batch = torch.zeros(len(feats), int(lengths.max()), feats[0].shape[1])
    for i, f in enumerate(feats):
        batch[i, : len(f)] = torch.from_numpy(np.asarray(f, dtype=np.float32))
    return batch.to(device), lengths.to(device)


# -- inference --------------------------------------------------------------------------------------
class CtcAsr(AsrBackend):
    """A model written by :func:`voxanon.training.ctc.train_ctc` as an ASR backend (greedy decoding); ``name``
    carries its digest."""

    def __init__(self, path: str | os.PathLike, *, device: str = "cpu") -> None:
        what, todo = "CTC model", "point ctc: to a model.pt of voxanon's CTC training (fit_ctc)"
        ckpt = load_format(path, what, AsrError, CHECKPOINT_FORMAT, ("vocab", "config", "state_dict", "frontend"),
                           todo=todo)
        if tuple(ckpt["vocab"]) != VOCAB:
            raise AsrError(f"{path}: its alphabet {ckpt['vocab']} differs from this voxanon's {list(VOCAB)}")
        self.net = build_from_config(lambda: CtcNet(CtcConfig(**ckpt["config"])), what, path, AsrError, todo=todo)
        load_state_checked(self.net, ckpt["state_dict"], f"{what} {os.fspath(path)}", AsrError,
                           "the weights do not fit the file's own config; train again")
        self.net.to(device).eval()
        self.device = device
        self.frontend = load_frontend(ckpt["frontend"])
        self.meta = ckpt.get("meta", {})
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        self.name = f"ctc-{ckpt['frontend']}-{digest}"

    @torch.inference_mode()
    def decode_features(self, feats: list[np.ndarray]) -> list[str]:
        """Transcripts of precomputed front-end features."""
        out = []
        for f in feats:  # one by one: the LSTM's result does not depend on the batch's padding
            log_probs, _ = self.net(*pad([f], self.device))
            out.append(greedy_decode(log_probs[0].cpu()))
        return out

    def _transcribe(self, wavs: list[np.ndarray]) -> list[str]:
        return self.decode_features([self.frontend(w) for w in wavs])
