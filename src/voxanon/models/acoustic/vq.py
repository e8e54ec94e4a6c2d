"""Vector quantisation of content frames with a fixed codebook (the VPC B5/B6 information bottleneck).

The content encoder is frozen, so nothing upstream of the quantiser is trained
with the decoder: the codebook is either fitted once by k-means on training
content frames, or taken with its input projection from a bottleneck learnt
inside a recogniser (:mod:`voxanon.models.asr.bottleneck`: frames are projected
by a fixed affine map, then quantised in that space). Either way it stays fixed
and the decoder learns to read the codes.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def kmeans(frames: np.ndarray, k: int, rng: np.random.Generator, iters: int = 25) -> np.ndarray:
    """``(k, D)`` float32 k-means centroids of ``frames`` ``(N, D)`` (k-means++ start, Lloyd iterations).

    A cluster that empties is re-seeded at the frame farthest from its centroid.
    """
    x = torch.as_tensor(np.asarray(frames, dtype=np.float32))
    if len(x) < k:
        raise ValueError(f"k-means: {len(x)} frames cannot make {k} centroids")
    centres = x[[int(rng.integers(len(x)))]]
    d2 = torch.cdist(x, centres).square().squeeze(1)
    for _ in range(1, k):                       # k-means++: next centre drawn in proportion to squared distance
        p = (d2 / d2.sum()).double().numpy()
        centres = torch.cat([centres, x[[int(rng.choice(len(x), p=p / p.sum()))]]])
        d2 = torch.minimum(d2, (x - centres[-1]).square().sum(1))
    for _ in range(iters):
        dist = torch.cdist(x, centres)
        codes = dist.argmin(1)
        counts = torch.bincount(codes, minlength=k)
        sums = torch.zeros_like(centres).index_add_(0, codes, x)
        new = sums / counts.clamp(min=1)[:, None]
        empty = torch.nonzero(counts == 0).flatten()
        if len(empty):
            far = dist.gather(1, codes[:, None]).squeeze(1).topk(len(empty)).indices
            new[empty] = x[far]
        centres = new
    return centres.numpy().astype(np.float32)


class VectorQuantizer(nn.Module):
    """Nearest-codeword quantisation of ``(B, T, D)`` frames with a fixed ``(size, D)`` codebook (a buffer).

    With ``in_dim`` > 0 the frames have ``in_dim`` dimensions and are first mapped to ``dim`` by a fixed affine
    projection (buffers ``proj_weight`` ``(dim, in_dim)`` and ``proj_bias``, see :meth:`set_projection`).
    """

    def __init__(self, size: int, dim: int, in_dim: int = 0) -> None:
        super().__init__()
        self.register_buffer("codebook", torch.zeros(size, dim))
        if in_dim:
            self.register_buffer("proj_weight", torch.zeros(dim, in_dim))
            self.register_buffer("proj_bias", torch.zeros(dim))

    def set_codebook(self, centroids: np.ndarray) -> None:
        """Install ``centroids`` ``(size, D)`` (e.g. from :func:`kmeans`)."""
        c = torch.as_tensor(np.asarray(centroids, dtype=np.float32))
        if c.shape != self.codebook.shape:
            raise ValueError(f"codebook of shape {tuple(c.shape)}; the quantiser takes {tuple(self.codebook.shape)}")
        self.codebook.copy_(c)

    def set_projection(self, weight: np.ndarray, bias: np.ndarray) -> None:
        """Install the input projection ``(dim, in_dim)`` weight and ``(dim,)`` bias."""
        if not hasattr(self, "proj_weight"):
            raise ValueError("this quantiser takes its frames as they are (in_dim = 0): it has no projection")
        for buf, value in ((self.proj_weight, weight), (self.proj_bias, bias)):
            v = torch.as_tensor(np.asarray(value, dtype=np.float32))
            if v.shape != buf.shape:
                raise ValueError(f"projection of shape {tuple(v.shape)}; the quantiser takes {tuple(buf.shape)}")
            buf.copy_(v)

    def codes(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, T)`` int64 index of the nearest codeword of every frame."""
        book = self.codebook.to(x.dtype)
        if hasattr(self, "proj_weight"):
            x = x @ self.proj_weight.to(x.dtype).T + self.proj_bias.to(x.dtype)
        # |x - c|^2 = |x|^2 - 2 x.c + |c|^2; |x|^2 does not change the argmin
        return (book.square().sum(1) - 2 * x @ book.T).argmin(-1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(quantised frames (B, T, D), codes (B, T))``; each quantised frame is a codebook row."""
        codes = self.codes(x)
        return self.codebook.to(x.dtype)[codes], codes
