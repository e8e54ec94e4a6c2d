"""The LTF content loss between the frozen encoder's features of the input and of the generated output."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def content_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``0.5 * ||x - y||^2 + 0.5 * (1 - cos(x, y))`` per frame, averaged over frames (0-d).

    ``x``, ``y``: ``(..., T, D)`` features. The squared distance is averaged over the ``D`` dimensions
    (``mse_loss``), so both terms are of order 1 whatever the encoder's width.
    """
    if x.shape != y.shape:
        raise ValueError(f"content loss: features of shape {tuple(x.shape)} and {tuple(y.shape)}")
    sq = (x - y).pow(2).mean(-1)
    return (0.5 * sq + 0.5 * (1 - F.cosine_similarity(x, y, dim=-1))).mean()
