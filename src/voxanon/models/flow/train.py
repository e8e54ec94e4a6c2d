"""Training the embedding flow with the conditional flow-matching loss, and its checkpoint format.

CFM loss: for data ``x1`` (standardised embeddings), noise ``x0 ~ N(0, I)`` and
``t ~ U(0, 1)``, ``x_t = (1 - t) x0 + t x1`` and the field is regressed onto
the straight-line velocity ``x1 - x0`` (mean squared error).

Checkpoint (``torch.save`` of plain containers, loaded with ``weights_only``)::

    {"format": "voxanon-speaker-flow", "version": 1, "config": {dim, hidden, layers, time_dim},
     "state_dict": {...} (float16 or float32), "mean": (D,), "std": (D,), "encoder": str, "train": {...}}
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import torch

from voxanon.errors import ConfigError, ModelError
from voxanon.models.checkpoint import check_state_keys, load_checkpoint, save_atomic
from voxanon.models.flow.model import EmbeddingFlow, VelocityField
from voxanon.progress import Progress

FORMAT = "voxanon-speaker-flow"


class FlowError(ModelError):
    """A speaker-flow checkpoint that is missing, corrupt or of another format."""


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
    losses: list[float] = []
    start = time.monotonic()
    field.train()
    epoch = 0
    while (epochs is None or epoch < epochs) and (minutes is None or time.monotonic() - start < 60 * minutes):
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
        losses.append(run / steps_per_epoch)
        epoch += 1
        progress.update(1)
    progress.close()
    log = {"epochs": epoch, "steps": epoch * steps_per_epoch, "batch_size": batch_size, "lr": lr, "seed": seed,
           "points": int(points.shape[0]), "seconds": round(time.monotonic() - start, 1),
           "loss": [round(v, 5) for v in losses]}
    return EmbeddingFlow(field, mean, std, encoder=encoder, device=device), log


def save_flow(flow: EmbeddingFlow, path: str | os.PathLike, *, fp16: bool = True,
              train_log: dict | None = None) -> None:
    """Write ``flow`` as a checkpoint (see the module docstring); weights as float16 when ``fp16``."""
    dtype = torch.float16 if fp16 else torch.float32
    state = {k: v.detach().cpu().to(dtype) for k, v in flow.field.state_dict().items()}
    save_atomic({"format": FORMAT, "version": 1, "config": dict(flow.field.config), "state_dict": state,
                 "mean": torch.as_tensor(flow.mean), "std": torch.as_tensor(flow.std), "encoder": flow.encoder,
                 "train": train_log or {}}, path)


def load_flow(path: str | os.PathLike, device: str = "cpu") -> EmbeddingFlow:
    """Read a checkpoint written by :func:`save_flow` onto ``device``; FlowError on anything else."""
    ckpt = load_checkpoint(path, "speaker-flow checkpoint", FlowError)
    what = f"speaker-flow checkpoint {os.fspath(path)}"
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise FlowError(f"{what} is not a voxanon speaker flow (train one with 'voxanon train speaker-flow')")
    try:
        field = VelocityField(**ckpt["config"])
        mean, std = ckpt["mean"].float().numpy(), ckpt["std"].float().numpy()
    except (KeyError, TypeError, AttributeError) as exc:
        raise FlowError(f"{what}: malformed config or statistics ({exc})") from exc
    state = ckpt.get("state_dict") or {}
    check_state_keys(state, {k: tuple(v.shape) for k, v in field.state_dict().items()}, what, FlowError,
                     "the file does not match its config")
    field.load_state_dict({k: v.float() for k, v in state.items()})
    if mean.shape != (field.config["dim"],) or std.shape != mean.shape:
        raise FlowError(f"{what}: statistics of shape {mean.shape} for a flow of dimension {field.config['dim']}")
    return EmbeddingFlow(field, mean, std, encoder=str(ckpt.get("encoder", "")), device=device)
