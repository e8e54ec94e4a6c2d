"""Character CTC recognisers trained here: a BiLSTM on frozen encoder features or on log-mels.

Used to measure learnability (:mod:`voxanon.evaluation.learnability`): how
well an ASR *trained* on a system's anonymized speech recognises original
speech. Two recipes (:data:`RECIPES`):

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

:func:`fit_ctc` trains with Adam, SpecAugment-style time and feature masks,
an epoch count and an optional wall-clock budget; after each epoch it writes
``<out>/train_log.jsonl`` (epoch, mean CTC loss, seconds) and a resumable
``checkpoint.pt``; at the end ``model.pt``. A model file is an ASR backend
(:class:`CtcAsr`, ``load_asr("ctc:<model.pt>")``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import string
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.atomic import write_text
from voxanon.metrics.text import normalize_vpc
from voxanon.models.asr.base import AsrBackend, AsrError
from voxanon.models.checkpoint import load_checkpoint, save_atomic

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


# -- recipes and training ---------------------------------------------------------------------------
@dataclass(frozen=True)
class CtcRecipe:
    """A front-end, a network and its training settings; ``minutes`` (optional) caps the wall time."""

    frontend: str
    hidden: int = 256
    layers: int = 2
    subsample: int = 1
    dropout: float = 0.2
    epochs: int = 60
    minutes: float | None = None
    batch_size: int = 8
    lr: float = 2e-3
    time_masks: int = 2
    feature_masks: int = 2
    seed: int = 0

    def config(self, in_dim: int) -> CtcConfig:
        return CtcConfig(in_dim, self.hidden, self.layers, self.subsample, self.dropout)


RECIPES = {
    "whisper": CtcRecipe("whisper-tiny:4", epochs=60, batch_size=4, lr=3e-3),
    "scratch": CtcRecipe(LOGMEL, hidden=256, layers=3, subsample=2, epochs=40),
}


def recipe(name: str, **overrides) -> CtcRecipe:
    """The named recipe of :data:`RECIPES` with some fields replaced (``None`` values are ignored)."""
    if name not in RECIPES:
        raise AsrError(f"unknown CTC recipe {name!r}; choose one of {', '.join(RECIPES)}")
    return dataclasses.replace(RECIPES[name], **{k: v for k, v in overrides.items() if v is not None})


def _masked(x: torch.Tensor, fill: torch.Tensor, n_time: int, n_feat: int, gen: torch.Generator) -> torch.Tensor:
    """``x`` (T, D) with ``n_time`` spans of up to 10 % of the frames and ``n_feat`` bands of up to 10 % of the
    features replaced by ``fill`` (the training mean: zero after normalisation), as SpecAugment does."""
    mask = torch.zeros(x.shape, dtype=torch.bool)
    for n, axis in ((n_time, 0), (n_feat, 1)):
        size = x.shape[axis]
        for _ in range(n):
            width = int(torch.randint(0, max(1, size // 10) + 1, (1,), generator=gen))
            start = int(torch.randint(0, max(1, size - width) + 1, (1,), generator=gen))
            mask.narrow(axis, start, min(width, size - start)).fill_(True)
    return torch.where(mask, fill, x)


def fit_ctc(feats: list[np.ndarray], texts: list[str], out_dir: str | os.PathLike, recipe: CtcRecipe, *,
            device: str = "cpu", meta: dict | None = None, quiet: bool = False) -> dict:
    """Train a :class:`CtcNet` on features of ``recipe.frontend``; resumable; returns the training summary.

    Parameters
    ----------
    feats : list of ``(T, D)`` arrays
        Features of the training utterances (from :func:`load_frontend` ``(recipe.frontend)``).
    texts : list of str
        Their transcripts; utterances whose transcript has no symbol or is too long for
        their frames (CTC needs a frame per symbol and per repeat) are left out and counted.
    out_dir : path
        Receives ``train_log.jsonl``, ``checkpoint.pt`` (after every epoch; a rerun with the same
        recipe resumes from it, another recipe restarts) and ``model.pt`` (when done).
    recipe : CtcRecipe
        Network, epochs, optional ``minutes`` budget (training stops after the epoch that passes it), seed.
    device : ``cpu`` or ``cuda``
    meta : dict, optional
        Stored in ``model.pt`` with the summary (e.g. the training data).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = recipe.config(int(feats[0].shape[1]) if feats else 0)
    probe = CtcNet(cfg)
    targets, kept, skipped = [], [], 0
    for f, text in zip(feats, texts):
        ids = text_to_ids(text)
        repeats = sum(a == b for a, b in zip(ids, ids[1:]))
        if ids and int(probe.out_lengths(torch.tensor(len(f)))) >= len(ids) + repeats:
            targets.append(torch.tensor(ids))
            kept.append(torch.from_numpy(np.asarray(f, dtype=np.float32)))
        else:
            skipped += 1
    if not kept:
        raise AsrError(f"no usable training utterance for CTC ({skipped} without symbols or too short)")
    torch.manual_seed(recipe.seed)
    net = CtcNet(cfg)
    frames = torch.cat(kept)
    mean = frames.mean(dim=0)
    net.mean.copy_(mean)
    net.std.copy_(frames.std(dim=0).clamp_min(1e-5))
    net.to(device)
    opt = torch.optim.Adam(net.parameters(), lr=recipe.lr)
    ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    key = dataclasses.asdict(recipe) | {"n_utts": len(kept)}
    history, seconds, start = [], 0.0, 0
    ckpt = out / "checkpoint.pt"
    if ckpt.is_file():
        state = load_checkpoint(ckpt, "CTC training checkpoint", AsrError)
        if state.get("recipe") == key:
            net.load_state_dict(state["state_dict"])
            opt.load_state_dict(state["optimiser"])
            history, seconds, start = list(state["history"]), float(state["seconds"]), int(state["epoch"])
    if not quiet:
        n_params = sum(p.numel() for p in net.parameters())
        print(f"CTC {recipe.frontend}: {len(kept)} utterances ({skipped} left out), {n_params / 1e6:.2f} M "
              f"parameters on {device}" + (f", resuming after epoch {start}" if start else ""), file=sys.stderr)
    n_batches = math.ceil(len(kept) / recipe.batch_size)
    stopped_by = "epochs"
    for epoch in range(start, recipe.epochs):
        if recipe.minutes is not None and seconds >= recipe.minutes * 60:
            stopped_by = "minutes"
            break
        t0 = time.monotonic()
        torch.manual_seed(recipe.seed * 100_003 + epoch)  # dropout: the same model whether resumed or not
        gen = torch.Generator().manual_seed(recipe.seed * 100_003 + epoch)
        order = torch.randperm(len(kept), generator=gen).tolist()
        lr = recipe.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * epoch / recipe.epochs)))
        for group in opt.param_groups:
            group["lr"] = lr
        net.train()
        total = 0.0
        for b in range(n_batches):
            idx = order[b * recipe.batch_size:(b + 1) * recipe.batch_size]
            x = [_masked(kept[i], mean, recipe.time_masks, recipe.feature_masks, gen).numpy() for i in idx]
            batch, lengths = pad(x, device)
            log_probs, out_len = net(batch, lengths)
            target = [targets[i] for i in idx]
            loss = ctc(log_probs.transpose(0, 1), torch.cat(target).to(device), out_len,
                       torch.tensor([len(t) for t in target], device=device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            total += loss.item() * len(idx)
        seconds += time.monotonic() - t0
        history.append({"epoch": epoch + 1, "loss": round(total / len(kept), 4), "lr": round(lr, 6),
                        "seconds": round(seconds, 1)})
        write_text(out / "train_log.jsonl", "".join(json.dumps(r) + "\n" for r in history))
        save_atomic({"recipe": key, "epoch": epoch + 1, "history": history, "seconds": seconds,
                     "state_dict": net.state_dict(), "optimiser": opt.state_dict()}, ckpt)
        if not quiet:
            print(f"epoch {epoch + 1}/{recipe.epochs} | CTC loss {history[-1]['loss']:.3f} | "
                  f"{seconds / 60:.1f} min", file=sys.stderr, flush=True)
    summary = {**(meta or {}), "recipe": dataclasses.asdict(recipe), "config": dataclasses.asdict(cfg),
               "device": device, "train_utterances": len(kept), "left_out": skipped,
               "epochs_run": len(history), "stopped_by": stopped_by, "train_seconds": round(seconds, 1),
               "final_loss": history[-1]["loss"] if history else None, "history": history}
    save_atomic({"format": CHECKPOINT_FORMAT, "vocab": list(VOCAB), "frontend": recipe.frontend,
                 "config": dataclasses.asdict(cfg), "state_dict": {k: v.cpu() for k, v in net.state_dict().items()},
                 "meta": summary}, out / "model.pt")
    return summary


# -- inference --------------------------------------------------------------------------------------
class CtcAsr(AsrBackend):
    """A model written by :func:`fit_ctc` as an ASR backend (greedy decoding); ``name`` carries its digest."""

    def __init__(self, path: str | os.PathLike, *, device: str = "cpu") -> None:
        ckpt = load_checkpoint(path, "CTC model", AsrError)
        if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
            raise AsrError(f"{path}: not a voxanon CTC model (format {CHECKPOINT_FORMAT!r} expected)")
        if tuple(ckpt["vocab"]) != VOCAB:
            raise AsrError(f"{path}: its alphabet {ckpt['vocab']} differs from this voxanon's {list(VOCAB)}")
        self.net = CtcNet(CtcConfig(**ckpt["config"]))
        self.net.load_state_dict(ckpt["state_dict"])
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
