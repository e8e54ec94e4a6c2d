"""Recipe of the embedding flow (:mod:`voxanon.models.flow`): the conditional flow-matching loss.

CFM loss: for data ``x1`` (standardised embeddings), noise ``x0 ~ N(0, I)`` and
``t ~ U(0, 1)``, ``x_t = (1 - t) x0 + t x1`` and the field is regressed onto
the straight-line velocity ``x1 - x0`` (mean squared error).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from voxanon.errors import ConfigError
from voxanon.models.flow.model import EmbeddingFlow, VelocityField
from voxanon.progress import Progress
from voxanon.training.trainer import Budget, Trainer


def train_flow(points: np.ndarray, *, epochs: int | None = None, minutes: float | None = None, seed: int = 0,
               device: str = "cpu", hidden: int = 512, layers: int = 3, time_dim: int = 64,
               batch_size: int = 256, lr: float = 1e-3, encoder: str = "",
               quiet: bool = False) -> tuple[EmbeddingFlow, dict]:
    """Fit a :class:`VelocityField` to ``points`` (N, D) with the CFM loss (see the module docstring).

    Training stops after ``epochs`` passes over the data or ``minutes`` of wall
    time, whichever comes first (at least one must be given); the learning rate
    follows a cosine schedule over the epoch budget (or, with ``minutes`` only,
    stays constant). An epoch is ``max(1, N / batch_size)`` steps, at least 20.
    Returns the flow (in eval mode) and a log: loss per epoch, steps, seconds.
    """
    points = np.asarray(points, dtype=np.float32)
    if points.ndim != 2 or points.shape[0] < 2:
        raise ConfigError(f"flow training needs at least 2 embeddings of shape (N, D), got {points.shape}")
    if epochs is None and minutes is None:
        raise ConfigError("give --epochs or --minutes (or both) to bound the flow training")
    if (epochs is not None and epochs < 1) or (minutes is not None and minutes <= 0):
        raise ConfigError(f"--epochs must be >= 1 and --minutes > 0, got {epochs} and {minutes}")
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"--device {device}: CUDA is not available here; use --device cpu")
    torch.manual_seed(seed)
    gen = torch.Generator(device="cpu").manual_seed(seed)
    mean = points.mean(axis=0)
    std = np.maximum(points.std(axis=0), 1e-4)
    data = torch.as_tensor((points - mean) / std, device=device)
    field = VelocityField(points.shape[1], hidden=hidden, layers=layers, time_dim=time_dim).to(device)
    opt = torch.optim.AdamW(field.parameters(), lr=lr, weight_decay=1e-4)
    steps_per_epoch = max(20, math.ceil(len(data) / batch_size))
    total = epochs * steps_per_epoch if epochs is not None else None
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, (lambda s: 0.5 * (1 + math.cos(math.pi * min(s / total, 1.0)))) if total else (lambda s: 1.0))
    progress = Progress(epochs or 0, "speaker flow epochs", quiet=quiet)
    field.train()
    trainer = Trainer(Budget(epochs=epochs, minutes=minutes),
                      state={"field": field, "optimizer": opt, "scheduler": sched}, columns=("epoch", "loss"))

    def train_epoch(epoch: int) -> dict:
        run = 0.0
        for _ in range(steps_per_epoch):
            idx = torch.randint(len(data), (batch_size,), generator=gen).to(device)
            x1 = data[idx]
            x0 = torch.randn(x1.shape, generator=gen).to(device)
            t = torch.rand(batch_size, generator=gen).to(device)
            xt = (1 - t[:, None]) * x0 + t[:, None] * x1
            loss = torch.mean((field(xt, t) - (x1 - x0)) ** 2)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            run += loss.item()
        return {"loss": run / steps_per_epoch}

    trainer.run(train_epoch, after_epoch=lambda record: progress.update(1))
    progress.close()
    epoch = trainer.epoch
    log = {"epochs": epoch, "steps": epoch * steps_per_epoch, "batch_size": batch_size, "lr": lr, "seed": seed,
           "points": int(points.shape[0]), "seconds": round(trainer.seconds, 1),
           "loss": [round(r["loss"], 5) for r in trainer.history]}
    return EmbeddingFlow(field, mean, std, encoder=encoder, device=device), log
