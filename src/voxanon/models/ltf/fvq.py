"""Factorized vector quantisation (one codebook): project to a low dimension, L2-normalise, nearest codeword.

As in ViT-VQGAN / DAC's factorized codes: frames are projected to ``code_dim``
(8 or 16) and normalised, so the nearest codeword is the one of highest cosine;
the quantised frame goes back to the model width through a second projection.
Gradients pass the quantiser with the straight-through estimator; the loss
``commitment`` pulls codewords to the frames (codebook term) and frames to their
codewords (commitment term, weight ``beta``). Large codebooks are searched in
blocks of frames so the distance matrix stays bounded.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from voxanon.errors import ConfigError

#: frames compared with the whole codebook at a time (65536 codewords x 4096 frames = 1 GiB of fp32)
SEARCH_BLOCK = 4096


class FactorizedVQ(nn.Module):
    """``(B, T, dim)`` frames -> quantised ``(B, T, dim)`` frames, codes ``(B, T)`` and the VQ loss."""

    def __init__(self, dim: int, size: int, code_dim: int, beta: float = 0.25) -> None:
        super().__init__()
        if size < 2 or code_dim < 1:
            raise ConfigError(f"FVQ: a codebook needs at least 2 codewords of length >= 1, got {size}x{code_dim}")
        self.size, self.code_dim, self.beta = size, code_dim, beta
        self.proj_in = nn.Linear(dim, code_dim)
        self.proj_out = nn.Linear(code_dim, dim)
        self.codebook = nn.Parameter(torch.randn(size, code_dim))

    def codes(self, z: torch.Tensor) -> torch.Tensor:
        """``(N,)`` index of the codeword of highest cosine to each unit-norm ``(N, code_dim)`` frame."""
        book = F.normalize(self.codebook, dim=-1).detach()
        return torch.cat([(z[i:i + SEARCH_BLOCK].detach() @ book.T).argmax(-1)
                          for i in range(0, len(z), SEARCH_BLOCK)]) if len(z) else z.new_zeros(0, dtype=torch.long)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(quantised frames, codes, VQ loss)``; the loss is 0-d (codebook + ``beta`` * commitment)."""
        z = F.normalize(self.proj_in(x), dim=-1)
        flat = z.reshape(-1, self.code_dim)
        codes = self.codes(flat)
        q = F.normalize(self.codebook, dim=-1)[codes]
        loss = F.mse_loss(q, flat.detach()) + self.beta * F.mse_loss(flat, q.detach())
        q = flat + (q - flat).detach()                  # straight-through
        return self.proj_out(q.reshape(z.shape)), codes.reshape(z.shape[:-1]), loss


def usage(codes: torch.Tensor, size: int) -> dict[str, float]:
    """Codebook statistics of a batch of codes: fraction of codewords used and perplexity (exp entropy)."""
    counts = torch.bincount(codes.flatten(), minlength=size).double()
    p = counts / counts.sum().clamp(min=1)
    entropy = -(p[p > 0] * p[p > 0].log()).sum()
    return {"usage": float((counts > 0).double().mean()), "perplexity": float(math.exp(float(entropy)))}
