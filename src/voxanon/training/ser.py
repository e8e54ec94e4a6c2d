"""Recipe of the compact SER (:class:`~voxanon.models.ser.compact.CompactSERNet`), one per IEMOCAP fold."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from voxanon.data.iemocap import EMOTIONS
from voxanon.models.checkpoint import save_atomic
from voxanon.models.ser.compact import CHECKPOINT_FORMAT, CompactSERNet
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult, epoch_order

#: the model file of a run folder
MODEL_FILE = "ser.pt"


def _crop_batch(feats: list[torch.Tensor], idx: list[int], frames: int, gen: torch.Generator) -> torch.Tensor:
    """Random crops of ``frames`` (at most the batch's longest utterance; shorter ones tiled), ``(B, n_mels, T)``."""
    frames = min(frames, max(feats[i].shape[1] for i in idx))
    out = []
    for i in idx:
        f = feats[i]
        if f.shape[1] < frames:
            f = f.repeat(1, math.ceil(frames / f.shape[1]))
        start = int(torch.randint(0, f.shape[1] - frames + 1, (1,), generator=gen))
        out.append(f[:, start:start + frames])
    return torch.stack(out).float()


def class_weights(targets: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Inverse-frequency weights ``N / (K * n_k)`` (0 for absent classes) for a balanced loss."""
    counts = torch.bincount(targets, minlength=n_classes).float()
    present = counts > 0
    weights = torch.zeros(n_classes)
    weights[present] = counts.sum() / (present.sum() * counts[present])
    return weights


@dataclass(frozen=True)
class CompactSerSettings:
    """Training settings; each batch uses random crops of up to ``crop_frames`` frames."""

    epochs: int = 15
    batch_size: int = 32
    crop_frames: int = 300
    channels: int = 128
    lr: float = 1e-3
    seed: int = 0


@dataclass
class SerRecipe(Recipe):
    """Shuffled batches of random crops, class-weighted cross-entropy; the epoch's RNG is seeded from
    ``(seed, epoch)`` (resumed runs equal straight ones)."""

    net: CompactSERNet
    optimizer: torch.optim.Optimizer
    loss_fn: nn.Module
    feats: list[torch.Tensor]
    y: torch.Tensor
    settings: CompactSerSettings

    def steps(self, epoch: int) -> int:
        return math.ceil(len(self.feats) / self.settings.batch_size)

    def batches(self, epoch: int):
        batch_size = self.settings.batch_size
        gen, order = epoch_order(self.settings.seed, epoch, len(self.feats))
        self.net.train()
        for b in range(self.steps(epoch)):
            idx = order[b * batch_size:(b + 1) * batch_size]
            yield _crop_batch(self.feats, idx, self.settings.crop_frames, gen), self.y[idx]

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        x, y = batch
        return self.loss_fn(self.net(x), y), len(y)


def train_ser(data: list[tuple[torch.Tensor, int]], out: str | os.PathLike,
              settings: CompactSerSettings = CompactSerSettings(), *, labels: tuple[str, ...] = EMOTIONS,
              meta: dict | None = None, desc: str = "SER training", quiet: bool = False) -> TrainResult:
    """Train a :class:`CompactSERNet` on log-mel features into ``out``; resumable, checkpoints written atomically.

    Parameters
    ----------
    data : list of (tensor ``(n_mels, T)``, int)
        Each training utterance's features (from :class:`~voxanon.models.ser.features.LogMel`; float16 storage
        is fine, batches are converted to float32) and its class index into ``labels`` (the classes the model
        learns; default the VPC's four).
    out : path
        The run folder: ``ser.pt`` (the final model, :attr:`TrainResult.model`), ``train_log.jsonl`` and, until
        the run ends, ``checkpoint.pt``, the state after the last finished epoch; a rerun with the same
        settings resumes from it (epoch ``e`` always uses the RNG seeded with ``(seed, e)``, so resuming gives
        the same model); with other settings training restarts.
    settings : CompactSerSettings
    meta : dict, optional
        Stored in the model file with the training's own account (e.g. the fold and its training speakers):
        :attr:`TrainResult.summary`.
    """
    if not data:
        raise ValueError("train_ser needs at least one (non-empty) training utterance")
    feats, targets = [f for f, _ in data], [t for _, t in data]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "checkpoint.pt"
    s = settings
    config = {"n_mels": int(feats[0].shape[0]), "channels": s.channels, "n_classes": len(labels)}
    identity = {"n_utts": len(feats), "batch_size": s.batch_size, "crop_frames": s.crop_frames, "lr": s.lr,
                "seed": s.seed}
    y = torch.tensor(targets)
    torch.manual_seed(s.seed)
    net = CompactSERNet(**config)
    n_frames = sum(f.shape[1] for f in feats)
    mean = sum(f.double().sum(dim=1) for f in feats) / n_frames
    var = sum(f.double().pow(2).sum(dim=1) for f in feats) / n_frames - mean.pow(2)
    net.mean.copy_(mean.float())
    net.std.copy_(var.clamp_min(1e-6).sqrt().float())
    optimizer = torch.optim.Adam(net.parameters(), lr=s.lr, weight_decay=1e-4)
    loss_fn = nn.CrossEntropyLoss(weight=class_weights(y, len(labels)))
    trainer = Trainer(Budget(epochs=s.epochs), state={"model": net, "optimiser": optimizer}, checkpoint=partial,
                      identity={"config": config, "settings": identity}, on_mismatch="restart",
                      log=out / "train_log.jsonl", columns=("epoch", "loss"), desc=f"{desc} ", quiet=quiet)
    trainer.resume()
    trainer.run(SerRecipe(net, optimizer, loss_fn, feats, y, s))
    meta = {**(meta or {}), "epochs": s.epochs, "losses": [r["loss"] for r in trainer.history],
            "batch_size": s.batch_size, "crop_frames": s.crop_frames, "lr": s.lr, "seed": s.seed,
            "train_seconds": trainer.seconds}
    save_atomic({"format": CHECKPOINT_FORMAT, "labels": list(labels), "config": config,
                 "state_dict": net.state_dict(), "meta": meta}, out / MODEL_FILE)
    partial.unlink(missing_ok=True)
    return trainer.result(out, out / MODEL_FILE, meta)
