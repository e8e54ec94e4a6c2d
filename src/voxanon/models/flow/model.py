"""The velocity field of the embedding flow and its numpy-facing wrapper."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from voxanon.models.flow.solvers import integrate


def time_frequencies(dim: int) -> torch.Tensor:
    """The ``dim // 2`` frequencies of :func:`time_embedding`, geometric from 1 down to 1/1000."""
    half = dim // 2
    return torch.exp(-math.log(1000.0) * torch.arange(half) / max(half - 1, 1))


def time_embedding(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Sinusoidal embedding ``[sin(1000 t f), cos(1000 t f)]`` of times ``t`` (B,) in [0, 1]."""
    angles = 1000.0 * t[:, None] * freqs[None, :]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


class VelocityField(nn.Module):
    """MLP ``v(x, t)``: ``[x, sinusoidal(t)]`` through ``layers`` hidden SiLU layers of width ``hidden``."""

    def __init__(self, dim: int, hidden: int = 512, layers: int = 3, time_dim: int = 64):
        super().__init__()
        self.config = {"dim": dim, "hidden": hidden, "layers": layers, "time_dim": time_dim}
        self.register_buffer("freqs", time_frequencies(time_dim), persistent=False)
        blocks: list[nn.Module] = []
        width = dim + time_dim
        for _ in range(layers):
            blocks += [nn.Linear(width, hidden), nn.SiLU()]
            width = hidden
        blocks.append(nn.Linear(width, dim))
        self.net = nn.Sequential(*blocks)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Velocity at points ``x`` (B, D) and times ``t`` (B,)."""
        return self.net(torch.cat([x, time_embedding(t, self.freqs)], dim=1))


class EmbeddingFlow:
    """A trained :class:`VelocityField` with the per-dimension standardisation of its training data.

    The flow works on standardised embeddings ``(e - mean) / std``; t = 0 is the
    N(0, I) end, t = 1 the data end. Methods take and return numpy arrays.
    """

    def __init__(self, field: VelocityField, mean: np.ndarray, std: np.ndarray, *, encoder: str = "",
                 device: str = "cpu"):
        self.field = field.to(device).eval()
        self.mean = np.asarray(mean, dtype=np.float32)
        self.std = np.asarray(std, dtype=np.float32)
        self.encoder = encoder
        self.device = device

    @property
    def dim(self) -> int:
        """Embedding size."""
        return int(self.mean.shape[0])

    @torch.no_grad()
    def _integrate(self, x: np.ndarray, t0: float, t1: float, steps: int, solver: str) -> np.ndarray:
        x = torch.as_tensor(np.atleast_2d(x), dtype=torch.float32, device=self.device)

        def f(y: torch.Tensor, t: float) -> torch.Tensor:
            return self.field(y, torch.full((y.shape[0],), t, dtype=y.dtype, device=y.device))

        return integrate(f, x, t0, t1, steps=steps, solver=solver).cpu().numpy()

    def to_noise(self, emb: np.ndarray, *, steps: int = 16, solver: str = "euler") -> np.ndarray:
        """ODE-1: embeddings (B, D) from t = 1 back to their latent at t = 0."""
        return self._integrate((np.atleast_2d(emb) - self.mean) / self.std, 1.0, 0.0, steps, solver)

    def from_noise(self, z: np.ndarray, *, steps: int = 16, solver: str = "euler") -> np.ndarray:
        """ODE-2: latents (B, D) from t = 0 to embeddings at t = 1 (not renormalised)."""
        return self._integrate(z, 0.0, 1.0, steps, solver) * self.std + self.mean
