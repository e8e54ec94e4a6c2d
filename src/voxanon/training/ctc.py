"""Recipes of the learnability CTC recognisers (:class:`~voxanon.models.asr.ctc.CtcNet`) and their training.

:func:`train_ctc` trains with Adam, SpecAugment-style time and feature masks, a
cosine learning rate, an epoch count and an optional wall-clock budget, on
:class:`~voxanon.training.trainer.Trainer`: after each epoch it writes
``<out>/train_log.jsonl`` (epoch, mean CTC loss, learning rate, seconds) and a
resumable ``checkpoint.pt``; at the end ``model.pt`` (an ASR backend,
:class:`~voxanon.models.asr.ctc.CtcAsr`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from voxanon.models.asr.base import AsrError
from voxanon.models.asr.ctc import (
    BLANK,
    CHECKPOINT_FORMAT,
    LOGMEL,
    VOCAB,
    CtcConfig,
    CtcNet,
    frames_needed,
    pad,
    text_to_ids,
)
from voxanon.models.checkpoint import save_atomic
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult, epoch_order


@dataclass(frozen=True)
class CtcSettings:
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


#: the named settings (``--recipe``)
RECIPES = {
    "whisper": CtcSettings("whisper-tiny:4", epochs=60, batch_size=4, lr=3e-3),
    "scratch": CtcSettings(LOGMEL, hidden=256, layers=3, subsample=2, epochs=40),
}


def recipe(name: str, **overrides) -> CtcSettings:
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


def _usable(data: list[tuple[np.ndarray, str]], probe: CtcNet) -> tuple[list[torch.Tensor], list[torch.Tensor], int]:
    """Features and symbol targets of the utterances (features, transcript) CTC can learn from (a symbol, and a
    frame per symbol and repeat), and how many were left out."""
    targets, kept, skipped = [], [], 0
    for f, text in data:
        ids = text_to_ids(text)
        if ids and int(probe.out_lengths(torch.tensor(len(f)))) >= frames_needed(ids):
            targets.append(torch.tensor(ids))
            kept.append(torch.from_numpy(np.asarray(f, dtype=np.float32)))
        else:
            skipped += 1
    return kept, targets, skipped


@dataclass
class CtcNetRecipe(Recipe):
    """Shuffled batches with SpecAugment-style masks, the cosine learning rate of the epoch, gradient clipping at 5;
    the epoch's RNG is seeded from ``(seed, epoch)`` (resumed runs equal straight ones)."""

    net: CtcNet
    optimizer: torch.optim.Optimizer
    kept: list[torch.Tensor]
    targets: list[torch.Tensor]
    mean: torch.Tensor
    settings: CtcSettings
    device: str

    def __post_init__(self) -> None:
        self.clip = (list(self.net.parameters()), 5.0)
        self.ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)

    def lr(self, epoch: int) -> float:
        """The cosine learning rate of epoch ``epoch`` (1-based)."""
        return self.settings.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (epoch - 1) / self.settings.epochs)))

    def steps(self, epoch: int) -> int:
        return math.ceil(len(self.kept) / self.settings.batch_size)

    def batches(self, epoch: int):
        s = self.settings
        gen, order = epoch_order(s.seed, epoch, len(self.kept))
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr(epoch)
        self.net.train()
        for b in range(self.steps(epoch)):
            idx = order[b * s.batch_size:(b + 1) * s.batch_size]
            x = [_masked(self.kept[i], self.mean, s.time_masks, s.feature_masks, gen).numpy() for i in idx]
            yield x, [self.targets[i] for i in idx]

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        x, target = batch
        padded, lengths = pad(x, self.device)
        log_probs, out_len = self.net(padded, lengths)
        loss = self.ctc(log_probs.transpose(0, 1), torch.cat(target).to(self.device), out_len,
                        torch.tensor([len(t) for t in target], device=self.device))
        return loss, len(x)

    def end_epoch(self, epoch: int, loss: float) -> dict:
        return {"loss": round(loss, 4), "lr": round(self.lr(epoch), 6)}


def train_ctc(data: list[tuple[np.ndarray, str]], out: str | os.PathLike, settings: CtcSettings, *,
              device: str = "cpu", meta: dict | None = None, quiet: bool = False) -> TrainResult:
    """Train a :class:`CtcNet` on features of ``settings.frontend`` into ``out``; resumable.

    Parameters
    ----------
    data : list of (``(T, D)`` array, str)
        Each training utterance's features (from :func:`load_frontend` ``(settings.frontend)``) and transcript;
        utterances whose transcript has no symbol or is too long for their frames (CTC needs a frame per symbol
        and per repeat) are left out and counted.
    out : path
        The run folder: ``train_log.jsonl``, ``checkpoint.pt`` (after every epoch; a rerun with the same
        settings resumes from it, other settings restart) and ``model.pt`` (when done,
        :attr:`TrainResult.model`; its ``meta`` is the summary).
    settings : CtcSettings
        Network, epochs, optional ``minutes`` budget (training stops after the epoch that passes it), seed.
    device : ``cpu`` or ``cuda``
    meta : dict, optional
        Stored in ``model.pt`` with the summary (e.g. the training data).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = settings.config(int(data[0][0].shape[1]) if data else 0)
    kept, targets, skipped = _usable(data, CtcNet(cfg))
    if not kept:
        raise AsrError(f"no usable training utterance for CTC ({skipped} without symbols or too short)")
    torch.manual_seed(settings.seed)
    net = CtcNet(cfg)
    frames = torch.cat(kept)
    mean = frames.mean(dim=0)
    net.mean.copy_(mean)
    net.std.copy_(frames.std(dim=0).clamp_min(1e-5))
    net.to(device)
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr)
    trainer = Trainer(Budget(epochs=settings.epochs, minutes=settings.minutes),
                      state={"model": net, "optimiser": opt}, checkpoint=out / "checkpoint.pt",
                      identity=dataclasses.asdict(settings) | {"n_utts": len(kept)}, on_mismatch="restart",
                      log=out / "train_log.jsonl", columns=("epoch", "loss", "lr", "seconds"), desc="CTC ")
    trainer.resume()
    if not quiet:
        n_params = sum(p.numel() for p in net.parameters())
        print(f"CTC {settings.frontend}: {len(kept)} utterances ({skipped} left out), {n_params / 1e6:.2f} M "
              f"parameters on {device}" + (f", resuming after epoch {trainer.epoch}" if trainer.epoch else ""),
              file=sys.stderr)

    def report(record: dict) -> None:
        if not quiet:
            print(f"epoch {record['epoch']}/{settings.epochs} | CTC loss {record['loss']:.3f} | "
                  f"{record['seconds'] / 60:.1f} min", file=sys.stderr, flush=True)

    history = trainer.run(CtcNetRecipe(net, opt, kept, targets, mean, settings, device), after_epoch=report)
    summary = {**(meta or {}), "recipe": dataclasses.asdict(settings), "config": dataclasses.asdict(cfg),
               "device": device, "train_utterances": len(kept), "left_out": skipped,
               "epochs_run": len(history), "stopped_by": trainer.stopped_by,
               "train_seconds": round(trainer.seconds, 1),
               "final_loss": history[-1]["loss"] if history else None, "history": history}
    save_atomic({"format": CHECKPOINT_FORMAT, "vocab": list(VOCAB), "frontend": settings.frontend,
                 "config": dataclasses.asdict(cfg), "state_dict": {k: v.cpu() for k, v in net.state_dict().items()},
                 "meta": summary}, out / "model.pt")
    return trainer.result(out, out / "model.pt", summary)
