"""The embedding flow's checkpoint format (training: :mod:`voxanon.training.flow`).

Checkpoint (``torch.save`` of plain containers, loaded with ``weights_only``)::

    {"format": "voxanon-speaker-flow", "version": 1, "config": {dim, hidden, layers, time_dim},
     "state_dict": {...} (float16 or float32), "mean": (D,), "std": (D,), "encoder": str, "train": {...}}
"""

from __future__ import annotations

import os

import torch

from voxanon.errors import ModelError
from voxanon.models.checkpoint import check_state_keys, load_format, save_atomic
from voxanon.models.flow.model import EmbeddingFlow, VelocityField

FORMAT = "voxanon-speaker-flow"


class FlowError(ModelError):
    """A speaker-flow checkpoint that is missing, corrupt or of another format."""


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
    ckpt = load_format(path, "speaker-flow checkpoint", FlowError, FORMAT, ("config", "state_dict", "mean", "std"),
                       todo="give a flow of 'voxanon train speaker-flow'")
    what = f"speaker-flow checkpoint {os.fspath(path)}"
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
