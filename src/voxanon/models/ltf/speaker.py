"""The adversarial speaker branch: gradient reversal, then a speaker classifier of Snake-Beta convolutions."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.parametrizations import weight_norm


class _Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return -ctx.scale * grad, None


def reverse_gradient(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """Identity forward; the gradient is multiplied by ``-scale`` on the way back (Ganin & Lempitsky 2015)."""
    return _Reverse.apply(x, scale)


class SnakeBeta(nn.Module):
    """``x + 1/beta * sin^2(alpha * x)`` with per-channel ``alpha``, ``beta`` (stored as logs; BigVGAN)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.log_alpha = nn.Parameter(torch.zeros(channels, 1))
        self.log_beta = nn.Parameter(torch.zeros(channels, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha, beta = self.log_alpha.exp(), self.log_beta.exp()
        return x + torch.sin(alpha * x).pow(2) / (beta + 1e-9)


class SpeakerPredictor(nn.Module):
    """``(B, T, dim)`` frames -> ``(B, n_speakers)`` logits: weight-normalised 1-D convolutions with Snake-Beta,
    mean over time, a linear layer. With ``grl=True`` the input passes a gradient-reversal layer first."""

    def __init__(self, dim: int, n_speakers: int, channels: int = 256, layers: int = 3, kernel: int = 5,
                 grl: bool = True) -> None:
        super().__init__()
        self.grl = grl
        blocks: list[nn.Module] = []
        for i in range(layers):
            blocks += [weight_norm(nn.Conv1d(dim if i == 0 else channels, channels, kernel, padding=kernel // 2)),
                       SnakeBeta(channels)]
        self.convs = nn.Sequential(*blocks)
        self.out = nn.Linear(channels, n_speakers)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        if self.grl:
            x = reverse_gradient(x, scale)
        return self.out(self.convs(x.transpose(1, 2)).mean(-1))
