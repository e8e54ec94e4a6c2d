"""Recipe of the embedding flow (:mod:`voxanon.models.flow`): the conditional flow-matching loss.

CFM loss: for data ``x1`` (standardised embeddings), noise ``x0 ~ N(0, I)`` and
``t ~ U(0, 1)``, ``x_t = (1 - t) x0 + t x1`` and the field is regressed onto
the straight-line velocity ``x1 - x0`` (mean squared error).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from voxanon.atomic import write_text
from voxanon.errors import ConfigError
from voxanon.models.flow.checkpoint import save_flow
from voxanon.models.flow.model import EmbeddingFlow, VelocityField
from voxanon.progress import Progress
from voxanon.training.trainer import Budget, Recipe, Trainer, TrainResult


@dataclass(frozen=True)
class FlowSettings:
    """The field's size and the training settings; ``epochs`` and/or ``minutes`` (at least one) bound the training."""

    epochs: int | None = None
    minutes: float | None = None
    seed: int = 0
    hidden: int = 512
    layers: int = 3
    time_dim: int = 64
    batch_size: int = 256
    lr: float = 1e-3

    def __post_init__(self) -> None:
        if self.epochs is None and self.minutes is None:
            raise ConfigError("give --epochs or --minutes (or both) to bound the flow training")
        if (self.epochs is not None and self.epochs < 1) or (self.minutes is not None and self.minutes <= 0):
            raise ConfigError(f"--epochs must be >= 1 and --minutes > 0, got {self.epochs} and {self.minutes}")


@dataclass
class FlowRecipe(Recipe):
    """``steps_per_epoch`` batches of random points, each with fresh noise and times; the CFM loss."""

    field: VelocityField
    optimizer: torch.optim.Optimizer
    data: torch.Tensor
    gen: torch.Generator
    batch_size: int
    steps_per_epoch: int
    device: str
    scheduler: torch.optim.lr_scheduler.LambdaLR

    def steps(self, epoch: int) -> int:
        return self.steps_per_epoch

    def batches(self, epoch: int):
        self.field.train()
        for _ in range(self.steps_per_epoch):
            idx = torch.randint(len(self.data), (self.batch_size,), generator=self.gen).to(self.device)
            x1 = self.data[idx]
            x0 = torch.randn(x1.shape, generator=self.gen).to(self.device)
            t = torch.rand(self.batch_size, generator=self.gen).to(self.device)
            yield x0, x1, t

    def loss(self, batch) -> tuple[torch.Tensor, float]:
        x0, x1, t = batch
        xt = (1 - t[:, None]) * x0 + t[:, None] * x1
        return torch.mean((self.field(xt, t) - (x1 - x0)) ** 2), 1


def train_flow(points: np.ndarray, out: str | os.PathLike, settings: FlowSettings, *, name: str = "flow.pt",
               encoder: str = "", device: str = "cpu", fp16: bool = True, meta: dict | None = None,
               quiet: bool = False) -> TrainResult:
    """Fit a :class:`VelocityField` to ``points`` (N, D) with the CFM loss (see the module docstring); write the
    flow to ``out/<name>`` (:attr:`TrainResult.model`; float16 weights unless not ``fp16``) and its training log
    to ``out/<name>.json`` (:attr:`TrainResult.summary`: ``meta``, then the epochs, steps, seconds and the loss
    per epoch; the checkpoint holds it too).

    Training stops after ``settings.epochs`` passes over the data or ``settings.minutes`` of wall
    time, whichever comes first; the learning rate follows a cosine schedule over the epoch budget (or,
    with ``minutes`` only, stays constant). An epoch is ``max(1, N / batch_size)`` steps, at least 20.
    """
    points = np.asarray(points, dtype=np.float32)
    if points.ndim != 2 or points.shape[0] < 2:
        raise ConfigError(f"flow training needs at least 2 embeddings of shape (N, D), got {points.shape}")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device}: CUDA is not available here; use --device cpu")
    s = settings
    torch.manual_seed(s.seed)
    gen = torch.Generator(device="cpu").manual_seed(s.seed)
    mean = points.mean(axis=0)
    std = np.maximum(points.std(axis=0), 1e-4)
    data = torch.as_tensor((points - mean) / std, device=device)
    field = VelocityField(points.shape[1], hidden=s.hidden, layers=s.layers, time_dim=s.time_dim).to(device)
    opt = torch.optim.AdamW(field.parameters(), lr=s.lr, weight_decay=1e-4)
    steps_per_epoch = max(20, math.ceil(len(data) / s.batch_size))
    total = s.epochs * steps_per_epoch if s.epochs is not None else None
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, (lambda step: 0.5 * (1 + math.cos(math.pi * min(step / total, 1.0)))) if total else (lambda step: 1.0))
    progress = Progress(s.epochs or 0, "speaker flow epochs", quiet=quiet)
    trainer = Trainer(Budget(epochs=s.epochs, minutes=s.minutes),
                      state={"field": field, "optimizer": opt, "scheduler": sched}, columns=("epoch", "loss"))
    trainer.run(FlowRecipe(field, opt, data, gen, s.batch_size, steps_per_epoch, device, sched),
                after_epoch=lambda record: progress.update(1))
    progress.close()
    epoch = trainer.epoch
    log = {**(meta or {}), "epochs": epoch, "steps": epoch * steps_per_epoch, "batch_size": s.batch_size,
           "lr": s.lr, "seed": s.seed, "points": int(points.shape[0]), "seconds": round(trainer.seconds, 1),
           "loss": [round(r["loss"], 5) for r in trainer.history]}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_flow(EmbeddingFlow(field, mean, std, encoder=encoder, device=device), out / name, fp16=fp16, train_log=log)
    write_text(out / f"{name}.json", json.dumps(log, indent=1) + "\n")
    return trainer.result(out, out / name, log, log=out / f"{name}.json")
